#include "hw/cpu/mpi_session.hpp"

#include <mpi.h>

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

void MpiSession::abort_job(int status) const {
  MPI_Abort(MPI_COMM_WORLD, status);
  throw HwError("MPI_Abort returned");
}

}  // namespace parashift::hw
