#!/usr/bin/env bash
# repeat_under_load.sh [-n RUNS] [-k BURNERS] [BINARY [ARGS...]]: runs BINARY
# (default build/tests/hw/test_hw_policy, the controller contract on the CPU
# executor with counted compute, and the policy loop) RUNS times (default 20)
# in a row while BURNERS processes (default 2) spin on the CPU beside it.
# Prints each run's result and time, then "passed X/N"; exits 0 only when
# every run passed; a failed run's last 20 lines of output are printed. Not
# a ctest: it takes minutes and loads the machine.
#   tests/hw/repeat_under_load.sh                      # 20 runs, 2 burners
#   tests/hw/repeat_under_load.sh -n 5 -k 4 build/tests/hw/test_hw_contract
set -u
runs=20 burners=2
usage() { echo "usage: $0 [-n RUNS] [-k BURNERS] [BINARY [ARGS...]]" >&2; exit 2; }
while getopts n:k:h opt; do
  case $opt in
    n) runs=$OPTARG ;;
    k) burners=$OPTARG ;;
    *) usage ;;
  esac
done
shift $((OPTIND - 1))
case $runs in '' | *[!0-9]* | 0) echo "-n: expected a whole number > 0, got '$runs'" >&2; exit 2 ;; esac
case $burners in '' | *[!0-9]*) echo "-k: expected a whole number >= 0, got '$burners'" >&2; exit 2 ;; esac
root=$(cd "$(dirname "$0")/../.." && pwd)
binary=${1:-$root/build/tests/hw/test_hw_policy}
[ $# -gt 0 ] && shift
[ -x "$binary" ] || { echo "$binary: not an executable (build it first)" >&2; exit 2; }

work=$(mktemp -d)
pids=()
cleanup() {
  for pid in "${pids[@]}"; do kill "$pid" 2>/dev/null; done
  for pid in "${pids[@]}"; do wait "$pid" 2>/dev/null; done
  rm -rf "$work"
}
trap cleanup EXIT
trap 'exit 130' INT TERM

for ((i = 0; i < burners; ++i)); do
  sh -c 'while :; do :; done' &
  pids+=($!)
done
echo "$(basename "$binary")${*:+ $*}: $runs run(s) beside $burners CPU burner(s) on $(nproc) CPU(s)"

passed=0
for ((i = 1; i <= runs; ++i)); do
  log=$work/run$i.txt
  start=$(date +%s.%N)
  "$binary" "$@" >"$log" 2>&1
  status=$?
  seconds=$(awk -v a="$start" -v b="$(date +%s.%N)" 'BEGIN { print b - a }')
  if [ "$status" -eq 0 ]; then
    passed=$((passed + 1))
    printf 'run %d/%d: pass (%.1f s)\n' "$i" "$runs" "$seconds"
  else
    printf 'run %d/%d: FAIL, exit %d (%.1f s); last lines:\n' "$i" "$runs" "$status" "$seconds"
    tail -n 20 "$log" | sed 's/^/    /'
  fi
done
echo "passed $passed/$runs (load average $(cut -d' ' -f1-3 /proc/loadavg))"
[ "$passed" -eq "$runs" ]
