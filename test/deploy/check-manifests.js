#!/usr/bin/env node
// ctest deploy/manifests: every Kubernetes manifest under deploy/ (as written and as
// each kustomization renders it) against the Kubernetes OpenAPI schemas (npm
// kubernetes-models), and the consistency checks of deploy-facts.js.
//
//   node test/deploy/check-manifests.js <deploy_dir>              check; print the facts
//   node test/deploy/check-manifests.js <deploy_dir> --negative   broken copies must fail
//
// --negative copies deploy/ to a temporary directory once per mutation (a wrong type,
// a container without a name, a probe on the wrong path, ...), and asserts that the
// same check rejects each copy with a message naming the problem, and accepts the
// unmodified copy, so that the schema test cannot pass by checking nothing.
'use strict';
const fs = require('fs');
const os = require('os');
const path = require('path');
const { checkDeploy } = require('./deploy-facts.js');

const MUTATIONS = [
  { what: 'containerPort as a string', file: 'serve/serve-deployment.yaml',
    from: 'containerPort: 8000', to: 'containerPort: "8000"',
    expect: /Deployment\/qeff-serve: \/spec\/template\/spec\/containers\/0\/ports\/0\/containerPort must be integer/ },
  { what: 'container without a name', file: 'serve/serve-deployment.yaml',
    from: /- name: qeff\n(\s+)image:/, to: '- image:',
    expect: /Deployment\/qeff-serve: \/spec\/template\/spec\/containers\/0 must have required property name/ },
  { what: 'replicas as a word', file: 'serve/serve-deployment.yaml',
    from: 'replicas: 1', to: 'replicas: one',
    expect: /\/spec\/replicas must be integer/ },
  { what: 'unknown apiVersion', file: 'serve/serve-service.yaml',
    from: 'apiVersion: v1', to: 'apiVersion: v2',
    expect: /apiVersion 'v2' is not a Kubernetes API group\/version/ },
  { what: 'Job without a container name', file: 'compile-job.yaml',
    from: /- name: compile\n(\s+)image:/, to: '- image:',
    expect: /Job\/qeff-compile: \/spec\/template\/spec\/containers\/0 must have required property name/ },
  { what: 'readiness probe on the wrong path', file: 'serve/serve-deployment.yaml',
    from: 'path: /v2/health/ready', to: 'path: /v2/health/readyz',
    expect: /readinessProbe path is \/v2\/health\/readyz, expected \/v2\/health\/ready/ },
  { what: 'probe port not the server port', file: 'serve/serve-deployment.yaml',
    from: /port: http\n(\s+)periodSeconds: 10\n(\s+)timeoutSeconds/, to: 'port: 8080\n$1periodSeconds: 10\n$2timeoutSeconds',
    expect: /livenessProbe port 8080 is not the server's port 8000/ },
  { what: '--port not the containerPort', file: 'serve/serve-deployment.yaml',
    from: '- "8000"', to: '- "8001"',
    expect: /containerPort 8000 is not --port 8001/ },
  { what: 'completions not the number of cards', file: 'compile-job.yaml',
    from: 'completions: 2', to: 'completions: 3',
    expect: /completions is 3, but \/cards\/cards.json has 2 cards/ },
  { what: 'Job not Indexed', file: 'compile-job.yaml',
    from: 'completionMode: Indexed', to: 'completionMode: NonIndexed',
    expect: /completionMode must be Indexed/ },
  { what: 'Job reads another card file', file: 'compile-job.yaml',
    from: 'path: cards.json', to: 'path: other.json',
    expect: /\/cards\/cards.json: ConfigMap qeff-models has no key for it/ },
  { what: 'Job cache not the server cache', file: 'compile-job.yaml',
    from: 'value: /artifacts/.cache', to: 'value: /artifacts/cache2',
    expect: /QEFF_CACHE_DIR is not on the serving pods' cache volume/ },
  { what: 'AI 100 patch on a missing container', file: 'serve-qaic/serve-qaic-patch.yaml',
    from: 'containers/0/args/-', to: 'containers/1/args/-',
    expect: /serve-qaic-patch.yaml\): OPERATION_PATH_CANNOT_ADD/ },
  { what: 'AI 100 variant without the device resource', file: 'serve-qaic/serve-qaic-patch.yaml',
    from: /- op: add\n\s+path: \/spec\/template\/spec\/containers\/0\/resources\/limits\/qualcomm.com~1qaic\n\s+value: "1"\n/, to: '',
    expect: /the AI 100 variant must limit qualcomm.com\/qaic/ },
  { what: 'a kustomize field the renderer does not know', file: 'serve/kustomization.yaml',
    from: 'resources:', to: 'namePrefix: x-\nresources:',
    expect: /field 'namePrefix' is not supported/ },
  { what: 'a card outside the mounted volumes', file: 'serve/models-configmap.yaml',
    from: '"/models/stories260K-hf"', to: '"/elsewhere/stories260K-hf"',
    expect: /models\[0\] 'stories260k': \/elsewhere\/stories260K-hf is on no PersistentVolumeClaim mount/ },
];

function copyTree(from, to) {
  fs.mkdirSync(to, { recursive: true });
  for (const e of fs.readdirSync(from, { withFileTypes: true })) {
    const [s, d] = [path.join(from, e.name), path.join(to, e.name)];
    if (e.isDirectory()) copyTree(s, d);
    else fs.copyFileSync(s, d);
  }
}

function negative(deployDir) {
  const tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'qeff-deploy-neg-'));
  let passed = 0, failed = 0;
  const report = (ok, what, detail) => {
    if (ok) passed++; else failed++;
    console.log(`${ok ? 'ok  ' : 'FAIL'} ${what}${ok ? '' : `\n     ${detail}`}`);
  };
  try {
    const clean = path.join(tmp, 'clean');
    copyTree(deployDir, clean);
    const base = checkDeploy(clean);
    report(base.errors.length === 0, 'the unmodified copy passes', base.errors.join('\n     '));
    MUTATIONS.forEach((m, i) => {
      const dir = path.join(tmp, `m${i}`);
      copyTree(deployDir, dir);
      const file = path.join(dir, m.file);
      const text = fs.readFileSync(file, 'utf8');
      const changed = text.replace(m.from, m.to);
      if (changed === text) { report(false, m.what, `mutation does not apply: ${m.from} not in ${m.file}`); return; }
      fs.writeFileSync(file, changed);
      const { errors } = checkDeploy(dir);
      const hit = errors.some((e) => m.expect.test(e));
      report(hit, `${m.what} is rejected`,
             errors.length ? `expected ${m.expect}, got:\n     ${errors.join('\n     ')}` : 'accepted');
    });
  } finally {
    fs.rmSync(tmp, { recursive: true, force: true });
  }
  console.log(`${passed} passed, ${failed} failed`);
  return failed === 0;
}

function main() {
  const [deployDir, mode] = process.argv.slice(2);
  if (!deployDir || (mode && mode !== '--negative')) {
    console.error('usage: check-manifests.js <deploy_dir> [--negative]');
    process.exit(2);
  }
  if (mode === '--negative') process.exit(negative(deployDir) ? 0 : 1);
  const { errors, facts } = checkDeploy(deployDir);
  if (errors.length) {
    for (const e of errors) console.error(`FAIL ${e}`);
    console.error(`${errors.length} problem(s) in ${deployDir}`);
    process.exit(1);
  }
  const brief = { serve: facts.serve.argv, port: facts.serve.port, probes: facts.serve.probes,
                  cards: facts.serve.cards.map((c) => c.name), qaic: facts.qaicArgv,
                  job: facts.job.argv, completions: facts.job.cards, merge: facts.summarizeArgv };
  for (const [k, v] of Object.entries(brief)) console.log(`${k}: ${JSON.stringify(v)}`);
  console.log(`ok: every manifest under ${deployDir} passes the Kubernetes schemas and the consistency checks`);
}

main();
