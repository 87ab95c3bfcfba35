// Reading, rendering and schema-checking qeff's Kubernetes manifests (deploy/).
//
//   loadTree(deployDir)  every YAML file under deploy/: API objects, kustomizations
//                        and the JSON patches they reference, each classified
//   render(kustDir)      a kustomization rendered: its resources (files and
//                        directories) with its JSON 6902 patches applied
//   validate(obj, where) the object against the Kubernetes OpenAPI schema of its
//                        apiVersion/kind (npm kubernetes-models); [] or messages
//
// The renderer supports exactly what deploy/ uses (resources; patches given by
// path with a target); any other kustomization field is an error, so that it never
// renders something else than kustomize would. test/deploy/CMakeLists.txt also
// compares it with `kubectl kustomize` where kubectl is installed.
//
// The npm packages come from test/oracle/node_modules (scripts/setup-oracle.sh).
'use strict';
const fs = require('fs');
const path = require('path');
const { createRequire } = require('module');

const oracleRequire = createRequire(path.join(__dirname, '..', 'oracle', 'package.json'));
function need(name) {
  try {
    return oracleRequire(name);
  } catch (e) {
    throw new Error(`npm package '${name}' is not installed in test/oracle (run scripts/setup-oracle.sh): ${e.message}`);
  }
}
const YAML = need('yaml');
const jsonpatch = need('fast-json-patch');

const KUSTOMIZATION_FIELDS = new Set(['apiVersion', 'kind', 'resources', 'patches']);

// Parses every document of a YAML file; a syntax error or a duplicate key names the file.
function readYaml(file) {
  const docs = YAML.parseAllDocuments(fs.readFileSync(file, 'utf8'), { uniqueKeys: true });
  const out = [];
  docs.forEach((doc, i) => {
    if (doc.errors.length)
      throw new Error(`${file}: document ${i + 1}: ${doc.errors.map((e) => e.message).join('; ')}`);
    const value = doc.toJS();
    if (value !== null && value !== undefined) out.push(value);
  });
  return out;
}

function listYaml(dir) {
  const out = [];
  for (const entry of fs.readdirSync(dir, { withFileTypes: true })) {
    const p = path.join(dir, entry.name);
    if (entry.isDirectory()) out.push(...listYaml(p));
    else if (/\.ya?ml$/.test(entry.name)) out.push(p);
  }
  return out.sort();
}

const isKustomization = (file) => /^kustomization\.ya?ml$/.test(path.basename(file));

function readKustomization(dir) {
  const file = ['kustomization.yaml', 'kustomization.yml'].map((f) => path.join(dir, f))
    .find((f) => fs.existsSync(f));
  if (!file) throw new Error(`${dir}: no kustomization.yaml`);
  const docs = readYaml(file);
  if (docs.length !== 1) throw new Error(`${file}: expected one document, found ${docs.length}`);
  const k = docs[0];
  if (k.kind !== 'Kustomization') throw new Error(`${file}: kind is '${k.kind}', expected Kustomization`);
  for (const key of Object.keys(k))
    if (!KUSTOMIZATION_FIELDS.has(key))
      throw new Error(`${file}: field '${key}' is not supported by test/deploy's renderer ` +
                      `(supported: ${[...KUSTOMIZATION_FIELDS].join(', ')})`);
  return { file, k };
}

// Renders the kustomization in `dir`: a list of {obj, source} in resource order.
function render(dir, seen = new Set()) {
  dir = path.resolve(dir);
  if (seen.has(dir)) throw new Error(`${dir}: kustomization cycle`);
  seen.add(dir);
  const { file, k } = readKustomization(dir);
  let objects = [];
  for (const res of k.resources || []) {
    const p = path.resolve(dir, res);
    if (!fs.existsSync(p)) throw new Error(`${file}: resource '${res}' does not exist`);
    if (fs.statSync(p).isDirectory()) objects.push(...render(p, seen));
    else objects.push(...readYaml(p).map((obj) => ({ obj, source: p })));
  }
  for (const [i, patch] of (k.patches || []).entries()) {
    const where = `${file}: patches[${i}]`;
    for (const key of Object.keys(patch))
      if (key !== 'path' && key !== 'target')
        throw new Error(`${where}: field '${key}' is not supported by test/deploy's renderer`);
    if (!patch.path || !patch.target) throw new Error(`${where}: needs 'path' and 'target'`);
    const ops = readPatch(path.resolve(dir, patch.path));
    const matches = objects.filter(({ obj }) => targets(patch.target, obj));
    if (!matches.length) throw new Error(`${where}: target ${JSON.stringify(patch.target)} matches no resource`);
    objects = objects.map((entry) => {
      if (!targets(patch.target, entry.obj)) return entry;
      const errors = jsonpatch.validate(ops, entry.obj);
      if (errors) throw new Error(`${where} (${patch.path}): ${errors.name}: ${errors.message.split('\n')[0]} ` +
                                  `at operation ${errors.index} (${JSON.stringify(errors.operation)})`);
      const obj = jsonpatch.applyPatch(entry.obj, ops, true, false).newDocument;
      return { obj, source: `${entry.source} + ${path.resolve(dir, patch.path)}` };
    });
  }
  return objects;
}

function readPatch(file) {
  const docs = readYaml(file);
  if (docs.length !== 1 || !Array.isArray(docs[0]))
    throw new Error(`${file}: a JSON 6902 patch is one YAML list of operations`);
  return docs[0];
}

function targets(target, obj) {
  const [group, version] = obj.apiVersion.includes('/') ? obj.apiVersion.split('/') : ['', obj.apiVersion];
  return (target.kind === undefined || target.kind === obj.kind) &&
         (target.name === undefined || target.name === obj.metadata?.name) &&
         (target.group === undefined || target.group === group) &&
         (target.version === undefined || target.version === version);
}

// Classifies every YAML file under deployDir: kustomizations (with their rendering),
// patches they reference, and files of API objects.
function loadTree(deployDir) {
  deployDir = path.resolve(deployDir);
  const files = listYaml(deployDir);
  const kustomizations = files.filter(isKustomization).map((f) => path.dirname(f));
  const patchFiles = new Set();
  for (const dir of kustomizations)
    for (const p of readKustomization(dir).k.patches || [])
      if (p.path) patchFiles.add(path.resolve(dir, p.path));
  const objects = [];
  for (const file of files) {
    if (isKustomization(file) || patchFiles.has(file)) continue;
    const docs = readYaml(file);
    if (!docs.length) throw new Error(`${file}: no YAML document`);
    docs.forEach((obj, i) => {
      if (!obj || typeof obj !== 'object' || !obj.apiVersion || !obj.kind)
        throw new Error(`${file}: document ${i + 1} is not a Kubernetes object (no apiVersion/kind)`);
      objects.push({ obj, source: file });
    });
  }
  const rendered = new Map(kustomizations.map((dir) => [dir, render(dir)]));
  return { files, objects, rendered };
}

// The kubernetes-models class of obj's apiVersion/kind, or an error message.
function modelClass(obj) {
  let mod;
  try {
    mod = oracleRequire(`kubernetes-models/${obj.apiVersion}`);
  } catch {
    return `apiVersion '${obj.apiVersion}' is not a Kubernetes API group/version kubernetes-models knows`;
  }
  return mod[obj.kind] || `kind '${obj.kind}' does not exist in ${obj.apiVersion}`;
}

function describe(obj) {
  return `${obj.kind || '?'}/${obj.metadata?.name || '?'}`;
}

// Schema-validates obj; returns [] or one message per problem, prefixed with `where`.
function validate(obj, where) {
  const cls = modelClass(obj);
  const prefix = `${where}: ${describe(obj)}`;
  if (typeof cls === 'string') return [`${prefix}: ${cls}`];
  try {
    new cls(JSON.parse(JSON.stringify(obj))).validate();
    return [];
  } catch (e) {
    // One message per ajv error, naming the field by its JSON pointer.
    if (!Array.isArray(e.errors)) return [`${prefix}: ${e.message}`];
    return e.errors.map((err) => `${prefix}: ${err.instancePath || '/'} ${err.message}`);
  }
}

module.exports = { readYaml, loadTree, render, validate, describe, need };
