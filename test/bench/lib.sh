# shellcheck shell=bash
# What the benchmark scripts of test/bench share (sourced, not run): --help from a
# script's header comment, the synthetic Llama shapes and their checkpoint, the qeff
# binary check, and a `qeff serve` started in the background until it listens and
# stopped with SIGTERM (exit status 0 required). Each function takes the calling
# script's name (`bench` below) for its messages.

# Prints the header comment of script $1 (its lines after the #! line up to the
# first line that is not a comment), without the leading "# ".
bench_help() {
  awk 'NR > 1 && /^#/ { sub(/^# ?/, ""); print; next } NR > 1 { exit }' "$1"
}

# Sets layers, hidden, heads, kv_heads, intermediate and vocab for shape $2, one of
# the shapes listed in $3 (tinyllama-1.1b, 162m, tiny: a smoke check in seconds).
bench_shape() { # bench shape "allowed shapes"
  local bench="$1" shape="$2" allowed="$3"
  case " $allowed " in
    *" $shape "*) ;;
    *) echo "$bench: unknown --shape $shape (${allowed// /, })" >&2; exit 2 ;;
  esac
  case "$shape" in
    tinyllama-1.1b) layers=22 hidden=2048 heads=32 kv_heads=4 intermediate=5632 vocab=32000 ;;
    162m) layers=12 hidden=768 heads=12 kv_heads=12 intermediate=3072 vocab=32000 ;;
    tiny) layers=4 hidden=64 heads=4 kv_heads=2 intermediate=128 vocab=512 ;;
    *) echo "$bench: no such shape $shape" >&2; exit 2 ;;
  esac
}

# The synthetic Llama-shaped f32 checkpoint of bench_shape's variables in $1 (made
# once: test/tools/make-checkpoint.py --fill tiled), max_position_embeddings $2.
bench_checkpoint() { # dir max-positions
  local dir="$1" positions="$2" repo
  repo="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
  [ -f "$dir/config.json" ] && return 0
  echo "== checkpoint $dir" >&2
  python3 "$repo/test/tools/make-checkpoint.py" "$dir" --fill tiled --dtype f32 \
    --max-positions "$positions" --layers "$layers" --hidden "$hidden" --heads "$heads" \
    --kv-heads "$kv_heads" --intermediate "$intermediate" --vocab "$vocab"
}

bench_require_qeff() { # bench qeff
  [ -x "$2" ] || { echo "$1: no qeff binary at $2 (build it or pass --qeff)" >&2; exit 2; }
}

# `qeff serve` in the background: bench_serve_start bench log seconds qeff-args...
# writes its output to log, sets server_pid, and waits (up to `seconds`: a first
# start may compile) for its "listening on" line; sets url. Exits on failure.
server_pid=""
bench_serve_start() {
  local bench="$1" log="$2" seconds="$3" i
  shift 3
  "$@" >"$log" 2>&1 &
  server_pid=$!
  url=""
  for ((i = 0; i < seconds * 2; ++i)); do
    url="$(sed -n 's|^qeff serve: listening on \(http://[^ ]*\).*|\1|p' "$log" | head -1)"
    [ -n "$url" ] && return 0
    kill -0 "$server_pid" 2>/dev/null || { cat "$log" >&2; echo "$bench: qeff serve exited" >&2; exit 1; }
    sleep 0.5
  done
  cat "$log" >&2
  echo "$bench: qeff serve did not start listening" >&2
  exit 1
}

# SIGTERM to the server of bench_serve_start; its exit status must be 0.
bench_serve_stop() { # bench log
  local status=0
  kill -TERM "$server_pid"
  wait "$server_pid" || status=$?
  server_pid=""
  [ "$status" -eq 0 ] || { cat "$2" >&2; echo "$1: qeff serve exited $status on SIGTERM" >&2; exit 1; }
}

# For `trap bench_serve_cleanup EXIT`: a server still running is stopped.
bench_serve_cleanup() {
  if [ -n "$server_pid" ] && kill -0 "$server_pid" 2>/dev/null; then
    kill -TERM "$server_pid" 2>/dev/null || true
    wait "$server_pid" 2>/dev/null || true
  fi
}
