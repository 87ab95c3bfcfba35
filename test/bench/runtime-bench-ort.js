#!/usr/bin/env node
// ONNX Runtime side of test/bench/runtime-bench.sh: greedy generation on a qeff device
// artifact (model.onnx with retained state) exactly as `qeff run` drives it on the host
// device, timed the same way.
//
//   node runtime-bench-ort.js --artifact DIR --token-ids 1,2,3 [--max-new-tokens 64]
//        [--threads 1] [--opt-level all|extended|basic|disabled] [--prealloc 0|1]
//
// One generation per process (as `qeff run`): session creation (not timed), then
// prefill in chunks of the Prefill specialization's seq_len, right-padded with position
// -1 (timed until the logits of the chunk with the last prompt token are back), then
// decode steps of seq_len 1 feeding each *_RetainedState output back as the next past_*
// input, greedy (timed until the last token). The KV state starts as zeros, allocated
// before the clock starts. Prints one JSON line:
//   {"prefill_tokens_per_s", "decode_tokens_per_s", "generated_ids", "load_s", ...}
// with prefill = prompt tokens / prefill time and decode = (new tokens - 1) / decode
// time, the definitions of qeff run's metrics. Batch 1 only.
'use strict';
const fs = require('fs');
const path = require('path');
const { loadOrt } = require('../oracle/run-onnx.js');

function parseArgs(argv) {
  const o = { 'max-new-tokens': '64', threads: '1', 'opt-level': 'all' };
  for (let i = 2; i < argv.length; i += 2) o[argv[i].replace(/^--/, '')] = argv[i + 1];
  for (const k of ['artifact', 'token-ids']) if (!o[k]) throw new Error(`missing --${k}`);
  return o;
}

async function main() {
  const o = parseArgs(process.argv);
  const ort = loadOrt();
  const dir = o.artifact;
  const specs = JSON.parse(fs.readFileSync(path.join(dir, 'specializations.json'), 'utf8')).specializations;
  const prefill = specs.find((s) => s.name === 'Prefill').symbols;
  const B = Number(prefill.batch_size), P = Number(prefill.seq_len), C = Number(prefill.ctx_len);
  if (B !== 1) throw new Error(`batch 1 only (the artifact has batch_size ${B})`);
  const prompt = o['token-ids'].split(',').map(Number);
  const N = Number(o['max-new-tokens']);
  if (prompt.length + N > C) throw new Error(`ctx_len ${C} cannot hold ${prompt.length} + ${N} tokens`);
  const threads = Number(o.threads);

  const t0 = process.hrtime.bigint();
  const session = await ort.InferenceSession.create(path.join(dir, 'model.onnx'), {
    executionProviders: ['cpu'], graphOptimizationLevel: o['opt-level'],
    intraOpNumThreads: threads, interOpNumThreads: 1, executionMode: 'sequential',
    logSeverityLevel: 3,
  });
  const loadS = Number(process.hrtime.bigint() - t0) / 1e9;

  const meta = Object.fromEntries((session.inputMetadata ?? []).map((m) => [m.name, m]));
  let state = {};
  for (const p of session.inputNames.filter((n) => n.startsWith('past_'))) {
    const shape = meta[p].shape.map((d) => (d === 'batch_size' ? B : d === 'ctx_len' ? C : d));
    state[p] = new ort.Tensor('float32', new Float32Array(shape.reduce((a, c) => a * c, 1)), shape);
  }
  const int64 = (values, shape) => new ort.Tensor('int64', BigInt64Array.from(values.map(BigInt)), shape);
  // --prealloc 1: the *_RetainedState outputs go into pre-allocated tensors (two sets,
  // swapped every step), so that ORT writes the new state straight into memory the next
  // step reads instead of handing back fresh output buffers.
  const prealloc = o.prealloc === '1';
  let spare = {};
  if (prealloc)
    for (const [p, t] of Object.entries(state))
      spare[p] = new ort.Tensor('float32', new Float32Array(t.data.length), t.dims);
  const run = async (ids, positions, seq) => {
    const feeds = { input_ids: int64(ids, [B, seq]), position_ids: int64(positions, [B, seq]), ...state };
    if (!prealloc) {
      const out = await session.run(feeds);
      for (const p of Object.keys(state)) state[p] = out[`${p}_RetainedState`];
      return out.logits.data;
    }
    const fetches = { logits: null };
    for (const p of Object.keys(state)) fetches[`${p}_RetainedState`] = spare[p];
    const out = await session.run(feeds, fetches);
    const old = state;
    state = {};
    for (const p of Object.keys(old)) state[p] = out[`${p}_RetainedState`];
    spare = old;
    return out.logits.data;
  };
  const argmax = (x) => {
    let best = 0;
    for (let j = 1; j < x.length; j++) if (x[j] > x[best]) best = j;
    return best;
  };

  const start = process.hrtime.bigint();
  let logits;
  for (let c = 0; c * P < prompt.length; c++) {
    const ids = [], positions = [];
    for (let j = 0; j < P; j++) {
      const s = c * P + j;
      ids.push(s < prompt.length ? prompt[s] : 0);
      positions.push(s < prompt.length ? s : -1);
    }
    logits = await run(ids, positions, P);
  }
  const prefillS = Number(process.hrtime.bigint() - start) / 1e9;
  const decodeStart = process.hrtime.bigint();
  const generated = [argmax(logits)];
  while (generated.length < N) {
    const pos = prompt.length + generated.length - 1;
    logits = await run([generated[generated.length - 1]], [pos], 1);
    generated.push(argmax(logits));
  }
  const decodeS = Number(process.hrtime.bigint() - decodeStart) / 1e9;
  console.log(JSON.stringify({
    prefill_tokens_per_s: prompt.length / prefillS,
    decode_tokens_per_s: decodeS > 0 ? (N - 1) / decodeS : 0,
    prefill_s: prefillS, decode_s: decodeS, load_s: loadS,
    threads, opt_level: o['opt-level'], prealloc, ort_version: ort.env?.versions?.common ?? null,
    generated_ids: generated,
  }));
}

main().catch((e) => { console.error(`runtime-bench-ort: ${e.message}`); process.exit(1); });
