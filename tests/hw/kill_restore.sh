#!/bin/bash
# kill_restore.sh MPIRUN PARASHIFT SCENARIO: a rank dies by kill -9 mid-run,
# its node's shared memory is lost too, and the relaunched job restores the
# newest complete snapshot, fetching only the lost shards from replicas; its
# losses from there on must equal an uninterrupted run's, digit for digit.
# Exits 77 (skip) without mpirun.
set -u
mpirun=$1 parashift=$2 scenario=$3
if [ -z "$mpirun" ] || ! command -v "$mpirun" >/dev/null 2>&1; then
  echo "mpirun not found: skipping"; exit 77
fi
work=$(mktemp -d)
job=killtest-$$
shm=/dev/shm
trap 'rm -rf "$work" "$shm/parashift-$job" "$shm/parashift-$job-ref"' EXIT
# A small model so the whole test takes seconds; 2 "nodes" of 2 ranks each.
run() {
  "$mpirun" -np 4 --oversubscribe --allow-run-as-root "$parashift" run "$scenario" --backend hw \
    --iterations 6 --set model.hidden=64 --set model.ffn_hidden=256 --set training.seq_len=32 \
    --snapshot-every 2 --ranks-per-node 2 --shm-dir "$shm" "$@"
}

run --job "$job-ref" > "$work/ref.txt" || { echo "reference run failed"; cat "$work/ref.txt"; exit 1; }
# Rank 2 kills itself (SIGKILL) before iteration 5: snapshots v2 and v4 are complete.
if run --job "$job" --inject-kill 2@5 > "$work/crash.txt" 2>&1; then
  echo "the crashing run exited 0"; exit 1
fi
ls "$shm/parashift-$job/node1" | grep -q 'r2-v4.shard' || { echo "no v4 shard of rank 2 survived the kill"; exit 1; }
# Node 1 (ranks 2 and 3) is replaced: its shared memory is gone.
rm -rf "$shm/parashift-$job/node1"
run --job "$job" --restore > "$work/after.txt" || { echo "relaunch failed"; cat "$work/after.txt"; exit 1; }
cat "$work/after.txt"
# Ranks 2 and 3 lost their v4 shards; node 0 holds their replicas.
grep -q '^restored snapshot v4: fetched 2 lost shard(s)' "$work/after.txt" || { echo "expected a restore of v4 fetching 2 shards"; exit 1; }
losses() { awk '$1 == "iteration" && ($2 == 4 || $2 == 5) { print $2, $4 }' "$1"; }
expected=$(losses "$work/ref.txt")
found=$(losses "$work/after.txt")
echo "uninterrupted: $expected"
echo "restored:      $found"
[ -n "$expected" ] && [ "$expected" = "$found" ] || { echo "loss trajectories differ"; exit 1; }
echo "PASS kill -9 + node loss + restore: identical losses for iterations 4 and 5"
