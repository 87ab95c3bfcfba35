#!/usr/bin/env node
// ctest deploy/compile-job-crosscheck: the compile Job, the merge and the server's
// cache, run with the real `qeff` as their pods would run them (local-pod.js):
//   1. `qeff models check` accepts the ConfigMap's whole card file as written;
//   2. one pod of compile-job.yaml per bundled card (its command line with
//      $(JOB_COMPLETION_INDEX) expanded from the pod's env, the ConfigMap mounted as
//      /cards, the artifacts volume at /artifacts): each exits 0 and writes
//      /artifacts/<card>/ (hard-linked from the cache entry) and its summary;
//   3. summarize-job.yaml's pod: exit 0, /artifacts/summary.json lists every card ok;
//   4. with --serve-cache-hit: then the serving pod on the same volumes becomes ready
//      without building anything (the Job warmed its cache: the cache directory is
//      unchanged); ctest deploy/job-warms-serve-cache.
//
//   node test/deploy/check-compile-job.js <qeff_binary> <repo_root> [--serve-cache-hit]
'use strict';
const fs = require('fs');
const path = require('path');
const { spawnSync } = require('child_process');
const { checkDeploy } = require('./deploy-facts.js');
const { render, readYaml } = require('./manifests.js');
const { LocalCluster, bundledCards, setOption, startServe, get, runChecks, stopChecked } = require('./local-pod.js');

const [qeff, repo, mode] = process.argv.slice(2);
if (!qeff || !repo || (mode && mode !== '--serve-cache-hit')) {
  console.error('usage: check-compile-job.js <qeff_binary> <repo_root> [--serve-cache-hit]');
  process.exit(2);
}
// Every file under dir, relative, sorted.
function listFiles(dir, base = dir) {
  if (!fs.existsSync(dir)) return [];
  return fs.readdirSync(dir, { withFileTypes: true }).flatMap((e) => {
    const p = path.join(dir, e.name);
    return e.isDirectory() ? listFiles(p, base) : [path.relative(base, p)];
  }).sort();
}

function runPod(check, what, argv, env) {
  console.log(`     ${what}: qeff ${argv.slice(1).join(' ')}`);
  const r = spawnSync(qeff, argv.slice(1), { env: { ...process.env, ...env }, encoding: 'utf8', timeout: 600000 });
  check(r.status === 0, `${what} exits 0`, `${r.status ?? r.signal}\n${r.stdout}${r.stderr}`);
  return r;
}

runChecks('the Job, the merge and the server run as their pods would', async (check, ctx) => {
  const deployDir = path.join(repo, 'deploy');
  const { errors, facts } = checkDeploy(deployDir);
  if (!check(errors.length === 0, 'the manifests pass deploy/manifests', errors.join('\n     '))) return;
  const objs = render(path.join(deployDir, 'serve')).map((e) => e.obj);
  const [job] = readYaml(path.join(deployDir, 'compile-job.yaml')).filter((o) => o.kind === 'Job');
  const [merge] = readYaml(path.join(deployDir, 'summarize-job.yaml')).filter((o) => o.kind === 'Job');
  const root = ctx.root;
  {
    // 1. The whole card file, as qeff reads it.
    const whole = path.join(root, 'models.json');
    fs.writeFileSync(whole, facts.serve.models);
    const checked = spawnSync(qeff, ['models', 'check', whole], { encoding: 'utf8' });
    check(checked.status === 0, `qeff models check accepts the ConfigMap's ${facts.job.cards} cards`,
          checked.stdout + checked.stderr);

    // 2. The Job's pods.
    const cluster = new LocalCluster(root, repo, objs);
    const cards = bundledCards(facts.serve.models, repo).cards;
    const jobPod = job.spec.template.spec;
    let out, cache;
    cards.forEach((card, i) => {
      const { argv, env, local } = cluster.prepare(`compile-${i}`, jobPod, jobPod.containers[0], i);
      out = local('/artifacts');
      cache = env.QEFF_CACHE_DIR;
      check(argv.includes(String(i)) && !argv.some((a) => a.includes('$(')),
            `pod ${i}: $(JOB_COMPLETION_INDEX) expands to ${i}`, JSON.stringify(argv));
      runPod(check, `pod ${i} (card '${card.name}')`, argv, env);
      const manifest = path.join(out, card.name, 'qeff-manifest.json');
      check(fs.existsSync(manifest), `/artifacts/${card.name}/qeff-manifest.json exists`);
      check(fs.existsSync(path.join(out, '.summaries', `${card.name}.json`)), `/artifacts/.summaries/${card.name}.json exists`);
      const onnx = path.join(out, card.name, 'model.onnx');
      check(fs.existsSync(onnx) && fs.statSync(onnx).nlink >= 2,
            `/artifacts/${card.name}/model.onnx is hard-linked from the cache (links: ${fs.existsSync(onnx) ? fs.statSync(onnx).nlink : 'none'})`);
    });

    // 3. The merge.
    const mergePod = merge.spec.template.spec;
    const m = cluster.prepare('summarize', mergePod, mergePod.containers[0]);
    runPod(check, 'the summarize pod', m.argv, m.env);
    const summaryFile = path.join(out, 'summary.json');
    const summary = fs.existsSync(summaryFile) ? JSON.parse(fs.readFileSync(summaryFile, 'utf8')) : { cards: [] };
    for (const card of cards) {
      const s = summary.cards.find((x) => x.name === card.name);
      check(s?.status === 'ok', `summary.json: card '${card.name}' ok`, JSON.stringify(s || summary));
    }

    const before = listFiles(cache);
    check(before.length > 0, `the Job filled the cache (${before.length} files)`);
    if (!mode) return;

    // 4. The server on the same volumes: a cache hit for every card.
    const dep = objs.find((o) => o.kind === 'Deployment' && o.metadata.name === 'qeff-serve');
    const servePod = dep.spec.template.spec;
    const s = cluster.prepare('serve', servePod, servePod.containers[0]);
    check(fs.realpathSync(s.env.QEFF_CACHE_DIR) === fs.realpathSync(cache),
          "the serving pod's cache mount is the Job's /artifacts/.cache");
    const server = ctx.server = await startServe(qeff, setOption(setOption(s.argv.slice(1), '--host', '127.0.0.1'), '--port', '0'), s.env);
    const ready = await get(server.url + facts.serve.probes.readinessProbe);
    check(ready.status === 200, `the server is ready (${ready.status})`, ready.body);
    const after = listFiles(s.env.QEFF_CACHE_DIR);
    check(JSON.stringify(after) === JSON.stringify(before), 'the server built nothing: every card was a cache hit',
          `new: ${after.filter((f) => !before.includes(f)).join(', ')}`);
    await stopChecked(ctx, check);
  }
});
