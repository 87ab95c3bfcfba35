// Shared helpers of the `qeff serve` tests: compile the bundled model, start
// a server on a free port of 127.0.0.1 and always stop it, run `qeff infer`
// as the reference, read /metrics, and assert with messages that say what
// differed. Every wait is bounded.
"use strict";

const { spawn, execFileSync } = require("child_process");
const fs = require("fs");
const path = require("path");
const assert = require("assert");

const OpenAI = require(path.join(__dirname, "../oracle/node_modules/openai")).default;

/// Command line: <qeff> <model_dir> <work_dir>.
function args() {
  const [qeff, modelDir, workDir] = process.argv.slice(2);
  if (!qeff || !modelDir || !workDir) {
    console.error("usage: node <test>.js <qeff> <model_dir> <work_dir>");
    process.exit(2);
  }
  fs.rmSync(workDir, { recursive: true, force: true });
  fs.mkdirSync(workDir, { recursive: true });
  return { qeff, modelDir, workDir };
}

/// `qeff compile` into <workDir>/<name>; returns the artifact directory.
function compile(t, name, options) {
  const out = path.join(t.workDir, name);
  execFileSync(t.qeff, ["compile", t.modelDir, "-o", out, ...options], {
    stdio: ["ignore", "ignore", "inherit"],
  });
  return out;
}

const servers = new Set();
process.on("exit", () => {
  for (const s of servers) if (s.proc.exitCode === null) s.proc.kill("SIGKILL");
});
for (const sig of ["SIGINT", "SIGTERM"])
  process.on(sig, () => process.exit(1));

/// Starts `qeff serve <dir> --port 0 ...` (no <dir> when dir is null, e.g.
/// with --models); resolves with {url, proc, log()} once it printed its
/// address. `env` adds to the environment.
function startServer(t, dir, options = [], timeoutMs = 30000, env = {}) {
  return new Promise((resolve, reject) => {
    const proc = spawn(t.qeff, ["serve", ...(dir ? [dir] : []), "--host", "127.0.0.1", "--port", "0", ...options], {
      stdio: ["ignore", "pipe", "pipe"], env: { ...process.env, ...env },
    });
    const server = { proc, stdout: "", stderr: "", url: null };
    server.log = () => server.stderr;
    server.exited = new Promise((res) => proc.on("exit", (code, signal) => res({ code, signal })));
    servers.add(server);
    const timer = setTimeout(() => {
      proc.kill("SIGKILL");
      reject(new Error(`qeff serve did not print its address within ${timeoutMs} ms:\n${server.stderr}`));
    }, timeoutMs);
    proc.stderr.on("data", (d) => (server.stderr += d));
    proc.stdout.on("data", (d) => {
      server.stdout += d;
      const m = /listening on (http:\/\/127\.0\.0\.1:\d+)/.exec(server.stdout);
      if (m && !server.url) {
        server.url = m[1];
        clearTimeout(timer);
        resolve(server);
      }
    });
    proc.on("exit", (code) => {
      if (!server.url) {
        clearTimeout(timer);
        reject(new Error(`qeff serve exited with ${code} before listening:\n${server.stderr}`));
      }
    });
  });
}

async function stopServer(server) {
  if (server.proc.exitCode === null) server.proc.kill("SIGKILL");
  await server.exited;
}

function client(server, extra = {}) {
  return new OpenAI({
    baseURL: server.url + "/v1",
    apiKey: extra.apiKey || "unused",
    maxRetries: 0,
    timeout: 60000,
  });
}

/// Whether the tokenizer of `dir` (tokenizer.json) decodes `id` first with
/// its leading space stripped: a piece starting with SentencePiece's "\u2581"
/// under a decoder that strips one leading space (Metaspace, or Strip
/// start 1), as HF's tokenizer.decode does for the first token.
function dropsLeadingSpace(dir, id) {
  const file = path.join(dir, "tokenizer.json");
  if (id === undefined || !fs.existsSync(file)) return false;
  const tok = JSON.parse(fs.readFileSync(file, "utf8"));
  const piece = Object.keys(tok.model.vocab).find((k) => tok.model.vocab[k] === id);
  const decoders = tok.decoder ? (tok.decoder.decoders || [tok.decoder]) : [];
  const strips = decoders.some((d) => d.type === "Metaspace" || (d.type === "Strip" && d.start === 1));
  return strips && piece !== undefined && piece.startsWith("\u2581");
}

/// `qeff infer <dir> --json` on text prompts; the rows. `text` is what
/// `qeff serve` answers for the same tokens: the continuation of the prompt
/// (its leading space kept, as vLLM's text), where `qeff infer` prints
/// `inferText`, HF's decode of the generated tokens alone.
function infer(t, dir, prompts, maxNewTokens, extra = []) {
  const file = path.join(t.workDir, `prompts-${process.pid}-${Date.now()}.txt`);
  fs.writeFileSync(file, prompts.join("\n") + "\n");
  const out = execFileSync(
    t.qeff,
    ["infer", dir, "--prompts-file", file, "--max-new-tokens", String(maxNewTokens),
     "--temperature", "0", "--json", ...extra],
    { encoding: "utf8", stdio: ["ignore", "pipe", "inherit"] });
  const rows = JSON.parse(out).rows;
  for (const row of rows) {
    row.inferText = row.text;
    if (row.text.length && dropsLeadingSpace(dir, row.generated_ids[0])) row.text = " " + row.text;
  }
  return rows;
}

/// fetch with a deadline.
async function http(server, route, init = {}) {
  const ctl = new AbortController();
  const timer = setTimeout(() => ctl.abort(), init.timeoutMs || 30000);
  try {
    return await fetch(server.url + route, { ...init, signal: init.signal || ctl.signal });
  } finally {
    clearTimeout(timer);
  }
}

/// The value of one metric sample, e.g. metric(text, 'qeff_rows_in_use{model="m"}').
function metric(text, sample) {
  for (const line of text.split("\n"))
    if (line.startsWith(sample + " ")) return Number(line.slice(sample.length + 1));
  return undefined;
}

async function metrics(server) {
  const res = await http(server, "/metrics");
  assert.strictEqual(res.status, 200);
  return res.text();
}

/// Polls until `predicate(metricsText)` holds; throws after timeoutMs.
async function waitForMetrics(server, predicate, what, timeoutMs = 20000) {
  const deadline = Date.now() + timeoutMs;
  let text = "";
  while (Date.now() < deadline) {
    text = await metrics(server);
    if (predicate(text)) return text;
    await new Promise((r) => setTimeout(r, 50));
  }
  throw new Error(`timed out waiting for ${what}; last /metrics:\n${text}`);
}

/// Runs the named async cases in order; prints one line each; exit 1 on
/// the first failure (after stopping the servers). With
/// QEFF_SERVE_TEST_KEEP_GOING=1 every case runs and each failure is listed
/// (to check that each case fails on a build without the feature).
async function run(cases) {
  let passed = 0, failed = 0;
  for (const [name, fn] of cases) {
    const start = Date.now();
    try {
      await fn();
    } catch (e) {
      console.error(`FAIL ${name}: ${e.stack || e}`);
      for (const s of servers)
        console.error(`--- the server's log (last 3000 bytes):\n${s.stderr.slice(-3000)}`);
      if (process.env.QEFF_SERVE_TEST_KEEP_GOING === "1") {
        failed++;
        continue;
      }
      for (const s of servers) if (s.proc.exitCode === null) s.proc.kill("SIGKILL");
      process.exit(1);
    }
    passed++;
    console.log(`ok ${name} (${Date.now() - start} ms)`);
  }
  console.log(`${passed} passed, ${failed} failed`);
  for (const s of servers) await stopServer(s);
  if (failed) process.exit(1);
}

module.exports = {
  OpenAI, args, compile, startServer, stopServer, client, infer, http, metric,
  metrics, waitForMetrics, run, assert,
};
