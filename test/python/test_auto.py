# ===- test/python/test_auto.py - QEfficient's calling conventions ---------=== #
#
# Part of qeff. The examples of QEfficient's QEFFAutoModelForCausalLM
# docstrings, with the import lines changed to qeff.auto and the model name
# pointing at the bundled stories260K (qeff downloads nothing): they compile
# and generate, giving what qeff.Session gives. QEfficient keywords qeff
# cannot honour are refused by name.
#
# ===----------------------------------------------------------------------=== #

import json
import os

import numpy as np
import pytest

import qeff
from conftest import STORIES


def test_readme_example(work):
    os.environ["QEFF_CACHE_DIR"] = os.path.join(work, "cache")
    # --- QEfficient's example; only the import line differs ---
    from qeff.auto import QEFFAutoModelForCausalLM, AutoTokenizer

    # Initialize the model using from_pretrained similar to transformers.AutoModelForCausalLM
    model_name = STORIES
    model = QEFFAutoModelForCausalLM.from_pretrained(model_name)

    # Now you can directly compile the model for Cloud AI 100
    model.compile(num_cores=16)  # Considering you have a Cloud AI 100 Standard SKU

    # You can now execute the model
    tokenizer = AutoTokenizer.from_pretrained(model_name)
    exec_info = model.generate(prompts=["Hi there!!"], tokenizer=tokenizer)
    # --- end of the example ---

    assert exec_info.batch_size == 1
    want = qeff.Session(model.artifact).generate("Hi there!!", max_new_tokens=128)
    assert exec_info.generated_texts == [want.text]
    assert isinstance(exec_info.generated_ids[0], np.ndarray)
    assert exec_info.generated_ids[0].tolist() == want.ids
    assert exec_info.perf_metrics.total_time > 0
    assert "Decode is=" in repr(exec_info)
    assert model.qpc_path == model.artifact.path  # no QPC without qaic-compile
    manifest = model.artifact.manifest
    assert manifest["options"]["ctx_len"] == 128 and manifest["options"]["prefill_seq_len"] == 32


def test_continuous_batching_example(work):
    from qeff.auto import QEFFAutoModelForCausalLM

    model = QEFFAutoModelForCausalLM.from_pretrained(STORIES, continuous_batching=True)
    qpc_path = model.compile(prefill_seq_len=16, ctx_len=128, full_batch_size=4,
                             num_cores=14, num_devices=1, mxfp6_matmul=True,
                             mxint8_kv_cache=True, mos=1, aic_enable_depth_first=True,
                             compile_dir=os.path.join(work, "cb"))
    assert qpc_path == os.path.join(work, "cb")
    options = model.artifact.manifest["options"]
    assert options["full_batch_size"] == 4 and options["mxfp6"] and options["mxint8_kv"]
    assert {"-mos=1", "-aic-enable-depth-first"} <= set(model.artifact.manifest["qaic_compile"])
    prompts = ["My name is", "Once upon a time", "The cat", "A dog", "The sun", "Hello"]
    info = model.generate(None, prompts, generation_len=20)
    assert info.batch_size == 4 and len(info.generated_texts) == 6
    session = qeff.Session(model.artifact)
    for prompt, text in zip(prompts, info.generated_texts):
        assert text == session.generate(prompt, max_new_tokens=20).text


def test_external_tokenizer_object(work):
    """A tokenizer that is not qeff's (transformers') encodes and decodes."""
    from qeff.auto import QEFFAutoModelForCausalLM

    class Wrapped:
        def __init__(self):
            self.inner = qeff.Tokenizer(STORIES)
            self.calls = 0

        def encode(self, text):
            self.calls += 1
            return self.inner.encode(text)

        def decode(self, ids, skip_special_tokens=False):
            return self.inner.decode(ids, skip_special_tokens)

    model = QEFFAutoModelForCausalLM.from_pretrained(STORIES)
    model.compile(ctx_len=64, compile_dir=os.path.join(work, "ext"))
    tok = Wrapped()
    info = model.generate(tok, ["Once upon a time"], generation_len=10)
    assert tok.calls == 1
    assert info.generated_texts[0] == model.generate(None, ["Once upon a time"],
                                                     generation_len=10).generated_texts[0]


@pytest.mark.parametrize("kwargs, word", [
    ({"num_hidden_layers": 2}, "num_hidden_layers"),
    ({"torch_dtype": "float16"}, "torch_dtype"),
    ({"qaic_config": ["include_sampler"]}, "qaic_config must be a dict"),
    ({"is_tlm": 1}, "is_tlm must be a bool"),
    ({"attn_implementation": "sdpa"}, "attn_implementation"),
])
def test_refused_from_pretrained(kwargs, word):
    from qeff.auto import QEFFAutoModelForCausalLM
    with pytest.raises(TypeError, match=word):
        QEFFAutoModelForCausalLM.from_pretrained(STORIES, **kwargs)


@pytest.mark.parametrize("kwargs, word", [
    ({"num_speculative_tokens": "3"}, "num_speculative_tokens"),
    ({"prefill_only": True}, "prefill_only"),
    ({"onnx_path": "model.onnx"}, "onnx_path"),
    ({"aic_num_cores": 16}, "use num_cores"),
    ({"enable_qnn": True}, "enable_qnn"),
    ({"full_batch_size": 4}, "continuous_batching=True"),
    ({"kv_cache_batch_size": 8}, "kv_cache_batch_size"),
])
def test_refused_compile(kwargs, word, work):
    from qeff.auto import QEFFAutoModelForCausalLM
    model = QEFFAutoModelForCausalLM.from_pretrained(STORIES)
    with pytest.raises(TypeError, match=word):
        model.compile(compile_dir=os.path.join(work, "refused"), **kwargs)


def test_speculative_target(work):
    # QEfficient's target-model keyword: Decode specializations of K+1 tokens.
    from qeff.auto import QEFFAutoModelForCausalLM
    model = QEFFAutoModelForCausalLM.from_pretrained(STORIES)
    model.compile(prefill_seq_len=16, ctx_len=64, num_speculative_tokens=3,
                  compile_dir=os.path.join(work, "target"))
    manifest = model.artifact.manifest
    assert manifest["options"]["num_speculative_tokens"] == [3]
    specs = json.load(open(os.path.join(model.artifact.path, "specializations.json")))
    assert "4" in {s["symbols"]["seq_len"] for s in specs["specializations"]}
    # The target still decodes plainly, as the model it was compiled from.
    plain = QEFFAutoModelForCausalLM.from_pretrained(STORIES)
    plain.compile(prefill_seq_len=16, ctx_len=64, compile_dir=os.path.join(work, "plain"))
    got = qeff.Session(model.artifact).generate("Once", max_new_tokens=20)
    want = qeff.Session(plain.artifact).generate("Once", max_new_tokens=20)
    assert got.ids == want.ids


def test_other_errors(work):
    from qeff.auto import QEFFAutoModelForCausalLM
    with pytest.raises(qeff.Error, match="downloads nothing"):
        QEFFAutoModelForCausalLM.from_pretrained("gpt2-not-a-local-dir")
    model = QEFFAutoModelForCausalLM.from_pretrained(STORIES, continuous_batching=True)
    with pytest.raises(TypeError, match="full_batch_size"):
        model.compile()
    with pytest.raises(TypeError, match="compile API first"):
        model.generate(None, ["x"])
    plain = QEFFAutoModelForCausalLM.from_pretrained(STORIES)
    plain.compile(ctx_len=64, compile_dir=os.path.join(work, "plain"))
    with pytest.raises(NotImplementedError, match="PyTorch"):
        plain.generate(None, ["x"], runtime_ai100=False)
    with pytest.raises(TypeError, match="device_id"):
        plain.generate(None, ["x"], device_id=[0])
    # Other compiler options pass through to qaic-compile by QEfficient's rule
    # (qaic-compile judges them; qeff refuses only those it sets itself).
    plain.compile(ctx_len=64, compile_dir=os.path.join(work, "plain2"), unknown_flag=1,
                  convert_to_fp32=False)
    args = plain.artifact.manifest["qaic_compile"]
    assert "-unknown-flag=1" in args and not any("fp32" in a for a in args)


def _outputs(artifact):
    return [io["name"] for io in artifact.manifest["outputs"] if not io["name"].startswith("past")]


def test_qaic_config_include_sampler(work):
    # QEfficient's on-device sampling: next_tokens instead of logits; greedy
    # generation through it gives the plain model's tokens.
    from qeff.auto import QEFFAutoModelForCausalLM
    model = QEFFAutoModelForCausalLM.from_pretrained(
        STORIES, qaic_config={"include_sampler": True, "return_pdfs": False,
                              "max_top_k_ids": 256})
    assert model.include_sampler and not model.is_tlm
    model.compile(prefill_seq_len=16, ctx_len=64, compile_dir=os.path.join(work, "sampler"))
    options = model.artifact.manifest["options"]
    assert options["on_device_sampling"] is True and options["max_top_k_ids"] == 256
    assert "next_tokens" in _outputs(model.artifact) and "logits" not in _outputs(model.artifact)
    info = model.generate(None, ["Once upon a time", "The cat"], generation_len=16)
    plain = QEFFAutoModelForCausalLM.from_pretrained(STORIES)
    plain.compile(prefill_seq_len=16, ctx_len=64, compile_dir=os.path.join(work, "plain-s"))
    want = plain.generate(None, ["Once upon a time", "The cat"], generation_len=16)
    assert [ids.tolist() for ids in info.generated_ids] == \
        [ids.tolist() for ids in want.generated_ids]
    assert info.generated_texts == want.generated_texts
    with pytest.raises(TypeError, match="sampling_params is not supported by qeff.auto"):
        model.generate(None, ["x"], generation_len=4, sampling_params={"temperatures": [0.5]})
    # Without max_top_k_ids: qeff's default (512, or the vocabulary when
    # smaller: QEfficient's default is 512).
    default = QEFFAutoModelForCausalLM.from_pretrained(
        STORIES, qaic_config={"include_sampler": True})
    default.compile(prefill_seq_len=16, ctx_len=64,
                    compile_dir=os.path.join(work, "sampler-default"))
    assert default.artifact.manifest["options"]["on_device_sampling"] is True
    assert "max_top_k_ids" not in default.artifact.manifest["options"]
    # include_sampler=False is the plain model.
    off = QEFFAutoModelForCausalLM.from_pretrained(
        STORIES, qaic_config={"include_sampler": False, "return_pdfs": False})
    off.compile(prefill_seq_len=16, ctx_len=64, compile_dir=os.path.join(work, "sampler-off"))
    assert "on_device_sampling" not in off.artifact.manifest["options"]
    assert "logits" in _outputs(off.artifact)


@pytest.mark.parametrize("load", [{"is_tlm": True},
                                  {"qaic_config": {"speculative_model_type": "target"}}])
def test_qaic_config_speculative_target(load, work):
    # QEfficient's target (TLM) form, by its older is_tlm keyword and by
    # qaic_config: compile needs num_speculative_tokens, and K + 1 must fit a
    # prefill chunk.
    from qeff.auto import QEFFAutoModelForCausalLM
    model = QEFFAutoModelForCausalLM.from_pretrained(STORIES, **load)
    assert model.is_tlm and not model.include_sampler
    out = os.path.join(work, "tlm-" + "-".join(load))
    with pytest.raises(TypeError, match="missing required argument `num_speculative_tokens`"):
        model.compile(prefill_seq_len=16, ctx_len=64, compile_dir=out)
    with pytest.raises(ValueError, match=r"sequence length \(4\) must be at least "
                                         r"`num_speculative_tokens\+1` \(5\)"):
        model.compile(prefill_seq_len=4, ctx_len=64, num_speculative_tokens=4,
                      compile_dir=out)
    model.compile(prefill_seq_len=16, ctx_len=64, num_speculative_tokens=3, compile_dir=out)
    assert model.artifact.manifest["options"]["num_speculative_tokens"] == [3]
    names = [io["name"] for io in model.artifact.manifest["inputs"]]
    assert "num_logits_to_keep" in names
    info = model.generate(None, ["Once"], generation_len=12)
    want = qeff.Session(model.artifact).generate("Once", max_new_tokens=12)
    assert info.generated_ids[0].tolist() == want.ids


@pytest.mark.parametrize("config, message", [
    ({"return_pdfs": True, "include_sampler": True},
     r"qaic_config\['return_pdfs'\]=True is not supported by qeff: .* next_tokens only"),
    ({"speculative_model_type": "turbo"},
     r"qaic_config\['speculative_model_type'\]='turbo' is not supported by qeff"),
    ({"max_top_k_ids": 512}, r"qaic_config\['max_top_k_ids'\] applies only with "
                             r"include_sampler=True"),
    ({"include_sampler": True, "max_top_k_ids": 0}, r"must be an int in 1..65536, got 0"),
    ({"include_sampler": True, "max_top_k_ids": "512"}, r"must be an int in 1..65536"),
    ({"include_sampler": "yes"}, r"qaic_config\['include_sampler'\] must be a bool"),
    ({"return_pdfs": 1}, r"qaic_config\['return_pdfs'\] must be a bool"),
    ({"num_kv_blocks": 4}, r"qaic_config\['num_kv_blocks'\] is not supported by qeff: "
                           r".*blocked-KV"),
    ({"ccl_enabled": True}, r"qaic_config\['ccl_enabled'\] is not supported"),
    ({"include_guided_decoding": True},
     r"qaic_config\['include_guided_decoding'\] is not supported"),
    ({"include_sampler": True, "top_k": 5},
     r"qaic_config\['top_k'\] is not a key qeff knows \(it reads "
     r"speculative_model_type, include_sampler, return_pdfs, max_top_k_ids\)"),
    ({"pretrained_model_name_or_path": "/elsewhere"},
     r"qaic_config\['pretrained_model_name_or_path'\] is not a key qeff knows"),
])
def test_qaic_config_refused(config, message):
    from qeff.auto import QEFFAutoModelForCausalLM
    with pytest.raises(ValueError, match=message):
        QEFFAutoModelForCausalLM.from_pretrained(STORIES, qaic_config=config)


def test_qaic_config_as_qefficient_leaves_it(work):
    # QEfficient writes pretrained_model_name_or_path into the dict it was
    # given; that dict passed again is accepted.
    from qeff.auto import QEFFAutoModelForCausalLM
    config = {"include_sampler": True, "pretrained_model_name_or_path": STORIES}
    model = QEFFAutoModelForCausalLM.from_pretrained(STORIES, qaic_config=config)
    assert model.include_sampler
    # The sampler takes the last token's logits only: no target with it.
    with pytest.raises(ValueError, match="sampler does not support `num_speculative_tokens`"):
        model.compile(prefill_seq_len=16, ctx_len=64, num_speculative_tokens=3,
                      compile_dir=os.path.join(work, "sampler-tlm"))
    both = QEFFAutoModelForCausalLM.from_pretrained(
        STORIES, qaic_config={"include_sampler": True, "speculative_model_type": "target"})
    with pytest.raises(ValueError, match="sampler does not support `num_speculative_tokens`"):
        both.compile(prefill_seq_len=16, ctx_len=64, num_speculative_tokens=3,
                     compile_dir=os.path.join(work, "sampler-tlm2"))
