// Communicator over an MPI communicator (OpenMPI on the CPU flavour). Sends
// are non-blocking (MPI_Isend of a private copy) so a 1F1B schedule with
// blocking receives cannot deadlock; flush_sends() waits for them.
#pragma once

#include <deque>
#include <vector>

#include <mpi.h>

#include "hw/comm/communicator.hpp"

namespace parashift::hw {

class MpiCommunicator : public Communicator {
 public:
  /// Wraps `comm`; frees it on destruction when `owned`.
  MpiCommunicator(MPI_Comm comm, bool owned);
  ~MpiCommunicator() override;
  MpiCommunicator(const MpiCommunicator&) = delete;
  MpiCommunicator& operator=(const MpiCommunicator&) = delete;

  int rank() const override { return rank_; }
  int size() const override { return size_; }
  void all_reduce_sum(std::span<float> data) override;
  void all_reduce_sum(std::span<double> data) override;
  void all_reduce_max(std::span<double> data) override;
  std::vector<double> all_gather(std::span<const double> mine) override;
  void all_gather(std::span<const float> mine, std::span<float> all) override;
  void reduce_scatter_sum(std::span<const float> all, std::span<float> mine) override;
  void barrier() override;
  void send(std::span<const float> data, int peer, int tag) override;
  void recv(std::span<float> data, int peer, int tag) override;
  void send_bytes(std::span<const std::byte> data, int peer, int tag) override;
  std::vector<std::byte> recv_bytes(int peer, int tag) override;
  void flush_sends() override;
  std::unique_ptr<Communicator> split(int color, int key) override;

 private:
  MPI_Comm comm_;
  bool owned_;
  int rank_ = 0;
  int size_ = 1;
  std::deque<std::vector<std::byte>> send_buffers_;
  std::vector<MPI_Request> send_requests_;
};

}  // namespace parashift::hw
