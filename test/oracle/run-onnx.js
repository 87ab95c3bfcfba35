#!/usr/bin/env node
// Runs an ONNX model in ONNX Runtime (CPU) on tensors read from a file and writes every
// output to a file: the tests' independent oracle. See README.md for the formats.
//
//   node run-onnx.js --model m.onnx --inputs in.safetensors|in_dir/ --outputs out.safetensors|out_dir/
//   node run-onnx.js --model m.onnx --steps steps.json
//   options: --threads N (default 1; 0 = ORT's choice)  --opt-level disabled|basic (default disabled)
//            --verbose (ORT warnings and per-step timing on stderr)
'use strict';
const fs = require('fs');
const path = require('path');

class UsageError extends Error {}
const fail = (msg) => { throw new UsageError(msg); };

// safetensors dtype -> [ORT tensor type, typed array]. BF16 and friends are not mapped:
// onnxruntime-node has no tensor type for them.
const DTYPES = {
  F64: ['float64', Float64Array], F32: ['float32', Float32Array], F16: ['float16', Uint16Array],
  I64: ['int64', BigInt64Array], I32: ['int32', Int32Array], I16: ['int16', Int16Array],
  I8: ['int8', Int8Array], U64: ['uint64', BigUint64Array], U32: ['uint32', Uint32Array],
  U16: ['uint16', Uint16Array], U8: ['uint8', Uint8Array], BOOL: ['bool', Uint8Array],
};
const ORT_TO_DTYPE = Object.fromEntries(Object.entries(DTYPES).map(([k, [t]]) => [t, k]));
const NPY_TO_DTYPE = {
  '<f8': 'F64', '<f4': 'F32', '<f2': 'F16', '<i8': 'I64', '<i4': 'I32', '<i2': 'I16', '|i1': 'I8',
  '<u8': 'U64', '<u4': 'U32', '<u2': 'U16', '|u1': 'U8', '|b1': 'BOOL',
};
const DTYPE_TO_NPY = Object.fromEntries(Object.entries(NPY_TO_DTYPE).map(([k, v]) => [v, k]));

// A tensor in transit is {dtype, shape, bytes} with bytes a Buffer of little-endian data.
const numel = (shape) => shape.reduce((a, b) => a * b, 1);

function readSafetensors(file) {
  const buf = fs.readFileSync(file);
  if (buf.length < 8) fail(`${file}: not a safetensors file (too short)`);
  const n = Number(buf.readBigUInt64LE(0));
  if (8 + n > buf.length) fail(`${file}: not a safetensors file (header length ${n})`);
  let header;
  try { header = JSON.parse(buf.toString('utf8', 8, 8 + n)); } catch (e) { fail(`${file}: bad header: ${e.message}`); }
  const tensors = new Map();
  for (const [name, info] of Object.entries(header)) {
    if (name === '__metadata__') continue;
    const [begin, end] = info.data_offsets;
    const bytes = buf.subarray(8 + n + begin, 8 + n + end);
    if (DTYPES[info.dtype]) {
      const want = numel(info.shape) * DTYPES[info.dtype][1].BYTES_PER_ELEMENT;
      if (bytes.length !== want || end > buf.length - 8 - n)
        fail(`${file}: tensor '${name}' has ${bytes.length} bytes, expected ${want}`);
    }
    tensors.set(name, { dtype: info.dtype, shape: info.shape, bytes });
  }
  return tensors;
}

function writeSafetensors(file, tensors) {
  const header = {};
  let offset = 0;
  for (const [name, t] of tensors) {
    header[name] = { dtype: t.dtype, shape: t.shape, data_offsets: [offset, offset + t.bytes.length] };
    offset += t.bytes.length;
  }
  let json = JSON.stringify(header);
  json += ' '.repeat((8 - (Buffer.byteLength(json) % 8)) % 8); // align the data to 8 bytes
  const len = Buffer.alloc(8);
  len.writeBigUInt64LE(BigInt(Buffer.byteLength(json)));
  writeAtomic(file, [len, Buffer.from(json), ...[...tensors.values()].map((t) => t.bytes)]);
}

function readNpy(file) {
  const buf = fs.readFileSync(file);
  if (buf.toString('latin1', 0, 6) !== '\x93NUMPY') fail(`${file}: not a .npy file`);
  const hlen = buf[6] === 1 ? buf.readUInt16LE(8) : buf.readUInt32LE(8);
  const start = buf[6] === 1 ? 10 : 12;
  const h = buf.toString('latin1', start, start + hlen);
  const descr = /'descr':\s*'([^']*)'/.exec(h)?.[1];
  const shapeText = /'shape':\s*\(([^)]*)\)/.exec(h)?.[1];
  if (descr === undefined || shapeText === undefined) fail(`${file}: cannot parse .npy header ${h}`);
  const shape = shapeText.split(',').map((s) => s.trim()).filter((s) => s).map(Number);
  if (/'fortran_order':\s*True/.test(h) && shape.filter((d) => d > 1).length > 1)
    fail(`${file}: Fortran-ordered arrays are not supported`);
  const dtype = NPY_TO_DTYPE[descr] ?? fail(`${file}: cannot map numpy dtype '${descr}'`);
  const bytes = buf.subarray(start + hlen);
  if (bytes.length !== numel(shape) * DTYPES[dtype][1].BYTES_PER_ELEMENT)
    fail(`${file}: data size does not match shape (${shape})`);
  return { dtype, shape, bytes };
}

function writeNpy(file, t) {
  const shape = t.shape.length === 1 ? `(${t.shape[0]},)` : `(${t.shape.join(', ')})`;
  let h = `{'descr': '${DTYPE_TO_NPY[t.dtype]}', 'fortran_order': False, 'shape': ${shape}, }`;
  h += ' '.repeat(63 - ((10 + h.length) % 64)) + '\n'; // header padded to 64 bytes
  const pre = Buffer.from([0x93, 0x4e, 0x55, 0x4d, 0x50, 0x59, 1, 0, 0, 0]);
  pre.writeUInt16LE(h.length, 8);
  writeAtomic(file, [pre, Buffer.from(h, 'latin1'), t.bytes]);
}

function writeAtomic(file, chunks) {
  const tmp = `${file}.tmp${process.pid}`;
  fs.writeFileSync(tmp, Buffer.concat(chunks));
  fs.renameSync(tmp, file);
}

// A directory means one <input name>.npy per tensor; anything else is a safetensors file.
function readTensors(p) {
  if (!fs.existsSync(p)) fail(`no such file or directory: ${p}`);
  if (!fs.statSync(p).isDirectory()) return readSafetensors(p);
  const names = fs.readdirSync(p).filter((f) => f.endsWith('.npy')).sort();
  return new Map(names.map((f) => [f.slice(0, -4), readNpy(path.join(p, f))]));
}

function writeTensors(p, tensors) {
  if (!p.endsWith('/') && !(fs.existsSync(p) && fs.statSync(p).isDirectory()))
    return writeSafetensors(p, tensors);
  fs.mkdirSync(p, { recursive: true });
  for (const [name, t] of tensors) {
    if (name.includes('/')) fail(`output '${name}' cannot be a .npy file name; use safetensors`);
    writeNpy(path.join(p, `${name}.npy`), t);
  }
}

function toOrt(ort, name, t, where) {
  const map = DTYPES[t.dtype] ?? fail(`${where}: tensor '${name}' has dtype ${t.dtype}, which cannot be mapped to an ONNX Runtime tensor (supported: ${Object.keys(DTYPES).join(' ')})`);
  const [type, Arr] = map;
  const copy = new Uint8Array(t.bytes.length); // fresh, aligned storage
  copy.set(t.bytes);
  return new ort.Tensor(type, new Arr(copy.buffer), t.shape);
}

function fromOrt(name, v) {
  const dtype = ORT_TO_DTYPE[v.type] ?? fail(`output '${name}' has type ${v.type}, which cannot be written`);
  return { dtype, shape: [...v.dims], bytes: Buffer.from(v.data.buffer, v.data.byteOffset, v.data.byteLength) };
}

function f16ToF32(h) {
  const s = h & 0x8000 ? -1 : 1, e = (h >> 10) & 0x1f, m = h & 0x3ff;
  if (e === 0) return s * m * 2 ** -24;
  if (e === 31) return m ? NaN : s * Infinity;
  return s * (1 + m / 1024) * 2 ** (e - 15);
}

// Greedy token choice: argmax over the last axis at the last position of a [B,S,V] (or
// [B,V]) tensor, first index on ties; returns an int64 [B,1] tensor.
function argmaxLast(ort, name, v) {
  if (v.dims.length !== 2 && v.dims.length !== 3) fail(`argmax: output '${name}' must be [B,S,V] or [B,V], is [${v.dims}]`);
  const get = v.type === 'float16' ? (i) => f16ToF32(v.data[i]) : (i) => Number(v.data[i]);
  const B = v.dims[0], V = v.dims[v.dims.length - 1], rowStride = v.data.length / B;
  const out = new BigInt64Array(B);
  for (let b = 0; b < B; b++) {
    const base = b * rowStride + rowStride - V;
    let best = 0;
    for (let j = 1; j < V; j++) if (get(base + j) > get(base + best)) best = j;
    out[b] = BigInt(best);
  }
  return new ort.Tensor('int64', out, [B, 1]);
}

function parseArgs(argv) {
  const opts = { threads: 1, optLevel: 'disabled', verbose: false };
  const takes = { '--model': 'model', '--inputs': 'inputs', '--outputs': 'outputs', '--steps': 'steps', '--threads': 'threads', '--opt-level': 'optLevel' };
  for (let i = 0; i < argv.length; i++) {
    const a = argv[i];
    if (a === '--verbose') opts.verbose = true;
    else if (a === '-h' || a === '--help') { opts.help = true; }
    else if (takes[a] && i + 1 < argv.length) opts[takes[a]] = argv[++i];
    else fail(`unknown or incomplete argument '${a}'`);
  }
  if (opts.help) return opts;
  if (!opts.model) fail('--model is required');
  if (!opts.steps && (!opts.inputs || !opts.outputs)) fail('need --inputs and --outputs, or --steps');
  if (opts.steps && (opts.inputs || opts.outputs)) fail('--steps cannot be combined with --inputs/--outputs');
  opts.threads = Number(opts.threads);
  if (!Number.isInteger(opts.threads) || opts.threads < 0) fail('--threads must be a non-negative integer');
  if (!['disabled', 'basic'].includes(opts.optLevel)) fail('--opt-level must be disabled or basic');
  return opts;
}

// Loads --steps JSON; paths inside are relative to the JSON file.
function loadSteps(file, session) {
  let spec;
  try { spec = JSON.parse(fs.readFileSync(file, 'utf8')); } catch (e) { fail(`${file}: ${e.message}`); }
  const dir = path.dirname(file);
  const rel = (p) => (p === undefined ? undefined : path.resolve(dir, p));
  const feedback = spec.feedback ?? {}, argmax = spec.argmax ?? {};
  for (const [out, inp] of [...Object.entries(feedback), ...Object.entries(argmax)]) {
    if (!session.outputNames.includes(out)) fail(`${file}: '${out}' is not an output of the model (outputs: ${session.outputNames.join(', ')})`);
    if (!session.inputNames.includes(inp)) fail(`${file}: '${inp}' is not an input of the model (inputs: ${session.inputNames.join(', ')})`);
  }
  if (!Array.isArray(spec.steps) || spec.steps.length === 0) fail(`${file}: "steps" must be a non-empty list`);
  const save = spec.save ?? session.outputNames;
  for (const s of save) if (!session.outputNames.includes(s)) fail(`${file}: "save" names '${s}', not an output of the model`);
  return { feedback, argmax, save, steps: spec.steps.map((s) => ({ inputs: rel(s.inputs), outputs: rel(s.outputs) })) };
}

function loadOrt() {
  try { return require('onnxruntime-node'); } catch (e) {
    if (e.code !== 'MODULE_NOT_FOUND') throw e;
    fail('onnxruntime-node is not installed next to run-onnx.js: run scripts/setup-oracle.sh');
  }
}

async function main() {
  const opts = parseArgs(process.argv.slice(2));
  if (opts.help) { console.log(fs.readFileSync(__filename, 'utf8').split('\n').slice(1, 8).join('\n')); return; }
  const ort = loadOrt();
  const model = path.resolve(opts.model);
  if (!fs.existsSync(model)) fail(`no such model: ${opts.model}`);
  let session;
  try {
    // Loaded by path, so ORT resolves external data 'location's relative to the model.
    session = await ort.InferenceSession.create(model, {
      executionProviders: ['cpu'], graphOptimizationLevel: opts.optLevel,
      intraOpNumThreads: opts.threads, interOpNumThreads: 1, executionMode: 'sequential',
      logSeverityLevel: opts.verbose ? 2 : 3,
    });
  } catch (e) { fail(`ONNX Runtime could not load ${opts.model}: ${e.message}`); }

  const plan = opts.steps ? loadSteps(path.resolve(opts.steps), session)
    : { feedback: {}, argmax: {}, save: session.outputNames, steps: [{ inputs: opts.inputs, outputs: opts.outputs }] };

  let carried = new Map(); // input name -> ort.Tensor, fed back from the previous step
  for (const [k, step] of plan.steps.entries()) {
    const where = step.inputs ?? `step ${k}`;
    const feeds = Object.fromEntries(carried);
    if (step.inputs)
      for (const [name, t] of readTensors(step.inputs))
        if (session.inputNames.includes(name)) feeds[name] = toOrt(ort, name, t, where);
    const missing = session.inputNames.filter((n) => !(n in feeds));
    if (missing.length) fail(`${opts.steps ? `step ${k}: ` : ''}missing model input(s) ${missing.map((n) => `'${n}'`).join(', ')} (not in ${where}${k ? ' nor fed back' : ''}; model inputs: ${session.inputNames.join(', ')})`);
    for (const m of session.inputMetadata ?? []) { // name the input when the dtype or rank is wrong
      const t = feeds[m.name];
      if (m.isTensor && t.type !== m.type) fail(`${where}: input '${m.name}' is ${ORT_TO_DTYPE[t.type]}, the model wants ${ORT_TO_DTYPE[m.type] ?? m.type}`);
      if (m.isTensor && t.dims.length !== m.shape.length) fail(`${where}: input '${m.name}' has shape [${t.dims}], the model wants rank ${m.shape.length} [${m.shape}]`);
    }
    const t0 = process.hrtime.bigint();
    let results;
    try { results = await session.run(feeds); } catch (e) { fail(`${opts.steps ? `step ${k}: ` : ''}ONNX Runtime failed: ${e.message}`); }
    if (opts.verbose) console.error(`run-onnx: step ${k}: ${Number(process.hrtime.bigint() - t0) / 1e6} ms`);
    if (step.outputs) writeTensors(step.outputs, new Map(plan.save.map((n) => [n, fromOrt(n, results[n])])));
    carried = new Map(Object.entries(plan.feedback).map(([out, inp]) => [inp, results[out]]));
    for (const [out, inp] of Object.entries(plan.argmax)) carried.set(inp, argmaxLast(ort, out, results[out]));
  }
}

if (require.main === module) {
  main().catch((e) => {
    console.error(`run-onnx: ${e instanceof UsageError ? e.message : e.stack}`);
    process.exit(1);
  });
}

// The tensor file helpers, for other test scripts (test/e2e/).
module.exports = { readSafetensors, writeSafetensors, loadOrt, UsageError };
