// `qeff serve` on an on-device-sampling artifact (issue 31, item 4's serving
// half): each continuous-batching row feeds its own request's sampling
// parameters and seeded uniforms. Greedy output equals the plain artifact's
// and the goldens' greedy tokens for concurrent requests; a seeded request
// gives the same tokens alone, next to another request, and as `qeff run
// --seed`; a request after another in the same row starts with cleared
// penalty buffers; the fields that need logits on the host, best_of, and
// top_k above max_top_k_ids are 400s naming the field; stop strings, stop
// token ids, streaming, usage and /metrics work; speculation is refused at
// start.
"use strict";
const path = require("path");
const fs = require("fs");
const { execFileSync } = require("child_process");
const L = require("./lib");
const { assert } = L;

const t = L.args();
const TOPK = 64;
const samplerArtifact = L.compile(t, "sampler", ["--ctx-len", "256", "--full-batch-size", "2",
  "--on-device-sampling", "--max-top-k-ids", String(TOPK)]);
const plainArtifact = L.compile(t, "plain", ["--ctx-len", "256", "--full-batch-size", "2"]);
const goldenRoot = path.join(t.modelDir, "..", "..", "golden");
const GOLDENS = ["LlamaForCausalLM", "GPT2LMHeadModel"];
const PROMPTS = ["Once upon a time", "Lily and Ben", "The sun was", "Tom had a dog"];
// What `qeff run` can also be given (it has no --min-p).
const SAMPLED = { temperature: 0.9, top_k: 40, top_p: 0.95 };

let sampler, plain;

async function post(server, route, body) {
  const res = await L.http(server, route, {
    method: "POST", headers: { "Content-Type": "application/json" },
    body: JSON.stringify({ model: "m", ...body }), timeoutMs: 60000,
  });
  return { status: res.status, body: await res.text() };
}

async function complete(server, body) {
  const r = await post(server, "/v1/completions", { temperature: 0, return_token_ids: true, ...body });
  assert.strictEqual(r.status, 200, r.body);
  return JSON.parse(r.body);
}

/// The events of a streamed completion (parsed), without [DONE].
async function streamed(server, body) {
  const r = await post(server, "/v1/completions", { stream: true, ...body });
  assert.strictEqual(r.status, 200, r.body);
  const lines = r.body.split("\n").filter((l) => l.startsWith("data: "));
  assert.strictEqual(lines[lines.length - 1], "data: [DONE]");
  return lines.slice(0, -1).map((l) => JSON.parse(l.slice(6)));
}

/// A 400 whose error names `field` and says why.
async function refused(route, body, field, message) {
  const r = await post(sampler, route, { max_tokens: 8, ...body });
  assert.strictEqual(r.status, 400, `${field}: ${r.body}`);
  const e = JSON.parse(r.body).error;
  // The V2 protocol's error is a string that starts with the field.
  if (typeof e === "string") {
    assert.ok(e.startsWith(field + " "), r.body);
    assert.match(e, message, r.body);
    return;
  }
  assert.strictEqual(e.param, field, r.body);
  assert.match(e.message, message, r.body);
}

/// `qeff run <artifact> --json` on one text prompt: its generated ids.
function run(artifact, prompt, extra) {
  const out = execFileSync(t.qeff, ["run", artifact, "--prompt", prompt, "--json", ...extra],
    { encoding: "utf8", stdio: ["ignore", "pipe", "inherit"] });
  return JSON.parse(out).rows[0].generated_ids;
}

/// A golden's prompts without their left padding, and its greedy tokens.
function golden(name) {
  const g = JSON.parse(fs.readFileSync(path.join(goldenRoot, name, "golden.json"), "utf8"));
  const prompts = g.prompt_ids.map((ids, i) => ids.filter((_, j) => g.attention_mask[i][j] === 1));
  return { prompts, want: g.greedy_tokens, n: g.N };
}

L.run([
  ["start: a sampler artifact and the plain one (2 rows each)", async () => {
    sampler = await L.startServer(t, samplerArtifact, ["--model-name", "m"]);
    plain = await L.startServer(t, plainArtifact, ["--model-name", "m"]);
  }],
  ["greedy tokens equal the plain artifact's, concurrent requests over 2 rows", async () => {
    const want = [];
    for (const prompt of PROMPTS) want.push((await complete(plain, { prompt, max_tokens: 48 })).choices[0]);
    const got = await Promise.all(PROMPTS.map((prompt) => complete(sampler, { prompt, max_tokens: 48 })));
    got.forEach((r, i) => {
      assert.deepStrictEqual(r.choices[0].token_ids, want[i].token_ids, `prompt ${i}`);
      assert.strictEqual(r.choices[0].text, want[i].text, `prompt ${i}`);
      assert.strictEqual(r.choices[0].finish_reason, want[i].finish_reason, `prompt ${i}`);
    });
  }],
  ["a seeded request: the same tokens alone, twice, next to another request, and as qeff run --seed", async () => {
    const body = { prompt: "Once upon a time", max_tokens: 40, ignore_eos: true, ...SAMPLED };
    const alone = (await complete(sampler, { ...body, seed: 11 })).choices[0];
    assert.deepStrictEqual((await complete(sampler, { ...body, seed: 11 })).choices[0].token_ids, alone.token_ids);
    // Next to another request with other parameters (in the other row,
    // started first so that the seeded one decodes beside it).
    const [other, beside] = await Promise.all([
      complete(sampler, { prompt: "Lily and Ben", max_tokens: 60, temperature: 1.2, seed: 5, repetition_penalty: 1.4 }),
      complete(sampler, { ...body, seed: 11 })]);
    assert.deepStrictEqual(beside.choices[0].token_ids, alone.token_ids, "beside another request");
    assert.ok(other.choices[0].token_ids.length > 0);
    // `qeff run` draws the uniforms the same way (max_top_k_ids per run of
    // the sequence, from its seed).
    const ran = run(samplerArtifact, "Once upon a time", ["--seed", "11", "--temperature", "0.9", "--top-k", "40",
      "--top-p", "0.95", "--max-new-tokens", "40"]);
    // qeff run stops at EOS, the request ignored it.
    assert.deepStrictEqual(alone.token_ids.slice(0, ran.length), ran, "qeff run --seed 11");
    // Seeds matter and sampling leaves the greedy path.
    const greedy = (await complete(sampler, { ...body, temperature: 0 })).choices[0].token_ids;
    const others = [];
    for (const seed of [12, 13]) others.push((await complete(sampler, { ...body, seed })).choices[0].token_ids);
    assert.ok([alone.token_ids, ...others].some((ids) => JSON.stringify(ids) !== JSON.stringify(greedy)),
      "sampling at temperature 0.9 never left the greedy path");
    assert.ok(others.some((ids) => JSON.stringify(ids) !== JSON.stringify(alone.token_ids)), "seeds 11..13 agree");
  }],
  ["a greedy row beside a sampled row stays greedy (per-row temperatures)", async () => {
    const prompt = "The sun was";
    const want = (await complete(plain, { prompt, max_tokens: 40 })).choices[0].token_ids;
    const [, greedy] = await Promise.all([
      complete(sampler, { prompt: "Tom had a dog", max_tokens: 60, temperature: 1.5, seed: 3 }),
      complete(sampler, { prompt, max_tokens: 40 })]);
    assert.deepStrictEqual(greedy.choices[0].token_ids, want);
  }],
  ["penalties: per row, equal to qeff run, and cleared for the next request in a row", async () => {
    const prompt = "Once upon a time";
    const body = { prompt, max_tokens: 40, repetition_penalty: 1.5, presence_penalty: 0.8, seed: 2 };
    const ran = run(samplerArtifact, prompt, ["--repetition-penalty", "1.5", "--temperature", "0",
      "--max-new-tokens", "40"]);
    const first = (await complete(sampler, { ...body, presence_penalty: 0 })).choices[0].token_ids;
    assert.deepStrictEqual(first.slice(0, ran.length), ran, "greedy with repetition_penalty 1.5 vs qeff run");
    const plainGreedy = (await complete(plain, { prompt, max_tokens: 40 })).choices[0].token_ids;
    assert.notDeepStrictEqual(first, plainGreedy, "the repetition penalty changed nothing");
    const penalized = (await complete(sampler, body)).choices[0].token_ids;
    // Both rows now hold other sequences' buffers; a request admitted to
    // either must start clean.
    await Promise.all([
      complete(sampler, { prompt: "Lily and Ben", max_tokens: 50, repetition_penalty: 2 }),
      complete(sampler, { prompt: "Tom had a dog", max_tokens: 50, presence_penalty: 2 })]);
    const again = await Promise.all([complete(sampler, body), complete(sampler, body)]);
    for (const r of again) assert.deepStrictEqual(r.choices[0].token_ids, penalized, "after other requests");
  }],
  ["n = 2 choices are the single requests seeded s and s + 1", async () => {
    const body = { prompt: "Lily and Ben", max_tokens: 24, ...SAMPLED, min_p: 0.02 };
    const both = await complete(sampler, { ...body, n: 2, seed: 40 });
    for (const j of [0, 1]) {
      const single = await complete(sampler, { ...body, seed: 40 + j });
      assert.deepStrictEqual(both.choices[j].token_ids, single.choices[0].token_ids, `choice ${j}`);
    }
  }],
  ["stop strings, stop token ids, max_tokens, streaming with usage, /metrics", async () => {
    const prompt = "Once upon a time";
    const whole = (await complete(sampler, { prompt, max_tokens: 48 })).choices[0];
    const stop = whole.text.slice(12, 16);
    const cut = (await complete(sampler, { prompt, max_tokens: 48, stop: [stop] })).choices[0];
    assert.strictEqual(cut.text, whole.text.slice(0, whole.text.indexOf(stop)));
    assert.strictEqual(cut.finish_reason, "stop");
    const stopId = whole.token_ids[5];
    const byId = (await complete(sampler, { prompt, max_tokens: 48, stop_token_ids: [stopId] })).choices[0];
    assert.deepStrictEqual(byId.token_ids, whole.token_ids.slice(0, whole.token_ids.indexOf(stopId)));
    assert.strictEqual(byId.finish_reason, "stop");
    const short = (await complete(sampler, { prompt, max_tokens: 7 })).choices[0];
    assert.deepStrictEqual(short.token_ids, whole.token_ids.slice(0, 7));
    assert.strictEqual(short.finish_reason, "length");

    const before = L.metric(await L.metrics(sampler), 'qeff_generation_tokens_total{model="m"}');
    const events = await streamed(sampler, { prompt, max_tokens: 48, temperature: 0,
      stream_options: { include_usage: true } });
    const text = events.map((e) => (e.choices[0] ? e.choices[0].text : "")).join("");
    assert.strictEqual(text, whole.text);
    const usage = events[events.length - 1].usage;
    assert.strictEqual(usage.completion_tokens, whole.token_ids.length);
    assert.strictEqual(usage.prompt_tokens, 5);
    const after = L.metric(await L.metrics(sampler), 'qeff_generation_tokens_total{model="m"}');
    assert.strictEqual(after - before, whole.token_ids.length, "qeff_generation_tokens_total");
    // A seeded stream equals the seeded whole answer.
    const seeded = { prompt, max_tokens: 32, seed: 9, ...SAMPLED, min_p: 0.02 };
    const sampledWhole = (await complete(sampler, seeded)).choices[0].text;
    const deltas = (await streamed(sampler, seeded)).map((e) => (e.choices[0] ? e.choices[0].text : ""));
    assert.strictEqual(deltas.join(""), sampledWhole);
    // The OpenAI client.
    const client = L.client(sampler);
    const r = await client.completions.create({ model: "m", prompt, max_tokens: 48, temperature: 0 });
    assert.strictEqual(r.choices[0].text, whole.text);
  }],
  ["fields that need logits, best_of and top_k above max_top_k_ids: 400 naming them", async () => {
    const device = /samples on the device \(qeff compile --on-device-sampling\)/;
    const c = "/v1/completions", chat = "/v1/chat/completions";
    const prompt = "Once upon a time";
    await refused(c, { prompt, logprobs: 2 }, "logprobs", device);
    await refused(c, { prompt, logprobs: 0 }, "logprobs", device);
    await refused(c, { prompt, frequency_penalty: 0.5 }, "frequency_penalty", device);
    await refused(c, { prompt, logit_bias: { "10": 5 } }, "logit_bias", device);
    await refused(c, { prompt, min_tokens: 2 }, "min_tokens", device);
    await refused(c, { prompt, response_format: { type: "json_object" } }, "response_format", device);
    await refused(c, { prompt, guided_json: { type: "object" } }, "guided_json", device);
    await refused(c, { prompt, n: 1, best_of: 2 }, "best_of", device);
    await refused(c, { prompt, top_k: TOPK + 1 }, "top_k", new RegExp(`top_k ${TOPK + 1} is above the ${TOPK}`));
    const messages = [{ role: "user", content: "hi" }];
    await refused(chat, { messages, logprobs: true, top_logprobs: 2 }, "logprobs", device);
    await refused(chat, { messages, frequency_penalty: 1 }, "frequency_penalty", device);
    await refused("/v2/models/m/generate", { text_input: prompt, parameters: { top_k: 500 } }, "top_k", /max_top_k_ids/);
    // top_k at the limit and the accepted penalties are fine.
    await complete(sampler, { prompt, max_tokens: 4, top_k: TOPK, temperature: 1, seed: 1 });
    await complete(sampler, { prompt, max_tokens: 4, presence_penalty: 1, repetition_penalty: 1.2 });
  }],
  ["every golden's greedy tokens, concurrent over 2 rows", async () => {
    for (const name of GOLDENS) {
      const g = golden(name);
      const artifact = path.join(t.workDir, `golden-${name}`);
      execFileSync(t.qeff, ["compile", path.join(goldenRoot, name), "-o", artifact, "--ctx-len", "64",
        "--prefill-seq-len", "4", "--full-batch-size", "2", "--on-device-sampling"],
        { stdio: ["ignore", "ignore", "inherit"] });
      const server = await L.startServer(t, artifact, ["--model-name", "m"], 60000);
      const prompts = [...g.prompts, ...g.prompts.slice().reverse()];
      const want = [...g.want, ...g.want.slice().reverse()];
      const got = await Promise.all(prompts.map((prompt) =>
        complete(server, { prompt, max_tokens: g.n })));
      got.forEach((r, i) => assert.deepStrictEqual(r.choices[0].token_ids, want[i], `${name}, request ${i}`));
      await L.stopServer(server);
    }
  }],
  ["speculation with a sampler artifact stops the start, saying why", async () => {
    let error;
    try {
      const s = await L.startServer(t, samplerArtifact, ["--speculate", "prompt-lookup"], 60000);
      await L.stopServer(s);
    } catch (e) {
      error = e;
    }
    assert.ok(error, "qeff serve --speculate started on a sampler artifact");
    assert.match(String(error.message), /speculative decoding \(prompt-lookup\) is not available with an on-device-sampling artifact/);
  }],
]);
