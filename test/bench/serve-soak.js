#!/usr/bin/env node
// Soak of `qeff serve` against hostile and bursty clients (on demand, not in
// ctest; figures in docs/serving.md, "Hostile clients"). Loopback only,
// every phase bounded in time. Starts its own server on a free port of
// 127.0.0.1 with the server's defaults, then:
//
//  1. slowloris: --slow clients of 127.0.0.2 trickle a request at 1 byte/s
//     (reconnecting when cut) while --normal clients of 127.0.0.1 send
//     completions back to back for --seconds; reports the normal clients'
//     latency percentiles and what the slow ones got (408/429);
//  2. burst: --burst connections opened at once, each one GET /v1/models;
//     every one must be answered (200);
//  3. churn: --requests completions at concurrency --concurrency, a third
//     streamed and aborted after the first chunk, a third whole and
//     abandoned (socket destroyed) after 20 ms, a third completed; then
//     /metrics must show no row in use and nothing queued, and RSS is
//     compared with RSS after a warm-up of the same mix.
//
//   node test/bench/serve-soak.js --qeff build/bin/qeff --model DIR
//        [--slow 64] [--normal 64] [--seconds 30] [--burst 1000]
//        [--requests 20000] [--concurrency 32] [--work DIR] [--json FILE]
//
// Exit status 1 when an acceptance bound fails: normal p99 >= 1 s, a burst
// connection unanswered, a leaked row, RSS above 1.2x the warm start.
"use strict";
const { spawn, execFileSync } = require("child_process");
const fs = require("fs");
const net = require("net");
const os = require("os");
const path = require("path");

function parseArgs(argv) {
  const o = { slow: 64, normal: 64, seconds: 30, burst: 1000, requests: 20000, concurrency: 32,
              work: path.join(os.tmpdir(), "qeff-serve-soak") };
  for (let i = 0; i < argv.length; i += 2) {
    const k = argv[i].replace(/^--/, "");
    if (!(k in o) && !["qeff", "model", "json"].includes(k)) throw new Error(`unknown option ${argv[i]}`);
    o[k] = ["qeff", "model", "work", "json"].includes(k) ? argv[i + 1] : Number(argv[i + 1]);
  }
  if (!o.qeff || !o.model) throw new Error("--qeff and --model are required");
  return o;
}

const sleep = (ms) => new Promise((r) => setTimeout(r, ms));
const pct = (sorted, p) => sorted.length ? sorted[Math.min(sorted.length - 1, Math.floor(sorted.length * p))] : NaN;

function rssKb(pid) {
  return Number(/VmRSS:\s+(\d+)/.exec(fs.readFileSync(`/proc/${pid}/status`, "utf8"))[1]);
}

/// One HTTP exchange on a fresh connection (Connection: close). `abortAfterMs`:
/// destroy the socket then (resolves {aborted: true}); `abortOnData`: destroy at
/// the first response bytes.
function exchange(port, body, { localAddress, abortAfterMs, abortOnData, path: p = "/v1/completions",
                                 method = "POST", timeoutMs = 60000 } = {}) {
  return new Promise((resolve) => {
    const start = process.hrtime.bigint();
    const s = net.connect({ host: "127.0.0.1", port, localAddress });
    let data = "";
    let done = false;
    const end = (result) => {
      if (done) return;
      done = true;
      clearTimeout(timer);
      s.destroy();
      resolve({ ...result, ms: Number(process.hrtime.bigint() - start) / 1e6 });
    };
    const timer = setTimeout(() => end({ status: 0, timeout: true }), timeoutMs);
    s.on("connect", () => {
      const payload = body === undefined ? "" : JSON.stringify(body);
      s.write(`${method} ${p} HTTP/1.1\r\nHost: x\r\nConnection: close\r\n` +
        (payload ? `Content-Type: application/json\r\nContent-Length: ${Buffer.byteLength(payload)}\r\n` : "") +
        `\r\n${payload}`);
      if (abortAfterMs !== undefined) setTimeout(() => end({ aborted: true }), abortAfterMs);
    });
    s.on("data", (d) => {
      data += d;
      if (abortOnData) end({ aborted: true, status: Number(data.slice(9, 12)) });
    });
    s.on("close", () => end({ status: Number(data.slice(9, 12)) || 0 }));
    s.on("error", () => end({ status: 0, error: true }));
  });
}

/// A slowloris client: sends a request one byte a second; reconnects when the
/// server cuts it, until `until`. Counts the statuses it got.
async function slowClient(port, until, counts) {
  const body = JSON.stringify({ prompt: "Once upon a time", max_tokens: 4 });
  const request = `POST /v1/completions HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n` +
    `Content-Length: ${body.length}\r\n\r\n${body}`;
  while (Date.now() < until) {
    const status = await new Promise((resolve) => {
      const s = net.connect({ host: "127.0.0.1", port, localAddress: "127.0.0.2" });
      let data = "", i = 0, timer;
      const finish = () => { clearInterval(timer); s.destroy(); resolve(Number(data.slice(9, 12)) || 0); };
      s.on("connect", () => {
        timer = setInterval(() => {
          if (Date.now() >= until || i >= request.length) return finish();
          s.write(request[i++]);
        }, 1000);
      });
      s.on("data", (d) => { data += d; });
      s.on("close", finish);
      s.on("error", finish);
    });
    counts[status] = (counts[status] || 0) + 1;
    if (status === 0) await sleep(100);
  }
}

function metricValue(text, sample) {
  for (const line of text.split("\n")) if (line.startsWith(sample + " ")) return Number(line.slice(sample.length + 1));
  return undefined;
}

async function fetchMetrics(url) {
  return (await fetch(url + "/metrics")).text();
}

async function main() {
  const o = parseArgs(process.argv.slice(2));
  fs.mkdirSync(o.work, { recursive: true });
  const artifacts = path.join(o.work, "cb4");
  execFileSync(o.qeff, ["compile", o.model, "-o", artifacts, "--ctx-len", "256", "--full-batch-size", "4"],
    { stdio: ["ignore", "ignore", "inherit"] });
  const server = spawn(o.qeff, ["serve", artifacts, "--model-name", "m", "--port", "0"], { stdio: ["ignore", "pipe", "pipe"] });
  let log = "";
  server.stderr.on("data", (d) => { log += d; if (log.length > 1e6) log = log.slice(-5e5); });
  const url = await new Promise((resolve, reject) => {
    let out = "";
    server.stdout.on("data", (d) => {
      out += d;
      const m = /listening on (http:\/\/127\.0\.0\.1:\d+)/.exec(out);
      if (m) resolve(m[1]);
    });
    server.on("exit", (c) => reject(new Error(`qeff serve exited with ${c}:\n${log}`)));
  });
  const port = Number(new URL(url).port);
  const results = { loadavg_start: os.loadavg() };
  let ok = true;
  const check = (cond, what) => { if (!cond) { ok = false; console.error(`FAIL: ${what}`); } };

  // 1. slowloris + normal clients.
  {
    const until = Date.now() + o.seconds * 1000;
    const slowCounts = {};
    const slow = Array.from({ length: o.slow }, () => slowClient(port, until, slowCounts));
    await sleep(2000); // the slow clients hold what they can first
    const lat = [];
    const statuses = {};
    const normal = Array.from({ length: o.normal }, async () => {
      while (Date.now() < until) {
        const r = await exchange(port, { prompt: "Once upon a time", max_tokens: 16, temperature: 0 });
        statuses[r.status] = (statuses[r.status] || 0) + 1;
        if (r.status === 200) lat.push(r.ms);
      }
    });
    await Promise.all([...slow, ...normal]);
    lat.sort((a, b) => a - b);
    results.slowloris = { slow_clients: o.slow, normal_clients: o.normal, seconds: o.seconds,
      normal_statuses: statuses, normal_requests: lat.length, normal_p50_ms: pct(lat, 0.5),
      normal_p99_ms: pct(lat, 0.99), normal_max_ms: lat[lat.length - 1], slow_statuses: slowCounts };
    console.log("slowloris:", JSON.stringify(results.slowloris));
    check(pct(lat, 0.99) < 1000, `normal clients' p99 ${pct(lat, 0.99)} ms under slowloris`);
    check(Object.keys(statuses).every((s) => s === "200"), `normal clients got ${JSON.stringify(statuses)}`);
  }

  // 2. burst of connects.
  {
    const all = await Promise.all(Array.from({ length: o.burst },
      () => exchange(port, undefined, { path: "/v1/models", method: "GET", timeoutMs: 60000 })));
    const ms = all.map((r) => r.ms).sort((a, b) => a - b);
    const statuses = {};
    for (const r of all) statuses[r.status] = (statuses[r.status] || 0) + 1;
    results.burst = { connections: o.burst, statuses, p50_ms: pct(ms, 0.5), p99_ms: pct(ms, 0.99), max_ms: ms[ms.length - 1] };
    console.log("burst:", JSON.stringify(results.burst));
    check(statuses[200] === o.burst, `burst: ${JSON.stringify(statuses)}`);
  }

  // 3. churn with aborts.
  {
    const body = (i) => ({ prompt: "Once upon a time", max_tokens: 24, temperature: 0.8, seed: i, stream: i % 3 === 0 });
    const run = async (count) => {
      let next = 0;
      const statuses = {};
      await Promise.all(Array.from({ length: o.concurrency }, async () => {
        while (next < count) {
          const i = next++;
          const kind = i % 3;
          const r = kind === 0 ? await exchange(port, body(i), { abortOnData: true })
            : kind === 1 ? await exchange(port, body(i), { abortAfterMs: 20 })
              : await exchange(port, body(i));
          const key = kind === 2 ? String(r.status) : "aborted";
          statuses[key] = (statuses[key] || 0) + 1;
        }
      }));
      return statuses;
    };
    await run(Math.min(2000, o.requests));
    await sleep(1000);
    const warm = rssKb(server.pid);
    const started = Date.now();
    const statuses = await run(o.requests);
    const seconds = (Date.now() - started) / 1000;
    let text = "";
    for (let i = 0; i < 100; i++) {
      text = await fetchMetrics(url);
      if (metricValue(text, 'qeff_rows_in_use{model="m"}') === 0 && metricValue(text, 'qeff_queue_depth{model="m"}') === 0) break;
      await sleep(100);
    }
    await sleep(1000);
    const end = rssKb(server.pid);
    results.churn = { requests: o.requests, concurrency: o.concurrency, seconds, statuses,
      rows_in_use: metricValue(text, 'qeff_rows_in_use{model="m"}'),
      queue_depth: metricValue(text, 'qeff_queue_depth{model="m"}'),
      cancelled: metricValue(text, 'qeff_requests_finished_total{model="m",reason="cancelled"}'),
      rss_warm_kb: warm, rss_end_kb: end, rss_ratio: end / warm };
    console.log("churn:", JSON.stringify(results.churn));
    check(results.churn.rows_in_use === 0 && results.churn.queue_depth === 0, "rows or queue left in use");
    check(end <= 1.2 * warm, `RSS ${end} kB > 1.2 x ${warm} kB`);
    check(statuses["200"] === Math.floor(o.requests / 3), `completed: ${JSON.stringify(statuses)}`);
  }

  results.loadavg_end = os.loadavg();
  server.kill("SIGTERM");
  const code = await new Promise((r) => server.on("exit", (c) => r(c)));
  results.exit_code = code;
  check(code === 0, `qeff serve exited with ${code} after SIGTERM`);
  console.log(JSON.stringify(results));
  if (o.json) fs.writeFileSync(o.json, JSON.stringify(results, null, 2) + "\n");
  process.exit(ok ? 0 : 1);
}

main().catch((e) => { console.error(e); process.exit(1); });
