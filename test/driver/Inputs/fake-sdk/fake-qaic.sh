#!/bin/sh
# TEST ONLY: a fake AI 100 compiler that behaves as one Apps SDK generation
# does, for test/driver/compile-sdk-generations.test. Usage (from the
# <generation>/exec/<tool> wrappers): fake-qaic.sh <generation> <tool> args...
#   current    qaic-compile taking the named and the flat specializations.json.
#   old        qaic-compile of an Apps SDK without the fix of
#              quic/efficient-transformers#1129: a named specializations.json
#              fails with "[json.exception.type_error.302] type must be
#              string, but is object" and exit code 255, as that issue shows.
#   exec-only  an Apps SDK whose /opt/qti-aic/exec has qaic-exec only. The
#              public scripts that compile with qaic-exec pass -compile-only
#              (e.g. QEfficient/transformers/sampler/test_sampler in an
#              efficient-transformers tree, /opt/qti-aic/exec/qaic-exec
#              ... -compile-only); without it qaic-exec goes on to run the
#              network on a card (GUESS from the flag's name), and
#              there is none here, so it fails (GUESS: the message). Being
#              older, it takes only the flat specializations form too (GUESS).
# Each run appends "== <tool> <args>" and the specializations file's content
# on one line to $FAKE_QAIC_LOG when that is set; a successful run writes
# <-aic-binary-dir>/programqpc.bin.
generation=$1
tool=$2
shift 2
log=${FAKE_QAIC_LOG:-/dev/null}
echo "== $tool $*" >> "$log"
specs= bin= compile_only=
for arg do
  case "$arg" in
    -network-specialization-config=*) specs=${arg#*=} ;;
    -aic-binary-dir=*) bin=${arg#*=} ;;
    -compile-only) compile_only=1 ;;
  esac
done
if [ -z "$specs" ] || [ ! -f "$specs" ] || [ -z "$bin" ]; then
  echo "$tool: missing -network-specialization-config or -aic-binary-dir" >&2
  exit 1
fi
echo "specs: $(tr -d ' \n' < "$specs")" >> "$log"
if [ "$generation" = exec-only ] && [ -z "$compile_only" ]; then
  echo "$tool: no AI 100 device to run the compiled network on" >&2
  exit 1
fi
if [ "$generation" != current ] && grep -q '"symbols"' "$specs"; then
  echo "[json.exception.type_error.302] type must be string, but is object" >&2
  exit 255
fi
mkdir -p "$bin" && echo "fake QPC ($generation)" > "$bin/programqpc.bin"
