#!/usr/bin/env bash
# Builds the libFuzzer targets (test/fuzz, -DQEFF_FUZZ=ON) in ./build-fuzz and
# runs each for a time budget on its seed corpus (test/fuzz/corpus/<target>,
# copied to build-fuzz/corpus so new inputs stay out of the tree), with
# memory limits so that "allocates without bound" is a finding.
#
#   scripts/fuzz.sh [SECONDS_PER_TARGET] [TARGET...]     default 30 s, all targets
#   (QEFF_FUZZ_NO_BUILD=1: run the targets already built;
#    QEFF_FUZZ_RUNS=N: also stop a target after N executions, whichever of
#    the time budget and N comes first)
#   scripts/fuzz.sh 0        replay the seed corpora and regression inputs only
#                            (deterministic: what .ci/run does)
#
# Prints per target: executions, coverage (cov/ft of the last status line) and
# whether a crash/leak/OOM/timeout was found (its reproducer is written to
# build-fuzz/findings/<target>/; add it to test/fuzz/regressions/<target>/).
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
build="${QEFF_FUZZ_BUILD_DIR:-$root/build-fuzz}"
seconds="${1:-30}"
shift || true
if [ ! -f "$build/build.ninja" ]; then
  cmake -G Ninja -S "$root" -B "$build" -DCMAKE_BUILD_TYPE=RelWithDebInfo \
    -DCMAKE_C_COMPILER=clang-19 -DCMAKE_CXX_COMPILER=clang++-19 \
    -DQEFF_FUZZ=ON -DQEFF_BUILD_TESTS=OFF -DQEFF_PCH=OFF
fi
if [ -z "${QEFF_FUZZ_NO_BUILD:-}" ]; then
  ninja -C "$build" -j "${QEFF_JOBS:-$(nproc)}" qeff-fuzzers
fi
targets=("$@")
if [ ${#targets[@]} -eq 0 ]; then
  targets=(SafeTensorsHeaderFuzzer ShardIndexFuzzer ConfigFuzzer GGUFFuzzer
           QuantCheckpointFuzzer TokenizerFuzzer Gpt2VocabMergesFuzzer ArtifactFuzzer
           Fp32ScopesFuzzer HttpBodyFuzzer ChatTemplateFuzzer)
fi
# allow_user_poisoning=0: as in scripts/test.sh --sanitize (llvm::BumpPtrAllocator
# slabs shared with the uninstrumented libMLIR stay poisoned where it allocates).
export ASAN_OPTIONS="detect_leaks=1:allocator_may_return_null=1:allow_user_poisoning=0"
export LSAN_OPTIONS="suppressions=$root/scripts/lsan.supp"
status=0
for t in "${targets[@]}"; do
  findings="$build/findings/$t"
  mkdir -p "$findings"
  if [ "$seconds" = 0 ]; then
    # Replay: exactly the inputs in the tree (not what earlier runs added).
    corpus="$root/test/fuzz/corpus/$t"
  else
    corpus="$build/corpus/$t"
    mkdir -p "$corpus"
    cp -r "$root/test/fuzz/corpus/$t/." "$corpus/" 2>/dev/null || true
  fi
  regressions=()
  if [ -d "$root/test/fuzz/regressions/$t" ]; then
    regressions=("$root/test/fuzz/regressions/$t")
  fi
  dict=()
  case "$t" in
    ChatTemplateFuzzer) dict=(-dict="$root/test/fuzz/jinja.dict") ;;
    HttpRequestFuzzer) dict=(-dict="$root/test/fuzz/http.dict") ;;
    GGUFFuzzer) dict=(-dict="$root/test/fuzz/gguf.dict") ;;
    Fp32ScopesFuzzer) ;;
    *) dict=(-dict="$root/test/fuzz/json.dict") ;;
  esac
  log="$build/findings/$t.log"
  stamp="$build/findings/.$t.start"
  touch "$stamp"
  started=$SECONDS
  set +e
  "$build/fuzz/$t" "$corpus" "${regressions[@]}" "${dict[@]}" \
    $([ "$seconds" = 0 ] && echo -runs=0 || echo -max_total_time="$seconds") \
    $([ "$seconds" != 0 ] && [ -n "${QEFF_FUZZ_RUNS:-}" ] && echo -runs="$QEFF_FUZZ_RUNS") -rss_limit_mb=2048 -malloc_limit_mb=1024 -timeout=20 \
    -max_len=262144 -artifact_prefix="$findings/" -print_final_stats=1 > "$log" 2>&1
  rc=$?
  set -e
  execs=$(grep -o 'stat::number_of_executed_units: *[0-9]*' "$log" | grep -o '[0-9]*$' || echo "?")
  cov=$(grep -E '^#[0-9]+' "$log" | tail -1 | grep -oE 'cov: [0-9]+ ft: [0-9]+' || echo "cov: ?")
  found=$(find "$findings" -type f -newer "$stamp" | wc -l)
  rate=$(grep -o 'stat::average_exec_per_sec: *[0-9]*' "$log" | grep -o '[0-9]*$' || echo "?")
  echo "$t: $execs executions in $((SECONDS - started)) s ($rate/s), $cov, exit $rc, $found new finding(s) in $findings"
  if [ "$rc" != 0 ]; then
    status=1
    grep -E "ERROR|SUMMARY|==[0-9]+==" "$log" | head -5 || true
  fi
done
exit "$status"
