#!/usr/bin/env node
// ctest deploy/dockerfile: what can be checked of deploy/Dockerfile without a Docker
// daemon.
//   1. lint: dockerfile-utils (the Dockerfile validator of VS Code's Docker support)
//      reports nothing;
//   2. stages: a build stage on Debian 12 that runs scripts/install-deps.sh and
//      scripts/build.sh, then a bookworm-slim runtime stage that copies the binary
//      the build stage made, installs Debian packages with --no-install-recommends,
//      runs as the non-root user the Kubernetes manifests expect, EXPOSEs the port
//      they probe, and whose ENTRYPOINT + CMD is their `qeff serve` command line;
//   3. packages: every package the runtime stage installs exists in Debian 12
//      (apt-cache), and owns a library `ldd qeff` lists (none is superfluous);
//   4. libraries: every shared library `ldd qeff` lists belongs (dpkg -S) to a
//      package the runtime stage installs, to one of their dependencies (apt-cache
//      depends --recurse) or to the base image (Priority: required).
//
//   node test/deploy/check-dockerfile.js <repo_root> <qeff_binary>
'use strict';
const fs = require('fs');
const path = require('path');
const { execFileSync, spawnSync } = require('child_process');
const { need } = require('./manifests.js');
const { checkDeploy } = require('./deploy-facts.js');
const { DockerfileParser } = need('dockerfile-ast');
const dockerfileUtils = need('dockerfile-utils');

const [repo, qeff] = process.argv.slice(2);
if (!repo || !qeff) {
  console.error('usage: check-dockerfile.js <repo_root> <qeff_binary>');
  process.exit(2);
}
const file = path.join(repo, 'deploy', 'Dockerfile');
const text = fs.readFileSync(file, 'utf8');
let passed = 0, failed = 0;
const check = (ok, what, detail = '') => {
  if (ok) passed++; else failed++;
  console.log(`${ok ? 'ok  ' : 'FAIL'} ${what}${ok || !detail ? '' : `\n     ${detail}`}`);
  return ok;
};
const run = (cmd, args) => spawnSync(cmd, args, { encoding: 'utf8', maxBuffer: 64 << 20 });

// 1. Lint.
const diags = dockerfileUtils.validate(text);
check(diags.length === 0, 'dockerfile-utils reports nothing',
      diags.map((d) => `line ${d.range.start.line + 1}: ${d.message}`).join('\n     '));

// 2. Stages.
const df = DockerfileParser.parse(text);
const args = Object.fromEntries(df.getInitialARGs().map((a) => [a.getProperty().getName(), a.getProperty().getValue()]));
const expand = (s) => s.replace(/\$\{(\w+)\}|\$(\w+)/g, (_, a, b) => args[a || b] ?? `<unset ${a || b}>`);
const stages = [];
for (const ins of df.getInstructions()) {
  if (ins.getKeyword() === 'FROM') stages.push({ from: ins, name: ins.getBuildStage(), ins: [] });
  else if (stages.length) stages[stages.length - 1].ins.push(ins);
}
check(stages.length === 2 && stages[0].name === 'build' && stages[1].name === 'runtime',
      'two stages: build, then runtime', `found ${stages.map((s) => s.name).join(', ')}`);
const [build, runtime] = stages;
const image = (s) => expand(s.from.getImage());
check(/^debian:bookworm(-slim)?(@sha256:[0-9a-f]{64})?$/.test(image(build)), `build stage on Debian 12 (${image(build)})`);
check(/^debian:bookworm-slim(@sha256:[0-9a-f]{64})?$/.test(image(runtime)), `runtime stage on debian:bookworm-slim (${image(runtime)})`);
const runs = (s) => s.ins.filter((i) => i.getKeyword() === 'RUN').map((i) => i.getArgumentsContent());
const of = (s, kw) => s.ins.filter((i) => i.getKeyword() === kw);
check(runs(build).some((r) => /(^|&&\s*)\.\/scripts\/install-deps\.sh(\s|$)/.test(r)), 'build stage runs scripts/install-deps.sh');
const buildRun = runs(build).find((r) => /\.\/scripts\/build\.sh\s+qeff\b/.test(r));
check(!!buildRun, 'build stage runs scripts/build.sh qeff (the Release build)');
const buildDir = /QEFF_BUILD_DIR=(\S+)/.exec(buildRun || '')?.[1];
for (const copy of of(build, 'COPY')) {
  const srcs = copy.getArguments().map((a) => a.getValue()).slice(0, -1).filter((s) => !s.startsWith('--'));
  for (const src of srcs)
    check(src === '.' || fs.existsSync(path.join(repo, src)), `build stage COPY source ${src} exists in the repository`);
}
const fromBuild = of(runtime, 'COPY').filter((c) => c.getFromFlag()?.getValue() === 'build');
const copyArgs = fromBuild.map((c) => c.getArguments().map((a) => a.getValue()).filter((s) => !s.startsWith('--')));
check(copyArgs.length === 1 && buildDir && copyArgs[0][0] === `${buildDir}/bin/qeff` && copyArgs[0][1] === '/usr/local/bin/qeff',
      `runtime stage copies only the build's ${buildDir}/bin/qeff to /usr/local/bin/qeff`, JSON.stringify(copyArgs));

// The runtime stage's apt-get install line.
const installRun = runs(runtime).filter((r) => /apt-get install/.test(r));
check(installRun.length === 1, 'runtime stage installs packages in one RUN');
const words = (installRun[0] || '').split(/\s+/);
const at = words.indexOf('install');
const tail = words.slice(at + 1);
const end = tail.indexOf('&&');
const installWords = end < 0 ? tail : tail.slice(0, end);
const packages = installWords.filter((w) => !w.startsWith('-') && w);
check(installWords.includes('--no-install-recommends') && installWords.includes('-y'),
      'apt-get install -y --no-install-recommends');
check(/rm -rf \/var\/lib\/apt\/lists/.test(installRun[0] || ''), 'the apt lists are removed in the same layer');
check(packages.length > 0, `runtime packages: ${packages.join(' ')}`);

// User, port, entry point: as the Kubernetes manifests expect them.
const deploy = checkDeploy(path.join(repo, 'deploy'));
check(deploy.errors.length === 0, 'the Kubernetes manifests pass their own checks (deploy/manifests)', deploy.errors.join('\n     '));
const user = of(runtime, 'USER').map((u) => u.getArgumentsContent());
const [uid, gid] = (user[user.length - 1] || '').split(':').map(Number);
check(uid > 0 && gid > 0, `runtime stage runs as a numeric non-root USER (${user.join(', ')})`);
check(runs(runtime).some((r) => new RegExp(`useradd\\b.*--uid ${uid}\\b`).test(r)), `the image creates user ${uid}`);
const tree = require('./manifests.js').loadTree(path.join(repo, 'deploy'));
for (const { obj } of tree.objects) {
  const pod = obj.spec?.template?.spec;
  if (!pod) continue;
  check(pod.securityContext?.runAsUser === uid && pod.securityContext?.runAsGroup === gid,
        `${obj.kind}/${obj.metadata.name} runs as the image's user ${uid}:${gid}`);
}
const serve = deploy.facts.serve;
const exposed = of(runtime, 'EXPOSE').map((e) => e.getArgumentsContent().trim());
check(serve && exposed.length === 1 && exposed[0] === String(serve.port),
      `EXPOSE ${exposed.join(' ')} is the manifests' containerPort ${serve?.port}`);
const jsonOf = (kw) => of(runtime, kw).map((i) => i.getJSONStrings().map((s) => s.getJSONValue()));
const [entry] = jsonOf('ENTRYPOINT');
const [cmd] = jsonOf('CMD');
check(JSON.stringify(entry) === '["qeff","serve"]', `ENTRYPOINT ["qeff", "serve"] in exec form (${JSON.stringify(entry)})`);
check(serve && JSON.stringify([...entry, ...(cmd || [])]) === JSON.stringify(serve.argv),
      'ENTRYPOINT + CMD is the Deployment\'s command line', `${JSON.stringify([...entry, ...(cmd || [])])} vs ${JSON.stringify(serve?.argv)}`);
const cacheEnv = of(runtime, 'ENV').flatMap((e) => e.getProperties()).find((p) => p.getName() === 'QEFF_CACHE_DIR');
check(serve && cacheEnv?.getValue() === serve.cacheMount?.mount.mountPath,
      `ENV QEFF_CACHE_DIR is the manifests' cache mount (${cacheEnv?.getValue()})`);

// 3. The packages exist in Debian 12 (one apt-cache call each for all of them: apt-cache
//    reads its whole cache per call).
const osRelease = fs.readFileSync('/etc/os-release', 'utf8');
const bookwormHost = /^VERSION_CODENAME=bookworm$/m.test(osRelease);
const shown = new Set(run('apt-cache', ['show', '--no-all-versions', ...packages]).stdout
  .split('\n').filter((l) => l.startsWith('Package: ')).map((l) => l.slice(9).trim()));
const policies = new Map(run('apt-cache', ['policy', ...packages]).stdout
  .split(/^(?=\S+:$)/m).map((b) => [b.slice(0, b.indexOf(':')), b]));
for (const p of packages) {
  const policy = policies.get(p) || '';
  const installed = /Installed: (?!\(none\))/.test(policy);
  check(shown.has(p) && (/ bookworm(-updates|-security)?\/main /.test(policy) || (installed && bookwormHost)),
        `${p} is a Debian 12 package`, policy.trim() || 'apt-cache knows no such package (apt-get update?)');
}

// 4. Every library ldd lists comes from those packages, their dependencies or the base.
const ldd = run('ldd', [qeff]);
check(ldd.status === 0, `ldd ${qeff}`, ldd.stderr);
const libs = [];
for (const line of ldd.stdout.split('\n')) {
  let m;
  if ((m = /^\s*(\S+) => not found/.exec(line))) check(false, `${m[1]} is found`, line.trim());
  else if ((m = /^\s*(\S+) => (\/\S+) \(/.exec(line))) libs.push({ name: m[1], file: m[2] });
  else if ((m = /^\s*(\/\S+) \(/.exec(line))) libs.push({ name: path.basename(m[1]), file: m[1] });
}
const aliases = (f) => {
  const out = new Set([f]);
  try { out.add(fs.realpathSync(f)); } catch { /* ldd resolved it */ }
  for (const g of [...out]) {
    if (g.startsWith('/usr/')) out.add(g.slice(4));
    else out.add(`/usr${g}`);
  }
  return [...out];
};
const candidates = [...new Set(libs.flatMap((l) => aliases(l.file)))];
const owners = new Map();
const dpkgS = run('dpkg', ['-S', ...candidates]);
for (const line of dpkgS.stdout.split('\n')) {
  const m = /^(.+?): (\/.+)$/.exec(line);
  if (!m || m[1].startsWith('diversion by')) continue;
  const pkgs = m[1].split(', ').map((p) => p.replace(/:.*$/, ''));
  owners.set(m[2], [...(owners.get(m[2]) || []), ...pkgs]);
}
const closureOut = execFileSync('apt-cache', ['depends', '--recurse', '--no-recommends', '--no-suggests',
  '--no-conflicts', '--no-breaks', '--no-replaces', '--no-enhances', ...packages], { encoding: 'utf8' });
const closure = new Set(closureOut.split('\n').filter((l) => l && !/^[\s<]/.test(l)).map((l) => l.replace(/:.*$/, '')));
const allOwners = [...new Set([...owners.values()].flat())];
const priorities = new Map(run('dpkg-query', ['-W', '-f=${Package} ${Priority}\\n', ...allOwners]).stdout
  .split('\n').filter(Boolean).map((l) => l.split(' ')));
const priority = (p) => priorities.get(p);
const used = new Set();
const missing = new Set();
for (const lib of libs) {
  const own = [...new Set(aliases(lib.file).flatMap((f) => owners.get(f) || []))];
  const listed = own.find((p) => packages.includes(p));
  const dep = own.find((p) => closure.has(p));
  const base = own.find((p) => priority(p) === 'required');
  if (listed) used.add(listed);
  const how = listed ? `installed (${listed})` : dep ? `dependency (${dep})` : base ? `base image (${base})` : null;
  if (!how && own.length) missing.add(own[0]);
  check(!!how, `${lib.name}: ${how || 'no runtime package provides it'}`, `owned by ${own.join(', ') || 'no package'} (${lib.file})`);
}
// The fewest packages to add: those no other missing package depends on.
if (missing.size) {
  const deps = (p) => new Set(execFileSync('apt-cache', ['depends', '--recurse', '--no-recommends', '--no-suggests',
    '--no-conflicts', '--no-breaks', '--no-replaces', '--no-enhances', p], { encoding: 'utf8' })
    .split('\n').filter((l) => l && !/^[\s<]/.test(l) && l !== p).map((l) => l.replace(/:.*$/, '')));
  const closures = new Map([...missing].map((p) => [p, deps(p)]));
  const add = [...missing].filter((p) => ![...closures].some(([q, c]) => q !== p && c.has(p)));
  console.log(`FIX  add to the runtime stage's apt-get install list in deploy/Dockerfile: ${add.join(' ')}`);
}
for (const p of packages)
  check(used.has(p), `${p} provides a library qeff needs`, `no library in ldd's list belongs to ${p}: drop it`);

console.log(`${passed} passed, ${failed} failed`);
process.exit(failed ? 1 : 0);
