// The OpenAI fields beyond the basics, through the official Node client on
// the bundled model (a copy with a chat template): logprobs equal to
// log_softmax of the host device's logits (`qeff run --save-logits`), n
// choices equal to single requests seeded seed + i, streams equal to whole
// responses (n > 1, logprobs), prompt arrays, best_of, stop_token_ids,
// min_tokens, include_stop_str_in_output, skip_special_tokens, logit_bias,
// presence/frequency penalties checked against the logits, echo, the
// response shapes (system_fingerprint, refusal, "usage": null), and the
// refusals and limits of what is not implemented.
"use strict";
const L = require("./lib");
const { assert } = L;
const fs = require("fs");
const path = require("path");
const { execFileSync } = require("child_process");

const t = L.args();
const compiled = L.compile(t, "cb4", ["--ctx-len", "256", "--full-batch-size", "4"]);
// A copy with a chat template (as chat.js), serving completions and chat.
const chatConfig = path.join(__dirname, "../data/chat-templates/stories260K-chat/tokenizer_config.json");
const artifacts = path.join(t.workDir, "model");
fs.cpSync(compiled, artifacts, { recursive: true });
fs.copyFileSync(chatConfig, path.join(artifacts, "tokenizer_config.json"));

const EOS = 2, BOS = 1, VOCAB = 512;
let server, ai;

const post = (route, body) => L.http(server, route, {
  method: "POST", headers: { "Content-Type": "application/json" },
  body: typeof body === "string" ? body : JSON.stringify(body),
});

/// `qeff run` greedy with --save-logits: the row and its logits, one
/// Float32Array of VOCAB per generated step.
function qeffRun(promptArgs, maxNewTokens) {
  const file = path.join(t.workDir, `logits-${Date.now()}-${Math.random()}.safetensors`);
  const out = execFileSync(t.qeff, ["run", artifacts, ...promptArgs, "--max-new-tokens",
    String(maxNewTokens), "--save-logits", file, "--json"],
  { encoding: "utf8", stdio: ["ignore", "pipe", "inherit"] });
  const row = JSON.parse(out).rows[0];
  const buf = fs.readFileSync(file);
  const n = Number(buf.readBigUInt64LE(0));
  const info = JSON.parse(buf.toString("utf8", 8, 8 + n)).step_logits;
  assert.deepStrictEqual(info.shape, [1, maxNewTokens, VOCAB]);
  const data = buf.subarray(8 + n + info.data_offsets[0], 8 + n + info.data_offsets[1]);
  const all = new Float32Array(data.buffer.slice(data.byteOffset, data.byteOffset + data.length));
  const logits = [];
  for (let k = 0; k < maxNewTokens; k++) logits.push(all.subarray(k * VOCAB, (k + 1) * VOCAB));
  return { row, logits };
}

function logSoftmax(row) {
  let max = -Infinity;
  for (const v of row) max = Math.max(max, v);
  let sum = 0;
  for (const v of row) sum += Math.exp(v - max);
  const z = max + Math.log(sum);
  return Array.from(row, (v) => v - z);
}

/// The k most likely ids (lower id first on ties).
function topIds(row, k) {
  return [...row.keys()].sort((a, b) => row[b] - row[a] || a - b).slice(0, k);
}

const close = (got, want, what) =>
  assert.ok(Math.abs(got - want) <= 1e-5, `${what}: ${got} vs ${want} (|diff| > 1e-5)`);

/// A whole stream, reassembled per choice index, and its chunks.
async function streamed(create, params) {
  const stream = await create({ ...params, stream: true });
  const choices = [], chunks = [];
  let usage = null;
  for await (const chunk of stream) {
    chunks.push(chunk);
    if (chunk.usage) usage = chunk.usage;
    for (const c of chunk.choices) {
      const acc = choices[c.index] || (choices[c.index] = {
        index: c.index, text: "", token_ids: [], finish_reason: null, logprobs: null,
      });
      acc.text += c.text !== undefined ? c.text : (c.delta.content || "");
      acc.token_ids.push(...(c.token_ids || []));
      if (c.finish_reason) acc.finish_reason = c.finish_reason;
      if (c.logprobs) {
        if (c.logprobs.content) {
          acc.logprobs = acc.logprobs || { content: [] };
          acc.logprobs.content.push(...c.logprobs.content);
        } else {
          acc.logprobs = acc.logprobs || { tokens: [], token_logprobs: [], top_logprobs: [], text_offset: [] };
          for (const key of ["tokens", "token_logprobs", "top_logprobs", "text_offset"])
            acc.logprobs[key].push(...c.logprobs[key]);
        }
      }
    }
  }
  return { choices, chunks, usage };
}

const completion = (params) => ai.completions.create({ model: "stories", ...params });
const chat = (params) => ai.chat.completions.create({ model: "stories", ...params });
const fields = (c) => ({ text: c.text !== undefined ? c.text : c.message.content,
  token_ids: c.token_ids, finish_reason: c.finish_reason });

/// The request is refused with 400 naming `param`, its message matching.
async function refused(route, body, param, message, code) {
  const res = await post(route, body);
  const text = await res.text();
  assert.strictEqual(res.status, 400, `${JSON.stringify(body).slice(0, 120)}: ${text}`);
  const err = JSON.parse(text).error;
  assert.strictEqual(err.param, param, text);
  assert.match(err.message, message);
  if (code) assert.strictEqual(err.code, code, text);
}

const messages = [{ role: "user", content: "Tell me a story about a cat." }];

L.run([
  ["start", async () => {
    server = await L.startServer(t, artifacts, ["--model-name", "stories"]);
    ai = L.client(server);
  }],

  ["completions logprobs equal log_softmax of the host device's logits", async () => {
    const N = 12;
    const ref = qeffRun(["--prompt", "Once upon a time"], N);
    const r = await completion({
      prompt: "Once upon a time", max_tokens: N, temperature: 0, logprobs: 5,
      return_token_ids: true, return_tokens_as_token_ids: true,
    });
    const c = r.choices[0];
    assert.deepStrictEqual(c.token_ids, ref.row.generated_ids);
    assert.strictEqual(c.logprobs.tokens.length, N);
    for (let k = 0; k < N; k++) {
      const ls = logSoftmax(ref.logits[k]);
      const token = ref.row.generated_ids[k];
      assert.strictEqual(c.logprobs.tokens[k], `token_id:${token}`);
      close(c.logprobs.token_logprobs[k], ls[token], `step ${k} logprob`);
      const want = topIds(ref.logits[k], 5);
      const top = c.logprobs.top_logprobs[k];
      // The chosen token and the 5 most likely (greedy: the chosen is one).
      assert.deepStrictEqual(Object.keys(top).sort(), want.map((i) => `token_id:${i}`).sort(), `step ${k}`);
      for (const id of want) close(top[`token_id:${id}`], ls[id], `step ${k} top ${id}`);
    }
    // With token strings: they concatenate to the text, text_offset into it.
    const s = (await completion({ prompt: "Once upon a time", max_tokens: N, temperature: 0, logprobs: 0 })).choices[0];
    assert.strictEqual(s.logprobs.tokens.join(""), s.text);
    let offset = 0;
    s.logprobs.tokens.forEach((tok, k) => {
      assert.strictEqual(s.logprobs.text_offset[k], offset);
      offset += [...tok].length;
      assert.deepStrictEqual(Object.keys(s.logprobs.top_logprobs[k]), [tok]);
    });
  }],

  ["chat logprobs: content with bytes and top_logprobs from the same logits", async () => {
    const N = 8;
    const r = await chat({ messages, max_tokens: N, temperature: 0, logprobs: true, top_logprobs: 3,
      return_token_ids: true });
    const c = r.choices[0];
    assert.strictEqual(c.message.refusal, null);
    assert.match(r.system_fingerprint, /^qeff-.+-host$/);
    const ref = qeffRun(["--token-ids", c.prompt_token_ids.join(",")], N);
    const ids = ref.row.generated_ids;
    assert.deepStrictEqual(c.token_ids, ids);
    assert.strictEqual(c.logprobs.content.length, ids.length);
    // The tokens concatenate to the content, but for the word-start space
    // of the first: the content, like `qeff infer`'s text, decodes the
    // generated tokens alone, which drops it.
    assert.strictEqual(c.logprobs.content.map((e) => e.token).join("").replace(/^ /, ""),
      c.message.content);
    c.logprobs.content.forEach((e, k) => {
      const ls = logSoftmax(ref.logits[k]);
      close(e.logprob, ls[ids[k]], `step ${k}`);
      assert.deepStrictEqual(e.bytes, [...Buffer.from(e.token, "utf8")]);
      assert.strictEqual(e.top_logprobs.length, 3);
      const want = topIds(ref.logits[k], 3);
      e.top_logprobs.forEach((alt, j) => close(alt.logprob, ls[want[j]], `step ${k} top ${j}`));
      assert.strictEqual(e.top_logprobs[0].token, e.token); // greedy: the most likely
    });
  }],

  ["n=4 with a seed equals four single requests seeded seed + i", async () => {
    const params = { prompt: "Once", max_tokens: 24, temperature: 0.9, top_p: 0.95, return_token_ids: true };
    const r = await completion({ ...params, n: 4, seed: 1234 });
    assert.deepStrictEqual(r.choices.map((c) => c.index), [0, 1, 2, 3]);
    let completionTokens = 0;
    for (let i = 0; i < 4; i++) {
      const single = (await completion({ ...params, seed: 1234 + i })).choices[0];
      assert.deepStrictEqual(fields(r.choices[i]), fields(single), `choice ${i}`);
      completionTokens += single.token_ids.length;
    }
    assert.ok(new Set(r.choices.map((c) => c.text)).size > 1, "the choices should differ");
    assert.strictEqual(r.usage.prompt_tokens, 2); // the prompt once
    assert.strictEqual(r.usage.completion_tokens, completionTokens);
    const chats = await chat({ messages, max_tokens: 16, temperature: 1, seed: 9, n: 2 });
    for (let i = 0; i < 2; i++) {
      const single = await chat({ messages, max_tokens: 16, temperature: 1, seed: 9 + i });
      assert.strictEqual(chats.choices[i].message.content, single.choices[0].message.content);
      assert.strictEqual(chats.choices[i].message.refusal, null);
    }
  }],

  ["streams equal whole responses for n > 1 and logprobs; usage null before the last", async () => {
    const params = { prompt: "The dog", max_tokens: 20, temperature: 1, seed: 7, n: 3, logprobs: 2,
      return_token_ids: true };
    const whole = await completion(params);
    const s = await streamed(completion, { ...params, stream_options: { include_usage: true } });
    assert.strictEqual(s.choices.length, 3);
    for (let i = 0; i < 3; i++) {
      const w = whole.choices[i];
      assert.deepStrictEqual(s.choices[i], { index: i, text: w.text, token_ids: w.token_ids,
        finish_reason: w.finish_reason, logprobs: w.logprobs }, `choice ${i}`);
    }
    // Usage agrees but for the prompt tokens the prefix cache supplied (the
    // stream follows the whole request, whose prompt its row still holds).
    const counts = ({ prompt_tokens_details, ...rest }) => rest;
    assert.deepStrictEqual(counts(s.usage), counts(whole.usage));
    const last = s.chunks[s.chunks.length - 1];
    assert.strictEqual(last.choices.length, 0);
    for (const chunk of s.chunks.slice(0, -1)) {
      assert.ok("usage" in chunk && chunk.usage === null, JSON.stringify(chunk));
      assert.strictEqual(chunk.system_fingerprint, whole.system_fingerprint);
    }
    const chatParams = { messages, max_tokens: 12, temperature: 1, seed: 3, n: 2, logprobs: true,
      top_logprobs: 2 };
    const wholeChat = await chat(chatParams);
    const streamChat = await streamed((p) => ai.chat.completions.create({ model: "stories", ...p }), chatParams);
    for (let i = 0; i < 2; i++) {
      assert.strictEqual(streamChat.choices[i].text, wholeChat.choices[i].message.content);
      assert.deepStrictEqual(streamChat.choices[i].logprobs, wholeChat.choices[i].logprobs);
    }
  }],

  ["prompt arrays: choice prompt * n + j, each equal to its single request", async () => {
    const prompts = ["Once upon a time", "The cat"];
    const params = { max_tokens: 10, temperature: 0.8, seed: 5, return_token_ids: true };
    const r = await completion({ ...params, prompt: prompts, n: 2 });
    assert.strictEqual(r.choices.length, 4);
    let promptTokens = 0;
    for (let p = 0; p < 2; p++)
      for (let j = 0; j < 2; j++) {
        const single = await completion({ ...params, prompt: prompts[p], seed: 5 + j });
        const c = r.choices[p * 2 + j];
        assert.strictEqual(c.index, p * 2 + j);
        assert.deepStrictEqual(fields(c), fields(single.choices[0]), `prompt ${p} choice ${j}`);
        assert.deepStrictEqual(c.prompt_token_ids, single.choices[0].prompt_token_ids);
        if (j === 0) promptTokens += single.usage.prompt_tokens;
      }
    assert.strictEqual(r.usage.prompt_tokens, promptTokens);
    // Token-id prompts give the same.
    const ids = await completion({ ...params, prompt: r.choices.filter((c, i) => i % 2 === 0)
      .map((c) => c.prompt_token_ids), n: 2 });
    assert.deepStrictEqual(ids.choices.map(fields), r.choices.map(fields));
  }],

  ["best_of returns the n candidates with the highest cumulative logprob", async () => {
    const params = { prompt: "Once", max_tokens: 16, temperature: 1.2, return_token_ids: true };
    const r = await completion({ ...params, best_of: 4, n: 2, seed: 11 });
    const candidates = [];
    for (let i = 0; i < 4; i++) {
      const c = (await completion({ ...params, seed: 11 + i, logprobs: 0 })).choices[0];
      candidates.push({ ...fields(c), score: c.logprobs.token_logprobs.reduce((a, b) => a + b, 0) });
    }
    const best = candidates.map((c, i) => [c.score, -i, c]).sort((a, b) => b[0] - a[0] || b[1] - a[1])
      .slice(0, 2).map((x) => { const { score, ...f } = x[2]; return f; });
    assert.deepStrictEqual(r.choices.map(fields), best);
    assert.deepStrictEqual(r.choices.map((c) => c.index), [0, 1]);
    assert.strictEqual(r.choices[0].logprobs, null); // not asked for
    await refused("/v1/completions", { ...params, best_of: 2, stream: true }, "best_of", /not supported with stream/);
  }],

  ["stop_token_ids end at the first occurrence; include_stop_str_in_output keeps it", async () => {
    const [ref] = L.infer(t, artifacts, ["Once upon a time"], 40);
    const stopId = ref.generated_ids[3];
    const first = ref.generated_ids.indexOf(stopId);
    const upTo = async (n) => (await completion({ prompt: "Once upon a time", max_tokens: n, temperature: 0 })).choices[0].text;
    const r = (await completion({ prompt: "Once upon a time", max_tokens: 40, temperature: 0,
      stop_token_ids: [stopId], return_token_ids: true })).choices[0];
    assert.deepStrictEqual(r.token_ids, ref.generated_ids.slice(0, first));
    assert.strictEqual(r.finish_reason, "stop");
    assert.strictEqual(r.text, await upTo(first));
    const kept = (await completion({ prompt: "Once upon a time", max_tokens: 40, temperature: 0,
      stop_token_ids: [stopId], include_stop_str_in_output: true, return_token_ids: true })).choices[0];
    assert.deepStrictEqual(kept.token_ids, ref.generated_ids.slice(0, first + 1));
    assert.strictEqual(kept.text, await upTo(first + 1));
    // The v2 generate route takes them as parameters.
    const v2 = await (await post("/v2/models/stories/generate", { text_input: "Once upon a time",
      parameters: { max_tokens: 40, temperature: 0, stop_token_ids: [stopId] } })).json();
    assert.strictEqual(v2.text_output, r.text);
    assert.strictEqual(v2.finish_reason, "stop");
    await refused("/v1/completions", { prompt: "a", stop_token_ids: [VOCAB] }, "stop_token_ids", /outside the vocabulary/);
  }],

  ["min_tokens holds back EOS and stop token ids", async () => {
    const eosNow = { prompt: "Once upon a time", max_tokens: 30, temperature: 0, logit_bias: { [EOS]: 100 } };
    const none = await completion(eosNow);
    assert.strictEqual(none.usage.completion_tokens, 0);
    assert.strictEqual(none.choices[0].finish_reason, "stop");
    const four = await completion({ ...eosNow, min_tokens: 4, return_token_ids: true });
    assert.strictEqual(four.usage.completion_tokens, 4);
    assert.ok(!four.choices[0].token_ids.includes(EOS));
    assert.strictEqual(four.choices[0].finish_reason, "stop");
    const [ref] = L.infer(t, artifacts, ["Once upon a time"], 20);
    const stopId = ref.generated_ids[3];
    const late = await completion({ prompt: "Once upon a time", max_tokens: 20, temperature: 0,
      stop_token_ids: [stopId], min_tokens: 6, return_token_ids: true });
    assert.ok(late.choices[0].token_ids.length >= 6);
    assert.deepStrictEqual(late.choices[0].token_ids.slice(0, 3), ref.generated_ids.slice(0, 3));
    assert.ok(!late.choices[0].token_ids.includes(stopId), late.choices[0].token_ids);
    await refused("/v1/completions", { prompt: "a", max_tokens: 3, min_tokens: 4 }, "min_tokens",
      /min_tokens \(4\) must not exceed max_tokens \(3\)/);
  }],

  ["include_stop_str_in_output keeps the stop string, streamed or not", async () => {
    const params = { prompt: "Once upon a time", max_tokens: 30, temperature: 0, stop: ["was"] };
    const cut = (await completion(params)).choices[0];
    assert.strictEqual(cut.text, ", there ");
    const kept = (await completion({ ...params, include_stop_str_in_output: true })).choices[0];
    assert.strictEqual(kept.text, ", there was");
    assert.strictEqual(kept.finish_reason, "stop");
    const s = await streamed(completion, { ...params, include_stop_str_in_output: true });
    assert.strictEqual(s.choices[0].text, ", there was");
  }],

  ["skip_special_tokens=false shows special tokens", async () => {
    const params = { prompt: "Once", max_tokens: 3, temperature: 0, ignore_eos: true,
      logit_bias: { [BOS]: 100 }, return_token_ids: true };
    const skipped = (await completion(params)).choices[0];
    assert.deepStrictEqual(skipped.token_ids, [BOS, BOS, BOS]);
    assert.strictEqual(skipped.text, "");
    const shown = (await completion({ ...params, skip_special_tokens: false })).choices[0];
    assert.strictEqual(shown.text.split("<s>").length - 1, 3, shown.text);
    // The EOS that ends the row, kept and shown.
    const eos = (await completion({ prompt: "Once", max_tokens: 3, temperature: 0, logit_bias: { [EOS]: 100 },
      include_stop_str_in_output: true, skip_special_tokens: false, return_token_ids: true })).choices[0];
    assert.deepStrictEqual(eos.token_ids, [EOS]);
    assert.strictEqual(eos.text, "</s>");
  }],

  ["logit_bias forces or bans a token", async () => {
    const forced = (await completion({ prompt: "Once", max_tokens: 6, temperature: 0.7, seed: 3,
      logit_bias: { 376: 100 }, return_token_ids: true })).choices[0];
    assert.deepStrictEqual(forced.token_ids, [376, 376, 376, 376, 376, 376]);
    const [ref] = L.infer(t, artifacts, ["Once upon a time"], 4);
    const banned = (await completion({ prompt: "Once upon a time", max_tokens: 4, temperature: 0,
      logit_bias: { [ref.generated_ids[0]]: -100 }, return_token_ids: true })).choices[0];
    assert.notStrictEqual(banned.token_ids[0], ref.generated_ids[0]);
    assert.ok(!banned.token_ids.includes(ref.generated_ids[0]));
    await refused("/v1/completions", { prompt: "a", logit_bias: { [VOCAB]: 1 } }, "logit_bias", /outside the vocabulary/);
  }],

  ["presence and frequency penalties change greedy choices as OpenAI defines them", async () => {
    const N = 48;
    const ref = qeffRun(["--prompt", "Once upon a time"], N);
    const T = ref.row.generated_ids;
    for (const [presence, frequency] of [[0, 1.0], [1.5, 0], [0.4, 0.6]]) {
      const r = (await completion({ prompt: "Once upon a time", max_tokens: N, temperature: 0,
        presence_penalty: presence, frequency_penalty: frequency, return_token_ids: true })).choices[0];
      const S = r.token_ids;
      // Up to and at the first divergence the logits are the reference's:
      // each choice is argmax(logit - frequency * count - presence * seen).
      let k = 0;
      for (; k < Math.min(S.length, T.length); k++) {
        const counts = new Map();
        for (const id of S.slice(0, k)) counts.set(id, (counts.get(id) || 0) + 1);
        // In float32, as the engine (and vLLM) computes it.
        const scores = Array.from(ref.logits[k], (v, id) => {
          const n = counts.get(id) || 0;
          if (!n) return v;
          const f = Math.fround(v - Math.fround(Math.fround(frequency) * n));
          return Math.fround(f - Math.fround(presence));
        });
        assert.strictEqual(S[k], topIds(scores, 1)[0], `presence ${presence} frequency ${frequency} step ${k}`);
        if (S[k] !== T[k]) break;
      }
      assert.ok(k < Math.min(S.length, T.length), `the penalties (${presence}, ${frequency}) changed nothing`);
      // Sampled with a seed: reproducible.
      const sampled = { prompt: "Once", max_tokens: 20, temperature: 1, seed: 2, presence_penalty: presence,
        frequency_penalty: frequency };
      assert.strictEqual((await completion(sampled)).choices[0].text, (await completion(sampled)).choices[0].text);
    }
  }],

  ["echo prepends the prompt, streamed or not", async () => {
    const plain = (await completion({ prompt: "Once upon a time", max_tokens: 8, temperature: 0 })).choices[0];
    const echoed = (await completion({ prompt: "Once upon a time", max_tokens: 8, temperature: 0, echo: true })).choices[0];
    assert.strictEqual(echoed.text, "Once upon a time" + plain.text);
    const s = await streamed(completion, { prompt: "Once upon a time", max_tokens: 8, temperature: 0, echo: true });
    assert.strictEqual(s.choices[0].text, echoed.text);
    const two = await completion({ prompt: ["Once", "The cat"], max_tokens: 2, temperature: 0, echo: true, n: 2 });
    assert.ok(two.choices[0].text.startsWith("Once") && two.choices[3].text.startsWith("The cat"));
    // The completion continues the prompt's text: its first word keeps the
    // space before it (as vLLM's and OpenAI's text), so echo reads as one.
    const once = (await completion({ prompt: "Once", max_tokens: 3, temperature: 0 })).choices[0];
    assert.strictEqual(once.text, " upon a time");
    assert.strictEqual(two.choices[0].text, "Once upon a");
    await refused("/v1/completions", { prompt: "a", echo: true, logprobs: 1 }, "echo", /echo together with logprobs/);
  }],

  ["not implemented or out of bounds: 400 naming the field", async () => {
    const chatBody = (extra) => ({ model: "stories", messages, ...extra });
    // (JSON output itself: json-output.js.)
    await refused("/v1/completions", { prompt: "a", guided_json: { type: "string", pattern: "a" } },
      "guided_json", /guided_json\.pattern: .*not supported/);
    await refused("/v1/chat/completions", chatBody({ tools: [{ type: "function", function: { name: "f" } }] }),
      "tools", /function calling/);
    await refused("/v1/completions", { prompt: "a", suffix: "b" }, "suffix", /not supported/);
    await refused("/v1/completions", { prompt: "a", prompt_logprobs: 1 }, "prompt_logprobs", /not supported/);
    await refused("/v1/completions", { prompt: "a", use_beam_search: true }, "use_beam_search", /not supported/);
    await refused("/v1/completions", { prompt: "a", logprobs: 21 }, "logprobs", /between 0 and 20/);
    await refused("/v1/chat/completions", chatBody({ logprobs: true, top_logprobs: 21 }), "top_logprobs", /between 0 and 20/);
    await refused("/v1/completions", { prompt: ["a", "b"], n: 65 }, "n", /more than the 128 sequences/);
    await refused("/v1/completions", { prompt: "a", stop: Array.from({ length: 65 }, (_, i) => `s${i}`) },
      "stop", /at most 64/);
    await refused("/v1/completions", { prompt: "a", stop: ["x".repeat(257)] }, "stop", /at most 256/);
    // 2^63 - 1 (written out: a JS number cannot hold it).
    await refused("/v1/completions", '{"prompt": "Once", "max_tokens": 9223372036854775807}', "max_tokens",
      /maximum context length is 256 tokens, but you requested more than 2\^63 - 1/, "context_length_exceeded");
    await refused("/v1/chat/completions", '{"messages": [{"role": "user", "content": "x"}], "max_tokens": 9223372036854775807}',
      "max_tokens", /maximum context length/, "context_length_exceeded");
    const v2 = await post("/v2/models/stories/generate", { text_input: "a", parameters: { n: 2 } });
    assert.strictEqual(v2.status, 400);
    assert.match((await v2.json()).error, /^parameters\.n: n other than 1/);
    // Still serving.
    const ok = await completion({ prompt: "Once", max_tokens: 2, temperature: 0 });
    assert.strictEqual(ok.usage.completion_tokens, 2);
  }],
]);
