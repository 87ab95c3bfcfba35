// SIGTERM while streaming: the server stops taking requests (503 with
// Retry-After, readiness 503), the streams and requests in flight run to
// their end (every token, then `data: [DONE]`), and it exits with status 0.
"use strict";
const L = require("./lib");
const { assert } = L;

const t = L.args();
const artifacts = L.compile(t, "cb4", ["--ctx-len", "256", "--full-batch-size", "4"]);
let server;

const post = (body) => L.http(server, "/v1/completions", {
  method: "POST", headers: { "Content-Type": "application/json" }, body: JSON.stringify(body),
});

L.run([
  ["start", async () => {
    server = await L.startServer(t, artifacts, ["--model-name", "stories"]);
  }],
  ["SIGTERM mid-stream: the stream completes, new requests get 503, exit 0", async () => {
    const res = await post({ prompt: "Once upon a time", max_tokens: 200, temperature: 0, ignore_eos: true,
                             stream: true, return_token_ids: true });
    assert.strictEqual(res.status, 200);
    // A second request in flight, not streamed.
    const whole = post({ prompt: "Lily", max_tokens: 150, temperature: 0, ignore_eos: true });
    const reader = res.body.getReader();
    const decoder = new TextDecoder();
    let body = "", signalled = false, refusedChecked = false;
    const deadline = Date.now() + 60000;
    while (Date.now() < deadline) {
      const { value, done } = await reader.read();
      if (done) break;
      body += decoder.decode(value, { stream: true });
      if (!signalled && body.includes("data: {")) {
        // Both requests decoding, normally; on a loaded machine the whole
        // one may already have ended: the signal then finds the stream
        // alone in flight, and what follows must hold either way.
        await L.waitForMetrics(server, (m) => L.metric(m, 'qeff_rows_in_use{model="stories"}') === 2,
          "both requests decoding", 5000).catch(() => {});
        server.proc.kill("SIGTERM");
        signalled = true;
        // The signal is handled asynchronously: wait until readiness turns.
        let ready;
        for (let i = 0; i < 100; i++) {
          ready = await L.http(server, "/v2/health/ready");
          if (ready.status === 503) break;
          await new Promise((r) => setTimeout(r, 10));
        }
        assert.strictEqual(ready.status, 503, "readiness after SIGTERM");
        const late = await post({ prompt: "Once", max_tokens: 2 });
        assert.strictEqual(late.status, 503);
        assert.strictEqual(late.headers.get("retry-after"), "1");
        assert.match((await late.json()).error.message, /shutting down/);
        refusedChecked = true;
      }
    }
    assert.ok(signalled && refusedChecked);
    assert.ok(body.endsWith("data: [DONE]\n\n"), `the stream did not complete:\n${body.slice(-300)}`);
    const tokens = body.split("\n\n").filter((e) => e.startsWith("data: {"))
      .flatMap((e) => JSON.parse(e.slice(6)).choices[0].token_ids);
    assert.strictEqual(tokens.length, 200, "every token of the stream");
    const other = await (await whole).json();
    assert.strictEqual(other.usage.completion_tokens, 150, JSON.stringify(other));
    const exit = await Promise.race([
      server.exited, new Promise((r) => setTimeout(() => r("timeout"), 15000).unref())]);
    assert.deepStrictEqual(exit, { code: 0, signal: null }, server.log());
    assert.match(server.log(), /SIGTERM: refusing new requests, finishing the ones in flight/);
    assert.match(server.log(), /qeff serve: stopped/);
  }],
]);
