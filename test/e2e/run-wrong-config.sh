#!/usr/bin/env bash
# A golden's checkpoint with one config.json field changed must FAIL the
# golden check (the field is exercised: the golden would not catch a wrong
# value of it otherwise). Used by ctest.
#   run-wrong-config.sh <qeff> <node> <golden_dir> <work_dir> <form> <field> <json value> [qeff compile options]
# <field> is a dotted path into config.json (rope_scaling.factor).
set -euo pipefail
qeff="$1" node="$2" golden="$3" work="$4" form="$5" field="$6" value="$7"
shift 7
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
rm -rf "$work" && mkdir -p "$work/ckpt"
# A copy (the checkpoint reader takes regular files only, no symlinks).
cp "$golden"/* "$work/ckpt/"
"$node" -e '
  const fs = require("fs");
  const [src, dst, field, value] = process.argv.slice(1);
  const c = JSON.parse(fs.readFileSync(src, "utf8"));
  const keys = field.split(".");
  let o = c;
  for (const k of keys.slice(0, -1)) o = o[k];
  if (!(keys[keys.length - 1] in o)) throw new Error(`config.json has no ${field}`);
  o[keys[keys.length - 1]] = JSON.parse(value);
  fs.writeFileSync(dst, JSON.stringify(c, null, 2));
' "$golden/config.json" "$work/ckpt/config.json" "$field" "$value"
if "$here/run-golden.sh" "$qeff" "$node" "$work/ckpt" "$work/out" "$form" "$@" > "$work/log" 2>&1; then
  cat "$work/log"
  echo "FAIL: $field = $value passed the golden check; the golden does not exercise it"
  echo "0 passed, 1 failed"
  exit 1
fi
if ! grep -q "^FAIL .*\(logit\|greedy token\)" "$work/log"; then
  cat "$work/log"
  echo "FAIL: the run failed, but not on logits or tokens"
  echo "0 passed, 1 failed"
  exit 1
fi
grep -m 3 "^FAIL" "$work/log"
echo "ok: $field = $value is caught by the golden"
echo "1 passed, 0 failed"
