#!/usr/bin/env node
// ctest deploy/serve-crosscheck: the serving Deployment against the real server.
//   1. `qeff serve --help`: its default port is the manifests' containerPort (and so
//      the image's EXPOSE, which deploy/dockerfile ties to it), and every option the
//      plain and the AI 100 command lines use exists;
//   2. the Deployment's container run as its pod would run it (local-pod.js: the
//      ConfigMap laid out as the kubelet does, with its ..data symlinks, the
//      checkpoint volume holding the bundled models, the cache volume), except
//      --host 127.0.0.1 and --port 0 (a free port);
//   3. every probe path of the manifest answers 200, /v1/models lists the cards,
//      and each card answers a completion;
//   4. SIGTERM: exit status 0.
//
//   node test/deploy/check-serve.js <qeff_binary> <repo_root>
'use strict';
const fs = require('fs');
const path = require('path');
const { spawnSync } = require('child_process');
const { checkDeploy } = require('./deploy-facts.js');
const { render } = require('./manifests.js');
const { LocalCluster, bundledCards, setOption, startServe, get, post, runChecks, stopChecked } = require('./local-pod.js');

const [qeff, repo] = process.argv.slice(2);
if (!qeff || !repo) {
  console.error('usage: check-serve.js <qeff_binary> <repo_root>');
  process.exit(2);
}
runChecks('qeff serve runs as the Deployment runs it', async (check, ctx) => {
  const deployDir = path.join(repo, 'deploy');
  const { errors, facts } = checkDeploy(deployDir);
  if (!check(errors.length === 0, 'the manifests pass deploy/manifests', errors.join('\n     '))) return;

  const help = spawnSync(qeff, ['serve', '--help'], { encoding: 'utf8' });
  const text = help.stdout + help.stderr;
  const port = /--port=<int>\s+- [^\n]*default (\d+)/.exec(text)?.[1];
  check(port !== undefined && Number(port) === facts.serve.port,
        `qeff serve's default port ${port} is the manifests' containerPort ${facts.serve.port}`, text);
  for (const opt of new Set([...facts.serve.argv, ...facts.qaicArgv].filter((a) => a.startsWith('--'))))
      check(new RegExp(`^\\s+${opt}=`, 'm').test(text), `qeff serve --help lists ${opt}`);

  const objs = render(path.join(deployDir, 'serve')).map((e) => e.obj);
  const dep = objs.find((o) => o.kind === 'Deployment' && o.metadata.name === 'qeff-serve');
  const pod = dep.spec.template.spec;
  const c = pod.containers[0];
  {
    const cluster = new LocalCluster(ctx.root, repo, objs);
    const { argv, env, local } = cluster.prepare('serve', pod, c);
    const models = local('/etc/qeff/models.json');
    check(fs.lstatSync(models).isSymbolicLink(), 'the card file is a symlink into ..data, as in a ConfigMap volume');
    const args = setOption(setOption(argv.slice(1), '--host', '127.0.0.1'), '--port', '0');
    console.log(`     qeff ${args.join(' ')}`);
    const server = ctx.server = await startServe(qeff, args, env);
    check(true, `qeff serve with the Deployment's command line listens on ${server.url}`);
    const probes = { ...facts.serve.probes, startupProbe: c.startupProbe?.httpGet?.path };
    for (const [probe, p] of Object.entries(probes)) {
      if (!p) continue;
      const res = await get(server.url + p);
      check(res.status === 200, `${probe} GET ${p}: ${res.status}`, res.body);
    }
    const listed = await get(server.url + '/v1/models');
    const ids = listed.status === 200 ? JSON.parse(listed.body).data.map((m) => m.id).sort() : [];
    const want = bundledCards(facts.serve.models, repo).cards.map((card) => card.name).sort();
    check(JSON.stringify(ids) === JSON.stringify(want), `/v1/models lists the cards ${want.join(', ')}`,
          `${listed.status} ${listed.body}`);
    for (const name of want) {
      const res = await post(server.url + '/v1/completions', { model: name, prompt: 'Once upon a time', max_tokens: 2 });
      check(res.status === 200, `card '${name}' answers a completion`, `${res.status} ${res.body}`);
    }
    await stopChecked(ctx, check);
  }
});
