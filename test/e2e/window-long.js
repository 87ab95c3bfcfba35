#!/usr/bin/env node
// Sliding-window models beyond the golden's 12 generated tokens: the golden's prompt
// followed by --steps tokens (well past the window, so a rolling KV buffer wraps many
// times), with ONNX Runtime running qeff's imported form (HF semantics: the whole past
// kept, the window a mask, as transformers' eager attention computes it) as the
// reference past the golden.
//
//   node window-long.js --golden DIR --hf HF/model.onnx --device DEV/model.onnx
//       --steps K [--qeff QEFF]
//
// 1. Reference: the imported form in ONNX Runtime, greedy for K steps; its first N
//    steps must match the golden (logits within golden.json's fp32 tolerance, tokens
//    exactly), which ties the reference to the real Hugging Face code.
// 2. The device form in ONNX Runtime (prefill chunks of the Prefill specialization's
//    seq_len, then decode), fed the reference's tokens (teacher forcing, so that one
//    near-tie cannot derail the comparison): logits at every step within the fp32
//    tolerance of the reference's, and the same greedy token wherever the
//    reference's top-2 margin exceeds twice that tolerance.
// 3. With --qeff: the host device (`qeff run --max-new-tokens K`) greedy on the same
//    artifact: tokens equal the reference's up to its first EOS (where qeff run
//    stops) or the first step whose reference margin is within the tolerance (none in
//    the registered tests), logits alike.
'use strict';
const fs = require('fs');
const path = require('path');
const os = require('os');
const { spawnSync } = require('child_process');
const { readSafetensors, loadOrt } = require('../oracle/run-onnx.js');

function parseArgs(argv) {
  const o = {};
  for (let i = 2; i < argv.length; i += 2) o[argv[i].replace(/^--/, '')] = argv[i + 1];
  for (const k of ['golden', 'hf', 'device', 'steps'])
    if (!o[k]) throw new Error(`missing --${k}`);
  return o;
}

const f32 = (x) => new Float32Array(x.bytes.buffer.slice(x.bytes.byteOffset, x.bytes.byteOffset + x.bytes.length));
const i64 = (x) => Array.from(new BigInt64Array(x.bytes.buffer.slice(x.bytes.byteOffset, x.bytes.byteOffset + x.bytes.length)), Number);
const int64 = (ort, values, shape) => new ort.Tensor('int64', BigInt64Array.from(values.map(BigInt)), shape);
const argmax = (v) => { let b = 0; for (let j = 1; j < v.length; j++) if (v[j] > v[b]) b = j; return b; };
const margin = (v) => {
  let a = -Infinity, b = -Infinity;
  for (const x of v) { if (x > a) { b = a; a = x; } else if (x > b) b = x; }
  return a - b;
};

async function main() {
  const o = parseArgs(process.argv);
  const K = Number(o.steps);
  const ort = loadOrt();
  const t = readSafetensors(path.join(o.golden, 'golden.safetensors'));
  const json = JSON.parse(fs.readFileSync(path.join(o.golden, 'golden.json'), 'utf8'));
  const { logits_atol: atol, logits_rtol: rtol } = json.tolerances.recommended.fp32;
  const ids = i64(t.get('input_ids')), mask = i64(t.get('attention_mask'));
  const greedy = i64(t.get('greedy_tokens')), steps = f32(t.get('step_logits'));
  const [B, S] = t.get('input_ids').shape, N = t.get('greedy_tokens').shape[1], V = t.get('step_logits').shape[2];
  if (B !== 1) throw new Error('window-long.js takes one-row goldens');
  const prompt = ids.filter((_, s) => mask[s] === 1);
  const failures = [];
  let compared = 0, maxErr = 0;
  const close = (what, got, want) => {
    let worst = 0, at = -1;
    for (let j = 0; j < V; j++) {
      const err = Math.abs(got[j] - want[j]);
      maxErr = Math.max(maxErr, Number.isFinite(err) ? err : Infinity);
      if (!(err <= atol + rtol * Math.abs(want[j])) && err >= worst) { worst = err; at = j; }
    }
    compared++;
    if (at >= 0) failures.push(`${what}: logit ${at} is ${got[at]}, reference ${want[at]} (|err| ${worst})`);
  };
  const opts = { graphOptimizationLevel: 'disabled', intraOpNumThreads: 1 };

  // 1. The reference: the imported form, greedy.
  const hf = await ort.InferenceSession.create(o.hf, opts);
  const meta = Object.fromEntries((hf.inputMetadata ?? []).map((m) => [m.name, m]));
  const pasts = hf.inputNames.filter((n) => n.startsWith('past_'));
  const feeds = { input_ids: int64(ort, prompt, [1, prompt.length]), position_ids: int64(ort, prompt.map((_, i) => i), [1, prompt.length]) };
  for (const p of pasts)
    feeds[p] = new ort.Tensor('float32', new Float32Array(0), meta[p].shape.map((d, i) => (i === 0 ? 1 : typeof d === 'number' ? d : 0)));
  let out = await hf.run(feeds);
  let last = out.logits.data.slice((prompt.length - 1) * V, prompt.length * V);
  const ref = [], refTokens = [];
  for (let k = 0; k < K; k++) {
    ref.push(last);
    refTokens.push(argmax(last));
    if (k < N) {
      close(`reference step ${k} vs golden`, last, steps.subarray(k * V, (k + 1) * V));
      if (refTokens[k] !== greedy[k]) failures.push(`reference step ${k}: token ${refTokens[k]}, golden ${greedy[k]}`);
    }
    if (k === K - 1) break;
    const next = { input_ids: int64(ort, [refTokens[k]], [1, 1]), position_ids: int64(ort, [prompt.length + k], [1, 1]) };
    for (const p of pasts) next[p] = out[p.replace('past_', 'present_')];
    out = await hf.run(next);
    last = out.logits.data.slice(0, V);
  }
  const decided = ref.map((r) => margin(r) > 2 * (atol + rtol * Math.max(...r.map(Math.abs))));

  // 2. The device form, teacher-forced with the reference's tokens.
  const specs = JSON.parse(fs.readFileSync(path.join(path.dirname(o.device), 'specializations.json'), 'utf8')).specializations;
  const prefill = specs.find((s) => s.name === 'Prefill').symbols;
  const P = Number(prefill.seq_len), C = Number(prefill.ctx_len);
  if (prompt.length + K > C) throw new Error(`ctx_len ${C} cannot hold ${prompt.length} prompt + ${K} generated tokens`);
  const dev = await ort.InferenceSession.create(o.device, opts);
  const dmeta = Object.fromEntries((dev.inputMetadata ?? []).map((m) => [m.name, m]));
  const state = {};
  for (const p of dev.inputNames.filter((n) => n.startsWith('past_'))) {
    const shape = dmeta[p].shape.map((d) => (d === 'batch_size' ? 1 : d === 'ctx_len' ? C : d));
    state[p] = new ort.Tensor('float32', new Float32Array(shape.reduce((a, c) => a * c, 1)), shape);
  }
  const run = async (tokens, positions) => {
    const r = await dev.run({ input_ids: int64(ort, tokens, [1, tokens.length]), position_ids: int64(ort, positions, [1, tokens.length]), ...state });
    for (const p of Object.keys(state)) state[p] = r[`${p}_RetainedState`];
    return r.logits.data.slice(0, V);
  };
  let got;
  for (let c = 0; c * P < prompt.length; c++) {
    const tokens = [], positions = [];
    for (let j = 0; j < P; j++) {
      const s = c * P + j;
      tokens.push(s < prompt.length ? prompt[s] : 0);
      positions.push(s < prompt.length ? s : -1);
    }
    got = await run(tokens, positions);
  }
  for (let k = 0; k < K; k++) {
    close(`device step ${k}`, got, ref[k]);
    if (decided[k] && argmax(got) !== refTokens[k]) failures.push(`device step ${k}: token ${argmax(got)}, reference ${refTokens[k]}`);
    if (k < K - 1) got = await run([refTokens[k]], [prompt.length + k]);
  }

  // 3. The host device, greedy on the same artifact.
  if (o.qeff) {
    const tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'qeff-long-'));
    const saved = path.join(tmp, 'logits.safetensors');
    const r = spawnSync(o.qeff, ['run', path.dirname(o.device), '--token-ids', prompt.join(','), '--max-new-tokens', String(K),
      '--save-logits', saved, '--json', '--threads', '1'], { encoding: 'utf8' });
    if (r.status !== 0) throw new Error(`qeff run failed: ${r.stderr}`);
    const row = JSON.parse(r.stdout).rows[0];
    const host = f32(readSafetensors(saved).get('step_logits'));
    fs.rmSync(tmp, { recursive: true });
    // qeff run stops at EOS (the reference, teacher-forcing, goes on).
    const eos = refTokens.findIndex((tok) => tok === json.special_tokens.eos);
    let until = decided.indexOf(false) < 0 ? K : decided.indexOf(false);
    if (eos >= 0 && eos < until) {
      until = eos;
      if (row.finish_reason !== 'eos') failures.push(`host finish_reason ${row.finish_reason}, the reference reaches EOS at step ${eos}`);
    }
    if (row.generated_ids.slice(0, until).join() !== refTokens.slice(0, until).join())
      failures.push(`host greedy tokens [${row.generated_ids}], reference [${refTokens}] (compared up to step ${until})`);
    for (let k = 0; k < until; k++) close(`host step ${k}`, host.subarray(k * V, (k + 1) * V), ref[k]);
  }

  for (const f of failures.slice(0, 20)) console.log(`FAIL ${json.name} (long): ${f}`);
  console.log(`${json.name} (long, ${prompt.length} prompt + ${K} tokens, ${decided.filter((d) => !d).length} near-ties): ` +
              `${compared} logit rows compared, max |err| ${maxErr.toExponential(3)}, ${failures.length} failures`);
  console.log(`${failures.length ? 0 : 1} passed, ${failures.length ? 1 : 0} failed`);
  process.exit(failures.length ? 1 : 0);
}

main().catch((e) => { console.error(`window-long: ${e.message}`); process.exit(1); });
