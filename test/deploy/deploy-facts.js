// What qeff's Kubernetes manifests say, checked for consistency: the serving
// Deployment's command line, port and probes, the model-card ConfigMap both the
// server and the compile Job read, the Job's per-card command line, and the volumes
// that connect them. checkDeploy(deployDir) returns {errors, facts}; the facts are
// what the cross-checks against the real `qeff` binary run (check-serve.js,
// check-compile-job.sh).
'use strict';
const path = require('path');
const { loadTree, validate, describe } = require('./manifests.js');

// The command lines the manifests must carry (issues 12 and 13; docs/deploy.md).
const SERVE_MODELS = '/etc/qeff/models.json';
const JOB_CARDS = '/cards/cards.json';
const JOB_OUT = '/artifacts';
const INDEX_VAR = '$(JOB_COMPLETION_INDEX)';

function checkDeploy(deployDir) {
  deployDir = path.resolve(deployDir);
  const errors = [];
  const fail = (msg) => errors.push(msg);
  let tree;
  try {
    tree = loadTree(deployDir);
  } catch (e) {
    return { errors: [e.message], facts: {} };
  }

  // 1. Every object, as written and as each kustomization renders it, against the
  //    Kubernetes OpenAPI schema.
  for (const { obj, source } of tree.objects) errors.push(...validate(obj, path.relative(deployDir, source)));
  for (const [dir, objs] of tree.rendered) {
    const seen = new Set();
    for (const { obj } of objs) {
      const key = `${obj.kind}/${obj.metadata?.name}`;
      if (seen.has(key)) fail(`kustomize ${path.relative(deployDir, dir)}: ${key} appears twice`);
      seen.add(key);
      errors.push(...validate(obj, `kustomize ${path.relative(deployDir, dir)}`));
    }
  }
  if (errors.length) return { errors, facts: {} };

  const facts = {};
  const serveDir = path.join(deployDir, 'serve');
  const qaicDir = path.join(deployDir, 'serve-qaic');
  const serveObjs = (tree.rendered.get(serveDir) || []).map((e) => e.obj);
  const qaicObjs = (tree.rendered.get(qaicDir) || []).map((e) => e.obj);
  if (!serveObjs.length) fail('deploy/serve: no kustomization rendering the serving stack');
  if (!qaicObjs.length) fail('deploy/serve-qaic: no kustomization rendering the AI 100 variant');
  const find = (objs, kind, name) => objs.find((o) => o.kind === kind && o.metadata.name === name);

  // 2. The serving stack, plain and AI 100.
  for (const [label, objs] of [['deploy/serve', serveObjs], ['deploy/serve-qaic', qaicObjs]]) {
    if (!objs.length) continue;
    const where = (o) => `kustomize ${label}: ${describe(o)}`;
    const dep = find(objs, 'Deployment', 'qeff-serve');
    if (!dep) { fail(`kustomize ${label}: no Deployment qeff-serve`); continue; }
    const pod = dep.spec.template.spec;
    checkSelector(dep.spec.selector.matchLabels, dep.spec.template.metadata?.labels, where(dep), fail);
    const c = onlyContainer(pod, where(dep), fail);
    if (!c) continue;
    const w = `${where(dep)}: container '${c.name}'`;
    const argv = [...(c.command || []), ...(c.args || [])];
    if (argv[0] !== 'qeff' || argv[1] !== 'serve') {
      fail(`${w}: command + args must start with 'qeff serve', got ${JSON.stringify(argv)}`);
      continue;
    }
    const opts = parseOptions(argv.slice(2), w, fail);
    const port = Number(opts['--port']);
    if (opts['--models'] !== SERVE_MODELS) fail(`${w}: --models must be ${SERVE_MODELS}, got ${opts['--models']}`);
    if (opts['--host'] !== '0.0.0.0') fail(`${w}: --host must be 0.0.0.0 (reachable from the Service), got ${opts['--host']}`);
    if (!Number.isInteger(port)) fail(`${w}: --port must be a number, got ${opts['--port']}`);
    const http = (c.ports || []).find((p) => p.name === 'http');
    if (!http) fail(`${w}: no container port named 'http'`);
    else if (http.containerPort !== port) fail(`${w}: containerPort ${http.containerPort} is not --port ${port}`);
    const probes = { readinessProbe: '/v2/health/ready', livenessProbe: '/v2/health/live' };
    for (const [probe, want] of Object.entries(probes)) {
      const get = c[probe]?.httpGet;
      if (!get) { fail(`${w}: no ${probe}.httpGet`); continue; }
      if (get.path !== want) fail(`${w}: ${probe} path is ${get.path}, expected ${want}`);
      if (resolvePort(c, get.port) !== port) fail(`${w}: ${probe} port ${get.port} is not the server's port ${port}`);
    }
    if (c.startupProbe) {
      const get = c.startupProbe.httpGet;
      if (!get || !Object.values(probes).includes(get.path)) fail(`${w}: startupProbe must GET a v2 health route`);
      else if (resolvePort(c, get.port) !== port) fail(`${w}: startupProbe port ${get.port} is not the server's port ${port}`);
    }
    const models = configMapFile(objs, pod, c, SERVE_MODELS, w, fail);
    const cards = models === undefined ? undefined : checkCards(models, pod, c, `${w}: ${SERVE_MODELS}`, fail);
    checkClaims(objs, pod, where(dep), fail);
    for (const svc of objs.filter((o) => o.kind === 'Service')) {
      checkSelector(svc.spec.selector, dep.spec.template.metadata?.labels, where(svc), fail);
      for (const p of svc.spec.ports)
        if (resolvePort(c, p.targetPort ?? p.port) === undefined)
          fail(`${where(svc)}: targetPort ${p.targetPort} is no port of ${where(dep)}`);
    }
    const limits = c.resources?.limits || {};
    const isQaic = label === 'deploy/serve-qaic';
    const device = opts['--device'];
    if (isQaic) {
      if (device !== 'qaic') fail(`${w}: the AI 100 variant must pass --device qaic, got ${device}`);
      if (!(Number(limits['qualcomm.com/qaic']) >= 1)) fail(`${w}: the AI 100 variant must limit qualcomm.com/qaic to at least 1`);
      const req = c.resources?.requests?.['qualcomm.com/qaic'];
      if (req !== undefined && String(req) !== String(limits['qualcomm.com/qaic']))
        fail(`${w}: qualcomm.com/qaic request ${req} differs from its limit (extended resources need them equal)`);
      facts.qaicArgv = argv;
    } else {
      if (device !== undefined && device !== 'host') fail(`${w}: the plain stack must run on the host device, got --device ${device}`);
      if (limits['qualcomm.com/qaic'] !== undefined) fail(`${w}: the plain stack must not ask for qualcomm.com/qaic`);
      facts.serve = { argv, port, probes, models, cards, cacheMount: envMount(pod, c, 'QEFF_CACHE_DIR', w, fail) };
      facts.serveObjs = objs;
    }
    checkSecurity(pod, c, w, fail);
  }

  // 3. The compile Job: one pod per card, over the serving stack's ConfigMap and volumes.
  const compile = facts.serveObjs && jobIn(tree, deployDir, 'compile-job.yaml', fail);
  if (compile) {
    const { job, w, pod, c } = compile;
    if (job.spec.completionMode !== 'Indexed') fail(`${w}: completionMode must be Indexed`);
    if (pod.restartPolicy !== 'Never') fail(`${w}: restartPolicy must be Never (per-index retries)`);
    if (c) {
      const argv = [...(c.command || []), ...(c.args || [])];
      const cw = `${w}: container '${c.name}'`;
      if (argv[0] !== 'qeff' || argv[1] !== 'compile') fail(`${cw}: command + args must start with 'qeff compile', got ${JSON.stringify(argv)}`);
      const opts = parseOptions(argv.slice(2), cw, fail);
      if (opts['--models'] !== JOB_CARDS) fail(`${cw}: --models must be ${JOB_CARDS}, got ${opts['--models']}`);
      if (opts['--card-index'] !== INDEX_VAR) fail(`${cw}: --card-index must be ${INDEX_VAR}, got ${opts['--card-index']}`);
      if (opts['-o'] !== JOB_OUT) fail(`${cw}: -o must be ${JOB_OUT}, got ${opts['-o']}`);
      const env = (c.env || []).find((e) => e.name === 'JOB_COMPLETION_INDEX');
      const ann = "metadata.annotations['batch.kubernetes.io/job-completion-index']";
      if (env?.valueFrom?.fieldRef?.fieldPath !== ann)
        fail(`${cw}: env JOB_COMPLETION_INDEX must come from ${ann}`);
      const text = configMapFile(facts.serveObjs, pod, c, JOB_CARDS, cw, fail);
      if (text !== undefined) {
        if (text !== facts.serve.models) fail(`${cw}: ${JOB_CARDS} is not the serving stack's ${SERVE_MODELS}`);
        const cards = checkCards(text, pod, c, `${cw}: ${JOB_CARDS}`, fail);
        if (cards && job.spec.completions !== cards.length)
          fail(`${w}: completions is ${job.spec.completions}, but ${JOB_CARDS} has ${cards.length} cards`);
        if (cards && job.spec.parallelism > cards.length)
          fail(`${w}: parallelism ${job.spec.parallelism} exceeds the ${cards.length} cards`);
        facts.job = { argv, cards: cards?.length, out: mountOf(pod, c, JOB_OUT) };
      }
      const out = mountOf(pod, c, JOB_OUT);
      if (!out?.volume?.persistentVolumeClaim || out.mount.readOnly) fail(`${cw}: ${JOB_OUT} must be a writable PersistentVolumeClaim mount`);
      const cache = envMount(pod, c, 'QEFF_CACHE_DIR', cw, fail);
      if (cache && facts.serve?.cacheMount && !sameStorage(cache, facts.serve.cacheMount))
        fail(`${cw}: QEFF_CACHE_DIR is not on the serving pods' cache volume (the Job would not warm their cache)`);
      checkClaims(facts.serveObjs, pod, w, fail);
      checkSecurity(pod, c, cw, fail);
    }
  }

  // 4. The merge Job reads what the compile Job wrote.
  const merge = facts.job && jobIn(tree, deployDir, 'summarize-job.yaml', fail);
  if (merge) {
    const { w, pod, c } = merge;
    if (c) {
      const argv = [...(c.command || []), ...(c.args || [])];
      if (argv.length !== 4 || argv.slice(0, 3).join(' ') !== 'qeff models summarize')
        fail(`${w}: command + args must be 'qeff models summarize <dir>', got ${JSON.stringify(argv)}`);
      else {
        const m = mountOf(pod, c, argv[3]);
        if (!m || !sameStorage(m, facts.job.out)) fail(`${w}: ${argv[3]} is not the compile Job's ${JOB_OUT}`);
        facts.summarizeArgv = argv;
      }
      checkClaims(facts.serveObjs, pod, w, fail);
      checkSecurity(pod, c, w, fail);
    }
  }
  delete facts.serveObjs;
  return { errors, facts };
}

// The Job in deploy/<file>: {job, w (its name in messages), pod, c (its container)}.
function jobIn(tree, deployDir, file, fail) {
  const job = tree.objects.find((e) => e.source === path.join(deployDir, file) && e.obj.kind === 'Job')?.obj;
  if (!job) { fail(`deploy/${file}: no Job`); return undefined; }
  const w = `${file}: ${describe(job)}`;
  const pod = job.spec.template.spec;
  return { job, w, pod, c: onlyContainer(pod, w, fail) };
}

function onlyContainer(pod, where, fail) {
  if (pod.containers.length !== 1) { fail(`${where}: expected one container, found ${pod.containers.length}`); return undefined; }
  return pod.containers[0];
}

// `--name value` pairs; a repeated or value-less option is an error.
function parseOptions(args, where, fail) {
  const opts = {};
  for (let i = 0; i < args.length; i += 2) {
    const [k, v] = [args[i], args[i + 1]];
    if (!/^-/.test(k) || v === undefined) { fail(`${where}: cannot read option '${k}' in ${JSON.stringify(args)}`); break; }
    if (k in opts) fail(`${where}: option ${k} given twice`);
    opts[k] = v;
  }
  return opts;
}

function checkSelector(selector, labels, where, fail) {
  for (const [k, v] of Object.entries(selector || {}))
    if (labels?.[k] !== v) fail(`${where}: selector ${k}=${v} does not match the pod template's labels`);
}

function resolvePort(c, port) {
  if (typeof port === 'number') return (c.ports || []).some((p) => p.containerPort === port) ? port : undefined;
  return (c.ports || []).find((p) => p.name === port)?.containerPort;
}

// The volume mount holding `file` in container c: {mount, volume, rel}.
function mountOf(pod, c, file) {
  let best;
  for (const m of c.volumeMounts || []) {
    const rel = path.posix.relative(m.mountPath, file);
    if (rel.startsWith('..') || path.posix.isAbsolute(rel)) continue;
    if (!best || m.mountPath.length > best.mount.mountPath.length)
      best = { mount: m, volume: (pod.volumes || []).find((v) => v.name === m.name), rel };
  }
  return best;
}

// Where two mounts store their files: the same claim and sub-path.
function sameStorage(a, b) {
  const claim = (m) => m.volume?.persistentVolumeClaim?.claimName;
  return claim(a) !== undefined && claim(a) === claim(b) &&
         path.posix.join(a.mount.subPath || '', a.rel) === path.posix.join(b.mount.subPath || '', b.rel);
}

function envMount(pod, c, name, where, fail) {
  const value = (c.env || []).find((e) => e.name === name)?.value;
  if (!value) { fail(`${where}: no ${name}`); return undefined; }
  const m = mountOf(pod, c, value);
  if (!m?.volume?.persistentVolumeClaim || m.mount.readOnly) {
    fail(`${where}: ${name}=${value} is not on a writable PersistentVolumeClaim`);
    return undefined;
  }
  return m;
}

// The text of the ConfigMap key mounted at `file`.
function configMapFile(objs, pod, c, file, where, fail) {
  const m = mountOf(pod, c, file);
  const cm = m?.volume?.configMap;
  if (!cm) { fail(`${where}: ${file} is not on a ConfigMap volume`); return undefined; }
  const rel = path.posix.join(m.mount.subPath || '', m.rel);
  const key = cm.items ? cm.items.find((i) => i.path === rel)?.key : rel;
  const map = objs.find((o) => o.kind === 'ConfigMap' && o.metadata.name === cm.name);
  if (!map) { fail(`${where}: ConfigMap ${cm.name} (for ${file}) is not in the serving stack`); return undefined; }
  if (key === undefined || map.data?.[key] === undefined) {
    fail(`${where}: ${file}: ConfigMap ${cm.name} has no key for it`);
    return undefined;
  }
  return map.data[key];
}

// The card file's own shape (docs/model-cards.md); qeff's parser has the last word.
function checkCards(text, pod, c, where, fail) {
  let file;
  try { file = JSON.parse(text); } catch (e) { fail(`${where}: not JSON: ${e.message}`); return undefined; }
  if (!Array.isArray(file.models) || !file.models.length) { fail(`${where}: 'models' must be a non-empty list`); return undefined; }
  const names = new Set();
  for (const [i, card] of file.models.entries()) {
    const cw = `${where}: models[${i}]`;
    if (typeof card.name !== 'string' || names.has(card.name.toLowerCase())) fail(`${cw}: missing or duplicate name`);
    names.add(String(card.name).toLowerCase());
    if (typeof card.model !== 'string' || !path.posix.isAbsolute(card.model)) {
      fail(`${cw} '${card.name}': 'model' must be an absolute path on a mounted volume`);
      continue;
    }
    const m = mountOf(pod, c, card.model);
    if (!m?.volume?.persistentVolumeClaim) fail(`${cw} '${card.name}': ${card.model} is on no PersistentVolumeClaim mount`);
  }
  return file.models;
}

function checkClaims(objs, pod, where, fail) {
  for (const v of pod.volumes || []) {
    const claim = v.persistentVolumeClaim?.claimName;
    if (claim && !objs.some((o) => o.kind === 'PersistentVolumeClaim' && o.metadata.name === claim))
      fail(`${where}: volume '${v.name}' claims ${claim}, which the serving stack does not define`);
  }
}

// Non-root, as the image's USER; no privilege escalation.
function checkSecurity(pod, c, where, fail) {
  if (pod.securityContext?.runAsNonRoot !== true) fail(`${where}: the pod must set runAsNonRoot`);
  if (!(pod.securityContext?.runAsUser > 0)) fail(`${where}: the pod must set a non-zero runAsUser`);
  if (c.securityContext?.allowPrivilegeEscalation !== false) fail(`${where}: allowPrivilegeEscalation must be false`);
}

module.exports = { checkDeploy };
