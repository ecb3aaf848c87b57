#!/bin/bash
# kill_restore.sh MPIRUN PARASHIFT SCENARIO [BACKEND RANKS [DAMAGE]]: a rank
# dies by kill -9 mid-run and the relaunched job restores the newest complete
# snapshot; its losses from there on must equal an uninterrupted run's, digit
# for digit. With 4 ranks (default; BACKEND hw) on 2 "nodes", the dead rank's
# node loses its shared memory too (DAMAGE lose-node, the default) and the
# restore fetches only the lost shards from replicas; with DAMAGE tamper the
# node survives but one byte of the dead rank's own v4 shard is changed, so
# the store refuses it (hash mismatch) and that one shard is fetched from its
# replica. With 1 rank (the GPU check: BACKEND cuda, one GPU) the rank
# restores its own shard. Exits 77 (skip) without mpirun.
set -u
mpirun=$1 parashift=$2 scenario=$3 backend=${4:-hw} ranks=${5:-4} damage=${6:-lose-node}
. "$(dirname "$0")/mpi_test_lib.sh"
need_mpirun "$mpirun"
scratch_dirs kill
job=killtest
case $ranks in
  4) per_node=2 victim=2 lost_node=node1 fetched=2 ;;  # 2 "nodes" of 2 ranks each
  1) per_node=1 victim=0 lost_node="" fetched=0 ;;
  *) echo "RANKS: expected 4 or 1, got '$ranks'"; exit 2 ;;
esac
# A small model so the whole test takes seconds.
run() {
  "$mpirun" -np "$ranks" --oversubscribe --allow-run-as-root "$parashift" run "$scenario" \
    --backend "$backend" --iterations 6 --set model.hidden=64 --set model.heads=4 \
    --set model.kv_heads=4 --set model.ffn_hidden=256 --set training.seq_len=32 \
    --snapshot-every 2 --ranks-per-node "$per_node" --shm-dir "$shm" "$@"
}

run --job "$job-ref" > "$work/ref.txt" || { echo "reference run failed"; cat "$work/ref.txt"; exit 1; }
# The victim kills itself (SIGKILL) before iteration 5: snapshots v2 and v4 are complete.
if run --job "$job" --inject-kill "$victim@5" > "$work/crash.txt" 2>&1; then
  echo "the crashing run exited 0"; exit 1
fi
ls "$shm/parashift-$job/node$((victim / per_node))" | grep -q "r$victim-v4.shard" ||
  { echo "no v4 shard of rank $victim survived the kill"; exit 1; }
# 4 ranks: node 1 (ranks 2 and 3) is replaced, its shared memory gone; node 0
# holds their replicas. 1 rank: the node survives with the rank's own shard.
case $damage in
  lose-node) [ -n "$lost_node" ] && rm -rf "$shm/parashift-$job/$lost_node" ;;
  tamper)
    [ "$ranks" = 4 ] || { echo "DAMAGE tamper needs 4 ranks"; exit 2; }
    shard="$shm/parashift-$job/node$((victim / per_node))/r$victim-v4.shard"
    # Flip the low bit of the last byte (the payload's): the SHA-256 no longer matches.
    size=$(stat -c %s "$shard")
    last=$(od -An -tu1 -j $((size - 1)) -N1 "$shard" | tr -d ' ')
    printf "$(printf '\\%03o' $((last ^ 1)))" | dd of="$shard" bs=1 seek=$((size - 1)) conv=notrunc status=none
    fetched=1 ;;
  *) echo "DAMAGE: expected lose-node or tamper, got '$damage'"; exit 2 ;;
esac
run --job "$job" --restore > "$work/after.txt" || { echo "relaunch failed"; cat "$work/after.txt"; exit 1; }
cat "$work/after.txt"
grep -q "^restored snapshot v4: fetched $fetched lost shard(s)" "$work/after.txt" ||
  { echo "expected a restore of v4 fetching $fetched shards"; exit 1; }
if [ "$damage" = tamper ]; then
  grep -q "^  refused .*/r$victim-v4.shard: content hash (SHA-256) mismatch" "$work/after.txt" ||
    { echo "expected the tampered shard of rank $victim to be named as refused"; exit 1; }
fi
same_losses "iterations 4-5: uninterrupted, restored" \
  "$(losses 4 5 < "$work/ref.txt")" "$(losses 4 5 < "$work/after.txt")" 2
echo "PASS kill -9 + restore ($backend, $ranks rank(s), $damage, $fetched shard(s) fetched): identical losses for iterations 4 and 5"
