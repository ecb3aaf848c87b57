#!/bin/bash
# reshard_relaunch.sh MPIRUN PARASHIFT SCENARIO: a job of pp2 dp2 (4 ranks on
# 2 "nodes") snapshots v3 and ends, keeping its snapshots; relaunched by hand under dp4 with
# --restore, it restores v3 resharded (its shards are another plan's) and
# trains on. Its losses at iterations 3-5 must equal, digit for digit, those
# of one run that re-planned live to dp4 before iteration 3: both put every
# layer together whole and cut dp4's shards out of it. Exits 77 (skip)
# without mpirun.
set -u
mpirun=$1 parashift=$2 scenario=$3
. "$(dirname "$0")/mpi_test_lib.sh"
need_mpirun "$mpirun"
scratch_dirs reshard
run() {
  "$mpirun" -np 4 --oversubscribe --allow-run-as-root "$parashift" run "$scenario" \
    --backend hw --set model.hidden=64 --set model.heads=4 --set model.kv_heads=4 \
    --set model.ffn_hidden=256 --set training.seq_len=32 --ranks-per-node 2 --shm-dir "$shm" "$@"
}
run --job live --iterations 6 --replan 3:plan.pp=1,plan.dp=4 > "$work/live.txt" ||
  { echo "the live re-plan run failed"; cat "$work/live.txt"; exit 1; }
run --job relaunch --iterations 4 --snapshot-every 3 --keep-snapshots > "$work/first.txt" ||
  { echo "the first launch failed"; cat "$work/first.txt"; exit 1; }
run --job relaunch --iterations 6 --set plan.pp=1 --set plan.dp=4 --restore > "$work/after.txt" ||
  { echo "the relaunch under dp4 failed"; cat "$work/after.txt"; exit 1; }
cat "$work/after.txt"
grep -q "^restored snapshot v3 resharded from another plan's shards: 0 replica(s) read" "$work/after.txt" ||
  { echo "expected v3 restored resharded, every shard on its own node"; exit 1; }
same_losses "iterations 3-5: the live re-plan, resharded" \
  "$(losses 3 5 < "$work/live.txt")" "$(losses 3 5 < "$work/after.txt")" 3
echo "PASS a relaunch under dp4 restores pp2 dp2's v3 resharded: the live re-plan's losses, iterations 3-5"
