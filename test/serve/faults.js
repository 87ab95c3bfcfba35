// Faults, each answered with the right status and a JSON error naming the
// problem, after which the next good request still succeeds: a client that
// disconnects mid-stream (its row is reclaimed: /metrics shows it free and
// the request cancelled), malformed JSON, wrong types, negative max_tokens,
// a prompt over the context, an oversized body, an unknown model or route,
// a missing or wrong API key, and a full queue (503 + Retry-After).
"use strict";
const L = require("./lib");
const { assert } = L;

const t = L.args();
const artifacts = L.compile(t, "cb4", ["--ctx-len", "256", "--full-batch-size", "4"]);
const KEY = "sk-qeff-test";
let server, ai;

const post = (route, body, headers = {}) => L.http(server, route, {
  method: "POST",
  headers: { "Content-Type": "application/json", Authorization: `Bearer ${KEY}`, ...headers },
  body: typeof body === "string" ? body : JSON.stringify(body),
});

/// The request fails with `status`, an OpenAI error body whose message
/// matches `message` and whose param is `param`; then a good request works.
async function refused(route, body, status, message, param, headers) {
  const res = await post(route, body, headers);
  const text = await res.text();
  assert.strictEqual(res.status, status, `${route} ${String(body).slice(0, 80)}: ${text}`);
  assert.match(res.headers.get("content-type"), /application\/json/);
  const err = JSON.parse(text).error;
  assert.match(err.message, message);
  if (param !== undefined) assert.strictEqual(err.param, param, text);
  assert.ok(typeof err.type === "string" && err.type.length, text);
  await good();
  return res;
}

async function good() {
  const r = await ai.completions.create({ model: "stories", prompt: "Once", max_tokens: 3, temperature: 0 });
  assert.strictEqual(r.usage.completion_tokens, 3);
}

/// A stream that runs long (ignore_eos) until aborted.
async function longStream(signal) {
  return ai.completions.create({
    model: "stories", prompt: "Once upon a time", max_tokens: 250, temperature: 0,
    ignore_eos: true, stream: true,
  }, { signal });
}

const rowsInUse = (text) => L.metric(text, 'qeff_rows_in_use{model="stories"}');
const cancelled = (text) => L.metric(text, 'qeff_requests_finished_total{model="stories",reason="cancelled"}') || 0;

L.run([
  ["start (--api-key, --max-body-bytes 4096, --max-queue 1)", async () => {
    server = await L.startServer(t, artifacts, [
      "--model-name", "stories", "--api-key", KEY, "--max-body-bytes", "4096", "--max-queue", "1"]);
    ai = L.client(server, { apiKey: KEY });
    await good();
  }],
  ["client disconnect mid-stream frees the row", async () => {
    const before = cancelled(await L.metrics(server));
    const ctl = new AbortController();
    const stream = await longStream(ctl.signal);
    let chunks = 0;
    try {
      for await (const chunk of stream) {
        if (++chunks === 3) {
          assert.strictEqual(rowsInUse(await L.metrics(server)), 1);
          ctl.abort(); // the client closes the connection
          break;
        }
      }
    } catch (e) {
      if (e.name !== "AbortError" && !/abort/i.test(String(e))) throw e;
    }
    assert.strictEqual(chunks, 3);
    // Counted as cancelled (not as "length", which running to its 250
    // tokens would be) and its row free.
    await L.waitForMetrics(server, (m) => rowsInUse(m) === 0 && cancelled(m) === before + 1,
      "the aborted stream's row to be reclaimed (rows_in_use 0, one more cancelled)");
    await good();
  }],
  ["malformed JSON", () => refused("/v1/completions", '{"prompt": "Once",', 400, /the body is not valid JSON \(.*column 19/)],
  ["a body that is not an object", () => refused("/v1/completions", "[1, 2]", 400, /must be a JSON object, got array/)],
  ["wrong types name the field", async () => {
    await refused("/v1/completions", { prompt: 42 }, 400, /^prompt: must be a string, an array of token ids, or an array of those, got integer/, "prompt");
    await refused("/v1/completions", { prompt: "x", max_tokens: "ten" }, 400, /^max_tokens: must be an integer, got string/, "max_tokens");
    await refused("/v1/completions", { prompt: "x", temperature: "hot" }, 400, /^temperature: must be a number, got string/, "temperature");
    await refused("/v1/completions", { prompt: "x", stream: 1 }, 400, /^stream: must be a boolean, got integer/, "stream");
    await refused("/v1/completions", { prompt: "x", stop: [1] }, 400, /^stop: element 0 must be a string/, "stop");
    await refused("/v1/completions", { prompt: [1, -4] }, 400, /^prompt: element 1 must be a token id/, "prompt");
    await refused("/v1/completions", { prompt: [1, 70000] }, 400, /^prompt\[1\]: token id 70000 is outside the vocabulary \(0\.\.511\)/, "prompt");
    await refused("/v1/chat/completions", { messages: "hi" }, 400, /^messages: must be an array of messages, got string/, "messages");
    await refused("/v1/chat/completions", { messages: [{ content: "hi" }] }, 400, /^messages\[0\]\.role: is required/, "messages[0].role");
  }],
  ["negative max_tokens, n, logprobs and prompts out of range", async () => {
    await refused("/v1/completions", { prompt: "x", max_tokens: -5 }, 400, /^max_tokens: must be at least 1, got -5/, "max_tokens");
    await refused("/v1/completions", { prompt: "x", n: 0 }, 400, /^n: must be between 1 and 128, got 0/, "n");
    await refused("/v1/completions", { prompt: "x", logprobs: 30 }, 400, /^logprobs: must be between 0 and 20, got 30/, "logprobs");
    await refused("/v1/completions", { prompt: ["a", 3] }, 400, /^prompt: prompt 1: must be a string like the first/, "prompt");
  }],
  ["prompt over the context names the limit", async () => {
    const long = Array(300).fill(403);
    const res = await refused("/v1/completions", { prompt: long }, 400,
      /maximum context length is 256 tokens, but the prompt has 300 tokens/, "prompt");
    await refused("/v1/completions", { prompt: "Once upon a time", max_tokens: 255 }, 400,
      /maximum context length is 256 tokens, but you requested 260 tokens \(5 in the prompt, 255 in max_tokens\)/,
      "max_tokens");
    assert.ok(res);
  }],
  ["oversized body: 413", () => refused("/v1/completions", JSON.stringify({ prompt: "a".repeat(5000) }), 413,
    /larger than this server accepts \(4096 bytes, --max-body-bytes\)/)],
  ["unknown model: 404 (OpenAI and v2)", async () => {
    await refused("/v1/completions", { model: "gpt-4", prompt: "x" }, 404, /The model 'gpt-4' does not exist; this server serves 'stories'/, "model");
    const res = await post("/v2/models/gpt-4/generate", { text_input: "x" });
    assert.strictEqual(res.status, 404);
    assert.match((await res.json()).error, /'gpt-4' does not exist/);
    await refused("/v1/nothing", {}, 404, /No route for POST \/v1\/nothing/);
  }],
  ["missing or wrong API key: 401; health and metrics stay open", async () => {
    await refused("/v1/completions", { prompt: "x" }, 401, /Missing API key/, "Authorization", { Authorization: "" });
    await refused("/v1/completions", { prompt: "x" }, 401, /Incorrect API key/, "Authorization", { Authorization: "Bearer nope" });
    const wrong = L.client(server, { apiKey: "nope" });
    await assert.rejects(wrong.models.list(), (e) => e.status === 401);
    const v2 = await L.http(server, "/v2/models/stories");
    assert.strictEqual(v2.status, 401);
    for (const route of ["/v2/health/live", "/v2/health/ready", "/metrics"])
      assert.strictEqual((await L.http(server, route)).status, 200, route);
  }],
  ["full queue: 503 with Retry-After", async () => {
    // 4 long streams fill the 4 rows, a fifth waits (queue of 1), a sixth is refused.
    const ctl = new AbortController();
    const streams = [];
    for (let i = 0; i < 5; i++) streams.push(await longStream(ctl.signal));
    const readers = streams.map((s) => (async () => { try { for await (const _ of s); } catch (e) { } })());
    // The five came one after another without waiting: none was refused.
    await L.waitForMetrics(server, (m) => rowsInUse(m) === 4 && L.metric(m, 'qeff_queue_depth{model="stories"}') === 1,
      "4 rows in use and 1 request queued");
    const res = await post("/v1/completions", { prompt: "x", max_tokens: 2 });
    assert.strictEqual(res.status, 503);
    assert.strictEqual(res.headers.get("retry-after"), "1");
    const err = (await res.json()).error;
    assert.match(err.message, /overloaded: 1 requests are already waiting/);
    assert.strictEqual(err.code, "queue_full");
    ctl.abort();
    await Promise.all(readers);
    await L.waitForMetrics(server, (m) => rowsInUse(m) === 0 && L.metric(m, 'qeff_queue_depth{model="stories"}') === 0,
      "every aborted stream reclaimed");
    await good();
  }],
]);
