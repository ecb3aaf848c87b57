#!/bin/bash
# elastic_restore.sh MPIRUN PARASHIFT SCENARIO [EXTRA [PATTERN]]: `parashift run --elastic
# --spares 1` supervises a 4-rank job (2 "nodes" of 2 ranks) in which rank 2
# kills itself (SIGKILL) before iteration 5, after snapshots v2 and v4. The
# supervisor must relaunch the job without a person: rank 2's node replaced
# by the spare (its shared memory gone), snapshot v4 restored with only that
# node's 2 shards fetched from their replicas, and the losses of iterations
# 4 and 5 equal to an uninterrupted run's, digit for digit; its --json
# report records both launches. EXTRA (words)
# go to both runs, e.g. a live re-plan before iteration 3 ("--replan
# 3:plan.pp=1,plan.dp=4": the v4 snapshot is then dp4's, and the relaunch
# must run dp4, its command line matching PATTERN). Exits 77 (skip) without
# mpirun.
set -u
mpirun=$1 parashift=$2 scenario=$3 extra=${4:-} pattern=${5:-}
. "$(dirname "$0")/mpi_test_lib.sh"
need_mpirun "$mpirun"
scratch_dirs elastic
small=(--iterations 6 --set model.hidden=64 --set model.heads=4 --set model.kv_heads=4
       --set model.ffn_hidden=256 --set training.seq_len=32 --snapshot-every 2
       --ranks-per-node 2 --shm-dir "$shm" $extra)
"$mpirun" -np 4 --oversubscribe --allow-run-as-root "$parashift" run "$scenario" --backend hw \
  "${small[@]}" --job elastic-ref > "$work/ref.txt" || { echo "reference run failed"; cat "$work/ref.txt"; exit 1; }
"$parashift" run "$scenario" --backend hw "${small[@]}" --job elastic --elastic --spares 1 \
  --launcher "$mpirun --oversubscribe --allow-run-as-root" --inject-kill 2@5 --json "$work/elastic.json" \
  > "$work/elastic.txt" 2> "$work/err.txt" ||
  { echo "the elastic run failed"; cat "$work/elastic.txt" "$work/err.txt"; exit 1; }
cat "$work/elastic.txt"
for line in "^elastic: rank 2 died on signal 9" \
            "^elastic: node 1 replaced by a spare (its shared memory gone); 0 spare(s) left" \
            "^restored snapshot v4: fetched 2 lost shard(s)" \
            "^elastic: the job completed after 1 restart(s)"; do
  grep -q "$line" "$work/elastic.txt" || { echo "expected a line matching: $line"; exit 1; }
done
[ "$(grep -c '^elastic: launch ' "$work/elastic.txt")" = 2 ] || { echo "expected exactly 2 launches"; exit 1; }
# --json: the relaunch's report with the supervisor's record of both
# launches (pretty-printed, one key a line).
for key in '"completed": true' '"restarts": 1' '"dead_rank": 2' '"signal": 9' '"node_replaced": 1' \
           '"spares_left": 0' '"final_plan": '; do
  grep -q -- "$key" "$work/elastic.json" || { echo "elastic.json lacks $key"; cat "$work/elastic.json"; exit 1; }
done
[ "$(grep -c '"launch": ' "$work/elastic.json")" = 2 ] || { echo "elastic.json: expected 2 launches"; exit 1; }
if [ -n "$pattern" ]; then
  grep '^elastic: launch 2:' "$work/elastic.txt" | grep -q -- "$pattern" ||
    { echo "the relaunch's command line lacks: $pattern"; exit 1; }
fi
# The relaunch's iterations 4 and 5 (its output after the second launch line).
same_losses "iterations 4-5: uninterrupted, relaunched" \
  "$(losses 4 5 < "$work/ref.txt")" \
  "$(sed -n '/^elastic: launch 2:/,$p' "$work/elastic.txt" | losses 4 5)" 2
echo "PASS --elastic --spares 1 $extra: relaunched without a person, 2 shards fetched, identical losses for iterations 4 and 5"
