#!/usr/bin/env node
// ctest cards/schema: docs/model-cards.schema.json, qeff's card parser and
// `qeff compile --help` agree.
//   1. the schema's option keys are exactly `qeff compile`'s options with
//      underscores (minus those that cannot be per card: -o, --emit, --models,
//      -j, --card-index, --cache-dir, --depfile);
//   2. for a set of card files (the deploy ConfigMap's, a sample value of every
//      option, and broken ones), the schema (npm ajv, draft 2020-12) accepts
//      exactly what `qeff models check` accepts.
//
//   node schema.js <qeff> <repo_root> <work_dir>
'use strict';
const fs = require('fs');
const path = require('path');
const { spawnSync } = require('child_process');

const [qeff, repo, work] = process.argv.slice(2);
const oracle = path.join(repo, 'test', 'oracle', 'node_modules');
const Ajv2020 = require(path.join(oracle, 'ajv', 'dist', '2020')).default;
const YAML = require(path.join(oracle, 'yaml'));
fs.rmSync(work, { recursive: true, force: true });
fs.mkdirSync(work, { recursive: true });

let passed = 0, failed = 0;
function check(ok, what, detail = '') {
  if (ok) passed++; else failed++;
  console.log(`${ok ? 'ok  ' : 'FAIL'} ${what}${ok || !detail ? '' : `\n     ${detail}`}`);
}

const schema = JSON.parse(fs.readFileSync(path.join(repo, 'docs', 'model-cards.schema.json'), 'utf8'));
const validate = new Ajv2020({ allErrors: true, strict: false }).compile(schema);
const keys = Object.keys(schema.$defs.options.properties).sort();

// 1. The compile options.
const help = spawnSync(qeff, ['compile', '--help'], { encoding: 'utf8' });
// The compile command's own options: after USAGE, before the generic ones.
const text = help.stdout + help.stderr;
const section = text.slice(Math.max(0, text.indexOf('USAGE:')), text.includes('Generic Options:') ? text.indexOf('Generic Options:') : undefined);
const flags = [...section.matchAll(/^\s{2,}(-{1,2})([a-z0-9][a-z0-9-]*)/gm)].map((m) => m[2]);
const notCard = new Set(['o', 'emit', 'models', 'j', 'card-index', 'cache-dir', 'depfile', 'help', 'help-list', 'version', 'report-mx']);
const fromHelp = [...new Set(flags.filter((f) => !notCard.has(f)).map((f) => f.replace(/-/g, '_')))].sort();
check(JSON.stringify(fromHelp) === JSON.stringify(keys),
      `the schema's option keys are qeff compile's options (${keys.length})`,
      `help: ${fromHelp.join(' ')}\n     schema: ${keys.join(' ')}`);

// 2. Verdicts.
const sample = {
  ctx_len: 256, prefill_seq_len: 64, batch_size: 2, full_batch_size: 4, num_cores: 14, num_devices: 2,
  kv_window: 'rolling', outline_layers: 'off', mxfp6: true, mxint8_kv: true, legacy_specializations: true,
  weights_dtype: 'f16', fp32_scopes: ['model.layers.0.mlp'], fp32_scopes_file: 'scopes.txt', calibrate: 4,
  qaic_compile: '/opt/qti-aic/exec/qaic-compile', aic_hw_version: '2.0', qaic_arg: ['-mos=1', '-ols=2'],
  num_speculative_tokens: [3, 7], on_device_sampling: true, max_top_k_ids: 64,
};
const configMap = YAML.parseAllDocuments(fs.readFileSync(path.join(repo, 'deploy', 'serve', 'models-configmap.yaml'), 'utf8'))
  .map((d) => d.toJS()).find((o) => o && o.kind === 'ConfigMap');
const files = [
  ['the deploy ConfigMap', JSON.parse(configMap.data['models.json'])],
  ['a card with $schema and no defaults', { $schema: 'docs/model-cards.schema.json', models: [{ name: 'a', model: 'm' }] }],
  ['calibrate true, outline_layers false, fp32_scopes as a string',
   { models: [{ name: 'a', model: 'm', calibrate: true, fp32_scopes: 'x,y' }, { name: 'b', model: 'm', outline_layers: false }] }],
  ['defaults full_batch_size, a card batch_size', { defaults: { full_batch_size: 4 }, models: [{ name: 'a', model: 'm', batch_size: 2 }] }],
  ['an unknown key', { models: [{ name: 'a', model: 'm', ctx_lenn: 1 }] }],
  ['an unknown key in defaults', { defaults: { mxfp7: true }, models: [{ name: 'a', model: 'm' }] }],
  ['an unknown top-level key', { models: [{ name: 'a', model: 'm' }], extra: 1 }],
  ['a string ctx_len', { models: [{ name: 'a', model: 'm', ctx_len: '1' }] }],
  ['a fractional ctx_len', { models: [{ name: 'a', model: 'm', ctx_len: 1.5 }] }],
  ['num_cores 65', { models: [{ name: 'a', model: 'm', num_cores: 65 }] }],
  ['kv_window sliding', { models: [{ name: 'a', model: 'm', kv_window: 'sliding' }] }],
  ['batch_size with full_batch_size', { models: [{ name: 'a', model: 'm', batch_size: 1, full_batch_size: 2 }] }],
  ['a name with a slash', { models: [{ name: 'a/b', model: 'm' }] }],
  ['a name starting with a dot', { models: [{ name: '.a', model: 'm' }] }],
  ['no model', { models: [{ name: 'a' }] }],
  ['an empty list', { models: [] }],
  ['calibrate 0', { models: [{ name: 'a', model: 'm', calibrate: 0 }] }],
  ['fp32_scopes of numbers', { models: [{ name: 'a', model: 'm', fp32_scopes: [1] }] }],
  ['num_speculative_tokens 4', { models: [{ name: 'a', model: 'm', num_speculative_tokens: 4 }] }],
  ['num_speculative_tokens 0', { models: [{ name: 'a', model: 'm', num_speculative_tokens: 0 }] }],
  ['num_speculative_tokens repeated', { models: [{ name: 'a', model: 'm', num_speculative_tokens: [2, 2] }] }],
  ['num_speculative_tokens empty', { models: [{ name: 'a', model: 'm', num_speculative_tokens: [] }] }],
];
for (const key of keys) files.push([`${key}: ${JSON.stringify(sample[key])}`, { models: [{ name: 'a', model: 'm', [key]: sample[key] }] }]);
files.forEach(([what, content], i) => {
  const file = path.join(work, `cards-${i}.json`);
  fs.writeFileSync(file, JSON.stringify(content));
  const byQeff = spawnSync(qeff, ['models', 'check', file], { encoding: 'utf8' });
  const bySchema = validate(content);
  check((byQeff.status === 0) === bySchema && (byQeff.status === 0 || byQeff.status === 1),
        `${what}: schema ${bySchema ? 'accepts' : 'refuses'}, qeff ${byQeff.status === 0 ? 'accepts' : 'refuses'}`,
        `${byQeff.stderr}${JSON.stringify(validate.errors)}`);
});
console.log(`${passed} passed, ${failed} failed`);
process.exit(failed ? 1 : 0);
