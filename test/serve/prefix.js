// Prefix caching in `qeff serve` (on by default; --no-enable-prefix-caching):
// 50 completions with shared prefixes (families of token prompts sharing
// long prefixes, repeated prompts, prefixes and extensions of earlier ones),
// greedy and seeded, some streamed, from 3 concurrent clients against 2
// KV-cache rows, on a server with caching and one without:
//  - every request's tokens are the same on both;
//  - with caching, qeff_prefix_cache_hit_tokens_total equals the sum of the
//    responses' usage.prompt_tokens_details.cached_tokens and is > 0, and
//    qeff_prefix_cache_queries_total the sum of their prompt_tokens;
//  - without, both counters stay 0 and no usage has prompt_tokens_details;
//  - vLLM's flag spelling: the last of --enable-prefix-caching /
//    --no-enable-prefix-caching wins.
"use strict";
const L = require("./lib");
const { assert } = L;

const t = L.args();
const artifacts = L.compile(t, "cb2", ["--ctx-len", "256", "--full-batch-size", "2"]);
const MODEL = "stories";

/// A fixed pseudo-random stream (xorshift), so both servers get the same
/// requests.
let state = 0x2545f491;
function rand(lo, hi) { // [lo, hi]
  state ^= state << 13; state >>>= 0;
  state ^= state >>> 17;
  state ^= state << 5; state >>>= 0;
  return lo + (state % (hi - lo + 1));
}
const tokens = (n) => Array.from({ length: n }, () => rand(3, 511));
const families = [tokens(60), tokens(80), tokens(45), tokens(70)];
const requests = [];
while (requests.length < 50) {
  const kind = requests.length ? rand(0, 5) : 0;
  let prompt;
  if (kind <= 1) {
    prompt = families[rand(0, 3)].slice(0, rand(20, 60)).concat(tokens(rand(0, 6)));
  } else if (kind === 2) {
    prompt = requests[rand(0, requests.length - 1)].prompt.slice();
  } else if (kind === 3) {
    const p = requests[rand(0, requests.length - 1)].prompt;
    prompt = p.slice(0, rand(1, p.length));
  } else if (kind === 4) {
    prompt = requests[rand(0, requests.length - 1)].prompt.concat(tokens(rand(1, 5)));
  } else {
    prompt = tokens(rand(1, 40));
  }
  const i = requests.length;
  requests.push({
    prompt, max_tokens: rand(1, 12), stream: i % 5 === 4,
    ...(i % 2 ? { temperature: 0.9, seed: 100 + i } : { temperature: 0 }),
  });
}

/// Sends every request from 3 clients; returns [{tokens, usage}] by index.
async function serveAll(server) {
  const ai = L.client(server);
  const out = new Array(requests.length);
  let next = 0;
  const worker = async () => {
    while (next < requests.length) {
      const i = next++;
      const r = requests[i];
      const params = { model: MODEL, prompt: r.prompt, max_tokens: r.max_tokens,
                       temperature: r.temperature, return_token_ids: true };
      if (r.seed !== undefined) params.seed = r.seed;
      if (r.stream) {
        const stream = await ai.completions.create({ ...params, stream: true,
                                                     stream_options: { include_usage: true } });
        let toks = [], usage = null;
        for await (const chunk of stream) {
          if (chunk.choices.length) toks.push(...(chunk.choices[0].token_ids || []));
          if (chunk.usage) usage = chunk.usage;
        }
        assert.ok(usage, `request ${i}: the stream has no usage chunk`);
        out[i] = { tokens: toks, usage };
      } else {
        const res = await ai.completions.create(params);
        out[i] = { tokens: res.choices[0].token_ids, usage: res.usage };
      }
      assert.strictEqual(out[i].usage.prompt_tokens, r.prompt.length, `request ${i}: prompt_tokens`);
    }
  };
  await Promise.all([worker(), worker(), worker()]);
  return out;
}

const cachedOf = (usage) => (usage.prompt_tokens_details ? usage.prompt_tokens_details.cached_tokens : 0);
const sample = (name) => `${name}{model="${MODEL}"}`;
let withCache, without;

L.run([
  ["50 shared-prefix requests with prefix caching (the default)", async () => {
    const server = await L.startServer(t, artifacts, ["--model-name", MODEL]);
    withCache = await serveAll(server);
    const text = await L.metrics(server);
    const hits = L.metric(text, sample("qeff_prefix_cache_hit_tokens_total"));
    const queries = L.metric(text, sample("qeff_prefix_cache_queries_total"));
    const cached = withCache.reduce((s, r) => s + cachedOf(r.usage), 0);
    const prompts = requests.reduce((s, r) => s + r.prompt.length, 0);
    assert.strictEqual(hits, cached, "hit tokens = the sum of usage cached_tokens");
    assert.ok(hits > 0, "some prompt tokens came from the cache");
    assert.strictEqual(queries, prompts, "queries = every prompt token looked up");
    for (const [i, r] of withCache.entries()) {
      const c = cachedOf(r.usage);
      assert.ok(c < r.usage.prompt_tokens, `request ${i}: cached ${c} of ${r.usage.prompt_tokens}`);
      if (r.usage.prompt_tokens_details)
        assert.ok(c > 0, `request ${i}: prompt_tokens_details only when tokens were cached`);
    }
    console.log(`  ${hits} of ${queries} prompt tokens from the cache`);
    await L.stopServer(server);
  }],
  ["the same requests with --no-enable-prefix-caching give the same tokens", async () => {
    const server = await L.startServer(t, artifacts, ["--model-name", MODEL, "--no-enable-prefix-caching"]);
    without = await serveAll(server);
    const text = await L.metrics(server);
    assert.strictEqual(L.metric(text, sample("qeff_prefix_cache_hit_tokens_total")), 0);
    assert.strictEqual(L.metric(text, sample("qeff_prefix_cache_queries_total")), 0);
    for (const [i, r] of without.entries()) {
      assert.strictEqual(r.usage.prompt_tokens_details, undefined, `request ${i}: no cached tokens`);
      assert.deepStrictEqual(withCache[i].tokens, r.tokens,
                             `request ${i} (${JSON.stringify(requests[i])}): tokens with and without the cache`);
    }
    await L.stopServer(server);
  }],
  ["the last of --no-enable-prefix-caching / --enable-prefix-caching wins", async () => {
    const prompt = families[0].slice(0, 50);
    for (const [flags, on] of [[["--no-enable-prefix-caching", "--enable-prefix-caching"], true],
                               [["--enable-prefix-caching", "--no-enable-prefix-caching"], false]]) {
      const server = await L.startServer(t, artifacts, ["--model-name", MODEL, ...flags]);
      const ai = L.client(server);
      await ai.completions.create({ model: MODEL, prompt, max_tokens: 2, temperature: 0 });
      const again = await ai.completions.create({ model: MODEL, prompt, max_tokens: 2, temperature: 0 });
      // A repeated prompt prefills only its last token.
      assert.strictEqual(cachedOf(again.usage), on ? prompt.length - 1 : 0, flags.join(" "));
      await L.stopServer(server);
    }
  }],
]);
