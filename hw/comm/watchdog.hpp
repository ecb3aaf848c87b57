// A watchdog over the executor's communication: every call through a
// WatchedCommunicator is recorded as the rank's current operation, and a
// thread ends the run when one has made no progress for the timeout, naming
// the rank, the group and the operation. MPI's blocking calls cannot be
// interrupted, so the handler ends the job (run_cmd: MPI_Abort, exit 3); the
// NCCL path has its own (nccl_communicator.cpp: ncclCommAbort).
//
//   hw::Watchdog dog(std::chrono::seconds(300), world->rank(), handler);
//   hw::WatchedCommunicator job(*world, dog, "world");   // pass &job on
#pragma once

#include <chrono>
#include <condition_variable>
#include <functional>
#include <memory>
#include <mutex>
#include <string>
#include <thread>

#include "hw/comm/communicator.hpp"

namespace parashift::hw {

class Watchdog {
 public:
  using Handler = std::function<void(const std::string& message)>;
  /// `handler` is called once, on the watchdog's thread, with "rank R: OP on
  /// GROUP made no progress for T s"; it should end the run (it may return,
  /// and the watchdog then stops watching).
  Watchdog(std::chrono::milliseconds timeout, int rank, Handler handler);
  ~Watchdog();
  Watchdog(const Watchdog&) = delete;
  Watchdog& operator=(const Watchdog&) = delete;

  /// The rank's operation now ("all_reduce_sum of 1024 floats", "group world
  /// (rank 0 of 4)"); end() when it returns. Operations do not nest.
  void begin(std::string operation, std::string group);
  void end();

 private:
  void watch();

  std::chrono::milliseconds timeout_;
  int rank_;
  Handler handler_;
  std::mutex mutex_;
  std::condition_variable wake_;
  bool stop_ = false;
  bool fired_ = false;
  bool busy_ = false;
  std::uint64_t generation_ = 0;  // one per begin(): a new call is progress
  std::string operation_;
  std::string group_;
  std::chrono::steady_clock::time_point since_;
  std::thread thread_;
};

/// Forwards every call to `inner`, each between dog.begin() and dog.end().
/// Groups split from it are watched too, named "<name>/<colour>".
class WatchedCommunicator : public Communicator {
 public:
  WatchedCommunicator(Communicator& inner, Watchdog& dog, std::string name);
  WatchedCommunicator(std::unique_ptr<Communicator> owned, Watchdog& dog, std::string name);

  int rank() const override { return inner_->rank(); }
  int size() const override { return inner_->size(); }
  void all_reduce_sum(std::span<float> data) override;
  void all_reduce_sum(std::span<double> data) override;
  void all_reduce_max(std::span<double> data) override;
  std::vector<double> all_gather(std::span<const double> mine) override;
  void all_gather(std::span<const float> mine, std::span<float> all) override;
  void reduce_scatter_sum(std::span<const float> all, std::span<float> mine) override;
  void barrier() override;
  void send(std::span<const float> data, int peer, int tag) override;
  void recv(std::span<float> data, int peer, int tag) override;
  void recv_group(std::span<const RecvRequest> requests) override;
  void send_bytes(std::span<const std::byte> data, int peer, int tag) override;
  std::vector<std::byte> recv_bytes(int peer, int tag) override;
  void flush_sends() override;
  void post_sends() override;
  std::unique_ptr<Communicator> split(int color, int key) override;

 private:
  template <typename F>
  auto watched(const std::string& operation, F&& call);

  std::unique_ptr<Communicator> owned_;
  Communicator* inner_;
  Watchdog& dog_;
  std::string name_;
};

}  // namespace parashift::hw
