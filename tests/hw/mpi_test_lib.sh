# Sourced by the executor's MPI test scripts (mpirun_or_skip.sh,
# kill_restore.sh, elastic_restore.sh, elastic_shrink.sh, reshard_relaunch.sh).

# need_mpirun MPIRUN: exits 77 (ctest's skip) when there is no such launcher.
# Else gives this script's mpiruns (and the ones the elastic supervisor starts)
# an Open MPI session directory of their own, removed on exit: mpiruns that
# share /tmp/ompi.HOST.UID race to create and remove it, and the loser's
# orte_init fails with "mkdir ... File exists" (seen in CI with ctest -j2).
need_mpirun() {
  if [ -z "$1" ] || ! command -v "$1" >/dev/null 2>&1; then
    echo "mpirun not found: skipping"; exit 77
  fi
  ompi_base=$(mktemp -d "${TMPDIR:-/tmp}/parashift-ompi-XXXXXX")
  export OMPI_MCA_orte_tmpdir_base="$ompi_base"
  trap 'rm -rf "$ompi_base"' EXIT
}

# scratch_dirs NAME: sets $work (a temporary directory) and $shm (the
# shards' node-local shared memory: a fresh directory in /dev/shm where there
# is one, else inside $work, so two runs never share a job directory), both
# removed on exit (with need_mpirun's session directory).
scratch_dirs() {
  work=$(mktemp -d)
  if [ -d /dev/shm ] && [ -w /dev/shm ]; then shm=$(mktemp -d "/dev/shm/parashift-$1-XXXXXX"); else shm=$work/shm; mkdir "$shm"; fi
  trap 'rm -rf "$work" "$shm" ${ompi_base:+"$ompi_base"}' EXIT
}

# losses FIRST LAST < OUTPUT: "iteration loss" of the run's iterations FIRST..LAST.
losses() {
  awk -v first="$1" -v last="$2" '$1 == "iteration" && $2 >= first && $2 <= last { print $2, $4 }'
}

# same_losses WHAT EXPECTED FOUND COUNT: passes when both hold the same COUNT lines.
same_losses() {
  echo "$1"
  echo "  expected: $2" | head -c 2000; echo
  echo "  found:    $3" | head -c 2000; echo
  [ -n "$2" ] && [ "$(echo "$2" | wc -l)" = "$4" ] && [ "$2" = "$3" ] || { echo "loss trajectories differ"; exit 1; }
}
