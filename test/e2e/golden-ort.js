#!/usr/bin/env node
// Runs a qeff-exported model in ONNX Runtime against a golden from the real Hugging Face
// code (test/data/golden/<Name>): logits within the golden's fp32 tolerance at every
// compared position and greedy tokens exactly. ONNX Runtime is the independent oracle.
//
//   node golden-ort.js --golden DIR --model DIR/model.onnx --form hf
//       The imported form (HF semantics): each row alone without padding, a no-cache
//       forward over the prompt (prefill_logits), then one token at a time feeding
//       present_* back as past_* (step_logits, greedy_tokens).
//   node golden-ort.js --golden DIR --model DIR/model.onnx --form device
//       The device form, run as the AI 100 runs it: all rows as one batch, right-padded,
//       prefill in chunks of the Prefill specialization's seq_len with position -1 on
//       padding, then decode steps of seq_len 1, feeding each *_RetainedState output
//       back as the next past_* input (step_logits, greedy_tokens).
//   node golden-ort.js --golden DIR --model DIR/model.onnx --form device-cb
//       The device form compiled for continuous batching (batch_index input,
//       full_batch_size cache rows, one more than the golden's rows): each row is
//       prefilled alone into cache row full_batch_size - 1 - b (the row order
//       reversed, so that batch_index matters), then all cache rows decode
//       together, the spare row with position -1 (step_logits, greedy_tokens).
//   node golden-ort.js --golden DIR --model DIR/model.onnx --form target
//       A speculative-decoding target (--num-speculative-tokens, input
//       num_logits_to_keep): the prompts prefilled as in `device` (num_logits_to_keep
//       [1, 1]), then prompt + greedy tokens fed in steps of K + 1 (the largest K of
//       the DecodeK specializations; the last step right-padded): logits
//       [B, K + 1, V], each position equal to the golden's full_logits; for
//       sequence-length dependent rope scaling (golden.json seq_len_dependent_rope:
//       dynamic NTK, longrope) equal to its step_logits instead (below).
//   node golden-ort.js --golden DIR --model DIR/model.onnx --form host --qeff QEFF
//           [--numerics fp32|fp16] [--weights bf16]
//       The host device: `qeff run DIR --token-ids <each row> --save-logits ...` on
//       the same artifact, checked against the golden (tokens exact, logits within
//       the golden's tolerance for the numerics) AND against ONNX Runtime running the
//       same device ONNX as above (same logits within the fp32 tolerance).
//       --weights bf16: the artifact holds bf16 weights (--weights-dtype=bf16), so
//       against the golden the logits are held to 8x its fp16 tolerance (bf16 keeps 8
//       significant bits, fp16 11: 2^3 times the rounding of each weight) and the
//       greedy tokens still exactly; against ONNX Runtime, which widens the same bf16
//       weights, to the fp32 tolerance (the host must compute what ORT computes).
'use strict';
const fs = require('fs');
const path = require('path');
const os = require('os');
const { spawnSync } = require('child_process');
const { readSafetensors, loadOrt } = require('../oracle/run-onnx.js');

function parseArgs(argv) {
  const o = {};
  for (let i = 2; i < argv.length; i += 2) o[argv[i].replace(/^--/, '')] = argv[i + 1];
  for (const k of ['golden', 'model', 'form'])
    if (!o[k]) throw new Error(`missing --${k}`);
  return o;
}

// Golden tensors as plain JS arrays/typed arrays.
function loadGolden(dir) {
  const t = readSafetensors(path.join(dir, 'golden.safetensors'));
  const f32 = (n) => { const x = t.get(n); return { shape: x.shape, data: new Float32Array(x.bytes.buffer.slice(x.bytes.byteOffset, x.bytes.byteOffset + x.bytes.length)) }; };
  const i64 = (n) => { const x = t.get(n); return { shape: x.shape, data: Array.from(new BigInt64Array(x.bytes.buffer.slice(x.bytes.byteOffset, x.bytes.byteOffset + x.bytes.length)), Number) }; };
  const json = JSON.parse(fs.readFileSync(path.join(dir, 'golden.json'), 'utf8'));
  // test/data/golden: tolerances.recommended.{fp32,fp16}; the quantized
  // fixtures (test/data/quant) give tolerances.fp32 only.
  const rec = json.tolerances.recommended || json.tolerances;
  const tol = rec.fp32;
  const tol16 = rec.fp16 || { logits_atol: NaN, logits_rtol: NaN };
  return {
    inputIds: i64('input_ids'), mask: i64('attention_mask'), prefill: f32('prefill_logits'),
    greedy: i64('greedy_tokens'), steps: f32('step_logits'),
    atol: tol.logits_atol, rtol: tol.logits_rtol, name: json.name || json.fixture,
    atol16: tol16.logits_atol, rtol16: tol16.logits_rtol, json, dir,
  };
}

class Checker {
  constructor(g) { this.g = g; this.failures = []; this.compared = 0; this.maxErr = 0; }
  // Compare logits[V] (array-like at offset) against a golden row.
  logits(what, got, gotOff, want, wantOff, V) {
    let worst = 0, at = -1;
    for (let j = 0; j < V; j++) {
      const a = got[gotOff + j], b = want[wantOff + j];
      const err = Math.abs(a - b);
      if (!(err <= this.g.atol + this.g.rtol * Math.abs(b)) && err >= worst) { worst = err; at = j; }
      this.maxErr = Math.max(this.maxErr, Number.isFinite(err) ? err : Infinity);
    }
    this.compared++;
    if (at >= 0) this.failures.push(`${what}: logit ${at} is ${got[gotOff + at]}, golden ${want[wantOff + at]} (|err| ${worst} > atol ${this.g.atol} + rtol ${this.g.rtol}*|golden|)`);
  }
  token(what, got, gotOff, V, wantToken) {
    let best = 0;
    for (let j = 1; j < V; j++) if (got[gotOff + j] > got[gotOff + best]) best = j;
    if (best !== wantToken) this.failures.push(`${what}: greedy token ${best}, golden ${wantToken}`);
    return best;
  }
}

const int64 = (ort, values, shape) => new ort.Tensor('int64', BigInt64Array.from(values.map(BigInt)), shape);

// Each golden row's prompt without its left padding.
function unpaddedPrompts(g) {
  const [B, S] = g.inputIds.shape;
  const prompts = [];
  for (let b = 0; b < B; b++) {
    const ids = [];
    for (let s = 0; s < S; s++) if (g.mask.data[b * S + s] === 1) ids.push(g.inputIds.data[b * S + s]);
    prompts.push(ids);
  }
  return prompts;
}

// Prefill chunk c of every row, P tokens each, right-padded with position -1.
function prefillChunk(prompts, P, c) {
  const ids = [], positions = [];
  for (const prompt of prompts)
    for (let j = 0; j < P; j++) {
      const s = c * P + j;
      ids.push(s < prompt.length ? prompt[s] : 0);
      positions.push(s < prompt.length ? s : -1);
    }
  return { ids, positions };
}

async function runHF(ort, session, g, check) {
  const [B, S] = g.inputIds.shape, N = g.greedy.shape[1], V = g.prefill.shape[2];
  const pasts = session.inputNames.filter((n) => n.startsWith('past_'));
  const meta = Object.fromEntries((session.inputMetadata ?? []).map((m) => [m.name, m]));
  for (let b = 0; b < B; b++) {
    const valid = [];
    for (let s = 0; s < S; s++) if (g.mask.data[b * S + s] === 1) valid.push(s);
    const L = valid.length;
    const feeds = {
      input_ids: int64(ort, valid.map((s) => g.inputIds.data[b * S + s]), [1, L]),
      position_ids: int64(ort, valid.map((_, i) => i), [1, L]),
    };
    for (const p of pasts) {
      const shape = meta[p].shape.map((d, i) => (i === 0 ? 1 : typeof d === 'number' ? d : 0));
      feeds[p] = new ort.Tensor('float32', new Float32Array(0), shape);
    }
    let out = await session.run(feeds);
    let logits = out.logits.data;
    for (let i = 0; i < L; i++)
      check.logits(`row ${b} prefill position ${valid[i]}`, logits, i * V, g.prefill.data, (b * S + valid[i]) * V, V);
    let pos = L, lastOff = (L - 1) * V;
    for (let k = 0; k < N; k++) {
      check.logits(`row ${b} step ${k}`, logits, lastOff, g.steps.data, (b * N + k) * V, V);
      check.token(`row ${b} step ${k}`, logits, lastOff, V, g.greedy.data[b * N + k]);
      if (k === N - 1) break;
      const next = { input_ids: int64(ort, [g.greedy.data[b * N + k]], [1, 1]), position_ids: int64(ort, [pos], [1, 1]) };
      for (const p of pasts) next[p] = out[p.replace('past_', 'present_')];
      out = await session.run(next);
      logits = out.logits.data; lastOff = 0; pos++;
    }
  }
}

async function runDevice(ort, session, g, check, modelDir) {
  const specs = JSON.parse(fs.readFileSync(path.join(modelDir, 'specializations.json'), 'utf8')).specializations;
  const prefill = specs.find((s) => s.name === 'Prefill').symbols;
  const batch = Number(prefill.batch_size), P = Number(prefill.seq_len), C = Number(prefill.ctx_len);
  const [B, S] = g.inputIds.shape, N = g.greedy.shape[1], V = g.steps.shape[2];
  if (batch !== B) throw new Error(`the model is compiled for batch_size ${batch}, the golden has ${B} rows`);
  const prompts = unpaddedPrompts(g);
  const maxL = Math.max(...prompts.map((p) => p.length));
  if (maxL + N > C) throw new Error(`ctx_len ${C} cannot hold ${maxL} prompt + ${N} generated tokens`);
  const meta = Object.fromEntries((session.inputMetadata ?? []).map((m) => [m.name, m]));
  const state = {};
  for (const p of session.inputNames.filter((n) => n.startsWith('past_'))) {
    const shape = meta[p].shape.map((d) => (d === 'batch_size' ? B : d === 'ctx_len' ? C : d));
    state[p] = new ort.Tensor('float32', new Float32Array(shape.reduce((a, c) => a * c, 1)), shape);
  }
  const run = async (ids, positions, seq) => {
    const out = await session.run({ input_ids: int64(ort, ids, [B, seq]), position_ids: int64(ort, positions, [B, seq]), ...state });
    for (const p of Object.keys(state)) state[p] = out[`${p}_RetainedState`];
    if (out.logits.dims.join() !== [B, 1, V].join()) throw new Error(`logits are [${out.logits.dims}], expected [${B},1,${V}]`);
    return out.logits.data;
  };
  // Prefill: chunks of P tokens, right padding with position -1.
  const first = new Array(B);
  for (let c = 0; c * P < maxL; c++) {
    const { ids, positions } = prefillChunk(prompts, P, c);
    const logits = await run(ids, positions, P);
    for (let b = 0; b < B; b++)
      if (Math.floor((prompts[b].length - 1) / P) === c) first[b] = logits.slice(b * V, (b + 1) * V);
  }
  let logits = Float32Array.from(first.flatMap((r) => Array.from(r)));
  const seen = []; // [b][k] -> logits row
  for (let k = 0; k < N; k++) {
    for (let b = 0; b < B; b++) {
      (seen[b] ??= [])[k] = logits.slice(b * V, (b + 1) * V);
      check.logits(`row ${b} step ${k}`, logits, b * V, g.steps.data, (b * N + k) * V, V);
      check.token(`row ${b} step ${k}`, logits, b * V, V, g.greedy.data[b * N + k]);
    }
    if (k === N - 1) break;
    logits = await run(prompts.map((_, b) => g.greedy.data[b * N + k]), prompts.map((p) => p.length + k), 1);
  }
  return { seen, prompts, V, N };
}

// Continuous batching in ONNX Runtime (see the header).
async function runContinuous(ort, session, g, check, modelDir) {
  const specs = JSON.parse(fs.readFileSync(path.join(modelDir, 'specializations.json'), 'utf8')).specializations;
  const prefill = specs.find((s) => s.name === 'Prefill').symbols;
  const P = Number(prefill.seq_len), C = Number(prefill.ctx_len), F = Number(prefill.full_batch_size);
  const [B, S] = g.inputIds.shape, N = g.greedy.shape[1], V = g.steps.shape[2];
  if (Number(prefill.batch_size) !== 1) throw new Error('the Prefill specialization must run one sequence');
  if (!(F > B)) throw new Error(`full_batch_size ${F} must exceed the golden's ${B} rows`);
  const meta = Object.fromEntries((session.inputMetadata ?? []).map((m) => [m.name, m]));
  const state = {};
  for (const p of session.inputNames.filter((n) => n.startsWith('past_'))) {
    const shape = meta[p].shape.map((d) => (d === 'full_batch_size' ? F : d === 'ctx_len' ? C : d));
    if (shape[0] !== F) throw new Error(`${p} is [${meta[p].shape}], expected full_batch_size rows`);
    state[p] = new ort.Tensor('float32', new Float32Array(shape.reduce((a, c) => a * c, 1)), shape);
  }
  const run = async (ids, positions, rows, batch, seq) => {
    const out = await session.run({ input_ids: int64(ort, ids, [batch, seq]), position_ids: int64(ort, positions, [batch, seq]),
                                    batch_index: int64(ort, rows, [batch, 1]), ...state });
    for (const p of Object.keys(state)) state[p] = out[`${p}_RetainedState`];
    if (out.logits.dims.join() !== [batch, 1, V].join()) throw new Error(`logits are [${out.logits.dims}], expected [${batch},1,${V}]`);
    return out.logits.data;
  };
  const slotOf = (b) => F - 1 - b;
  const prompts = [];
  for (let b = 0; b < B; b++) {
    const ids = [];
    for (let s = 0; s < S; s++) if (g.mask.data[b * S + s] === 1) ids.push(g.inputIds.data[b * S + s]);
    if (ids.length + N > C) throw new Error(`ctx_len ${C} cannot hold ${ids.length} prompt + ${N} generated tokens`);
    prompts.push(ids);
  }
  // Prefill each row alone; its first logits from the chunk of its last token.
  const logits = new Float32Array(F * V);
  for (let b = 0; b < B; b++)
    for (let c = 0; c * P < prompts[b].length; c++) {
      const ids = [], positions = [];
      for (let j = 0; j < P; j++) {
        const s = c * P + j;
        ids.push(s < prompts[b].length ? prompts[b][s] : 0);
        positions.push(s < prompts[b].length ? s : -1);
      }
      const out = await run(ids, positions, [slotOf(b)], 1, P);
      if ((c + 1) * P >= prompts[b].length) logits.set(out.slice(0, V), slotOf(b) * V);
    }
  // Decode every cache row at once, in cache-row order.
  let step = logits;
  const rows = Array.from({ length: F }, (_, s) => s);
  for (let k = 0; k < N; k++) {
    for (let b = 0; b < B; b++) {
      check.logits(`row ${b} step ${k}`, step, slotOf(b) * V, g.steps.data, (b * N + k) * V, V);
      check.token(`row ${b} step ${k}`, step, slotOf(b) * V, V, g.greedy.data[b * N + k]);
    }
    if (k === N - 1) break;
    const ids = new Array(F).fill(0), positions = new Array(F).fill(-1);
    for (let b = 0; b < B; b++) {
      ids[slotOf(b)] = g.greedy.data[b * N + k];
      positions[slotOf(b)] = prompts[b].length + k;
    }
    step = await run(ids, positions, rows, F, 1);
  }
}

// The speculative-decoding target in ONNX Runtime (see the header).
async function runTarget(ort, session, g, check, modelDir) {
  const specs = JSON.parse(fs.readFileSync(path.join(modelDir, 'specializations.json'), 'utf8')).specializations;
  const prefill = specs.find((s) => s.name === 'Prefill').symbols;
  const P = Number(prefill.seq_len), C = Number(prefill.ctx_len);
  const ks = specs.filter((s) => /^DecodeK\d+$/.test(s.name)).map((s) => Number(s.symbols.num_logits_to_keep));
  if (ks.length === 0) throw new Error('no DecodeK specialization: is this a speculative-decoding target?');
  const S = Math.max(...ks);
  const t = readSafetensors(path.join(g.dir, 'golden.safetensors')).get('full_logits');
  const full = new Float32Array(t.bytes.buffer.slice(t.bytes.byteOffset, t.bytes.byteOffset + t.bytes.length));
  const [B, L] = g.inputIds.shape, N = g.greedy.shape[1], V = g.steps.shape[2];
  // Dynamic NTK and longrope take their frequencies from the sequence length:
  // full_logits is one forward with one length for every position, while a
  // decode step of K + 1 tokens rotates each token for its own position + 1,
  // as HF's cached decode does (step_logits; the prompt, shorter than the
  // threshold in every such golden, is unscaled either way). The last greedy
  // token has no step logits after it.
  const stepwise = g.json.seq_len_dependent_rope !== undefined;
  const reference = (b, j) => (stepwise
    ? (j + 1 < N ? [g.steps.data, (b * N + j + 1) * V] : null)
    : [full, (b * (L + N) + L + j) * V]);
  const meta = Object.fromEntries((session.inputMetadata ?? []).map((m) => [m.name, m]));
  const state = {};
  for (const p of session.inputNames.filter((n) => n.startsWith('past_'))) {
    const shape = meta[p].shape.map((d) => (d === 'batch_size' ? B : d === 'ctx_len' ? C : d));
    state[p] = new ort.Tensor('float32', new Float32Array(shape.reduce((a, c) => a * c, 1)), shape);
  }
  const run = async (ids, positions, seq, keep) => {
    const out = await session.run({ input_ids: int64(ort, ids, [B, seq]), position_ids: int64(ort, positions, [B, seq]),
                                    num_logits_to_keep: int64(ort, new Array(keep).fill(0), [keep, 1]), ...state });
    for (const p of Object.keys(state)) state[p] = out[`${p}_RetainedState`];
    if (out.logits.dims.join() !== [B, keep, V].join()) throw new Error(`logits are [${out.logits.dims}], expected [${B},${keep},${V}]`);
    return out.logits.data;
  };
  const prompts = unpaddedPrompts(g);
  const maxL = Math.max(...prompts.map((p) => p.length));
  for (let c = 0; c * P < maxL; c++) {
    const { ids, positions } = prefillChunk(prompts, P, c);
    const logits = await run(ids, positions, P, 1);
    for (let b = 0; b < B; b++)
      if (Math.floor((prompts[b].length - 1) / P) === c)
        check.logits(`row ${b} prefill (last prompt token)`, logits, b * V,
                     ...(stepwise ? [g.steps.data, b * N * V] : [full, (b * (L + N) + L - 1) * V]), V);
  }
  for (let c = 0; c * S < N; c++) {
    const ids = [], positions = [];
    for (let b = 0; b < B; b++)
      for (let i = 0; i < S; i++) {
        const j = c * S + i;
        ids.push(j < N ? g.greedy.data[b * N + j] : 0);
        positions.push(j < N ? prompts[b].length + j : -1);
      }
    const logits = await run(ids, positions, S, S);
    for (let b = 0; b < B; b++)
      for (let i = 0; i < S && c * S + i < N; i++) {
        const j = c * S + i; // greedy token j: full_logits at (left-padded) L + j
        const want = reference(b, j);
        if (want) check.logits(`row ${b} greedy token ${j}`, logits, (b * S + i) * V, ...want, V);
      }
  }
}

// The host device on the same artifact: qeff run, its logits checked against the golden
// and against ONNX Runtime's.
function runHost(o, g, ort, check) {
  const { seen, prompts, V, N } = ort;
  const tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'qeff-host-'));
  const saved = path.join(tmp, 'logits.safetensors');
  const args = ['run', path.dirname(o.model), '--max-new-tokens', String(N), '--save-logits', saved,
    '--numerics', o.numerics ?? 'fp32', '--json', '--threads', '1'];
  for (const p of prompts) args.push('--token-ids', p.join(','));
  const r = spawnSync(o.qeff, args, { encoding: 'utf8' });
  if (r.status !== 0) throw new Error(`qeff run failed: ${r.stderr}`);
  const rows = JSON.parse(r.stdout).rows;
  const t = readSafetensors(saved).get('step_logits');
  const host = new Float32Array(t.bytes.buffer.slice(t.bytes.byteOffset, t.bytes.byteOffset + t.bytes.length));
  fs.rmSync(tmp, { recursive: true });
  const fp16 = o.numerics === 'fp16';
  const scale = o.weights === 'bf16' ? 8 : 1;
  const golden = fp16 || scale > 1 ? new Checker({ ...g, atol: scale * g.atol16, rtol: scale * g.rtol16 }) : check;
  const vsOrt = new Checker(g);
  for (let b = 0; b < prompts.length; b++) {
    const want = g.greedy.data.slice(b * N, (b + 1) * N);
    if (rows[b].generated_ids.join() !== want.join())
      golden.failures.push(`row ${b}: host greedy tokens [${rows[b].generated_ids}], golden [${want}]`);
    for (let k = 0; k < N; k++) {
      golden.logits(`host row ${b} step ${k}`, host, (b * N + k) * V, g.steps.data, (b * N + k) * V, V);
      if (!fp16) vsOrt.logits(`host vs ONNX Runtime row ${b} step ${k}`, host, (b * N + k) * V, seen[b][k], 0, V);
    }
  }
  if (golden !== check) { check.failures.push(...golden.failures); check.compared += golden.compared; check.maxErr = Math.max(check.maxErr, golden.maxErr); }
  check.failures.push(...vsOrt.failures);
  if (golden !== check) console.log(`host vs golden: max |err| ${golden.maxErr.toExponential(3)} (tolerance atol ${golden.g.atol}, rtol ${golden.g.rtol})`);
  console.log(`host vs ONNX Runtime: ${vsOrt.compared} logit rows, max |diff| ${vsOrt.maxErr.toExponential(3)}`);
}

async function main() {
  const o = parseArgs(process.argv);
  const ort = loadOrt();
  const g = loadGolden(o.golden);
  const session = await ort.InferenceSession.create(o.model, { graphOptimizationLevel: 'disabled', intraOpNumThreads: 1 });
  const check = new Checker(g);
  if (o.form === 'hf') await runHF(ort, session, g, check);
  else if (o.form === 'device') await runDevice(ort, session, g, check, path.dirname(o.model));
  else if (o.form === 'device-cb') await runContinuous(ort, session, g, check, path.dirname(o.model));
  else if (o.form === 'target') await runTarget(ort, session, g, check, path.dirname(o.model));
  else if (o.form === 'host') {
    if (!o.qeff) throw new Error('--form host needs --qeff');
    // ONNX Runtime first (its own checks against the golden), then the host device.
    const ortRun = await runDevice(ort, session, g, new Checker(g), path.dirname(o.model));
    runHost(o, g, ortRun, check);
  }
  else throw new Error(`--form must be hf, device, device-cb, target or host, got '${o.form}'`);
  for (const f of check.failures.slice(0, 20)) console.log(`FAIL ${g.name} (${o.form}): ${f}`);
  console.log(`${g.name} (${o.form}): ${check.compared} logit rows compared, max |err| ${check.maxErr.toExponential(3)}, ${check.failures.length} failures`);
  console.log(`${check.failures.length ? 0 : 1} passed, ${check.failures.length ? 1 : 0} failed`);
  process.exit(check.failures.length ? 1 : 0);
}

main().catch((e) => { console.error(`golden-ort: ${e.message}`); process.exit(1); });
