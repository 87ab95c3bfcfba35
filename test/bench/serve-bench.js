#!/usr/bin/env node
// Load client for `qeff serve` (test/bench/serve-bench.sh runs it; on demand, not in
// ctest). Closed loop: --clients concurrent clients, each sending --requests streamed
// completions back to back, and measures
//   requests/s and generated tokens/s over the whole run (wall clock),
//   TTFT: from sending a request to the first SSE chunk carrying a token,
//   ITL (inter-token latency): the gap between successive token-carrying chunks,
//        divided by the chunk's token count (a chunk may carry several tokens when
//        the client reads slower than the server decodes),
//   end-to-end latency of each request,
// and prints one JSON object. Node's own http module: no dependency.
//
//   node test/bench/serve-bench.js --url http://127.0.0.1:8000 --model NAME
//        [--clients 4] [--requests 8] [--prompt-len 16] [--max-tokens 32]
//        [--vocab 512] [--seed 1]
//
// Requests: POST /v1/completions {"prompt": [token ids], "max_tokens": N,
// "temperature": 0, "ignore_eos": true, "stream": true, "return_token_ids": true,
// "stream_options": {"include_usage": true}}; the prompt is a pseudo-random id
// sequence (ids 3 .. vocab-1), different per request, the same in every run.
'use strict';
const http = require('http');

function parseArgs(argv) {
  const o = { clients: 4, requests: 8, 'prompt-len': 16, 'max-tokens': 32, vocab: 512, seed: 1 };
  for (let i = 0; i < argv.length; i += 2) {
    const k = argv[i].replace(/^--/, '');
    if (!(k in o) && k !== 'url' && k !== 'model') throw new Error(`unknown option ${argv[i]}`);
    if (argv[i + 1] === undefined) throw new Error(`${argv[i]} needs a value`);
    o[k] = k === 'url' || k === 'model' ? argv[i + 1] : Number(argv[i + 1]);
    if (k !== 'url' && k !== 'model' && !(Number.isInteger(o[k]) && o[k] > 0))
      throw new Error(`${argv[i]} must be a positive integer, got ${argv[i + 1]}`);
  }
  if (!o.url || !o.model) throw new Error('--url and --model are required');
  return o;
}

// xorshift32: deterministic prompts.
function prompt(seed, len, vocab) {
  let x = (seed * 2654435761) >>> 0 || 1;
  const ids = [];
  for (let i = 0; i < len; i++) {
    x ^= x << 13; x >>>= 0; x ^= x >>> 17; x ^= x << 5; x >>>= 0;
    ids.push(3 + (x % (vocab - 3)));
  }
  return ids;
}

// One streamed completion: resolves {ttft, itl: [], e2e, tokens} (seconds).
function completion(url, body) {
  return new Promise((resolve, reject) => {
    const data = JSON.stringify(body);
    const t0 = process.hrtime.bigint();
    const secs = () => Number(process.hrtime.bigint() - t0) / 1e9;
    const req = http.request(url + '/v1/completions', {
      method: 'POST', agent: keepAlive,
      headers: { 'content-type': 'application/json', 'content-length': Buffer.byteLength(data) },
    }, (res) => {
      let buffer = '', ttft, last, tokens = 0, usage, done = false, errorBody = '';
      const itl = [];
      res.setEncoding('utf8');
      res.on('data', (chunk) => {
        if (res.statusCode !== 200) { errorBody += chunk; return; }
        buffer += chunk;
        let end;
        while ((end = buffer.indexOf('\n\n')) >= 0) {
          const event = buffer.slice(0, end);
          buffer = buffer.slice(end + 2);
          const line = event.split('\n').find((l) => l.startsWith('data: '));
          if (!line) continue;
          const payload = line.slice(6);
          if (payload === '[DONE]') { done = true; continue; }
          const j = JSON.parse(payload);
          if (j.error) { reject(new Error(`server error: ${JSON.stringify(j.error)}`)); return; }
          if (j.usage) usage = j.usage;
          const choice = j.choices?.[0];
          if (!choice) continue;
          const n = Array.isArray(choice.token_ids) ? choice.token_ids.length : (choice.text ? 1 : 0);
          if (!n) continue;
          const t = secs();
          if (ttft === undefined) ttft = t;
          else for (let i = 0; i < n; i++) itl.push((t - last) / n);
          last = t;
          tokens += n;
        }
      });
      res.on('end', () => {
        if (res.statusCode !== 200) reject(new Error(`HTTP ${res.statusCode}: ${errorBody.slice(0, 300)}`));
        else if (!done) reject(new Error('stream ended without data: [DONE]'));
        else if (usage && usage.completion_tokens !== tokens)
          reject(new Error(`counted ${tokens} tokens in the stream, usage says ${usage.completion_tokens}`));
        else resolve({ ttft, itl, e2e: secs(), tokens });
      });
      res.on('error', reject);
    });
    req.on('error', reject);
    req.end(data);
  });
}

const keepAlive = new http.Agent({ keepAlive: true, maxSockets: 1024 });

function percentile(sorted, p) {
  if (!sorted.length) return null;
  const i = Math.min(sorted.length - 1, Math.max(0, Math.ceil((p / 100) * sorted.length) - 1));
  return sorted[i];
}

async function main() {
  const o = parseArgs(process.argv.slice(2));
  const results = [];
  const start = process.hrtime.bigint();
  await Promise.all(Array.from({ length: o.clients }, async (_, client) => {
    for (let r = 0; r < o.requests; r++) {
      const seed = o.seed * 1000003 + client * o.requests + r;
      results.push(await completion(o.url, {
        model: o.model, prompt: prompt(seed, o['prompt-len'], o.vocab), max_tokens: o['max-tokens'],
        temperature: 0, ignore_eos: true, stream: true, return_token_ids: true,
        stream_options: { include_usage: true },
      }));
    }
  }));
  const wall = Number(process.hrtime.bigint() - start) / 1e9;
  const sort = (xs) => xs.filter((x) => x !== undefined).sort((a, b) => a - b);
  const ttft = sort(results.map((r) => r.ttft));
  const itl = sort(results.flatMap((r) => r.itl));
  const e2e = sort(results.map((r) => r.e2e));
  const tokens = results.reduce((s, r) => s + r.tokens, 0);
  const ms = (x) => (x === null ? null : Math.round(x * 1e4) / 10);
  console.log(JSON.stringify({
    clients: o.clients, requests: results.length, prompt_len: o['prompt-len'], max_tokens: o['max-tokens'],
    wall_s: Math.round(wall * 1000) / 1000,
    requests_per_s: Math.round((results.length / wall) * 100) / 100,
    tokens_per_s: Math.round((tokens / wall) * 10) / 10,
    generated_tokens: tokens,
    ttft_ms: { p50: ms(percentile(ttft, 50)), p99: ms(percentile(ttft, 99)) },
    itl_ms: { p50: ms(percentile(itl, 50)), p99: ms(percentile(itl, 99)) },
    e2e_ms: { p50: ms(percentile(e2e, 50)), p99: ms(percentile(e2e, 99)) },
  }));
  keepAlive.destroy();
}

main().catch((e) => {
  console.error(`serve-bench: ${e.message}`);
  process.exit(1);
});
