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
    ({"qaic_config": {"speculative_model_type": "x"}}, "qaic_config"),
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
