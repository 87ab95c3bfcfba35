// llama.cpp through node-llama-cpp, timed as `qeff run` times itself (test/bench/llama-bench.sh):
// a fixed prompt of token ids, greedy, prefill tok/s = prompt tokens / time to the first
// generated token, decode tok/s = (N - 1) / time of the remaining N - 1 tokens; model
// load and context creation outside the clock. Prints one JSON line.
//
//   node llama-bench-node.mjs --module DIR/node_modules/node-llama-cpp --model F.gguf
//       --token-ids 1,2,3 --max-new-tokens 16 --threads T --ctx-len 256 --batch 128
import { performance } from 'node:perf_hooks';
import { pathToFileURL } from 'node:url';
import path from 'node:path';
import fs from 'node:fs';

const args = {};
for (let i = 2; i < process.argv.length; i += 2) args[process.argv[i].replace(/^--/, '')] = process.argv[i + 1];
for (const k of ['module', 'model', 'token-ids', 'max-new-tokens', 'threads'])
  if (!args[k]) { console.error(`llama-bench-node: missing --${k}`); process.exit(2); }

const pkg = JSON.parse(fs.readFileSync(path.join(args.module, 'package.json'), 'utf8'));
const entry = path.join(args.module, pkg.exports?.['.']?.import ?? pkg.exports?.['.']?.default ?? pkg.main ?? 'dist/index.js');
const { getLlama, LlamaLogLevel } = await import(pathToFileURL(entry).href);

const prompt = args['token-ids'].split(',').map(Number);
const n = Number(args['max-new-tokens']);
const threads = Number(args.threads);
// The prebuilt CPU backend only (installed with --ignore-scripts: nothing is built).
const llama = await getLlama({ gpu: false, build: 'never', logLevel: LlamaLogLevel.error });
const model = await llama.loadModel({ modelPath: args.model, gpuLayers: 0 });
const context = await model.createContext({
  contextSize: Number(args['ctx-len'] ?? 256), batchSize: Number(args.batch ?? 128),
  threads, sequences: 1,
});
const seq = context.getSequence();
const times = [], tokens = [];
const t0 = performance.now();
for await (const token of seq.evaluate(prompt, { temperature: 0 })) {
  times.push(performance.now());
  tokens.push(Number(token));
  if (tokens.length >= n) break;
}
const prefillS = (times[0] - t0) / 1000;
const decodeS = (times[times.length - 1] - times[0]) / 1000;
console.log(JSON.stringify({
  prefill_tokens_per_s: prompt.length / prefillS,
  decode_tokens_per_s: n > 1 ? (n - 1) / decodeS : null,
  generated_ids: tokens,
  node_llama_cpp: pkg.version,
  cpu_backend: llama.gpu === false ? 'cpu' : String(llama.gpu),
  system_info: llama.systemInfo ?? null,
}));
await context.dispose();
await model.dispose();
await llama.dispose();
