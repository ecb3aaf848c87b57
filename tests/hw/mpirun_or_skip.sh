#!/bin/sh
# mpirun_or_skip.sh MPIRUN RANKS PROGRAM [ARGS...]: runs PROGRAM on RANKS MPI
# ranks, or exits 77 (ctest's SKIP_RETURN_CODE) when there is no mpirun.
. "$(dirname "$0")/mpi_test_lib.sh"
mpirun=$1
ranks=$2
shift 2
need_mpirun "$mpirun"
"$mpirun" -np "$ranks" --oversubscribe --allow-run-as-root "$@"
