#!/usr/bin/env node
// Self-test of the ONNX Runtime oracle: hand-encodes small ONNX models (protobuf wire
// format, no Python or onnx package needed), runs run-onnx.js on them as the tests do and
// compares every number with a hand computation in this file. Exits 1 on any mismatch.
//   node test/oracle/selftest.js [--keep]     (after scripts/setup-oracle.sh)
'use strict';
const fs = require('fs');
const os = require('os');
const path = require('path');
const { spawnSync } = require('child_process');

const RUN = path.join(__dirname, 'run-onnx.js');
try { require.resolve('onnxruntime-node'); } catch {
  console.error('selftest: onnxruntime-node is not installed in test/oracle: run scripts/setup-oracle.sh');
  process.exit(1);
}
const tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'qeff-oracle-'));
let passed = 0, failed = 0;
const check = (ok, what, detail = '') => {
  if (ok) passed++; else failed++;
  console.log(`${ok ? 'ok  ' : 'FAIL'} ${what}${ok || !detail ? '' : `\n     ${detail}`}`);
};

// ---- protobuf wire format: just what ModelProto needs -----------------------------------
const varint = (n) => {
  const out = [];
  for (let v = BigInt.asUintN(64, BigInt(n)); ; v >>= 7n) {
    if (v < 0x80n) { out.push(Number(v)); return Buffer.from(out); }
    out.push(Number(v & 0x7fn) | 0x80);
  }
};
const V = (field, n) => Buffer.concat([varint(field << 3), varint(n)]);                // varint
const S = (field, data) => {                                                              // bytes
  const b = Buffer.isBuffer(data) ? data : Buffer.from(data);
  return Buffer.concat([varint((field << 3) | 2), varint(b.length), b]);
};
const M = (field, ...parts) => S(field, Buffer.concat(parts));                            // message

// ---- ONNX messages (field numbers from onnx.proto) ---------------------------------------
const T = { FLOAT: 1, UINT8: 2, INT32: 6, INT64: 7, BOOL: 9, FLOAT16: 10 };
const dim = (d) => M(1, typeof d === 'string' ? S(2, d) : V(1, d));
const valueInfo = (field, name, elem, dims) =>
  M(field, S(1, name), M(2, M(1, V(1, elem), M(2, ...dims.map(dim)))));
const attrInt = (name, i) => M(5, S(1, name), V(3, i), V(20, 2 /* INT */));
const node = (op, inputs, outputs, ...attrs) =>
  M(1, ...inputs.map((i) => S(1, i)), ...outputs.map((o) => S(2, o)), S(3, `${op}_${outputs[0]}`), S(4, op), ...attrs);
const initializer = (name, elem, dims, raw) => M(5, ...dims.map((d) => V(1, d)), V(2, elem), S(8, name), S(9, raw));
const externalInit = (name, elem, dims, location, offset, length) => M(5, ...dims.map((d) => V(1, d)), V(2, elem), S(8, name),
  ...[['location', location], ['offset', `${offset}`], ['length', `${length}`]].map(([k, v]) => M(13, S(1, k), S(2, v))),
  V(14, 1 /* EXTERNAL */));
const model = ({ nodes, inits = [], inputs, outputs }) => Buffer.concat([
  V(1, 8), S(2, 'qeff-oracle-selftest'), M(8, S(1, ''), V(2, 17)),
  M(7, ...nodes, S(2, 'g'), ...inits, ...inputs.map((i) => valueInfo(11, ...i)), ...outputs.map((o) => valueInfo(12, ...o))),
]);

// ---- tensor files (written independently of run-onnx.js, read back with a tiny reader) ---
const f32 = (a) => Buffer.from(new Float32Array(a).buffer);
const i64 = (a) => Buffer.from(new BigInt64Array(a.map(BigInt)).buffer);
const i32 = (a) => Buffer.from(new Int32Array(a).buffer);
const u8 = (a) => Buffer.from(a);
function writeST(file, tensors) { // {name: [dtype, shape, bytes]}
  let off = 0; const h = {};
  for (const [n, [dtype, shape, b]] of Object.entries(tensors)) { h[n] = { dtype, shape, data_offsets: [off, off + b.length] }; off += b.length; }
  const json = Buffer.from(JSON.stringify(h)); const len = Buffer.alloc(8); len.writeBigUInt64LE(BigInt(json.length));
  fs.writeFileSync(file, Buffer.concat([len, json, ...Object.values(tensors).map((t) => t[2])]));
}
function readST(file) {
  const buf = fs.readFileSync(file); const n = Number(buf.readBigUInt64LE(0));
  const h = JSON.parse(buf.toString('utf8', 8, 8 + n)); const out = {};
  for (const [k, v] of Object.entries(h)) {
    const b = Buffer.from(buf.subarray(8 + n + v.data_offsets[0], 8 + n + v.data_offsets[1]));
    const Arr = { F32: Float32Array, I64: BigInt64Array, I32: Int32Array, F16: Uint16Array, BOOL: Uint8Array }[v.dtype];
    out[k] = { dtype: v.dtype, shape: v.shape, data: [...new Arr(b.buffer, b.byteOffset, b.length / Arr.BYTES_PER_ELEMENT)] };
  }
  return out;
}
function writeNpy(file, descr, shape, bytes) {
  let h = `{'descr': '${descr}', 'fortran_order': False, 'shape': (${shape.join(', ')}${shape.length === 1 ? ',' : ''}), }`;
  h += ' '.repeat(63 - ((10 + h.length) % 64)) + '\n';
  const pre = Buffer.from([0x93, 0x4e, 0x55, 0x4d, 0x50, 0x59, 1, 0, 0, 0]); pre.writeUInt16LE(h.length, 8);
  fs.writeFileSync(file, Buffer.concat([pre, Buffer.from(h, 'latin1'), bytes]));
}
const readNpyData = (file, Arr) => { const b = fs.readFileSync(file); const s = 10 + b.readUInt16LE(8); const d = Buffer.from(b.subarray(s)); return [...new Arr(d.buffer, d.byteOffset, d.length / Arr.BYTES_PER_ELEMENT)]; };

const run = (args, cwd = tmp) => spawnSync(process.execPath, [RUN, ...args], { cwd, encoding: 'utf8' });
const same = (a, b) => JSON.stringify(a, (_, v) => (typeof v === 'bigint' ? `${v}` : v)) === JSON.stringify(b, (_, v) => (typeof v === 'bigint' ? `${v}` : v));
const expectOk = (r, what) => { check(r.status === 0, `${what}: exit 0`, r.stderr.trim()); return r.status === 0; };
const expectError = (r, what, pattern) =>
  check(r.status === 1 && pattern.test(r.stderr), `${what}: exit 1 with a clear message`, `status ${r.status}, stderr: ${r.stderr.trim()}`);
const matmul = (A, B, m, k, n) => Array.from({ length: m * n }, (_, idx) => {
  const i = Math.floor(idx / n), j = idx % n; let s = 0;
  for (let t = 0; t < k; t++) s += A[i * k + t] * B[t * n + j];
  return s;
});

// ============ 1. Y = X·W + B with W and B in an external data file ========================
{
  const W = [0.5, -1, 2, 0.25, 1.5, 0, -0.75, 3, -2, 1, 0.125, -0.5]; // [3,4]
  const B = [1, -2, 0.5, 4];                                       // [4]
  const X = [1, 2, 3, -1, 0.5, 4];                                 // [2,3]
  fs.mkdirSync(path.join(tmp, 'lin'));
  const data = Buffer.alloc(64 + 16); f32(W).copy(data, 0); f32(B).copy(data, 64);
  fs.writeFileSync(path.join(tmp, 'lin', 'linear.onnx.data'), data);
  fs.writeFileSync(path.join(tmp, 'lin', 'linear.onnx'), model({
    nodes: [node('MatMul', ['X', 'W'], ['XW']), node('Add', ['XW', 'B'], ['Y'])],
    inits: [externalInit('W', T.FLOAT, [3, 4], 'linear.onnx.data', 0, 48), externalInit('B', T.FLOAT, [4], 'linear.onnx.data', 64, 16)],
    inputs: [['X', T.FLOAT, ['n', 3]]], outputs: [['Y', T.FLOAT, ['n', 4]]],
  }));
  writeST(path.join(tmp, 'lin_in.safetensors'), { X: ['F32', [2, 3], f32(X)], unused_extra: ['I64', [1], i64([7])] });
  const want = matmul(X, W, 2, 3, 4).map((v, i) => Math.fround(v + B[i % 4]));
  const other = fs.mkdtempSync(path.join(os.tmpdir(), 'qeff-oracle-cwd-'));
  for (const [what, modelArg, cwd, extra] of [
    ['linear, external data, model path relative to cwd', 'lin/linear.onnx', tmp, []],
    ['linear, external data, absolute model path from another cwd', path.join(tmp, 'lin', 'linear.onnx'), other, []],
    ['linear, --opt-level basic --threads 2', 'lin/linear.onnx', tmp, ['--opt-level', 'basic', '--threads', '2']],
  ]) {
    const out = path.join(tmp, 'lin_out.safetensors'); fs.rmSync(out, { force: true });
    if (!expectOk(run(['--model', modelArg, '--inputs', path.join(tmp, 'lin_in.safetensors'), '--outputs', out, ...extra], cwd), what)) continue;
    const got = readST(out);
    check(same(Object.keys(got), ['Y']) && got.Y.dtype === 'F32' && same(got.Y.shape, [2, 4]) && same(got.Y.data, want),
      `${what}: Y == X·W + B exactly`, `got ${JSON.stringify(got.Y)}, want ${want}`);
  }
  fs.rmSync(other, { recursive: true });

  // error paths
  writeST(path.join(tmp, 'lin_noX.safetensors'), { Z: ['F32', [2, 3], f32(X)] });
  expectError(run(['--model', 'lin/linear.onnx', '--inputs', 'lin_noX.safetensors', '--outputs', 'x.safetensors']), 'missing input', /missing model input\(s\) 'X'/);
  writeST(path.join(tmp, 'lin_bf16.safetensors'), { X: ['BF16', [2, 3], Buffer.alloc(12)] });
  expectError(run(['--model', 'lin/linear.onnx', '--inputs', 'lin_bf16.safetensors', '--outputs', 'x.safetensors']), 'BF16 input', /'X' has dtype BF16, which cannot be mapped/);
  writeST(path.join(tmp, 'lin_i32.safetensors'), { X: ['I32', [2, 3], i32([1, 2, 3, 4, 5, 6])] });
  expectError(run(['--model', 'lin/linear.onnx', '--inputs', 'lin_i32.safetensors', '--outputs', 'x.safetensors']), 'wrong input dtype', /input 'X' is I32, the model wants F32/);
  fs.writeFileSync(path.join(tmp, 'garbage.onnx'), 'this is not a model');
  expectError(run(['--model', 'garbage.onnx', '--inputs', 'lin_in.safetensors', '--outputs', 'x.safetensors']), 'unparsable model (ORT message)', /ONNX Runtime could not load garbage\.onnx: .+/);
  fs.mkdirSync(path.join(tmp, 'nodata'));
  fs.copyFileSync(path.join(tmp, 'lin', 'linear.onnx'), path.join(tmp, 'nodata', 'linear.onnx'));
  expectError(run(['--model', 'nodata/linear.onnx', '--inputs', 'lin_in.safetensors', '--outputs', 'x.safetensors']), 'missing external data file (ORT message)', /ONNX Runtime could not load .*linear\.onnx\.data/);
}

// ============ 2. dtypes: F16, I64, I32, BOOL in and out; safetensors and .npy ==============
{
  fs.writeFileSync(path.join(tmp, 'dtypes.onnx'), model({
    nodes: [node('Add', ['h', 'h'], ['h2']), node('Cast', ['h'], ['hf'], attrInt('to', T.FLOAT)), node('Mul', ['a', 'a'], ['a2']),
      node('Add', ['i', 'i'], ['i2']), node('Not', ['b'], ['nb'])],
    inputs: [['h', T.FLOAT16, [3]], ['a', T.INT64, [3]], ['i', T.INT32, [2, 2]], ['b', T.BOOL, [3]]],
    outputs: [['h2', T.FLOAT16, [3]], ['hf', T.FLOAT, [3]], ['a2', T.INT64, [3]], ['i2', T.INT32, [2, 2]], ['nb', T.BOOL, [3]]],
  }));
  const h = [0x3c00, 0xc200, 0x3555]; // 1.0, -3.0, 0.333251953125 in fp16
  const a = [3000000000n, -7n, 1n], i = [1, -2, 1000000, 0], b = [1, 0, 1];
  const want = {
    h2: [0x4000, 0xc600, 0x3955], hf: [1, -3, 0.333251953125], a2: [9000000000000000000n, 49n, 1n], i2: [2, -4, 2000000, 0], nb: [0, 1, 0],
  };
  writeST(path.join(tmp, 'dt_in.safetensors'), {
    h: ['F16', [3], Buffer.from(new Uint16Array(h).buffer)], a: ['I64', [3], Buffer.from(new BigInt64Array(a).buffer)],
    i: ['I32', [2, 2], i32(i)], b: ['BOOL', [3], u8(b)],
  });
  if (expectOk(run(['--model', 'dtypes.onnx', '--inputs', 'dt_in.safetensors', '--outputs', 'dt_out.safetensors']), 'dtypes, safetensors')) {
    const got = readST(path.join(tmp, 'dt_out.safetensors'));
    const dtypes = { h2: 'F16', hf: 'F32', a2: 'I64', i2: 'I32', nb: 'BOOL' };
    for (const k of Object.keys(want))
      check(got[k] && got[k].dtype === dtypes[k] && same(got[k].data, want[k]), `dtypes: ${k} (${dtypes[k]}) correct`, JSON.stringify(got[k], (_, v) => (typeof v === 'bigint' ? `${v}` : v)));
  }
  fs.mkdirSync(path.join(tmp, 'npy_in'));
  writeNpy(path.join(tmp, 'npy_in', 'h.npy'), '<f2', [3], Buffer.from(new Uint16Array(h).buffer));
  writeNpy(path.join(tmp, 'npy_in', 'a.npy'), '<i8', [3], Buffer.from(new BigInt64Array(a).buffer));
  writeNpy(path.join(tmp, 'npy_in', 'i.npy'), '<i4', [2, 2], i32(i));
  writeNpy(path.join(tmp, 'npy_in', 'b.npy'), '|b1', [3], u8(b));
  if (expectOk(run(['--model', 'dtypes.onnx', '--inputs', 'npy_in', '--outputs', 'npy_out/']), 'dtypes, .npy directory in and out')) {
    const ok = same(readNpyData(path.join(tmp, 'npy_out', 'a2.npy'), BigInt64Array), want.a2)
      && same(readNpyData(path.join(tmp, 'npy_out', 'h2.npy'), Uint16Array), want.h2)
      && same(readNpyData(path.join(tmp, 'npy_out', 'nb.npy'), Uint8Array), want.nb)
      && same(readNpyData(path.join(tmp, 'npy_out', 'i2.npy'), Int32Array), want.i2);
    check(ok, 'dtypes: .npy outputs correct');
  }
}

// ============ 3. KV-cache stepping: feedback of the retained state and greedy argmax =======
// logits = ReduceSum(Concat(past, E[input_ids]), over positions) · Wout; present = the Concat.
{
  const Bt = 2, D = 3, Vc = 5;
  const E = [1, 0, 2, -1, 1, 0, 0, 3, -1, 2, 2, 1, -2, 0, 1];              // [V,D]
  const Wout = [1, -1, 0, 2, 0.5, 0, 1, -2, 1, 0.25, -1, 0.5, 1, 0, -3];   // [D,V]
  fs.writeFileSync(path.join(tmp, 'kv.onnx'), model({
    nodes: [node('Gather', ['E', 'input_ids'], ['x']), node('Concat', ['past_key.0', 'x'], ['past_key.0_RetainedState'], attrInt('axis', 1)),
      node('ReduceSum', ['past_key.0_RetainedState', 'axes'], ['s'], attrInt('keepdims', 1)), node('MatMul', ['s', 'Wout'], ['logits'])],
    inits: [initializer('E', T.FLOAT, [Vc, D], f32(E)), initializer('Wout', T.FLOAT, [D, Vc], f32(Wout)), initializer('axes', T.INT64, [1], i64([1]))],
    inputs: [['input_ids', T.INT64, ['batch', 1]], ['past_key.0', T.FLOAT, ['batch', 'past', D]]],
    outputs: [['logits', T.FLOAT, ['batch', 1, Vc]], ['past_key.0_RetainedState', T.FLOAT, ['batch', 'present', D]]],
  }));
  // Hand reference: 4 steps; tokens given for steps 0 and 1, then chosen by argmax.
  const given = [[1, 4], [2, 0]];
  let past = [[], []]; // per row: list of D-vectors
  const ref = [];
  let prevLogits = null;
  for (let k = 0; k < 4; k++) {
    const ids = k < 2 ? given[k] : prevLogits.map((row) => row.indexOf(Math.max(...row)));
    past = past.map((rows, bIdx) => [...rows, E.slice(ids[bIdx] * D, ids[bIdx] * D + D)]);
    const logits = past.map((rows) => { const s = [0, 1, 2].map((d) => rows.reduce((a, r) => a + r[d], 0)); return matmul(s, Wout, 1, D, Vc); });
    ref.push({ ids, logits, present: past.map((rows) => rows.flat()) });
    prevLogits = logits;
  }
  writeST(path.join(tmp, 'kv_in0.safetensors'), { input_ids: ['I64', [Bt, 1], i64(given[0])], 'past_key.0': ['F32', [Bt, 0, D], f32([])] });
  writeST(path.join(tmp, 'kv_in1.safetensors'), { input_ids: ['I64', [Bt, 1], i64(given[1])] });
  fs.mkdirSync(path.join(tmp, 'kv'));
  fs.writeFileSync(path.join(tmp, 'kv', 'steps.json'), JSON.stringify({
    feedback: { 'past_key.0_RetainedState': 'past_key.0' }, argmax: { logits: 'input_ids' },
    steps: [{ inputs: '../kv_in0.safetensors', outputs: 'out0.safetensors' }, { inputs: '../kv_in1.safetensors', outputs: 'out1.safetensors' },
      { outputs: 'out2.safetensors' }, { outputs: 'out3.safetensors' }],
  }));
  if (expectOk(run(['--model', 'kv.onnx', '--steps', 'kv/steps.json']), 'kv steps: 4 steps, one process')) {
    for (let k = 0; k < 4; k++) {
      const got = readST(path.join(tmp, 'kv', `out${k}.safetensors`));
      check(same(got.logits.shape, [Bt, 1, Vc]) && same(got.logits.data, ref[k].logits.flat().map(Math.fround)),
        `kv step ${k}: logits match (tokens ${ref[k].ids})`, `got ${got.logits.data}, want ${ref[k].logits.flat()}`);
      check(same(got['past_key.0_RetainedState'].shape, [Bt, k + 1, D]) && same(got['past_key.0_RetainedState'].data, ref[k].present.flat()),
        `kv step ${k}: retained state [${Bt},${k + 1},${D}] fed back correctly`);
    }
  }
  // "save" limits what is written; a feedback name that is not an output is rejected.
  fs.writeFileSync(path.join(tmp, 'kv', 'save.json'), JSON.stringify({ feedback: { 'past_key.0_RetainedState': 'past_key.0' }, save: ['logits'],
    steps: [{ inputs: '../kv_in0.safetensors', outputs: 's0.safetensors' }, { inputs: '../kv_in1.safetensors', outputs: 's1.safetensors' }] }));
  if (expectOk(run(['--model', 'kv.onnx', '--steps', 'kv/save.json']), 'kv steps with "save": ["logits"]')) {
    const got = readST(path.join(tmp, 'kv', 's1.safetensors'));
    check(same(Object.keys(got), ['logits']) && same(got.logits.data, ref[1].logits.flat()), 'kv save: only logits written, values match');
  }
  fs.writeFileSync(path.join(tmp, 'kv', 'bad.json'), JSON.stringify({ feedback: { present: 'past_key.0' }, steps: [{ inputs: '../kv_in0.safetensors' }] }));
  expectError(run(['--model', 'kv.onnx', '--steps', 'kv/bad.json']), 'steps: feedback from a non-output', /'present' is not an output of the model/);
  fs.writeFileSync(path.join(tmp, 'kv', 'nofb.json'), JSON.stringify({ steps: [{ inputs: '../kv_in0.safetensors' }, { inputs: '../kv_in1.safetensors' }] }));
  expectError(run(['--model', 'kv.onnx', '--steps', 'kv/nofb.json']), 'steps: input neither in file nor fed back', /step 1: missing model input\(s\) 'past_key\.0'/);
}

if (process.argv.includes('--keep')) console.log(`selftest: files kept in ${tmp}`);
else fs.rmSync(tmp, { recursive: true });
console.log(`selftest: ${passed} passed, ${failed} failed`);
process.exit(failed ? 1 : 0);
