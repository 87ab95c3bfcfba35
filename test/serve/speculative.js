// `qeff serve --speculate` (issue 31, item 2's serving half): speculative
// decoding in the continuous-batching engine. Greedy output equals the
// non-speculative server's token for token (1 and 2 cache rows, concurrent
// requests) and every golden's greedy tokens; streamed deltas concatenate to
// the same text; a draft model equal to the target accepts every proposed
// token (K + 1 tokens per step); prompt lookup on repetitive text reports
// acceptance on /metrics; a stop string inside an accepted run truncates
// where the plain server does; logprobs and response_format hold per token;
// bad speculation options stop the start with a message naming them.
"use strict";
const path = require("path");
const fs = require("fs");
const L = require("./lib");
const { assert } = L;

const t = L.args();
const K = 3;
const cb2 = L.compile(t, "cb2", ["--ctx-len", "256", "--full-batch-size", "2", "--num-speculative-tokens", "1,3"]);
const cb1 = L.compile(t, "cb1", ["--ctx-len", "256", "--full-batch-size", "1", "--num-speculative-tokens", "3"]);
const plainArtifact = L.compile(t, "plain", ["--ctx-len", "256", "--full-batch-size", "2"]);
const cacheDir = path.join(t.workDir, "cache");
const goldenRoot = path.join(t.modelDir, "..", "..", "golden");
const GOLDENS = ["LlamaForCausalLM", "GPT2LMHeadModel", "MistralForCausalLM-small_window"];
const REPETITIVE = "Lily saw a red ball. Lily saw a red ball. Lily saw a red ball. Lily saw a red ball. Lily saw";
const PROMPTS = ["Once upon a time", "Lily and Ben", "The sun was", REPETITIVE, "Tom had a dog", "One day"];

let plain, spec, spec1, draft;
const servers = () => [plain, spec, spec1, draft].filter(Boolean);

async function complete(server, body) {
  const res = await L.http(server, "/v1/completions", {
    method: "POST", headers: { "Content-Type": "application/json" },
    body: JSON.stringify({ model: "m", temperature: 0, return_token_ids: true, ...body }),
    timeoutMs: 60000,
  });
  const text = await res.text();
  assert.strictEqual(res.status, 200, text);
  return JSON.parse(text);
}

/// The streamed deltas of one choice (each chunk's text, in order).
async function stream(server, body) {
  const res = await L.http(server, "/v1/completions", {
    method: "POST", headers: { "Content-Type": "application/json" },
    body: JSON.stringify({ model: "m", temperature: 0, stream: true, ...body }), timeoutMs: 60000,
  });
  assert.strictEqual(res.status, 200);
  const deltas = [];
  for (const line of (await res.text()).split("\n")) {
    if (!line.startsWith("data: ") || line === "data: [DONE]") continue;
    const chunk = JSON.parse(line.slice(6));
    if (chunk.choices && chunk.choices[0] && chunk.choices[0].text) deltas.push(chunk.choices[0].text);
  }
  return deltas;
}

async function specCounts(server) {
  const text = await L.metrics(server);
  return {
    proposed: L.metric(text, 'qeff_spec_proposed_tokens_total{model="m"}'),
    accepted: L.metric(text, 'qeff_spec_accepted_tokens_total{model="m"}'),
    steps: L.metric(text, 'qeff_decode_step_rows_count{model="m"}'),
  };
}

/// `qeff serve` must exit before listening with a message matching `message`.
async function refusedAtStart(dir, options, message) {
  let error;
  try {
    const s = await L.startServer(t, dir, options, 60000);
    await L.stopServer(s);
  } catch (e) {
    error = e;
  }
  assert.ok(error, `qeff serve ${options.join(" ")} started`);
  assert.match(String(error.message), message);
}

/// A golden's prompts without their left padding, and its greedy tokens.
function golden(name) {
  const g = JSON.parse(fs.readFileSync(path.join(goldenRoot, name, "golden.json"), "utf8"));
  const prompts = g.prompt_ids.map((ids, i) => ids.filter((_, j) => g.attention_mask[i][j] === 1));
  return { prompts, want: g.greedy_tokens, n: g.N };
}

L.run([
  ["start: plain, prompt lookup (2 rows and 1 row), draft = target", async () => {
    const named = ["--model-name", "m"];
    plain = await L.startServer(t, plainArtifact, named);
    spec = await L.startServer(t, cb2, [...named, "--speculate", "prompt-lookup"]);
    // vLLM's spelling of the same.
    spec1 = await L.startServer(t, cb1, [...named, "--speculative-config",
      JSON.stringify({ method: "ngram", num_speculative_tokens: K, prompt_lookup_max: 3 })]);
    // A checkpoint target and its draft, both compiled through the cache.
    draft = await L.startServer(t, t.modelDir, [...named, "--ctx-len", "256", "--full-batch-size", "2",
      "--num-speculative-tokens", String(K), "--speculate", `draft=${t.modelDir}`, "--cache-dir", cacheDir], 120000);
  }],
  ["greedy tokens equal the plain server's, concurrent requests over 2 rows and 1 row", async () => {
    const want = [];
    for (const prompt of PROMPTS)
      want.push((await complete(plain, { prompt, max_tokens: 64 })).choices[0]);
    for (const server of [spec, spec1, draft]) {
      const got = await Promise.all(PROMPTS.map((prompt) => complete(server, { prompt, max_tokens: 64 })));
      got.forEach((r, i) => {
        assert.deepStrictEqual(r.choices[0].token_ids, want[i].token_ids, `prompt ${i}`);
        assert.strictEqual(r.choices[0].text, want[i].text, `prompt ${i}`);
        assert.strictEqual(r.choices[0].finish_reason, want[i].finish_reason, `prompt ${i}`);
      });
    }
  }],
  ["prompt lookup on repetitive text: acceptance > 0 on /metrics", async () => {
    const before = await specCounts(spec);
    await complete(spec, { prompt: REPETITIVE, max_tokens: 48 });
    const after = await specCounts(spec);
    assert.ok(after.proposed > before.proposed, JSON.stringify([before, after]));
    assert.ok(after.accepted > before.accepted, JSON.stringify([before, after]));
    assert.ok(after.accepted <= after.proposed);
  }],
  ["draft = target accepts every proposal: K + 1 tokens per step", async () => {
    const before = await specCounts(draft);
    const r = await complete(draft, { prompt: "Once upon a time", max_tokens: 41, ignore_eos: true });
    const after = await specCounts(draft);
    assert.strictEqual(r.choices[0].token_ids.length, 41);
    const proposed = after.proposed - before.proposed, accepted = after.accepted - before.accepted;
    assert.ok(proposed > 0);
    assert.strictEqual(accepted, proposed, "every drafted token accepted");
    // The first token comes from the prefill; each step then yields K + 1.
    assert.strictEqual(after.steps - before.steps, Math.ceil(40 / (K + 1)), "decode steps");
  }],
  ["streamed deltas concatenate to the same text", async () => {
    for (const prompt of [REPETITIVE, "Once upon a time"]) {
      const whole = (await complete(plain, { prompt, max_tokens: 64 })).choices[0].text;
      for (const server of [spec, draft])
        assert.strictEqual((await stream(server, { prompt, max_tokens: 64 })).join(""), whole, prompt);
    }
  }],
  ["a stop string inside an accepted run truncates there", async () => {
    const deltas = await stream(spec, { prompt: REPETITIVE, max_tokens: 64 });
    const full = deltas.join("");
    // A stop string starting inside a delta of several tokens (a step that
    // accepted drafts), past its first character: its first occurrence in
    // the text must be there.
    let stop, at = 0;
    for (const d of deltas) {
      for (let i = 1; !stop && i + 3 <= d.length; ++i) {
        const s = d.slice(i, i + 3);
        if (s.trim().length === 3 && full.indexOf(s) === at + i) stop = s;
      }
      if (stop) break;
      at += d.length;
    }
    assert.ok(stop, `no multi-token delta to stop in: ${JSON.stringify(deltas)}`);
    const want = full.slice(0, full.indexOf(stop));
    const ref = (await complete(plain, { prompt: REPETITIVE, max_tokens: 64, stop: [stop] })).choices[0];
    assert.strictEqual(ref.text, want);
    for (const server of [spec, draft]) {
      const r = (await complete(server, { prompt: REPETITIVE, max_tokens: 64, stop: [stop] })).choices[0];
      assert.strictEqual(r.text, want, `stop ${JSON.stringify(stop)}`);
      assert.strictEqual(r.finish_reason, "stop");
      assert.deepStrictEqual(r.token_ids, ref.token_ids);
      assert.strictEqual((await stream(server, { prompt: REPETITIVE, max_tokens: 64, stop: [stop] })).join(""), want);
    }
  }],
  ["logprobs per accepted token equal the plain server's", async () => {
    const body = { prompt: REPETITIVE, max_tokens: 32, logprobs: 2 };
    const ref = (await complete(plain, body)).choices[0].logprobs;
    const got = (await complete(spec, body)).choices[0].logprobs;
    assert.deepStrictEqual(got.tokens, ref.tokens);
    got.token_logprobs.forEach((lp, i) =>
      assert.ok(Math.abs(lp - ref.token_logprobs[i]) < 1e-3, `token ${i}: ${lp} vs ${ref.token_logprobs[i]}`));
    got.top_logprobs.forEach((top, i) =>
      assert.deepStrictEqual(Object.keys(top).sort(), Object.keys(ref.top_logprobs[i]).sort(), `top ${i}`));
  }],
  ["response_format holds for every accepted token, greedy and sampled", async () => {
    const schema = {
      type: "object",
      properties: { name: { type: "string", maxLength: 10 }, mood: { enum: ["happy", "sad"] } },
      required: ["name", "mood"], additionalProperties: false,
    };
    const response_format = { type: "json_schema", json_schema: { name: "p", schema, strict: true } };
    const body = { prompt: "Lily is", max_tokens: 200, response_format };
    const ref = (await complete(plain, body)).choices[0];
    const got = (await complete(spec, body)).choices[0];
    assert.strictEqual(got.text, ref.text);
    const sampled = await complete(spec, { ...body, temperature: 1, seed: 3, n: 8 });
    for (const c of sampled.choices) {
      assert.strictEqual(c.finish_reason, "stop", c.text);
      const v = JSON.parse(c.text);
      assert.deepStrictEqual(Object.keys(v), ["name", "mood"], c.text);
      assert.ok(["happy", "sad"].includes(v.mood), c.text);
    }
  }],
  ["every golden's greedy tokens, 2 rows and 1 row, concurrent", async () => {
    for (const s of servers()) await L.stopServer(s);
    plain = spec = spec1 = draft = null;
    for (const name of GOLDENS) {
      const g = golden(name);
      for (const rows of ["2", "1"]) {
        const server = await L.startServer(t, path.join(goldenRoot, name), ["--model-name", "m",
          "--ctx-len", "64", "--prefill-seq-len", "4", "--full-batch-size", rows, "--num-speculative-tokens", String(K),
          "--speculate", "prompt-lookup", "--cache-dir", cacheDir], 120000);
        const prompts = [...g.prompts, ...g.prompts.slice().reverse()];
        const want = [...g.want, ...g.want.slice().reverse()];
        const got = await Promise.all(prompts.map((prompt) => complete(server, { prompt, max_tokens: g.n })));
        got.forEach((r, i) => assert.deepStrictEqual(r.choices[0].token_ids, want[i], `${name}, ${rows} rows, request ${i}`));
        await L.stopServer(server);
      }
    }
  }],
  ["bad speculation options stop the start, naming them", async () => {
    await refusedAtStart(plainArtifact, ["--speculate", "prompt-lookup"], /--num-speculative-tokens K/);
    await refusedAtStart(cb2, ["--speculate", "prompt-lookup", "--num-speculative-tokens", "5"], /at most 3 speculative tokens/);
    await refusedAtStart(cb2, ["--speculate", "lookahead"], /--speculate must be prompt-lookup or draft=DIR/);
    await refusedAtStart(cb2, ["--speculative-config", '{"method":"eagle"}'], /"method" must be "ngram" or "draft_model"/);
    await refusedAtStart(cb2, ["--speculative-config", '{"method":"ngram","prompt_lookup_min":2}'], /prompt_lookup_min/);
    await refusedAtStart(cb2, ["--speculative-config", '{"method":"ngram","typo":1}'], /unknown field "typo"/);
    await refusedAtStart(cb2, ["--speculate", `draft=${t.modelDir}`], /draft model .* is a checkpoint but the target is compiled/);
    await refusedAtStart(t.modelDir, ["--speculate", "prompt-lookup", "--cache-dir", cacheDir], /give --num-speculative-tokens K/);
  }],
]);
