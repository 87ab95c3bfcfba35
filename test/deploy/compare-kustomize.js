#!/usr/bin/env node
// ctest deploy/kustomize (registered where kubectl is installed): every kustomization
// under deploy/ rendered by `kubectl kustomize` equals what test/deploy's renderer
// (manifests.js), which the schema test validates, makes of it: same objects, same
// content (kustomize's output order aside).
//   node test/deploy/compare-kustomize.js <kubectl> <deploy_dir>
'use strict';
const path = require('path');
const { execFileSync } = require('child_process');
const { isDeepStrictEqual } = require('util');
const { loadTree, need } = require('./manifests.js');
const YAML = need('yaml');

const [kubectl, deployDir] = process.argv.slice(2);
if (!kubectl || !deployDir) {
  console.error('usage: compare-kustomize.js <kubectl> <deploy_dir>');
  process.exit(2);
}
const key = (o) => `${o.apiVersion} ${o.kind}/${o.metadata?.name}`;
let passed = 0, failed = 0;
for (const [dir, objs] of loadTree(deployDir).rendered) {
  const label = path.relative(process.cwd(), dir);
  const text = execFileSync(kubectl, ['kustomize', dir], { encoding: 'utf8' });
  const theirs = new Map(YAML.parseAllDocuments(text).map((d) => d.toJS()).map((o) => [key(o), o]));
  const ours = new Map(objs.map(({ obj }) => [key(obj), obj]));
  const problems = [];
  for (const k of new Set([...theirs.keys(), ...ours.keys()])) {
    if (!ours.has(k)) problems.push(`${k}: only in kubectl kustomize's output`);
    else if (!theirs.has(k)) problems.push(`${k}: only in test/deploy's rendering`);
    else if (!isDeepStrictEqual(ours.get(k), theirs.get(k)))
      problems.push(`${k}: differs:\n  ours:   ${JSON.stringify(ours.get(k))}\n  theirs: ${JSON.stringify(theirs.get(k))}`);
  }
  if (problems.length) failed++; else passed++;
  console.log(`${problems.length ? 'FAIL' : 'ok  '} ${label}: ${ours.size} objects` +
              (problems.length ? `\n     ${problems.join('\n     ')}` : ', identical to kubectl kustomize'));
}
console.log(`${passed} passed, ${failed} failed`);
process.exit(failed || !passed ? 1 : 0);
