// llama.cpp as an oracle for a GGUF import: qeff (host device) and llama.cpp
// (node-llama-cpp 3.21.1's prebuilt CPU build) run the same GGUF file greedily
// from the same prompt.
//
//   node agreement.mjs --qeff QEFF --gguf FILE --work DIR [--prompt-ids 1] [--tokens 200]
//                      [--min-agreement 0.95]
//
// Reports (and checks):
//  - free-running: both generate --tokens tokens alone; the first position
//    where they differ (llama.cpp computes Q8_0 x Q8_0 dot products on
//    quantized activations, qeff in f32 on the dequantized weights, so a near
//    tie can flip and the texts then go separate ways);
//  - teacher-forced agreement: llama.cpp, fed qeff's sequence, picks its own
//    greedy next token at every position; the fraction equal to qeff's pick
//    must be at least --min-agreement (0.95).
// Prints "1 passed, 0 failed" or "0 passed, 1 failed".
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { getLlama, LlamaLogLevel } from 'node-llama-cpp';

const args = {};
for (let i = 2; i < process.argv.length; i += 2) args[process.argv[i].replace(/^--/, '')] = process.argv[i + 1];
for (const k of ['qeff', 'gguf', 'work']) if (!args[k]) throw new Error(`missing --${k}`);
const promptIds = (args['prompt-ids'] || '1').split(',').map(Number);
const steps = Number(args.tokens || 200);
const minAgreement = Number(args['min-agreement'] || 0.95);

// qeff: compile the GGUF, generate on the host device.
fs.rmSync(args.work, { recursive: true, force: true });
fs.mkdirSync(args.work, { recursive: true });
const artifacts = path.join(args.work, 'artifacts');
execFileSync(args.qeff, ['compile', args.gguf, '-o', artifacts, '--ctx-len', '512',
  '--prefill-seq-len', '16'], { stdio: ['ignore', 'ignore', 'inherit'] });
const run = JSON.parse(execFileSync(args.qeff, ['run', artifacts, '--token-ids', promptIds.join(','),
  '--max-new-tokens', String(steps), '--json'], { encoding: 'utf8' }));
const qeffIds = run.rows[0].generated_ids;

// llama.cpp: the prebuilt CPU binary only (no GPU, never a source build).
const t0 = Date.now();
const llama = await getLlama({ gpu: false, build: 'never', logLevel: LlamaLogLevel.error });
console.error(`getLlama ${Date.now() - t0} ms`);
const model = await llama.loadModel({ modelPath: args.gguf });
// One thread: the model is tiny, and llama.cpp's spinning workers would
// only compete with each other on a shared machine.
const context = await model.createContext({ contextSize: 512, sequences: 2, threads: 1 });
console.error(`model and context ${Date.now() - t0} ms`);

const free = [];
const sequence = context.getSequence();
for await (const token of sequence.evaluate(promptIds, { temperature: 0 })) {
  free.push(token);
  if (free.length >= steps) break;
}
console.error(`free-running ${Date.now() - t0} ms`);
let firstDivergence = -1;
for (let i = 0; i < Math.min(free.length, qeffIds.length); i++)
  if (free[i] !== qeffIds[i]) { firstDivergence = i; break; }

// Teacher-forced: every position of prompt + qeff's tokens asks for llama.cpp's
// greedy next token.
const forced = context.getSequence();
const input = [...promptIds, ...qeffIds.slice(0, -1)].map((t, i) =>
  i >= promptIds.length - 1 ? [t, { generateNext: { token: true, options: { temperature: 0 } } }] : t);
const result = await forced.controlledEvaluate(input);
console.error(`teacher-forced ${Date.now() - t0} ms`);
let agree = 0;
const picks = [];
for (let i = promptIds.length - 1; i < input.length; i++) {
  const pick = result[i]?.next?.token;
  picks.push(pick);
  if (pick === qeffIds[i - promptIds.length + 1]) agree++;
}
const fraction = agree / qeffIds.length;

const report = {
  gguf: path.basename(args.gguf), prompt_ids: promptIds, tokens: qeffIds.length,
  qeff_ids: qeffIds, llama_cpp_free_running_ids: free,
  first_free_running_divergence: firstDivergence,
  teacher_forced_agreement: fraction, llama_cpp_teacher_forced_picks: picks,
  node_llama_cpp: JSON.parse(fs.readFileSync(new URL('./node_modules/node-llama-cpp/package.json',
    import.meta.url))).version,
};
fs.writeFileSync(path.join(args.work, 'agreement.json'), JSON.stringify(report, null, 1));
console.log(`qeff vs llama.cpp on ${report.gguf}: ${qeffIds.length} greedy tokens from [${promptIds}]`);
console.log(`  free-running: ${firstDivergence < 0 ? 'identical' : `first divergence at token ${firstDivergence} (qeff ${qeffIds[firstDivergence]}, llama.cpp ${free[firstDivergence]})`}`);
console.log(`  teacher-forced agreement: ${agree}/${qeffIds.length} = ${(100 * fraction).toFixed(1)}% (need ${(100 * minAgreement).toFixed(0)}%)`);
const ok = qeffIds.length === steps && fraction >= minAgreement;
console.log(ok ? '1 passed, 0 failed' : '0 passed, 1 failed');
await context.dispose();
await model.dispose();
process.exit(ok ? 0 : 1);
