# ===- test/python/test_api.py - the low-level API on stories260K ----------=== #
#
# Part of qeff. qeff.compile -> qeff.Session.generate equals `qeff run
# --json` (ids, text, finish reason), batch and stream agree, the tokenizer
# equals the one `qeff run` uses, the chat template equals jinja2's.
#
# ===----------------------------------------------------------------------=== #

import json
import os
import shutil

import pytest

import qeff
from conftest import STORIES, SOURCE, qeff_run_json

PROMPTS = ["Once upon a time", "The little dog"]


def test_compile_artifact(stories):
    assert isinstance(stories, qeff.Artifact)
    assert os.path.isfile(os.path.join(stories.path, "model.onnx"))
    names = {os.path.basename(p) for p, _ in stories.files}
    assert {"model.onnx", "specializations.json", "qeff-manifest.json"} <= names
    assert stories.manifest["options"]["ctx_len"] == 256
    assert not stories.qpc_built and stories.qpc_path is None
    assert os.fspath(stories) == stories.path


def test_generate_text_equals_cli(stories):
    session = qeff.Session(stories)
    for prompt in PROMPTS:
        got = session.generate(prompt, max_new_tokens=40)
        want = qeff_run_json(stories, "--prompt", prompt, "--max-new-tokens", "40")["rows"][0]
        assert got.prompt_ids == want["prompt_ids"]
        assert got.ids == want["generated_ids"]
        assert got.text == want["text"]
        assert got.finish_reason == want["finish_reason"]
        assert got.metrics["generated_tokens"] == len(want["generated_ids"])
        # The keys of `qeff run --json`'s metrics, speculation's included.
        assert got.metrics["spec_proposed_tokens"] == want["metrics"]["spec_proposed_tokens"] == 0
        assert got.metrics["spec_accepted_tokens"] == want["metrics"]["spec_accepted_tokens"] == 0


def test_generate_batch_and_ids(stories):
    session = qeff.Session(stories, threads=1)
    rows = session.generate(PROMPTS, max_new_tokens=24)
    assert isinstance(rows, list) and len(rows) == 2
    for prompt, row in zip(PROMPTS, rows):
        one = session.generate(row.prompt_ids, max_new_tokens=24)
        assert one.ids == row.ids and one.text == row.text
        assert row.prompt_ids == qeff.Tokenizer(stories.path).encode(prompt)


def test_sampling_is_seeded(stories):
    session = qeff.Session(stories)
    a = session.generate(PROMPTS[0], max_new_tokens=32, temperature=0.9, top_p=0.9, seed=7)
    b = session.generate(PROMPTS[0], max_new_tokens=32, temperature=0.9, top_p=0.9, seed=7)
    want = qeff_run_json(stories, "--prompt", PROMPTS[0], "--max-new-tokens", "32",
                         "--temperature", "0.9", "--top-p", "0.9", "--seed", "7")
    assert a.ids == b.ids == want["rows"][0]["generated_ids"]


def test_stream_equals_batch(stories):
    session = qeff.Session(stories)
    want = session.generate(PROMPTS, max_new_tokens=30)
    stream = session.generate(PROMPTS, max_new_tokens=30, stream=True)
    ids = {0: [], 1: []}
    text = {0: "", 1: ""}
    for chunk in stream:
        assert isinstance(chunk, qeff.StreamChunk)
        ids[chunk.row].append(chunk.token)
        text[chunk.row] += chunk.text
    assert stream.result is not None
    for row in (0, 1):
        assert ids[row] == want[row].ids == stream.result[row].ids
        assert text[row] == want[row].text
    # The session is free again once the stream ended.
    assert session.generate(PROMPTS[0], max_new_tokens=4).ids == want[0].ids[:4]


def test_stream_closed_early_frees_the_session(stories):
    session = qeff.Session(stories)
    stream = session.generate(PROMPTS[0], max_new_tokens=200, stream=True)
    first = next(stream)
    stream.close()
    again = session.generate(PROMPTS[0], max_new_tokens=3)
    assert again.ids[0] == first.token


def test_tokenizer(stories):
    tok = qeff.Tokenizer(STORIES)
    cli = qeff_run_json(stories, "--prompt", PROMPTS[0], "--max-new-tokens", "1")
    assert tok.encode(PROMPTS[0]) == cli["rows"][0]["prompt_ids"]
    assert tok.encode(PROMPTS[0], add_special_tokens=False) == cli["rows"][0]["prompt_ids"][1:]
    assert tok.decode(tok.encode(PROMPTS[0]), skip_special_tokens=True) == PROMPTS[0]
    assert tok.bos_token_id == 1 and 2 in tok.eos_token_ids
    assert tok.vocab_size == len(tok) == 512
    assert tok(PROMPTS)["input_ids"][1] == tok.encode(PROMPTS[1])
    # A file path works too.
    assert qeff.Tokenizer(os.path.join(STORIES, "tokenizer.json")).encode("a b") == tok.encode("a b")


def test_chat_template_equals_jinja2(work):
    jinja2 = pytest.importorskip("jinja2")
    chat = os.path.join(work, "stories-chat")
    shutil.copytree(STORIES, chat)
    shutil.copy(os.path.join(SOURCE, "test", "data", "chat-templates", "stories260K-chat",
                             "tokenizer_config.json"), chat)
    tok = qeff.Tokenizer(chat)
    messages = [{"role": "system", "content": "You tell stories."},
                {"role": "user", "content": "A story about a cat, please."}]
    text = tok.apply_chat_template(messages, add_generation_prompt=True, tokenize=False)
    with open(os.path.join(chat, "tokenizer_config.json"), encoding="utf-8") as f:
        config = json.load(f)
    env = jinja2.Environment(trim_blocks=True, lstrip_blocks=True)
    want = env.from_string(config["chat_template"]).render(
        messages=messages, add_generation_prompt=True, bos_token=config["bos_token"],
        eos_token=config["eos_token"])
    assert text == want
    assert tok.apply_chat_template(messages, add_generation_prompt=True) == \
        tok.encode(want, add_special_tokens=False)


def test_compile_progress_and_logging(work, caplog):
    seen = []
    with caplog.at_level("INFO", logger="qeff"):
        qeff.compile(STORIES, os.path.join(work, "progress"), ctx_len=64,
                     progress=lambda stage, done, total: seen.append((stage, done, total)))
    stages = [s for s, d, t in seen if t == 0]
    assert stages == ["import", "device pipeline", "lowering", "export"]
    exported = [(d, t) for s, d, t in seen if s == "export" and t]
    assert exported and exported[-1][0] == exported[-1][1] > 0
    assert all(a[0] <= b[0] for a, b in zip(exported, exported[1:]))
    assert any("device pipeline" in r.getMessage() for r in caplog.records)


def test_default_out_is_in_the_cache(work):
    artifact = qeff.compile(STORIES, ctx_len=64, prefill_seq_len=8)
    assert artifact.path.startswith(qeff.default_cache_dir())
    assert qeff.Session(artifact).generate("Once", max_new_tokens=2).ids


def test_compile_cards(work):
    cards = os.path.join(work, "cards.json")
    with open(cards, "w", encoding="utf-8") as f:
        json.dump({"defaults": {"ctx_len": 64},
                   "models": [{"name": "stories", "model": STORIES},
                              {"name": "llama", "model": os.path.join(
                                  SOURCE, "test", "data", "golden", "LlamaForCausalLM"),
                               "ctx_len": 32}]}, f)
    summary = qeff.compile_cards(cards, os.path.join(work, "cards-out"), jobs=2,
                                 cache_dir=os.path.join(work, "cards-cache"))
    assert [c["name"] for c in summary["cards"]] == ["stories", "llama"]
    assert all(c["status"] == "ok" for c in summary["cards"])
    session = qeff.Session(os.path.join(work, "cards-out", "stories"))
    assert session.generate("Once upon a time", max_new_tokens=8).ids


def test_gil_is_released_and_sessions_run_in_parallel(stories):
    """Another Python thread keeps running while a session generates (its
    longest pause is far shorter than the generation), and two sessions
    generating in two threads give what they give alone."""
    import threading
    import time
    session = qeff.Session(stories, threads=1)
    alone = session.generate(PROMPTS, max_new_tokens=60)
    stop = threading.Event()
    gaps = []

    def count():
        last = time.monotonic()
        while not stop.is_set():
            now = time.monotonic()
            gaps.append(now - last)
            last = now

    counter = threading.Thread(target=count)
    counter.start()
    time.sleep(0.05)
    gaps.clear()
    start = time.monotonic()
    session.generate(PROMPTS * 6, max_new_tokens=200, ignore_eos=True)
    took = time.monotonic() - start
    stop.set()
    counter.join()
    assert took > 0.2, took
    assert max(gaps) < took / 3, (max(gaps), took)

    results = {}

    def work(i):
        results[i] = qeff.Session(stories, threads=1).generate(PROMPTS, max_new_tokens=60)

    workers = [threading.Thread(target=work, args=(i,)) for i in range(2)]
    for w in workers:
        w.start()
    for w in workers:
        w.join()
    for i in range(2):
        assert [r.ids for r in results[i]] == [r.ids for r in alone]


def test_fp16_numerics_read_the_precision_list(work):
    """numerics='fp16' keeps the artifact's node_precision.yaml nodes in fp32,
    as `qeff run --numerics fp16` does; a malformed list names its line."""
    artifact = qeff.compile(STORIES, os.path.join(work, "fp16"), ctx_len=64,
                            fp32_scopes=["model.layers.0.mlp"])
    listed = os.path.join(artifact.path, "node_precision.yaml")
    assert os.path.isfile(listed)
    got = qeff.Session(artifact, numerics="fp16").generate(PROMPTS[0], max_new_tokens=20)
    want = qeff_run_json(artifact, "--numerics", "fp16", "--prompt", PROMPTS[0],
                         "--max-new-tokens", "20")["rows"][0]
    assert got.ids == want["generated_ids"]
    # Naming no node in fp32 is another computation (and accepted).
    assert qeff.Session(artifact, numerics="fp16", fp32_nodes=[]).generate(
        PROMPTS[0], max_new_tokens=2).ids
    with open(listed, "a", encoding="utf-8") as f:
        f.write("Other: 1\n")
    with pytest.raises(qeff.Error, match="node_precision.yaml: line"):
        qeff.Session(artifact, numerics="fp16")
