#include "hw/cpu/mpi_session.hpp"

#include <mpi.h>

#include <string>

#include "core/input_error.hpp"
#include "hw/cpu/mpi_communicator.hpp"
#include "hw/hw_error.hpp"

namespace parashift::hw {

MpiSession::MpiSession() {
  int ready = 0;
  MPI_Initialized(&ready);
  if (ready) return;
  int provided = 0;
  if (MPI_Init_thread(nullptr, nullptr, MPI_THREAD_FUNNELED, &provided) != MPI_SUCCESS)
    throw HwError("MPI_Init_thread failed");
  owns_ = true;
}

MpiSession::~MpiSession() {
  int done = 0;
  MPI_Finalized(&done);
  if (owns_ && !done) MPI_Finalize();
}

std::unique_ptr<Communicator> MpiSession::world() const {
  return std::make_unique<MpiCommunicator>(MPI_COMM_WORLD, false);
}

int MpiSession::ranks_per_node() const {
  MPI_Comm node = MPI_COMM_NULL;
  MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_SHARED, 0, MPI_INFO_NULL, &node);
  int world_rank = 0, local = 0, local_rank = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &world_rank);
  MPI_Comm_size(node, &local);
  MPI_Comm_rank(node, &local_rank);
  MPI_Comm_free(&node);
  // Every rank must see the same count, and sit at local_rank in its block.
  const int blocked = world_rank % local == local_rank ? 1 : 0;
  int mine[3] = {local, -local, blocked};
  int all[3] = {0, 0, 0};
  MPI_Allreduce(mine, all, 3, MPI_INT, MPI_MIN, MPI_COMM_WORLD);
  const int fewest = all[0], most = -all[1];
  if (fewest != most)
    throw core::InputError("ranks per node: the launcher placed " + std::to_string(fewest) +
                           " to " + std::to_string(most) +
                           " ranks on a node; expected the same number on every node "
                           "(or pass --ranks-per-node)");
  if (all[2] == 0)
    throw core::InputError(
        "ranks per node: a node's ranks are not consecutive (expected node k "
        "to hold ranks k*" +
        std::to_string(local) + " to (k+1)*" + std::to_string(local) +
        "-1: launch with block placement, e.g. mpirun --map-by slot or srun "
        "--distribution=block, or pass --ranks-per-node)");
  return local;
}

void MpiSession::abort_job(int status) const {
  MPI_Abort(MPI_COMM_WORLD, status);
  throw HwError("MPI_Abort returned");
}

}  // namespace parashift::hw
