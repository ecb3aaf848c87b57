// The controller contract (tests/core/controller/controller_contract.hpp),
// every case, on the CPU executor's production path: each rank an MPI
// process with its own HwBackend over MpiCommunicator groups
// (MpiCountedHwHarness), on the counted clock and virtual time, so every
// check is the exact one the fake is held to. Run under mpirun with one
// process per GPU the cases use, 16 (the largest case: pp 4 x dp 4); the
// processes a case leaves out are its spares and stand by for its reports.
// Every process runs the same cases and decides the same from the same
// reports; process 0 prints doctest's report, the others say only when
// they failed.
#define DOCTEST_CONFIG_IMPLEMENT
#include <cstdio>
#include <memory>

#include "contract_harness.hpp"
#include "controller_contract.hpp"
#include "hw/cpu/mpi_session.hpp"

PARASHIFT_CONTROLLER_CONTRACT(parashift::test::MpiCountedHwHarness);

int main(int argc, char** argv) {
  using namespace parashift;
  hw::MpiSession session;
  std::unique_ptr<hw::Communicator> world = session.world();
  if (world->size() < 16) {
    std::fprintf(stderr, "mpi_contract: expected 16 or more MPI processes, got %d\n",
                 world->size());
    return 2;
  }
  test::mpi_world() = world.get();
  doctest::Context context(argc, argv);
  context.setOption("no-colors", true);
  if (world->rank() != 0) context.setOption("out", "/dev/null");
  const int failed = context.run();
  if (failed != 0) std::fprintf(stderr, "mpi_contract: process %d failed\n", world->rank());
  world->barrier();
  return failed;
}
