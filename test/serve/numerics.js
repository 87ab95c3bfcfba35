// `qeff serve --numerics` (docs/numerics.md): a server started with the
// numerics of a device compile with -convert-to-fp16 -mxfp6-matmul and an
// mxint8 KV cache answers with exactly the tokens `qeff infer` gives under
// the same --numerics; an fp32 server with those of `qeff infer` in fp32;
// and the two servers' log-probabilities differ (the emulation is on).
"use strict";
const L = require("./lib");
const { assert } = L;

const t = L.args();
const artifacts = L.compile(t, "art", ["--ctx-len", "128", "--prefill-seq-len", "16"]);
const MX = "fp16+mxfp6+mxint8-kv";
const prompts = ["Once upon a time", "Lily and her dog went to the park. They saw"];
const servers = {};

async function complete(server, prompt) {
  const r = await L.client(server).completions.create({
    model: "stories", prompt, max_tokens: 24, temperature: 0, logprobs: 1,
    return_token_ids: true,
  });
  return { ids: r.choices[0].token_ids, logprobs: r.choices[0].logprobs.token_logprobs };
}

L.run([
  ["a server per numerics", async () => {
    servers.mx = await L.startServer(t, artifacts, ["--model-name", "stories", "--numerics", MX]);
    servers.fp32 = await L.startServer(t, artifacts, ["--model-name", "stories"]);
  }],
  [`--numerics ${MX}: the tokens of qeff infer --numerics ${MX}`, async () => {
    const ref = L.infer(t, artifacts, prompts, 24, ["--numerics", MX]);
    for (let i = 0; i < prompts.length; i++) {
      const r = await complete(servers.mx, prompts[i]);
      assert.deepStrictEqual(r.ids, ref[i].generated_ids, prompts[i]);
    }
  }],
  ["fp32: the tokens of qeff infer, and other log-probabilities than MX", async () => {
    const ref = L.infer(t, artifacts, prompts, 24);
    let differ = 0;
    for (let i = 0; i < prompts.length; i++) {
      const fp32 = await complete(servers.fp32, prompts[i]);
      assert.deepStrictEqual(fp32.ids, ref[i].generated_ids, prompts[i]);
      const mx = await complete(servers.mx, prompts[i]);
      // The first token's log-probability: same context in both servers.
      assert.ok(Number.isFinite(fp32.logprobs[0]) && Number.isFinite(mx.logprobs[0]));
      if (fp32.logprobs[0] !== mx.logprobs[0]) differ++;
    }
    assert.strictEqual(differ, prompts.length, "MX log-probabilities equal fp32's");
  }],
]);
