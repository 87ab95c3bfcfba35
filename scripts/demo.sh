#!/usr/bin/env bash
# The main job: set up, build, compile the bundled real model (Karpathy's
# TinyStories 260K Llama) and generate a story on the host device.
#   ./scripts/demo.sh ["prompt"]    (default prompt: "Once upon a time")
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
build="${QEFF_BUILD_DIR:-$root/build}"
prompt="${1:-Once upon a time}"

"$root/scripts/install-deps.sh"
"$root/scripts/build.sh"
echo "== qeff infer test/data/models/stories260K-hf --prompt \"$prompt\""
story="$("$build/bin/qeff" infer "$root/test/data/models/stories260K-hf" \
  --prompt "$prompt" --max-new-tokens 200 --cache-dir "$build/qeff-cache")"
printf '\n%s%s\n' "$prompt" "$story"
