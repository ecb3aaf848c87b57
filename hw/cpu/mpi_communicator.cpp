#include "hw/cpu/mpi_communicator.hpp"

#include <climits>
#include <string>

#include "hw/hw_error.hpp"

// Converts an MPI return code into an HwError naming the call (NCCLCHECK's habit).
#define PARASHIFT_MPI_CHECK(call)                                \
  do {                                                           \
    const int parashift_mpi_rc = (call);                         \
    if (parashift_mpi_rc != MPI_SUCCESS)                         \
      ::parashift::hw::throw_mpi_error(#call, parashift_mpi_rc); \
  } while (0)

namespace parashift::hw {

[[noreturn]] void throw_mpi_error(const char* call, int code) {
  char text[MPI_MAX_ERROR_STRING] = {};
  int length = 0;
  MPI_Error_string(code, text, &length);
  throw HwError(std::string(call) + " failed: " + text);
}

namespace {

int count_of(std::size_t n) {
  if (n > static_cast<std::size_t>(INT_MAX))
    throw HwError("MPI message of " + std::to_string(n) + " elements exceeds INT_MAX");
  return static_cast<int>(n);
}

}  // namespace

MpiCommunicator::MpiCommunicator(MPI_Comm comm, bool owned) : comm_(comm), owned_(owned) {
  // Errors come back as codes, which PARASHIFT_MPI_CHECK turns into exceptions.
  PARASHIFT_MPI_CHECK(MPI_Comm_set_errhandler(comm_, MPI_ERRORS_RETURN));
  PARASHIFT_MPI_CHECK(MPI_Comm_rank(comm_, &rank_));
  PARASHIFT_MPI_CHECK(MPI_Comm_size(comm_, &size_));
}

MpiCommunicator::~MpiCommunicator() {
  if (!send_requests_.empty())
    MPI_Waitall(static_cast<int>(send_requests_.size()), send_requests_.data(),
                MPI_STATUSES_IGNORE);
  if (owned_) MPI_Comm_free(&comm_);
}

void MpiCommunicator::all_reduce_sum(std::span<float> data) {
  PARASHIFT_MPI_CHECK(
      MPI_Allreduce(MPI_IN_PLACE, data.data(), count_of(data.size()), MPI_FLOAT, MPI_SUM, comm_));
}

void MpiCommunicator::all_reduce_sum(std::span<double> data) {
  PARASHIFT_MPI_CHECK(
      MPI_Allreduce(MPI_IN_PLACE, data.data(), count_of(data.size()), MPI_DOUBLE, MPI_SUM, comm_));
}

void MpiCommunicator::all_reduce_max(std::span<double> data) {
  PARASHIFT_MPI_CHECK(
      MPI_Allreduce(MPI_IN_PLACE, data.data(), count_of(data.size()), MPI_DOUBLE, MPI_MAX, comm_));
}

std::vector<double> MpiCommunicator::all_gather(std::span<const double> mine) {
  std::vector<double> out(mine.size() * static_cast<std::size_t>(size_));
  PARASHIFT_MPI_CHECK(MPI_Allgather(mine.data(), count_of(mine.size()), MPI_DOUBLE, out.data(),
                                    count_of(mine.size()), MPI_DOUBLE, comm_));
  return out;
}

void MpiCommunicator::all_gather(std::span<const float> mine, std::span<float> all) {
  check_block(mine.size(), all.size(), size_, "all_gather");
  PARASHIFT_MPI_CHECK(MPI_Allgather(mine.data(), count_of(mine.size()), MPI_FLOAT, all.data(),
                                    count_of(mine.size()), MPI_FLOAT, comm_));
}

void MpiCommunicator::reduce_scatter_sum(std::span<const float> all, std::span<float> mine) {
  check_block(mine.size(), all.size(), size_, "reduce_scatter_sum");
  PARASHIFT_MPI_CHECK(MPI_Reduce_scatter_block(all.data(), mine.data(), count_of(mine.size()),
                                               MPI_FLOAT, MPI_SUM, comm_));
}

void MpiCommunicator::barrier() {
  PARASHIFT_MPI_CHECK(MPI_Barrier(comm_));
}

void MpiCommunicator::send(std::span<const float> data, int peer, int tag) {
  send_bytes(std::as_bytes(data), peer, tag);
}

void MpiCommunicator::recv(std::span<float> data, int peer, int tag) {
  MPI_Status status;
  PARASHIFT_MPI_CHECK(
      MPI_Recv(data.data(), count_of(data.size()), MPI_FLOAT, peer, tag, comm_, &status));
  int got = 0;
  PARASHIFT_MPI_CHECK(MPI_Get_count(&status, MPI_FLOAT, &got));
  if (static_cast<std::size_t>(got) != data.size())
    throw HwError("recv from rank " + std::to_string(peer) + " tag " + std::to_string(tag) + ": " +
                  std::to_string(got) + " floats for a buffer of " + std::to_string(data.size()));
}

void MpiCommunicator::send_bytes(std::span<const std::byte> data, int peer, int tag) {
  send_buffers_.emplace_back(data.begin(), data.end());
  const auto& buffer = send_buffers_.back();
  MPI_Request request;
  PARASHIFT_MPI_CHECK(
      MPI_Isend(buffer.data(), count_of(buffer.size()), MPI_BYTE, peer, tag, comm_, &request));
  send_requests_.push_back(request);
}

std::vector<std::byte> MpiCommunicator::recv_bytes(int peer, int tag) {
  MPI_Status status;
  PARASHIFT_MPI_CHECK(MPI_Probe(peer, tag, comm_, &status));
  int count = 0;
  PARASHIFT_MPI_CHECK(MPI_Get_count(&status, MPI_BYTE, &count));
  std::vector<std::byte> out(static_cast<std::size_t>(count));
  PARASHIFT_MPI_CHECK(MPI_Recv(out.data(), count, MPI_BYTE, peer, tag, comm_, MPI_STATUS_IGNORE));
  return out;
}

void MpiCommunicator::flush_sends() {
  if (!send_requests_.empty())
    PARASHIFT_MPI_CHECK(MPI_Waitall(static_cast<int>(send_requests_.size()), send_requests_.data(),
                                    MPI_STATUSES_IGNORE));
  send_requests_.clear();
  send_buffers_.clear();
}

std::unique_ptr<Communicator> MpiCommunicator::split(int color, int key) {
  MPI_Comm out = MPI_COMM_NULL;
  PARASHIFT_MPI_CHECK(MPI_Comm_split(comm_, color, key, &out));
  return std::make_unique<MpiCommunicator>(out, true);
}

}  // namespace parashift::hw
