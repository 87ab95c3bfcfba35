// Continuous batching under load: 16 OpenAI clients x 8 requests of mixed
// prompt and output lengths (half of them streamed) against 4 KV-cache rows.
// Every response equals the same request run alone (`qeff infer`, greedy):
// same tokens, same text; none lost or duplicated; and the server really
// overlapped them (rows in use > 1 on /metrics, and decode steps of several
// rows in qeff_decode_step_rows). Logs are structured (--log-format json).
"use strict";
const L = require("./lib");
const { assert } = L;

const t = L.args();
const artifacts = L.compile(t, "cb4", ["--ctx-len", "256", "--full-batch-size", "4"]);
const prompts = [
  "Once upon a time", "Lily", "The dog ran to the park and saw a big red ball",
  "Tom had a toy car", "One day, a little bird", "Sue and her mom baked a cake",
  "The sun was hot", "Ben found a shiny stone in the garden and showed it to his friend",
];
const lengths = [4, 9, 16, 23, 30, 37, 44, 48];
const CLIENTS = 16, REQUESTS = 8;
let server, ai;
const reference = new Map(); // `${prompt}|${max}` -> infer row

L.run([
  ["references: each request run alone with qeff infer", async () => {
    for (const n of lengths) {
      const rows = L.infer(t, artifacts, prompts, n);
      rows.forEach((row, i) => reference.set(`${prompts[i]}|${n}`, row));
    }
  }],
  ["start (4 rows, json logs)", async () => {
    server = await L.startServer(t, artifacts, ["--model-name", "stories", "--log-format", "json"]);
    ai = L.client(server);
  }],
  [`${CLIENTS} clients x ${REQUESTS} requests equal the references`, async () => {
    let maxRows = 0, polling = true;
    const poller = (async () => {
      while (polling) {
        const text = await L.metrics(server);
        maxRows = Math.max(maxRows, L.metric(text, 'qeff_rows_in_use{model="stories"}'));
        await new Promise((r) => setTimeout(r, 10));
      }
    })();
    const seen = new Set();
    let done = 0;
    const clientRun = async (c) => {
      for (let k = 0; k < REQUESTS; k++) {
        const prompt = prompts[(c + k) % prompts.length];
        const n = lengths[(c * 3 + k) % lengths.length];
        const ref = reference.get(`${prompt}|${n}`);
        const what = `client ${c} request ${k} ('${prompt}', max_tokens ${n})`;
        const params = { model: "stories", prompt, max_tokens: n, temperature: 0, return_token_ids: true };
        let id, text = "", tokens = [], reason;
        if (k % 2) {
          const stream = await ai.completions.create({ ...params, stream: true });
          for await (const chunk of stream) {
            id = chunk.id;
            text += chunk.choices[0].text;
            tokens.push(...(chunk.choices[0].token_ids || []));
            reason = chunk.choices[0].finish_reason || reason;
          }
        } else {
          const r = await ai.completions.create(params);
          id = r.id;
          text = r.choices[0].text;
          tokens = r.choices[0].token_ids;
          reason = r.choices[0].finish_reason;
        }
        assert.deepStrictEqual(tokens, ref.generated_ids, `${what}: tokens`);
        assert.strictEqual(text, ref.text, `${what}: text`);
        assert.strictEqual(reason, ref.finish_reason === "max_new_tokens" ? "length" : "stop", what);
        assert.ok(!seen.has(id), `${what}: response id ${id} seen twice`);
        seen.add(id);
        done++;
      }
    };
    try {
      await Promise.all(Array.from({ length: CLIENTS }, (_, c) => clientRun(c)));
    } finally {
      polling = false;
      await poller;
    }
    assert.strictEqual(done, CLIENTS * REQUESTS);
    assert.strictEqual(seen.size, CLIENTS * REQUESTS);
    assert.ok(maxRows > 1, `rows in use never exceeded ${maxRows}: the requests did not overlap`);
    console.log(`  max rows in use seen on /metrics: ${maxRows}`);

    const text = await L.metrics(server);
    const total = CLIENTS * REQUESTS;
    assert.strictEqual(L.metric(text, 'qeff_http_responses_total{route="/v1/completions",code="200"}'), total);
    const finished = ["stop", "length", "cancelled", "error"]
      .map((r) => L.metric(text, `qeff_requests_finished_total{model="stories",reason="${r}"}`) || 0);
    assert.strictEqual(finished[0] + finished[1], total, `finished: ${finished}`);
    assert.strictEqual(finished[2] + finished[3], 0, `cancelled/error: ${finished}`);
    const steps = L.metric(text, 'qeff_decode_step_rows_count{model="stories"}');
    const single = L.metric(text, 'qeff_decode_step_rows_bucket{model="stories",le="1"}');
    assert.ok(steps - single > 0, `no decode step ran more than one row (${steps} steps)`);
    console.log(`  decode steps: ${steps}, of which ${steps - single} with 2-4 rows`);
    assert.strictEqual(L.metric(text, 'qeff_rows_in_use{model="stories"}'), 0);
    assert.strictEqual(L.metric(text, 'qeff_queue_depth{model="stories"}'), 0);

    // One structured log line per request.
    const lines = server.log().split("\n").filter((l) => l.startsWith("{"))
      .map((l) => JSON.parse(l)).filter((j) => j.path === "/v1/completions");
    assert.strictEqual(lines.length, total);
    for (const j of lines) {
      assert.strictEqual(j.status, 200);
      assert.strictEqual(j.model, "stories");
      assert.ok(j.prompt_tokens > 0 && j.completion_tokens > 0 && j.ttft_s >= 0, JSON.stringify(j));
    }
  }],
]);
