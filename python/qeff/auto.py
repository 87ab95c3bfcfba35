# ===- qeff/auto.py - QEfficient's calling conventions ---------------------=== #
#
# Part of qeff. QEFFAutoModelForCausalLM as QEfficient spells it
# (from_pretrained -> compile -> generate), over qeff.compile and
# qeff.Session, so that code written for QEfficient runs with one changed
# import. Each QEfficient keyword is honoured, mapped, or refused by name with
# the reason (docs/python.md has the table); none is silently ignored.
#
# ===----------------------------------------------------------------------=== #

import dataclasses
import logging
import os
from typing import Any, Dict, List, Optional, Sequence, Union

import numpy as np

from . import Artifact, Error, Session, Tokenizer, compile as qeff_compile
from . import _default_out, qaic_device_available

__all__ = ["AutoTokenizer", "CloudAI100ExecInfo", "PerfMetrics",
           "QEFFAutoModelForCausalLM"]

logger = logging.getLogger("qeff")

AutoTokenizer = Tokenizer  # AutoTokenizer.from_pretrained(local_dir)

# from_pretrained keywords qeff cannot honour, and why.
_REFUSED_LOAD = {
    "kv_offload": "qeff compiles text-only causal LMs (no vision encoder to offload)",
    "torch_dtype": "qeff reads the checkpoint's weights as stored (compile with "
                   "weights_dtype='f16' through qeff.compile for fp16 weights)",
    "num_hidden_layers": "qeff compiles the checkpoint as it is (no config overrides)",
    "trust_remote_code": "qeff runs no Python code of the checkpoint",
    "revision": "qeff downloads nothing (give a local directory)",
    "cache_dir": "qeff downloads nothing (give a local directory)",
    "token": "qeff downloads nothing (give a local directory)",
}

# QEfficient's qaic_config keys (QEFFAutoModelForCausalLM.from_pretrained)
# that qeff does not build, and why; any other key is refused as unknown.
_REFUSED_QAIC_CONFIG = {
    "num_kv_blocks": "qeff has no blocked-KV attention",
    "ccl_enabled": "qeff has no compute-context-length specializations",
    "include_guided_decoding": "qeff's sampler has no token-bitmask input (qeff "
                               "serve constrains output on the host: response_format)",
}
_QAIC_CONFIG_KEYS = ("speculative_model_type", "include_sampler", "return_pdfs",
                     "max_top_k_ids")


def _read_qaic_config(qaic_config: Any, is_tlm: bool, path: str) -> Dict[str, Any]:
    """QEfficient's qaic_config (and its older is_tlm keyword) as qeff compile
    options: speculative_model_type="target" -> a speculative-decoding target
    (compile then needs num_speculative_tokens), include_sampler=True ->
    on_device_sampling, max_top_k_ids -> max_top_k_ids. Keys and values qeff
    does not build raise ValueError naming them."""
    if not isinstance(is_tlm, bool):
        raise TypeError(f"from_pretrained: is_tlm must be a bool, got {is_tlm!r}")
    out: Dict[str, Any] = {"is_tlm": is_tlm, "include_sampler": False}
    if qaic_config is None:
        return out
    if not isinstance(qaic_config, dict):
        raise TypeError("from_pretrained: qaic_config must be a dict, got "
                        f"{type(qaic_config).__name__}")
    for key, value in qaic_config.items():
        if key == "pretrained_model_name_or_path" and os.fspath(value) == path:
            continue  # what QEfficient's from_pretrained writes into the dict
        if key in _REFUSED_QAIC_CONFIG:
            raise ValueError(f"qaic_config[{key!r}] is not supported by qeff: "
                             f"{_REFUSED_QAIC_CONFIG[key]}")
        if key not in _QAIC_CONFIG_KEYS:
            raise ValueError(f"qaic_config[{key!r}] is not a key qeff knows (it reads "
                             + ", ".join(_QAIC_CONFIG_KEYS) + ")")
    kind = qaic_config.get("speculative_model_type")
    if kind is not None:
        if kind != "target":
            raise ValueError(f"qaic_config['speculative_model_type']={kind!r} is not "
                             "supported by qeff: it builds the 'target' form only "
                             "(its proposers are prompt lookup and a draft model: "
                             "qeff run/serve --speculate)")
        out["is_tlm"] = True
    sampler = qaic_config.get("include_sampler")
    if sampler is not None and not isinstance(sampler, bool):
        raise ValueError(f"qaic_config['include_sampler'] must be a bool, got {sampler!r}")
    out["include_sampler"] = bool(sampler)
    pdfs = qaic_config.get("return_pdfs")
    if pdfs is not None and not isinstance(pdfs, bool):
        raise ValueError(f"qaic_config['return_pdfs'] must be a bool, got {pdfs!r}")
    if pdfs:
        raise ValueError("qaic_config['return_pdfs']=True is not supported by qeff: "
                         "its on-device sampler returns next_tokens only (no probs "
                         "output)")
    if "max_top_k_ids" in qaic_config:
        k = qaic_config["max_top_k_ids"]
        if not out["include_sampler"]:
            raise ValueError("qaic_config['max_top_k_ids'] applies only with "
                             "include_sampler=True")
        if not isinstance(k, int) or isinstance(k, bool) or not 1 <= k <= 65536:
            raise ValueError("qaic_config['max_top_k_ids'] must be an int in "
                             f"1..65536, got {k!r}")
        out["max_top_k_ids"] = k
    return out


# compile keywords with no qeff equivalent, and why.
_REFUSED_COMPILE = {
    "onnx_path": "qeff exports the ONNX itself from the checkpoint",
    "prefill_only": "qeff builds the prefill and decode specializations together",
    "enable_qnn": "qeff drives qaic-compile, not the QNN path",
    "qnn_config": "qeff drives qaic-compile, not the QNN path",
    "comp_ctx_lengths_prefill": "qeff has no compute-context-length specializations",
    "comp_ctx_lengths_decode": "qeff has no compute-context-length specializations",
    "mdp_ts_num_devices": "use num_devices",
    "mdp_ts_json_path": "use num_devices (qeff writes mdp.json)",
    "custom_io": "qeff writes custom_io.yaml (mxint8_kv_cache selects the KV dtype)",
    "convert_to_fp16": "qeff always compiles for fp16 (-convert-to-fp16)",
    "aic_num_cores": "use num_cores",
    "aic_binary_dir": "qeff writes the QPC into the artifact's qpc/",
}


@dataclasses.dataclass
class PerfMetrics:
    prefill_time: float   # seconds to the first token (mean over prompts)
    decode_perf: float    # decode tokens/s per sequence
    total_perf: float     # all tokens/s per sequence
    total_time: float     # seconds, end to end


@dataclasses.dataclass
class CloudAI100ExecInfo:
    batch_size: int
    generated_texts: List[str]
    generated_ids: List[np.ndarray]
    perf_metrics: PerfMetrics

    def __repr__(self):
        m = self.perf_metrics
        return (f"Average Prefill time a.k.a TTFT is= {round(m.prefill_time, 2)} sec\n"
                f"Decode is= {round(m.decode_perf * self.batch_size, 2)} tokens/sec\n"
                f"Total is= {round(m.total_perf * self.batch_size, 2)} tokens/sec\n"
                f"Total (E2E) inference time is= {round(m.total_time, 2)} sec")


def _qaic_flag(key: str, value: Any) -> Optional[str]:
    """QEfficient's rule for extra compiler options: aic_enable_depth_first=True
    -> -aic-enable-depth-first, mos=1 -> -mos=1; False drops the flag."""
    flag = "-" + key.replace("_", "-")
    if value is True:
        return flag
    if value is False or value is None:
        return None
    return f"{flag}={value}"


class QEFFAutoModelForCausalLM:
    """QEfficient's QEFFAutoModelForCausalLM over qeff: a local Hugging Face
    checkpoint directory compiled by qeff and run on the AI 100 (device
    'qaic', with the Platform SDK and a QPC) or on qeff's host device."""

    def __init__(self, path: str, continuous_batching: bool = False,
                 qaic: Optional[Dict[str, Any]] = None):
        self.pretrained_model_name_or_path = path
        self.continuous_batching = continuous_batching
        qaic = qaic or {"is_tlm": False, "include_sampler": False}
        # QEfficient's attributes: a speculative-decoding target, a sampler.
        self.is_tlm = qaic["is_tlm"]
        self.include_sampler = qaic["include_sampler"]
        self._max_top_k_ids = qaic.get("max_top_k_ids")
        self.artifact: Optional[Artifact] = None
        self.qpc_path: Optional[str] = None
        self._compiled: Dict[str, Any] = {}
        self._session: Optional[Session] = None
        self._session_key = None

    @classmethod
    def from_pretrained(cls, pretrained_model_name_or_path: Union[str, os.PathLike],
                        continuous_batching: bool = False,
                        qaic_config: Optional[Dict[str, Any]] = None, *args, **kwargs):
        """A local checkpoint directory (qeff downloads nothing). QEfficient's
        keywords that qeff cannot honour raise TypeError naming them;
        qaic_config keys and values it does not build raise ValueError."""
        path = os.fspath(pretrained_model_name_or_path)
        if args:
            raise TypeError("from_pretrained takes no positional options after "
                            "qaic_config in qeff")
        if kwargs.pop("full_batch_size", None):
            # QEfficient's deprecated spelling of continuous_batching=True.
            continuous_batching = True
        qaic = _read_qaic_config(qaic_config, kwargs.pop("is_tlm", False), path)
        if kwargs.get("attn_implementation", "eager") == "eager":
            kwargs.pop("attn_implementation", None)  # qeff's math is eager attention
        if kwargs.get("low_cpu_mem_usage", False) is False:
            kwargs.pop("low_cpu_mem_usage", None)  # qeff streams weights anyway
        for key in kwargs:
            reason = _REFUSED_LOAD.get(key, "it is not an option qeff knows")
            raise TypeError(f"from_pretrained: {key}={kwargs[key]!r} is not supported "
                            f"by qeff: {reason}")
        if not os.path.isdir(path):
            raise Error(f"{path} is not a local checkpoint directory: qeff downloads "
                        "nothing (fetch it first, e.g. huggingface-cli download)")
        return cls(path, continuous_batching=continuous_batching, qaic=qaic)

    @property
    def model_name(self) -> str:
        return os.path.basename(os.path.normpath(self.pretrained_model_name_or_path))

    def compile(self, onnx_path: Optional[str] = None, compile_dir: Optional[str] = None,
                *, prefill_seq_len: int = 32, ctx_len: int = 128, batch_size: int = 1,
                full_batch_size: Optional[int] = None,
                kv_cache_batch_size: Optional[int] = None, num_devices: int = 1,
                num_cores: int = 16, mxfp6_matmul: bool = False,
                mxint8_kv_cache: bool = False,
                num_speculative_tokens: Optional[int] = None,
                prefill_only: Optional[bool] = None, **compiler_options) -> str:
        """Compiles with QEfficient's keywords and returns the QPC directory
        (the artifact directory when no qaic-compile was found: then the host
        device runs it). Extra keywords are qaic-compile options by
        QEfficient's rule (mos=1 -> -mos=1, aic_enable_depth_first=True ->
        -aic-enable-depth-first); those qeff sets itself are refused."""
        for key, value in (("onnx_path", onnx_path), ("prefill_only", prefill_only)):
            if value is not None:
                raise TypeError(f"compile: {key} is not supported by qeff: "
                                f"{_REFUSED_COMPILE[key]}")
        if self.continuous_batching and full_batch_size is None:
            raise TypeError("`full_batch_size` is required when `continuous_batching=True`.")
        if full_batch_size is not None and not self.continuous_batching:
            raise TypeError("full_batch_size needs continuous_batching=True in "
                            "from_pretrained (as in QEfficient)")
        if kv_cache_batch_size not in (None, full_batch_size):
            raise TypeError("compile: kv_cache_batch_size other than full_batch_size is "
                            "not supported by qeff: its KV cache has one row per decode "
                            "lane")
        options: Dict[str, Any] = dict(
            prefill_seq_len=prefill_seq_len, ctx_len=ctx_len, num_cores=num_cores,
            num_devices=num_devices, mxfp6=bool(mxfp6_matmul),
            mxint8_kv=bool(mxint8_kv_cache))
        if self.is_tlm and num_speculative_tokens is None:
            raise TypeError("missing required argument `num_speculative_tokens` as "
                            "`is_tlm` is True (qaic_config speculative_model_type="
                            "'target')")
        if num_speculative_tokens is not None:
            # A target model returning K+1 logits per decode step (QEfficient's
            # num_logits_to_keep form); qeff also takes a list of K values,
            # and builds the target from num_speculative_tokens alone.
            ks = ([num_speculative_tokens] if isinstance(num_speculative_tokens, int)
                  else list(num_speculative_tokens))
            if not ks or not all(isinstance(k, int) and not isinstance(k, bool) for k in ks):
                raise TypeError("compile: num_speculative_tokens must be an int or a list "
                                f"of ints, got {num_speculative_tokens!r}")
            if self.include_sampler:
                raise ValueError("Currently, sampler does not support "
                                 "`num_speculative_tokens` > 0 (qeff's sampler takes the "
                                 "last token's logits only)")
            if prefill_seq_len < max(ks) + 1:
                raise ValueError(f"sequence length ({prefill_seq_len}) must be at least "
                                 f"`num_speculative_tokens+1` ({max(ks) + 1})")
            options["num_speculative_tokens"] = ks
        if self.include_sampler:
            # QEfficient's include_sampler: next_tokens instead of logits.
            options["on_device_sampling"] = True
            if self._max_top_k_ids is not None:
                options["max_top_k_ids"] = self._max_top_k_ids
        if self.continuous_batching:
            if batch_size != 1:
                raise TypeError("compile: batch_size and full_batch_size exclude each "
                                "other in qeff (continuous batching prefills one "
                                "sequence at a time)")
            options["full_batch_size"] = full_batch_size
        else:
            options["batch_size"] = batch_size
        qaic_args: List[str] = []
        for key, value in compiler_options.items():
            if key in _REFUSED_COMPILE:
                raise TypeError(f"compile: {key} is not supported by qeff: "
                                f"{_REFUSED_COMPILE[key]}")
            if key == "aic_hw_version":
                options["aic_hw_version"] = str(value)
            elif key == "use_onnx_subfunctions":
                options["outline_layers"] = bool(value)
            elif key == "offload_pt_weights":
                pass  # honoured by construction: qeff never holds PyTorch weights
            else:
                flag = _qaic_flag(key, value)
                if flag is not None:
                    qaic_args.append(flag)
        if qaic_args:
            options["qaic_args"] = qaic_args
        out = os.fspath(compile_dir) if compile_dir is not None else _default_out(
            self.pretrained_model_name_or_path, options)
        self.artifact = qeff_compile(self.pretrained_model_name_or_path, out, **options)
        self._compiled = options
        self._session = None
        self.qpc_path = self.artifact.qpc_path or self.artifact.path
        if not self.artifact.qpc_built:
            logger.warning("qeff: no QPC built (qaic-compile not found); %s holds the "
                           "artifacts and qaic-compile.sh, and generate() runs them on "
                           "the host device", self.artifact.path)
        return self.qpc_path

    def _open(self, device: Optional[str], device_id: Optional[Sequence[int]]) -> Session:
        if device is None:
            device = "qaic" if (self.artifact.qpc_built and qaic_device_available()) else "host"
        if device_id is not None and device != "qaic":
            raise TypeError("generate: device_id selects AI 100 devices, but this "
                            f"generation runs on the {device} device")
        key = (device, tuple(device_id or ()))
        if self._session is None or self._session_key != key:
            self._session = Session(self.artifact.path, device=device,
                                    device_group=list(device_id or ()))
            self._session_key = key
        return self._session

    def generate(self, tokenizer=None, prompts: Union[str, List[str]] = (),
                 device_id: Optional[List[int]] = None, runtime_ai100: bool = True,
                 *, generation_len: Optional[int] = None, device: Optional[str] = None,
                 **kwargs) -> CloudAI100ExecInfo:
        """Greedy generation for every prompt, as QEfficient's generate:
        tokenizer None or a qeff.Tokenizer uses the artifact's tokenizer;
        another object with encode/decode (transformers') encodes the prompts
        and decodes the ids. generation_len caps the new tokens (default: up
        to the context). device: None picks 'qaic' when a QPC was built and
        this build has the AI 100 device, else 'host'."""
        if self.artifact is None:
            raise TypeError("Please run compile API first!")
        if not runtime_ai100:
            raise NotImplementedError("qeff has no PyTorch runtime: runtime_ai100=False "
                                      "is not supported (device='host' runs the "
                                      "artifact on the CPU)")
        for key in ("prompt", "prompts_txt_file_path"):
            if key in kwargs:
                raise TypeError(f"generate: {key} is not supported by qeff; pass prompts")
        for key in ("include_sampler", "return_pdfs", "sampling_params"):
            if key in kwargs:
                # QEfficient's per-row sampler inputs (random_numbers among
                # them) have no counterpart here: qeff draws its uniforms
                # from a seed.
                raise TypeError(f"generate: {key} is not supported by qeff.auto, whose "
                                "generate is greedy (also on a sampler artifact); sample "
                                "with qeff.Session(model.artifact).generate(prompt, "
                                "temperature=..., top_k=..., top_p=..., min_p=..., "
                                "repetition_penalty=..., seed=...)")
        if kwargs:
            raise TypeError("generate: unsupported keyword(s) "
                            + ", ".join(sorted(kwargs)))
        if isinstance(prompts, str):
            prompts = [prompts]
        prompts = list(prompts)
        if not prompts:
            raise ValueError("generate: no prompts given")
        session = self._open(device, device_id)
        max_new = generation_len if generation_len is not None else self._compiled["ctx_len"]
        if not isinstance(max_new, int) or max_new < 1:
            raise ValueError(f"generation_len must be a positive int, got {generation_len!r}")
        external = tokenizer is not None and not isinstance(tokenizer, Tokenizer)
        if external:
            if not (hasattr(tokenizer, "encode") and hasattr(tokenizer, "decode")):
                raise TypeError("tokenizer must be None, a qeff.Tokenizer or an object "
                                "with encode() and decode()")
            inputs = [list(tokenizer.encode(p)) for p in prompts]
        else:
            inputs = prompts
        rows = session.generate(inputs, max_new_tokens=max_new)
        if external:
            texts = [tokenizer.decode(r.ids, skip_special_tokens=True) for r in rows]
        else:
            texts = [r.text for r in rows]
        n = len(rows)
        ttft = sum(r.metrics["time_to_first_token_s"] for r in rows) / n
        total = max(r.metrics["total_s"] for r in rows)
        decode = sum(r.metrics["decode_tokens_per_s"] for r in rows) / n
        tokens = sum(r.metrics["generated_tokens"] for r in rows)
        batch = self._compiled.get("full_batch_size") or self._compiled.get("batch_size", 1)
        info = CloudAI100ExecInfo(
            batch_size=batch, generated_texts=texts,
            generated_ids=[np.asarray(r.ids, dtype=np.int64) for r in rows],
            perf_metrics=PerfMetrics(prefill_time=ttft, decode_perf=decode,
                                     total_perf=(tokens / total / batch) if total else 0.0,
                                     total_time=total))
        return info
