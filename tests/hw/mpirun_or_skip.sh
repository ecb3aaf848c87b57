#!/bin/sh
# mpirun_or_skip.sh MPIRUN RANKS PROGRAM [ARGS...]: runs PROGRAM on RANKS MPI
# ranks, or exits 77 (ctest's SKIP_RETURN_CODE) when there is no mpirun.
mpirun=$1
ranks=$2
shift 2
if [ -z "$mpirun" ] || [ "$mpirun" = "PARASHIFT_MPIRUN-NOTFOUND" ] || ! command -v "$mpirun" >/dev/null; then
  echo "mpirun not found: skipping"
  exit 77
fi
exec "$mpirun" -np "$ranks" --oversubscribe --allow-run-as-root "$@"
