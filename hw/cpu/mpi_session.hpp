// MPI's lifetime in one process: initialised on construction (unless someone
// already did), finalised on destruction. Under `mpirun -np N` each process
// is one rank; run directly, OpenMPI starts a singleton job of one rank.
#pragma once

#include <memory>

#include "hw/comm/communicator.hpp"

namespace parashift::hw {

class MpiSession {
 public:
  MpiSession();
  ~MpiSession();
  MpiSession(const MpiSession&) = delete;
  MpiSession& operator=(const MpiSession&) = delete;

  /// The whole job (MPI_COMM_WORLD).
  std::unique_ptr<Communicator> world() const;
  /// Collective: the ranks that share this node, as the launcher placed them
  /// (MPI_Comm_split_type, MPI_COMM_TYPE_SHARED), the way NCCL-based jobs
  /// find their local ranks under mpirun or Slurm's srun. Throws
  /// core::InputError when nodes hold different numbers of ranks or a node's
  /// ranks are not consecutive (the executor's node k holds ranks
  /// [k n, (k + 1) n)); pass --ranks-per-node then.
  int ranks_per_node() const;
  /// Stops every rank of the job (MPI_Abort) after an error seen by one rank
  /// only, so the others do not wait forever in a collective.
  [[noreturn]] void abort_job(int status) const;

 private:
  bool owns_ = false;
};

}  // namespace parashift::hw
