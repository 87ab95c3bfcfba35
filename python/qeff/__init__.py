# ===- qeff/__init__.py - qeff from Python ---------------------------------=== #
#
# Part of qeff. The low-level API over the C++ public API (the native module
# qeff._qeff): compile a checkpoint into an artifact, open it in a Session,
# run it (numpy in and out) or generate from it, tokenize with the model's
# tokenizer and chat template, compile model cards. QEfficient's calling
# conventions live in qeff.auto. docs/python.md describes both.
#
# ===----------------------------------------------------------------------=== #
"""qeff: Hugging Face causal LMs compiled for the Qualcomm Cloud AI 100."""

import collections
import dataclasses
import hashlib
import json
import logging
import os
from typing import Any, Dict, Iterator, List, Optional, Sequence, Union

from . import _qeff
from ._qeff import Error, __version__

__all__ = [
    "Artifact", "Error", "Generation", "GenerationStream", "Session",
    "StreamChunk", "Tokenizer", "compile", "compile_cards",
    "default_cache_dir", "qaic_device_available", "__version__",
]

logger = logging.getLogger("qeff")


def default_cache_dir() -> str:
    """Where qeff keeps what it compiles without being told where: as the
    qeff CLI, $QEFF_CACHE_DIR, else $XDG_CACHE_HOME/qeff, else ~/.cache/qeff."""
    if os.environ.get("QEFF_CACHE_DIR"):
        return os.environ["QEFF_CACHE_DIR"]
    if os.environ.get("XDG_CACHE_HOME"):
        return os.path.join(os.environ["XDG_CACHE_HOME"], "qeff")
    return os.path.join(os.path.expanduser("~"), ".cache", "qeff")


def qaic_device_available() -> bool:
    """Whether this build has the Cloud AI 100 device (the Platform SDK)."""
    return _qeff.qaic_device_available()[0]


class Artifact:
    """A compiled artifact directory (model.onnx, specializations.json,
    qeff-manifest.json, ... and qpc/ when qaic-compile ran)."""

    def __init__(self, path: Union[str, os.PathLike], *, files=(),
                 qpc_built: Optional[bool] = None, qaic_command: str = "",
                 seconds: float = 0.0, diagnostics: str = ""):
        self.path = os.fspath(path)
        self.files = list(files)
        self.qpc_built = (os.path.isfile(os.path.join(self.path, "qpc", "programqpc.bin"))
                          if qpc_built is None else qpc_built)
        self.qaic_command = qaic_command
        self.seconds = seconds
        self.diagnostics = diagnostics

    @property
    def qpc_path(self) -> Optional[str]:
        """The QPC directory, when qaic-compile built one."""
        return os.path.join(self.path, "qpc") if self.qpc_built else None

    @property
    def manifest(self) -> Dict[str, Any]:
        """qeff-manifest.json: the options, inputs, outputs and hashes."""
        with open(os.path.join(self.path, "qeff-manifest.json"), encoding="utf-8") as f:
            return json.load(f)

    def __fspath__(self) -> str:
        return self.path

    def __repr__(self) -> str:
        return f"qeff.Artifact({self.path!r}, qpc_built={self.qpc_built})"


def _default_out(model: str, options: Dict[str, Any]) -> str:
    # Keyed by the checkpoint's path and the options, not its content: a
    # changed checkpoint is compiled again into the same place.
    key = json.dumps([os.path.abspath(model), sorted(options.items())],
                     default=str, sort_keys=True)
    digest = hashlib.sha256(key.encode()).hexdigest()[:16]
    name = os.path.basename(os.path.normpath(model)) or "model"
    return os.path.join(default_cache_dir(), "python", f"{name}-{digest}")


# The keywords of qeff::compile::Options (python/Module.cpp).
_COMPILE_OPTIONS = frozenset((
    "ctx_len", "prefill_seq_len", "batch_size", "full_batch_size", "num_cores",
    "num_devices", "mxfp6", "mxint8_kv", "weights_dtype", "kv_window", "outline_layers",
    "fp32_scopes", "fp32_scopes_file", "calibrate", "qaic_compile", "run_qaic",
    "aic_hw_version", "qaic_args", "depfile", "emit", "num_speculative_tokens",
    "on_device_sampling", "max_top_k_ids"))


def compile(model: Union[str, os.PathLike], out: Optional[Union[str, os.PathLike]] = None,
            *, progress=None, **options) -> Artifact:
    """Compiles the Hugging Face checkpoint directory `model` into the
    artifact directory `out` (default: under default_cache_dir()), as
    `qeff compile` does. `options` are the qeff::compile::Options, by the
    names of the `qeff compile` flags with underscores: ctx_len,
    prefill_seq_len, batch_size, full_batch_size, num_cores, num_devices,
    mxfp6, mxint8_kv, weights_dtype ('as-ir'|'f16'|'bf16'), kv_window
    ('full'|'rolling'), outline_layers (None|True|False), fp32_scopes,
    fp32_scopes_file, calibrate, qaic_compile, run_qaic, aic_hw_version,
    qaic_args, depfile, emit ('device'|'onnx'|'mlir-import'|'mlir-device'),
    num_speculative_tokens (a list of K: a speculative-decoding target),
    on_device_sampling and max_top_k_ids (QEfficient's qaic_config
    include_sampler / max_top_k_ids: next_tokens instead of logits).

    Progress goes to the `qeff` logger (each stage at INFO, each weight at
    DEBUG) and to `progress(stage, done, total)` when given (bytes of weights
    during "export", 0 and 0 at the start of every stage). Ctrl-C stops the
    compile at the next stage or weight and raises KeyboardInterrupt; `out`
    is then left as it was. Errors raise qeff.Error with the compiler's
    diagnostics (file, tensor, field)."""
    unknown = sorted(set(options) - _COMPILE_OPTIONS)
    if unknown:
        raise TypeError(f"compile() got unknown option(s) {', '.join(unknown)}; the "
                        f"options are {', '.join(sorted(_COMPILE_OPTIONS))}")
    model = os.fspath(model)
    out = os.fspath(out) if out is not None else _default_out(model, options)
    state = {"stage": ""}

    def on_stage(stage):
        state["stage"] = stage
        logger.info("compile %s: %s", model, stage)
        if progress is not None:
            progress(stage, 0, 0)

    def on_progress(tensors_done, tensors_total, bytes_done, bytes_total, tensor):
        logger.debug("compile %s: export %d/%d weights (%s)", model,
                     tensors_done, tensors_total, tensor)
        if progress is not None:
            progress("export", bytes_done, bytes_total)

    result = _qeff.compile(model, out, on_stage=on_stage, on_progress=on_progress,
                           **options)
    logger.info("compile %s: %s written in %.2f s", model, out, result["seconds"])
    return Artifact(out, files=result["files"], qpc_built=result["qpc_built"],
                    qaic_command=result["qaic_command"], seconds=result["seconds"],
                    diagnostics=result["diagnostics"])


@dataclasses.dataclass
class Generation:
    """One prompt's generation."""
    text: Optional[str]          # None when the artifact has no tokenizer
    ids: List[int]               # the generated token ids
    prompt_ids: List[int]
    finish_reason: str           # eos, stop_token, stop_string, max_new_tokens, context_end
    metrics: Dict[str, float]    # prompt_tokens, generated_tokens, time_to_first_token_s, ...


StreamChunk = collections.namedtuple("StreamChunk", ["row", "token", "text"])
StreamChunk.__doc__ = ("One generated token of prompt `row` and the text it "
                       "completed ('' while a character is incomplete; None "
                       "without a tokenizer).")


def _generations(result) -> List[Generation]:
    return [Generation(text=r["text"], ids=list(r["generated_ids"]),
                       prompt_ids=list(r["prompt_ids"]),
                       finish_reason=r["finish_reason"], metrics=r["metrics"])
            for r in result["rows"]]


class GenerationStream:
    """Iterator of StreamChunk, as the tokens are generated. `result` holds
    the Generation list once the iteration ended. Leaving the loop early (or
    close(), or Ctrl-C while waiting) stops the generation."""

    def __init__(self, native, has_text: bool, single: bool):
        self._native = native
        self._has_text = has_text
        self._single = single
        self.result: Optional[Union[Generation, List[Generation]]] = None

    def __iter__(self) -> Iterator[StreamChunk]:
        return self

    def __next__(self) -> StreamChunk:
        if self._native is None:
            raise StopIteration
        chunk = self._native.next()
        if chunk is None:
            result = self._native.result()
            self._native = None
            if result is not None:
                rows = _generations(result)
                self.result = rows[0] if self._single else rows
            raise StopIteration
        row, token, text = chunk
        return StreamChunk(row, token, text if self._has_text else None)

    def close(self) -> None:
        if self._native is not None:
            self._native.close()
            self._native = None

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()

    def __del__(self):
        self.close()


def _prompt_list(prompt) -> "tuple[list, bool]":
    """(prompts, single): a str or a sequence of ids is one prompt; a list
    of those is a batch."""
    try:
        import numpy
        if isinstance(prompt, numpy.ndarray):
            prompt = prompt.tolist()
    except ImportError:  # pragma: no cover - numpy is a dependency of run()
        pass
    if isinstance(prompt, str):
        return [prompt], True
    if isinstance(prompt, (list, tuple)):
        if not prompt:
            raise ValueError("no prompt given")
        if all(isinstance(p, int) for p in prompt):
            return [list(prompt)], True
        prompts = []
        for i, p in enumerate(prompt):
            if isinstance(p, str):
                prompts.append(p)
            elif isinstance(p, (list, tuple)) and all(isinstance(t, int) for t in p):
                prompts.append(list(p))
            else:
                raise TypeError(f"prompt {i} is neither a string nor a list of token ids")
        return prompts, False
    raise TypeError("prompt must be a string, a list of token ids, or a list of those")


class Session:
    """A compiled artifact opened on a device: run() one step with numpy
    feeds, or generate() text. device is "host" (the CPU reference device)
    or "qaic" (a Cloud AI 100, in builds with the Platform SDK)."""

    def __init__(self, artifact: Union[Artifact, str, os.PathLike], *, device: str = "host",
                 threads: int = 0, numerics: str = "fp32",
                 fp32_nodes: Optional[Sequence[str]] = None, mx_rounding: str = "even",
                 mx_weight_axis: str = "k", prepack_weights: bool = False,
                 device_group: Sequence[int] = (), qaic_timeout_ms: int = 60000):
        self.path = os.fspath(artifact)
        self._native = _qeff.Session(self.path, device=device, threads=threads,
                                     numerics=numerics,
                                     fp32_nodes=None if fp32_nodes is None else list(fp32_nodes),
                                     mx_rounding=mx_rounding, mx_weight_axis=mx_weight_axis,
                                     prepack_weights=prepack_weights,
                                     device_group=list(device_group),
                                     qaic_timeout_ms=qaic_timeout_ms)
        self.device = device

    def run(self, feeds: Dict[str, Any]) -> Dict[str, Any]:
        """One step: the per-step inputs by name (input_ids, position_ids,
        batch_index; retained state is the session's) -> the outputs by
        name, read-only numpy arrays over the session's buffers."""
        if not isinstance(feeds, dict):
            raise TypeError("feeds must be a dict of input name -> array")
        return self._native.run(feeds)

    def generate(self, prompt, max_new_tokens: int = 128, temperature: float = 0.0,
                 top_p: float = 1.0, seed: int = 0, *, top_k: int = 0,
                 min_p: float = 0.0, repetition_penalty: float = 1.0,
                 stop: Sequence[str] = (), stop_token_ids: Sequence[int] = (),
                 ignore_eos: bool = False, stream: bool = False):
        """Generates from a prompt (text, or token ids) or a list of prompts:
        a Generation (a list for a list of prompts), or with stream=True a
        GenerationStream of StreamChunk. Greedy unless temperature > 0."""
        prompts, single = _prompt_list(prompt)
        options = dict(max_new_tokens=max_new_tokens, temperature=temperature,
                       top_p=top_p, top_k=top_k, min_p=min_p,
                       repetition_penalty=repetition_penalty, seed=seed,
                       stop=list(stop), stop_token_ids=list(stop_token_ids),
                       ignore_eos=ignore_eos)
        if stream:
            return GenerationStream(self._native.stream(prompts, options),
                                    self._native.has_tokenizer, single)
        rows = _generations(self._native.generate(prompts, options))
        return rows[0] if single else rows

    def reset(self) -> None:
        """Zeroes the retained state (the KV cache)."""
        self._native.reset()

    def read_state(self, name: str):
        """A copy of a retained-state buffer (host device)."""
        return self._native.read_state(name)

    @property
    def inputs(self):
        """(name, numpy dtype, dims) of each model input; a dim is an int or a symbol."""
        return self._native.inputs

    @property
    def outputs(self):
        return self._native.outputs

    @property
    def specializations(self):
        """(name, {symbol: value}) of specializations.json."""
        return self._native.specializations

    @property
    def eos_ids(self) -> List[int]:
        return self._native.eos_ids


class Tokenizer:
    """A checkpoint's (or artifact's) tokenizer and chat template, as qeff
    reads them: a directory (tokenizer.json, or vocab.json + merges.txt) or
    a tokenizer.json file."""

    def __init__(self, path: Union[str, os.PathLike]):
        self.path = os.fspath(path)
        self._native = _qeff.Tokenizer(self.path)

    @classmethod
    def from_pretrained(cls, path: Union[str, os.PathLike], **kwargs) -> "Tokenizer":
        """transformers' spelling of Tokenizer(path) (a local directory)."""
        if kwargs:
            raise TypeError("qeff.Tokenizer.from_pretrained takes no options, got "
                            + ", ".join(sorted(kwargs)))
        if not os.path.isdir(os.fspath(path)):
            raise Error(f"{os.fspath(path)} is not a local directory: qeff downloads "
                        "nothing (fetch the checkpoint first)")
        return cls(path)

    def encode(self, text: str, add_special_tokens: bool = True) -> List[int]:
        return self._native.encode(text, add_special_tokens)

    def decode(self, ids: Sequence[int], skip_special_tokens: bool = False) -> str:
        return self._native.decode([int(i) for i in ids], skip_special_tokens)

    def __call__(self, text: Union[str, List[str]], add_special_tokens: bool = True):
        """{"input_ids": ...} for a text or a list of texts (unpadded lists)."""
        if isinstance(text, str):
            return {"input_ids": self.encode(text, add_special_tokens)}
        return {"input_ids": [self.encode(t, add_special_tokens) for t in text]}

    def apply_chat_template(self, messages: List[Dict[str, Any]], *,
                            add_generation_prompt: bool = False, tokenize: bool = True,
                            tools=None, **template_kwargs):
        """The model's chat template over `messages`, as transformers renders
        it: the text, or with tokenize=True its ids (no special tokens added:
        the template writes them)."""
        text = self._native._render_chat(json.dumps(messages), add_generation_prompt,
                                         json.dumps(tools), json.dumps(template_kwargs))
        return self.encode(text, add_special_tokens=False) if tokenize else text

    @property
    def bos_token_id(self) -> Optional[int]:
        return self._native.bos_id

    @property
    def eos_token_ids(self) -> List[int]:
        return list(self._native.eos_ids)

    @property
    def vocab_size(self) -> int:
        return self._native.vocab_size

    def __len__(self) -> int:
        return self._native.vocab_size


from ._cards import compile_cards  # noqa: E402  (needs the names above)
