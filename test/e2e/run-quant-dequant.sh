#!/usr/bin/env bash
# The weights qeff decodes from a quantized fixture (test/data/quant) must be
# bit-identical to the library's reference dequantization: dumps them with
# `qeff-translate --dump-hf-weights` and checks every reference tensor's
# SHA-256 digest (test/tools/quant-digests.py).
#   run-quant-dequant.sh <qeff-translate> <python3> <fixture_dir> <work_file>
set -euo pipefail
translate="$1" python="$2" fixture="$3" dump="$4"
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
src="$fixture"
[ -f "$fixture/model.gguf" ] && src="$fixture/model.gguf"
"$translate" --dump-hf-weights "$src" -o "$dump"
exec "$python" "$here/../tools/quant-digests.py" check "$dump" "$fixture/dequantized.sha256.json"
