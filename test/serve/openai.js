// `qeff serve` on the bundled stories260K model, driven by the official
// OpenAI Node client: /v1/models, greedy completions equal to `qeff infer`
// token for token (text prompt, token-id prompt, stop strings, seeded
// sampling), streamed completions concatenating to the same text, usage and
// finish reasons, and Triton/KServe v2 routes (health, metadata, readiness,
// generate, generate_stream) giving the same text.
"use strict";
const L = require("./lib");
const { assert } = L;

const t = L.args();
const artifacts = L.compile(t, "cb4", ["--ctx-len", "256", "--full-batch-size", "4"]);
let server, ai;

const finish = (row) => (row.finish_reason === "max_new_tokens" || row.finish_reason === "context_end" ? "length" : "stop");

async function streamText(params) {
  const stream = await ai.completions.create({ ...params, stream: true });
  let text = "", reason = null, usage = null, chunks = 0;
  for await (const chunk of stream) {
    if (chunk.usage) usage = chunk.usage;
    if (!chunk.choices.length) continue;
    text += chunk.choices[0].text;
    chunks++;
    if (chunk.choices[0].finish_reason) reason = chunk.choices[0].finish_reason;
  }
  return { text, reason, usage, chunks };
}

L.run([
  ["start", async () => {
    server = await L.startServer(t, artifacts, ["--model-name", "stories"]);
    ai = L.client(server);
  }],
  ["/v1/models lists the served model", async () => {
    const list = await ai.models.list();
    assert.deepStrictEqual(list.data.map((m) => m.id), ["stories"]);
    assert.strictEqual(list.data[0].max_model_len, 256);
    const one = await ai.models.retrieve("stories");
    assert.strictEqual(one.id, "stories");
  }],
  ["greedy completion equals qeff infer token for token", async () => {
    for (const [prompt, n] of [["Once upon a time", 40], ["Lily and Ben went to the park", 64], ["The cat", 1]]) {
      const [ref] = L.infer(t, artifacts, [prompt], n);
      const r = await ai.completions.create({
        model: "stories", prompt, max_tokens: n, temperature: 0, return_token_ids: true,
      });
      const c = r.choices[0];
      assert.deepStrictEqual(c.prompt_token_ids, ref.prompt_ids, `prompt ids of '${prompt}'`);
      assert.deepStrictEqual(c.token_ids, ref.generated_ids, `tokens of '${prompt}'`);
      assert.strictEqual(c.text, ref.text);
      assert.strictEqual(c.finish_reason, finish(ref));
      assert.strictEqual(r.usage.prompt_tokens, ref.prompt_ids.length);
      assert.strictEqual(r.usage.completion_tokens, ref.generated_ids.length);
      assert.strictEqual(r.usage.total_tokens, ref.prompt_ids.length + ref.generated_ids.length);
      assert.strictEqual(r.object, "text_completion");
      assert.strictEqual(r.model, "stories");
    }
  }],
  ["a token-id prompt equals the text prompt", async () => {
    const [ref] = L.infer(t, artifacts, ["Once upon a time"], 24);
    const r = await ai.completions.create({
      model: "stories", prompt: ref.prompt_ids, max_tokens: 24, temperature: 0, return_token_ids: true,
    });
    assert.deepStrictEqual(r.choices[0].token_ids, ref.generated_ids);
    assert.strictEqual(r.choices[0].text, ref.text);
  }],
  ["streamed completion concatenates to the same text, with usage", async () => {
    const [ref] = L.infer(t, artifacts, ["Once upon a time"], 60);
    const s = await streamText({
      model: "stories", prompt: "Once upon a time", max_tokens: 60, temperature: 0,
      stream_options: { include_usage: true },
    });
    assert.strictEqual(s.text, ref.text);
    assert.strictEqual(s.reason, finish(ref));
    assert.ok(s.chunks > 10, `expected one chunk per token or so, got ${s.chunks}`);
    // The same prompt ran before: the prefix cache supplies all but its last token.
    assert.deepStrictEqual(s.usage, {
      prompt_tokens: ref.prompt_ids.length, completion_tokens: ref.generated_ids.length,
      total_tokens: ref.prompt_ids.length + ref.generated_ids.length,
      prompt_tokens_details: { cached_tokens: ref.prompt_ids.length - 1 },
    });
  }],
  ["the stream ends with data: [DONE]", async () => {
    const res = await L.http(server, "/v1/completions", {
      method: "POST", headers: { "Content-Type": "application/json" },
      body: JSON.stringify({ prompt: "Once", max_tokens: 5, temperature: 0, stream: true }),
    });
    assert.strictEqual(res.status, 200);
    assert.match(res.headers.get("content-type"), /^text\/event-stream/);
    const body = await res.text();
    assert.ok(body.endsWith("data: [DONE]\n\n"), body);
  }],
  ["stop strings cut as qeff infer cuts, streamed or not", async () => {
    const [ref] = L.infer(t, artifacts, ["Once upon a time"], 128, ["--stop", "Lily"]);
    assert.strictEqual(ref.finish_reason, "stop_string", "the reference should stop at 'Lily'");
    const r = await ai.completions.create({
      model: "stories", prompt: "Once upon a time", max_tokens: 128, temperature: 0, stop: "Lily",
    });
    assert.strictEqual(r.choices[0].text, ref.text);
    assert.strictEqual(r.choices[0].finish_reason, "stop");
    // A stream never sends text that later turns out to start a stop string.
    const s = await streamText({ prompt: "Once upon a time", model: "stories", max_tokens: 128, temperature: 0, stop: ["Lily", "zzz"] });
    assert.strictEqual(s.text, ref.text);
    assert.strictEqual(s.reason, "stop");
  }],
  ["seeded sampling equals qeff infer with the same seed", async () => {
    const [ref] = L.infer(t, artifacts, ["Once"], 30,
      ["--temperature", "0.8", "--top-k", "40", "--top-p", "0.9", "--seed", "7"]);
    const params = {
      model: "stories", prompt: "Once", max_tokens: 30, temperature: 0.8, top_k: 40, top_p: 0.9,
      seed: 7, return_token_ids: true,
    };
    const a = await ai.completions.create(params);
    const b = await ai.completions.create(params);
    assert.deepStrictEqual(a.choices[0].token_ids, ref.generated_ids);
    assert.deepStrictEqual(b.choices[0].token_ids, ref.generated_ids);
  }],
  ["v2 health, metadata and readiness", async () => {
    for (const route of ["/v2/health/live", "/v2/health/ready", "/v2/models/stories/ready",
                         "/v2/models/stories/versions/1/ready"]) {
      const res = await L.http(server, route);
      assert.strictEqual(res.status, 200, route);
    }
    const meta = await (await L.http(server, "/v2/models/stories")).json();
    assert.strictEqual(meta.name, "stories");
    assert.deepStrictEqual(meta.versions, ["1"]);
    assert.ok(meta.inputs.some((i) => i.name === "text_input" && i.datatype === "BYTES"));
    assert.ok(meta.outputs.some((o) => o.name === "text_output" && o.datatype === "BYTES"));
    const server2 = await (await L.http(server, "/v2")).json();
    assert.strictEqual(server2.name, "qeff");
    const missing = await L.http(server, "/v2/models/nope/ready");
    assert.strictEqual(missing.status, 404);
    assert.match((await missing.json()).error, /'nope' does not exist/);
  }],
  ["v2 generate and generate_stream give qeff infer's text", async () => {
    const [ref] = L.infer(t, artifacts, ["Once upon a time"], 32);
    const post = (route, body) => L.http(server, route, {
      method: "POST", headers: { "Content-Type": "application/json" }, body: JSON.stringify(body),
    });
    const res = await post("/v2/models/stories/generate", {
      text_input: "Once upon a time", parameters: { max_tokens: 32, temperature: 0 },
    });
    assert.strictEqual(res.status, 200);
    const out = await res.json();
    assert.strictEqual(out.model_name, "stories");
    assert.strictEqual(out.text_output, ref.text);
    // TensorRT-LLM style: sampling inputs at the top level.
    const top = await (await post("/v2/models/stories/versions/1/generate", {
      text_input: "Once upon a time", max_tokens: 32, temperature: 0,
    })).json();
    assert.strictEqual(top.text_output, ref.text);
    const stream = await post("/v2/models/stories/generate_stream", {
      text_input: "Once upon a time", parameters: { max_tokens: 32, temperature: 0 },
    });
    assert.strictEqual(stream.status, 200);
    const events = (await stream.text()).split("\n\n").filter((e) => e.startsWith("data: "))
      .map((e) => JSON.parse(e.slice(6)));
    assert.ok(events.length > 5, `${events.length} events`);
    assert.strictEqual(events.map((e) => e.text_output).join(""), ref.text);
    assert.strictEqual(events[events.length - 1].finish_reason, finish(ref));
    const bad = await post("/v2/models/stories/generate", { text_input: 3 });
    assert.strictEqual(bad.status, 400);
    assert.match((await bad.json()).error, /^text_input: must be a string, got integer/);
  }],
  ["a checkpoint compiles through the cache and serves like its artifacts", async () => {
    const cache = require("path").join(t.workDir, "cache");
    const args = ["--model-name", "ckpt", "--cache-dir", cache, "--ctx-len", "128", "--full-batch-size", "2"];
    const first = await L.startServer(t, t.modelDir, args);
    const compiled = /qeff serve: compiled (\S+)/.exec(first.log());
    assert.ok(compiled, first.log());
    const meta = await (await L.http(first, "/v2/models/ckpt")).json();
    assert.deepStrictEqual(meta.parameters, { ctx_len: 128, rows: 2, continuous_batching: true });
    const [ref] = L.infer(t, compiled[1], ["Once upon a time"], 20);
    const r = await L.client(first).completions.create({
      model: "ckpt", prompt: "Once upon a time", max_tokens: 20, temperature: 0, return_token_ids: true,
    });
    assert.deepStrictEqual(r.choices[0].token_ids, ref.generated_ids);
    await L.stopServer(first);
    // The second start reuses the cache entry.
    const second = await L.startServer(t, t.modelDir, args);
    assert.match(second.log(), new RegExp(`using cached artifacts ${compiled[1]}`));
    await L.stopServer(second);
  }],
  ["/metrics counts the requests and tokens", async () => {
    const text = await L.metrics(server);
    assert.ok(L.metric(text, 'qeff_prompt_tokens_total{model="stories"}') > 0, text);
    assert.ok(L.metric(text, 'qeff_generation_tokens_total{model="stories"}') > 100, text);
    assert.ok(L.metric(text, 'qeff_http_responses_total{route="/v1/completions",code="200"}') >= 10, text);
    assert.strictEqual(L.metric(text, 'qeff_rows{model="stories"}'), 4);
    assert.strictEqual(L.metric(text, 'qeff_rows_in_use{model="stories"}'), 0);
    assert.ok(L.metric(text, 'qeff_time_to_first_token_seconds_count{model="stories"}') >= 10, text);
    assert.ok(L.metric(text, 'qeff_inter_token_latency_seconds_count{model="stories"}') > 100, text);
    assert.match(text, /# TYPE qeff_time_to_first_token_seconds histogram/);
    // One log line per request, with the model and token counts.
    assert.match(server.log(), /POST \/v1\/completions 200 [\d.]+ms model=stories prompt_tokens=5 completion_tokens=40 ttft=[\d.]+ms finish=max_new_tokens/);
  }],
]);
