// `qeff serve --models cards.json` (issue 13, item 3): every card of a
// model-card file served by its name. The cards are first compiled with
// `qeff compile --models` into the same cache, so the server only hits it.
// /v1/models lists the cards in order with their context lengths; the OpenAI
// `model` field and the v2 `{name}` route reach each card (greedy output equal
// to `qeff infer` on the card's OUT/<name>, the golden card's tokens equal to
// its golden); an unknown model is 404; a bad card file stops the start.
"use strict";
const path = require("path");
const fs = require("fs");
const { spawnSync } = require("child_process");
const L = require("./lib");
const { assert } = L;

const t = L.args();
const golden = path.join(t.modelDir, "..", "..", "golden", "LlamaForCausalLM");
const g = JSON.parse(fs.readFileSync(path.join(golden, "golden.json"), "utf8"));
const cards = {
  defaults: { ctx_len: 256, prefill_seq_len: 32 },
  models: [
    { name: "stories", model: t.modelDir, full_batch_size: 4 },
    { name: "stories-b1", model: t.modelDir, ctx_len: 128 },
    { name: "llama-golden", model: golden, ctx_len: 64, prefill_seq_len: 16, full_batch_size: 2 },
  ],
};
const cardsFile = path.join(t.workDir, "cards.json");
fs.writeFileSync(cardsFile, JSON.stringify(cards));
const env = { QEFF_CACHE_DIR: path.join(t.workDir, "cache") };
const out = path.join(t.workDir, "out");
let server, ai;
const post = (route, body) => L.http(server, route, {
  method: "POST", headers: { "Content-Type": "application/json" }, body: JSON.stringify(body),
});

L.run([
  ["qeff compile --models, then qeff serve --models: every card a cache hit", async () => {
    const c = spawnSync(t.qeff, ["compile", "--models", cardsFile, "-o", out], { env: { ...process.env, ...env }, encoding: "utf8" });
    assert.strictEqual(c.status, 0, c.stdout + c.stderr);
    server = await L.startServer(t, null, ["--models", cardsFile], 60000, env);
    ai = L.client(server);
    assert.strictEqual((server.log().match(/using cached artifacts/g) || []).length, 3, server.log());
    assert.match(server.stdout, /\(models 'stories', 'stories-b1', 'llama-golden'\)/);
  }],
  ["/v1/models lists the cards", async () => {
    const list = await ai.models.list();
    assert.deepStrictEqual(list.data.map((m) => [m.id, m.max_model_len]),
                           [["stories", 256], ["stories-b1", 128], ["llama-golden", 64]]);
  }],
  ["the OpenAI model field reaches each card", async () => {
    for (const name of ["stories", "stories-b1"]) {
      const [ref] = L.infer(t, path.join(out, name), ["Once upon a time"], 24);
      const r = await ai.completions.create({ model: name, prompt: "Once upon a time", max_tokens: 24,
                                              temperature: 0, return_token_ids: true });
      assert.strictEqual(r.model, name);
      assert.deepStrictEqual(r.choices[0].token_ids, ref.generated_ids, name);
    }
    const prompt = g.prompt_ids[0];
    const r = await ai.completions.create({ model: "llama-golden", prompt, max_tokens: g.N, temperature: 0,
                                            return_token_ids: true });
    assert.deepStrictEqual(r.choices[0].token_ids, g.greedy_tokens[0], "the golden's greedy tokens");
  }],
  ["the v2 {name} route reaches each card", async () => {
    const [ref] = L.infer(t, path.join(out, "stories-b1"), ["Lily and Ben"], 16);
    const res = await post("/v2/models/stories-b1/generate", { text_input: "Lily and Ben", parameters: { max_tokens: 16, temperature: 0 } });
    assert.strictEqual(res.status, 200);
    const body = await res.json();
    assert.strictEqual(body.model_name, "stories-b1");
    assert.strictEqual(body.text_output, ref.text);
    for (const name of ["stories", "stories-b1", "llama-golden"])
      assert.strictEqual((await L.http(server, `/v2/models/${name}/ready`)).status, 200, name);
  }],
  ["an unknown model is 404", async () => {
    const res = await post("/v1/completions", { model: "stories-b2", prompt: "x", max_tokens: 1 });
    assert.strictEqual(res.status, 404);
    assert.strictEqual((await L.http(server, "/v2/models/nope/ready")).status, 404);
  }],
  ["a bad card file stops the start, naming the card and the key", async () => {
    const bad = path.join(t.workDir, "bad.json");
    fs.writeFileSync(bad, JSON.stringify({ models: [{ name: "a", model: t.modelDir, full_batch_size: "4" }] }));
    const r = spawnSync(t.qeff, ["serve", "--models", bad, "--port", "0"], { encoding: "utf8", env: { ...process.env, ...env } });
    assert.strictEqual(r.status, 1);
    assert.match(r.stderr, /models\[0\] 'a': key 'full_batch_size': must be an integer/);
    const both = spawnSync(t.qeff, ["serve", t.modelDir, "--models", cardsFile], { encoding: "utf8" });
    assert.strictEqual(both.status, 1);
    assert.match(both.stderr, /drop the model directory/);
  }],
]);
