#!/bin/bash
# elastic_shrink.sh MPIRUN PARASHIFT SCENARIO: `parashift run --elastic
# --shrink` with no spare supervises a pp2 dp2 job of 4 ranks on 2 "nodes"
# (2 ranks each) in which rank 2 kills itself before iteration 5, after
# snapshots v2 and v4. Its node is lost with it (shared memory gone), so
# the supervisor relaunches on node 0 alone: pp2 dp1, global batch 8 -> 4,
# v4 restored resharded from the 2 ranks' own shards and the replicas of
# the lost node's 2 ranks. The oracle: the same v4 of an uninterrupted job
# (snapshots kept) restored by hand under pp2 dp1 on node 1 alone, which
# reads the other files (node 1's own shards of ranks 2 and 3, the replicas
# of ranks 0 and 1): the same bits, so the same losses at iterations 4 and
# 5, digit for digit. Exits 77 (skip) without mpirun.
set -u
mpirun=$1 parashift=$2 scenario=$3
. "$(dirname "$0")/mpi_test_lib.sh"
need_mpirun "$mpirun"
scratch_dirs shrink
small=(--set model.hidden=64 --set model.heads=4 --set model.kv_heads=4
       --set model.ffn_hidden=256 --set training.seq_len=32 --snapshot-every 2
       --ranks-per-node 2 --shm-dir "$shm")
"$parashift" run "$scenario" --backend hw "${small[@]}" --iterations 6 --job shrink --elastic --shrink \
  --launcher "$mpirun --oversubscribe --allow-run-as-root" --inject-kill 2@5 --json "$work/elastic.json" \
  > "$work/elastic.txt" 2> "$work/err.txt" ||
  { echo "the elastic run failed"; cat "$work/elastic.txt" "$work/err.txt"; exit 1; }
cat "$work/elastic.txt"
for line in "^elastic: node 1 lost, no spare left (--shrink): 1 node(s) left" \
            "^elastic: the job shrinks to tp1 pp2 dp1 .*, global batch 4, on 1 node(s)" \
            "^restored snapshot v4 resharded from another plan's shards: 2 replica(s) read" \
            "^elastic: the job completed after 1 restart(s)"; do
  grep -q "$line" "$work/elastic.txt" || { echo "expected a line matching: $line"; exit 1; }
done
grep -q '"node_lost": 1' "$work/elastic.json" || { echo "elastic.json lacks node_lost"; exit 1; }
run4() { "$mpirun" -np "$1" --oversubscribe --allow-run-as-root "$parashift" run "$scenario" --backend hw "${small[@]}" "${@:2}"; }
run4 4 --job oracle --iterations 5 --keep-snapshots > "$work/ref.txt" ||
  { echo "the reference run failed"; cat "$work/ref.txt"; exit 1; }
run4 2 --job oracle --iterations 6 --set plan.dp=1 --set training.global_batch=4 --node-ids 1 --restore > "$work/oracle.txt" ||
  { echo "the oracle's relaunch failed"; cat "$work/oracle.txt"; exit 1; }
grep -q "^restored snapshot v4 resharded from another plan's shards: 2 replica(s) read" "$work/oracle.txt" ||
  { echo "the oracle did not restore v4 resharded"; cat "$work/oracle.txt"; exit 1; }
same_losses "iterations 4-5: the oracle (node 1's files), shrunk (node 0's)" \
  "$(losses 4 5 < "$work/oracle.txt")" \
  "$(sed -n '/^elastic: launch 2:/,$p' "$work/elastic.txt" | losses 4 5)" 2
echo "PASS --elastic --shrink: node 1 lost with no spare, pp2 dp1 on node 0 restored v4 resharded, the oracle's losses for iterations 4 and 5"
