#!/usr/bin/env bash
# Default numerics bit for bit (docs/numerics.md): every golden compiled
# (--ctx-len 32 --prefill-seq-len 4, its batch) by two builds of qeff and run
# for 12 steps in fp32 and fp16 (`qeff run --save-logits`); prints per golden
# whether model.onnx, model.onnx.data and the saved logits are byte-identical
# (a run that fails in both builds with the same message counts as the same).
# Run on demand, e.g. against main's build before an MX change is merged:
#
#   test/bench/numerics-bitident.sh OLD_QEFF NEW_QEFF [WORK_DIR]
set -uo pipefail

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
goldens="$here/../data/golden"
old="${1:?usage: numerics-bitident.sh OLD_QEFF NEW_QEFF [WORK_DIR]}"
new="${2:?usage: numerics-bitident.sh OLD_QEFF NEW_QEFF [WORK_DIR]}"
w="${3:-/tmp/qeff-bitident}"
python=/usr/bin/python3
rm -rf "$w"; mkdir -p "$w"
same=0; total=0
for g in "$goldens"/*/; do
  n=$(basename "$g")
  [ -f "$g/golden.json" ] || continue
  ids=$("$python" -c "import json; p = json.load(open('$g/golden.json'))['prompt_ids']; print(','.join(map(str, p[0])))")
  batch=$("$python" -c "import json; print(len(json.load(open('$g/golden.json'))['prompt_ids']))")
  res="$n:"
  for v in old new; do
    q=${!v}
    if ! "$q" compile "$g" -o "$w/$n-$v" --ctx-len 32 --prefill-seq-len 4 --batch-size "$batch" \
         > /dev/null 2> "$w/$n-$v.compile.err"; then
      res="$res $v-compile-failed"; continue
    fi
    for num in fp32 fp16; do
      "$q" run "$w/$n-$v" --token-ids "$ids" --max-new-tokens 12 --numerics "$num" \
        --save-logits "$w/$n-$v-$num.st" --json > /dev/null 2> "$w/$n-$v-$num.err"
    done
  done
  ok=1
  for f in model.onnx model.onnx.data; do
    cmp -s "$w/$n-old/$f" "$w/$n-new/$f" && res="$res $f=same" || { res="$res $f=DIFF"; ok=0; }
  done
  for num in fp32 fp16; do
    if [ -f "$w/$n-old-$num.st" ] && [ -f "$w/$n-new-$num.st" ]; then
      cmp -s "$w/$n-old-$num.st" "$w/$n-new-$num.st" && res="$res $num=same" ||
        { res="$res $num=DIFF"; ok=0; }
    elif [ ! -f "$w/$n-old-$num.st" ] && [ ! -f "$w/$n-new-$num.st" ] &&
         [ "$(sed "s#$w/$n-old##g" "$w/$n-old-$num.err")" = "$(sed "s#$w/$n-new##g" "$w/$n-new-$num.err")" ]; then
      res="$res $num=both-failed-alike"
    else
      res="$res $num=DIFF"; ok=0
    fi
  done
  echo "$res"
  total=$((total + 1)); same=$((same + ok))
done
echo "$same of $total goldens identical"
[ "$same" = "$total" ]
