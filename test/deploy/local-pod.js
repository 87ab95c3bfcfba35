// Runs a container of qeff's manifests on this machine as its pod would run it, for
// the cross-checks against the real `qeff` (check-serve.js, check-compile-job.js):
//
//   - every volumeMount becomes a local directory: a ConfigMap volume is laid out as
//     the kubelet lays it out (<dir>/..<timestamp>/<file>, <dir>/..data -> that,
//     <dir>/<file> -> ..data/<file>, items applied), a PersistentVolumeClaim is
//     <root>/pvc/<claim>/<subPath> (so two pods' mounts of one claim share files),
//     an emptyDir <root>/empty/<pod>/<volume>;
//   - every container path in args and env values is rewritten to the local
//     directory of the mount holding it;
//   - $(VAR) in command/args expands from the container's env, as Kubernetes does;
//     JOB_COMPLETION_INDEX's fieldRef resolves to the given index.
//
// The checkpoint volume holds copies of the repo's bundled models
// (test/data/models/<dir>); the ConfigMap's card list is cut to the cards whose
// checkpoint is bundled, everything else in it (defaults, options) kept as written.
'use strict';
const fs = require('fs');
const path = require('path');
const http = require('http');
const { spawn } = require('child_process');

const INDEX_FIELD = "metadata.annotations['batch.kubernetes.io/job-completion-index']";

function copyDir(from, to) {
  fs.mkdirSync(to, { recursive: true });
  for (const e of fs.readdirSync(from, { withFileTypes: true })) {
    const [s, d] = [path.join(from, e.name), path.join(to, e.name)];
    if (e.isDirectory()) copyDir(s, d);
    else if (e.isFile()) fs.copyFileSync(s, d);
  }
}

// The card list restricted to cards whose checkpoint directory (by base name) is
// bundled in test/data/models: {text, cards, bundled: [dir names]}.
function bundledCards(text, repo) {
  const file = JSON.parse(text);
  const models = path.join(repo, 'test', 'data', 'models');
  file.models = file.models.filter((c) => fs.existsSync(path.join(models, path.posix.basename(c.model), 'config.json')));
  if (!file.models.length) throw new Error('no card of the ConfigMap names a checkpoint bundled in test/data/models');
  return { text: JSON.stringify(file, null, 2) + '\n', cards: file.models };
}

class LocalCluster {
  // root: a fresh temporary directory; objs: the serving stack's rendered objects.
  constructor(root, repo, objs) {
    Object.assign(this, { root, repo, objs });
  }

  // A ConfigMap's data; in the card file, the bundled cards only, each checkpoint
  // path mapped by `local` (the pod's container path -> local path).
  configMapData(name, local) {
    const cm = this.objs.find((o) => o.kind === 'ConfigMap' && o.metadata.name === name);
    if (!cm) throw new Error(`ConfigMap ${name} is not in the serving stack`);
    const data = { ...cm.data };
    if ('models.json' in data) {
      const file = JSON.parse(bundledCards(data['models.json'], this.repo).text);
      for (const card of file.models) card.model = local(card.model);
      data['models.json'] = JSON.stringify(file, null, 2) + '\n';
    }
    return data;
  }

  // The local directory of one volume of a pod (created on first use).
  volumeDir(podName, volume, local) {
    if (volume.configMap) {
      const dir = path.join(this.root, 'configmap', podName, volume.name);
      if (fs.existsSync(dir)) return dir;
      const data = this.configMapData(volume.configMap.name, local);
      const items = volume.configMap.items || Object.keys(data).map((key) => ({ key, path: key }));
      const stamp = '..2026_12_03_00_00_00.1';
      fs.mkdirSync(path.join(dir, stamp), { recursive: true });
      for (const { key, path: p } of items) {
        if (!(key in data)) throw new Error(`ConfigMap ${volume.configMap.name} has no key ${key}`);
        fs.mkdirSync(path.dirname(path.join(dir, stamp, p)), { recursive: true });
        fs.writeFileSync(path.join(dir, stamp, p), data[key]);
      }
      fs.symlinkSync(stamp, path.join(dir, '..data'));
      for (const { path: p } of items) {
        const top = p.split('/')[0];
        if (!fs.existsSync(path.join(dir, top))) fs.symlinkSync(path.join('..data', top), path.join(dir, top));
      }
      return dir;
    }
    if (volume.persistentVolumeClaim) {
      const claim = volume.persistentVolumeClaim.claimName;
      const dir = path.join(this.root, 'pvc', claim);
      if (!fs.existsSync(dir)) {
        fs.mkdirSync(dir, { recursive: true });
        if (claim === 'qeff-checkpoints')
          for (const m of fs.readdirSync(path.join(this.repo, 'test', 'data', 'models')))
            copyDir(path.join(this.repo, 'test', 'data', 'models', m), path.join(dir, m));
      }
      return dir;
    }
    if (volume.emptyDir) {
      const dir = path.join(this.root, 'empty', podName, volume.name);
      fs.mkdirSync(dir, { recursive: true });
      return dir;
    }
    throw new Error(`volume ${volume.name}: only configMap, persistentVolumeClaim and emptyDir are emulated`);
  }

  // {argv, env, mounts} of container c of `pod` (a pod spec), with index for Jobs.
  prepare(podName, pod, c, index) {
    // Volumes first, ConfigMaps last: a card file's paths map through the others.
    const mounts = [];
    const local = (s) => {
      for (const m of mounts)
        if (s === m.mountPath || s.startsWith(m.mountPath + '/')) return m.dir + s.slice(m.mountPath.length);
      return s;
    };
    const volumeOf = (m) => (pod.volumes || []).find((v) => v.name === m.name);
    const order = [...(c.volumeMounts || [])].sort((a, b) => !!volumeOf(a).configMap - !!volumeOf(b).configMap);
    for (const m of order) {
      const dir = path.join(this.volumeDir(podName, volumeOf(m), local), m.subPath || '');
      fs.mkdirSync(dir, { recursive: true });
      mounts.push({ mountPath: m.mountPath, dir });
      mounts.sort((a, b) => b.mountPath.length - a.mountPath.length);
    }
    const env = {};
    for (const e of c.env || []) {
      if (e.value !== undefined) env[e.name] = local(e.value);
      else if (e.valueFrom?.fieldRef?.fieldPath === INDEX_FIELD) {
        if (index === undefined) throw new Error(`${e.name}: the job completion index outside a Job`);
        env[e.name] = String(index);
      } else throw new Error(`env ${e.name}: only values and the job completion index are emulated`);
    }
    const expand = (s) => s.replace(/\$\$|\$\(([A-Za-z_][A-Za-z0-9_]*)\)/g,
      (m, name) => (m === '$$' ? '$' : name in env ? env[name] : m));
    const argv = [...(c.command || []), ...(c.args || [])].map(expand).map(local);
    return { argv, env, local };
  }
}

// Replaces the value of option `name` in argv (which must hold it).
function setOption(argv, name, value) {
  const i = argv.indexOf(name);
  if (i < 0 || i + 1 >= argv.length) throw new Error(`${name} is not in ${JSON.stringify(argv)}`);
  const out = [...argv];
  out[i + 1] = value;
  return out;
}

// Starts `qeff serve`; resolves {proc, url, log()} once it prints its "listening on" line.
function startServe(qeff, args, env, timeoutMs = 240000) {
  return new Promise((resolve, reject) => {
    const proc = spawn(qeff, args, { env: { ...process.env, ...env }, stdio: ['ignore', 'pipe', 'pipe'] });
    let out = '';
    const log = () => out;
    const timer = setTimeout(() => { proc.kill('SIGKILL'); reject(new Error(`qeff serve did not listen within ${timeoutMs} ms:\n${out}`)); }, timeoutMs);
    const onData = (d) => {
      out += d;
      const m = /qeff serve: listening on (http:\/\/\S+)/.exec(out);
      if (m) { clearTimeout(timer); resolve({ proc, url: m[1], log }); }
    };
    proc.stdout.on('data', onData);
    proc.stderr.on('data', onData);
    proc.on('exit', (code, signal) => {
      clearTimeout(timer);
      reject(new Error(`qeff serve exited (${signal || code}) before listening:\n${out}`));
    });
  });
}

// SIGTERM, then the exit code (or signal name).
function stopServe(server) {
  return new Promise((resolve) => {
    if (server.proc.exitCode !== null) { resolve(server.proc.exitCode); return; }
    server.proc.removeAllListeners('exit');
    server.proc.on('exit', (code, signal) => resolve(signal || code));
    server.proc.kill('SIGTERM');
  });
}

function get(url) {
  return new Promise((resolve, reject) => {
    http.get(url, (res) => {
      let body = '';
      res.setEncoding('utf8');
      res.on('data', (d) => { body += d; });
      res.on('end', () => resolve({ status: res.statusCode, body }));
    }).on('error', reject);
  });
}

function post(url, body) {
  return new Promise((resolve, reject) => {
    const data = JSON.stringify(body);
    const req = http.request(url, { method: 'POST', headers: { 'content-type': 'application/json',
                                                               'content-length': Buffer.byteLength(data) } }, (res) => {
      let text = '';
      res.setEncoding('utf8');
      res.on('data', (d) => { text += d; });
      res.on('end', () => resolve({ status: res.statusCode, body: text }));
    });
    req.on('error', reject);
    req.end(data);
  });
}

// Runs `body(check, ctx)` (ctx.root: a fresh temporary directory; ctx.server: the
// running server, if any), reports an exception as a failed check named `what`,
// kills a server left running, removes ctx.root, prints the count and exits.
function runChecks(what, body) {
  let passed = 0, failed = 0;
  const check = (ok, name, detail = '') => {
    if (ok) passed++; else failed++;
    console.log(`${ok ? 'ok  ' : 'FAIL'} ${name}${ok || !detail ? '' : `\n     ${detail}`}`);
    return ok;
  };
  const ctx = { root: fs.mkdtempSync(path.join(require('os').tmpdir(), 'qeff-deploy-')), server: undefined };
  body(check, ctx)
    .catch((e) => check(false, what, `${e.message}${ctx.server ? `\n${ctx.server.log()}` : ''}`))
    .finally(() => {
      if (ctx.server) ctx.server.proc.kill('SIGKILL');
      fs.rmSync(ctx.root, { recursive: true, force: true });
      console.log(`${passed} passed, ${failed} failed`);
      process.exit(failed ? 1 : 0);
    });
}

// SIGTERM to ctx.server, which must exit 0.
async function stopChecked(ctx, check) {
  const status = await stopServe(ctx.server);
  ctx.server = undefined;
  check(status === 0, `SIGTERM: qeff serve exits ${status}`);
}

module.exports = { LocalCluster, bundledCards, setOption, startServe, stopServe, get, post, runChecks, stopChecked };
