#!/usr/bin/env bash
# Installs the ONNX Runtime oracle used by the tests (test/oracle/): onnxruntime-node, at
# the exact version pinned in test/oracle/package.json and package-lock.json, into
# test/oracle/node_modules, with the other test-only npm packages pinned there (the
# deploy checks' Kubernetes schemas, YAML parser and Dockerfile linter: test/deploy; the
# official OpenAI client that drives `qeff serve`: test/serve).
# Test tooling only; qeff itself never links or loads any of them.
#
# Idempotent: does nothing if the pinned version is already installed and loads. Needs
# no network other than the npm registry (and Debian's archive when Node.js is missing):
# install scripts are disabled, because the npm package already carries the CPU build
# of ONNX Runtime for Linux x64 and its postinstall step only fetches optional GPU parts.
# On success prints one line saying where ORT is; on failure says why and exits 1.
#
# Then llama.cpp, the oracle for GGUF imports (test/oracle/llama-cpp): node-llama-cpp
# and its prebuilt Linux x64 CPU binary (@node-llama-cpp/linux-x64), pinned in that
# directory's package.json and package-lock.json, installed with install scripts
# disabled (the postinstall would download or build llama.cpp) and optional packages
# omitted (the CUDA/Vulkan builds). It is checked by loading the binary without ever
# building it (getLlama build "never").
set -euo pipefail

root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
dir="$root/test/oracle"
log="$(mktemp)"
trap 'rm -f "$log"' EXIT

die() {
  echo "setup-oracle: $*" >&2
  if [ -s "$log" ]; then sed 's/^/  | /' "$log" >&2; fi
  exit 1
}

[ -f "$dir/package.json" ] && [ -f "$dir/package-lock.json" ] ||
  die "missing $dir/package.json or package-lock.json"

# 1. Node.js and npm (Debian's packages on a fresh Debian 12).
if ! command -v node >/dev/null 2>&1 || ! command -v npm >/dev/null 2>&1; then
  SUDO=""
  if [ "$(id -u)" -ne 0 ]; then SUDO="sudo"; fi
  export DEBIAN_FRONTEND=noninteractive
  { $SUDO apt-get update -qq && $SUDO apt-get install -y -qq --no-install-recommends nodejs npm; } \
    >"$log" 2>&1 || die "could not install Debian's nodejs and npm packages with apt-get"
  command -v node >/dev/null 2>&1 && command -v npm >/dev/null 2>&1 ||
    die "nodejs/npm installed but node or npm is still not on PATH"
fi
node_major="$(node -p 'process.versions.node.split(".")[0]')"
[ "$node_major" -ge 18 ] || die "Node.js $(node --version) is too old; need 18 or newer"

# 2. Is every package of package.json installed at its pinned version, is there an
#    onnxruntime-node binary for this host, and does ONNX Runtime actually initialise?
#    Prints the binary's directory if so.
check() {
  (cd "$dir" && node -e '
    const fs = require("fs"), path = require("path");
    const deps = require("./package.json").dependencies;
    for (const [name, pinned] of Object.entries(deps)) {
      let have;
      try { have = require(`${name}/package.json`).version; }
      catch { have = JSON.parse(fs.readFileSync(path.join("node_modules", name, "package.json"))).version; }
      if (have !== pinned) throw new Error(`${name}: installed ${have}, pinned ${pinned}`);
    }
    const want = deps["onnxruntime-node"];
    const pkg = path.dirname(require.resolve("onnxruntime-node/package.json"));
    const have = require(path.join(pkg, "package.json")).version;
    if (have !== want) throw new Error(`installed ${have}, pinned ${want}`);
    const bins = fs.readdirSync(path.join(pkg, "bin")).filter(d => d.startsWith("napi-v"))
      .map(d => path.join(pkg, "bin", d, process.platform, process.arch))
      .filter(d => fs.existsSync(path.join(d, "onnxruntime_binding.node")));
    if (!bins.length) throw new Error(`no ONNX Runtime binary for ${process.platform}/${process.arch}`);
    const ort = require("onnxruntime-node");
    require(path.join(pkg, "dist", "binding.js")).initOrt();
    console.log(`onnxruntime-node ${have} (ONNX Runtime CPU, ${bins[0]})`);
  ' 2>&1)
}

# 3. Install exactly what the lock file says, without running install scripts.
if ! where="$(check)"; then
  (cd "$dir" && npm ci --ignore-scripts --no-audit --no-fund --loglevel=error) >"$log" 2>&1 ||
    die "npm ci --ignore-scripts failed in $dir (is the npm registry reachable?)"
  where="$(check)" || { echo "$where" >"$log"; die "onnxruntime-node installed but does not load"; }
fi
echo "setup-oracle: $where"

# 4. llama.cpp (node-llama-cpp's prebuilt CPU binary) for the GGUF agreement test.
llama_dir="$root/test/oracle/llama-cpp"
check_llama() { (cd "$llama_dir" && node check.mjs 2>&1); }
if ! where="$(check_llama)"; then
  (cd "$llama_dir" && npm ci --ignore-scripts --omit=optional --no-audit --no-fund --loglevel=error) \
    >"$log" 2>&1 || die "npm ci --ignore-scripts --omit=optional failed in $llama_dir"
  where="$(check_llama)" || { echo "$where" >"$log"; die "node-llama-cpp installed but its prebuilt binary does not load"; }
fi
echo "setup-oracle: $where"
