#!/usr/bin/env bash
# Installs the Debian packages qeff needs to build and test. Idempotent: packages
# already present are skipped, and nothing is fetched from outside Debian's archive.
set -euo pipefail

PACKAGES=(
  cmake ninja-build ccache
  clang-19 lld-19 libclang-rt-19-dev
  llvm-19-dev llvm-19-tools libmlir-19-dev mlir-19-tools
  libonnx-dev libprotobuf-dev protobuf-compiler python3-onnx python3-jinja2
  libabsl-dev libgtest-dev libgmock-dev nlohmann-json3-dev libopenblas-dev libpcre2-dev libutf8proc-dev
  libcpp-httplib-dev
  python3-dev pybind11-dev python3-pytest python3-numpy
)

missing=()
for p in "${PACKAGES[@]}"; do
  if ! dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed"; then
    missing+=("$p")
  fi
done

if [ ${#missing[@]} -eq 0 ]; then
  echo "install-deps: all ${#PACKAGES[@]} packages present"
  exit 0
fi

SUDO=""
if [ "$(id -u)" -ne 0 ]; then
  SUDO="sudo"
fi
echo "install-deps: installing ${missing[*]}"
export DEBIAN_FRONTEND=noninteractive
$SUDO apt-get update -qq
$SUDO apt-get install -y -qq --no-install-recommends "${missing[@]}"
