#include "hw/comm/watchdog.hpp"

#include <algorithm>
#include <cstdio>
#include <utility>

namespace parashift::hw {

Watchdog::Watchdog(std::chrono::milliseconds timeout, int rank, Handler handler)
    : timeout_(timeout), rank_(rank), handler_(std::move(handler)), thread_([this] { watch(); }) {}

Watchdog::~Watchdog() {
  {
    const std::lock_guard<std::mutex> lock(mutex_);
    stop_ = true;
  }
  wake_.notify_all();
  thread_.join();
}

void Watchdog::begin(std::string operation, std::string group) {
  const std::lock_guard<std::mutex> lock(mutex_);
  busy_ = true;
  ++generation_;
  operation_ = std::move(operation);
  group_ = std::move(group);
  since_ = std::chrono::steady_clock::now();
}

void Watchdog::end() {
  const std::lock_guard<std::mutex> lock(mutex_);
  busy_ = false;
}

void Watchdog::watch() {
  // Checks a few times a timeout, so a stall is reported within 1.25 x it.
  const auto poll = std::max(std::chrono::milliseconds(1), timeout_ / 4);
  std::unique_lock<std::mutex> lock(mutex_);
  while (!stop_ && !fired_) {
    wake_.wait_for(lock, poll);
    if (stop_ || !busy_) continue;
    const auto stalled = std::chrono::steady_clock::now() - since_;
    if (stalled < timeout_) continue;
    fired_ = true;
    const double seconds = std::chrono::duration<double>(stalled).count();
    char stall[32];
    std::snprintf(stall, sizeof stall, "%.1f", seconds);
    const std::string message = "watchdog: rank " + std::to_string(rank_) + ": " + operation_ +
                                " on " + group_ + " made no progress for " + stall +
                                " s (timeout " + std::to_string(timeout_.count()) + " ms)";
    lock.unlock();
    handler_(message);
    lock.lock();
  }
}

WatchedCommunicator::WatchedCommunicator(Communicator& inner, Watchdog& dog, std::string name)
    : inner_(&inner), dog_(dog), name_(std::move(name)) {}

WatchedCommunicator::WatchedCommunicator(std::unique_ptr<Communicator> owned, Watchdog& dog,
                                         std::string name)
    : owned_(std::move(owned)), inner_(owned_.get()), dog_(dog), name_(std::move(name)) {}

template <typename F>
auto WatchedCommunicator::watched(const std::string& operation, F&& call) {
  dog_.begin(operation, "group " + name_ + " (rank " + std::to_string(inner_->rank()) + " of " +
                            std::to_string(inner_->size()) + ")");
  struct End {
    Watchdog& dog;
    ~End() { dog.end(); }
  } end{dog_};
  return call();
}

namespace {

std::string of(const char* op, std::size_t n, const char* unit) {
  return std::string(op) + " of " + std::to_string(n) + " " + unit;
}

std::string with(const char* op, int peer, int tag) {
  return std::string(op) + " (peer " + std::to_string(peer) + ", tag " + std::to_string(tag) + ")";
}

}  // namespace

void WatchedCommunicator::all_reduce_sum(std::span<float> data) {
  watched(of("all_reduce_sum", data.size(), "floats"), [&] { inner_->all_reduce_sum(data); });
}
void WatchedCommunicator::all_reduce_sum(std::span<double> data) {
  watched(of("all_reduce_sum", data.size(), "doubles"), [&] { inner_->all_reduce_sum(data); });
}
void WatchedCommunicator::all_reduce_max(std::span<double> data) {
  watched(of("all_reduce_max", data.size(), "doubles"), [&] { inner_->all_reduce_max(data); });
}
std::vector<double> WatchedCommunicator::all_gather(std::span<const double> mine) {
  return watched(of("all_gather", mine.size(), "doubles"),
                 [&] { return inner_->all_gather(mine); });
}
void WatchedCommunicator::all_gather(std::span<const float> mine, std::span<float> all) {
  watched(of("all_gather", mine.size(), "floats"), [&] { inner_->all_gather(mine, all); });
}
void WatchedCommunicator::reduce_scatter_sum(std::span<const float> all, std::span<float> mine) {
  watched(of("reduce_scatter_sum", all.size(), "floats"),
          [&] { inner_->reduce_scatter_sum(all, mine); });
}
void WatchedCommunicator::barrier() {
  watched("barrier", [&] { inner_->barrier(); });
}
void WatchedCommunicator::send(std::span<const float> data, int peer, int tag) {
  watched(with("send", peer, tag), [&] { inner_->send(data, peer, tag); });
}
void WatchedCommunicator::recv(std::span<float> data, int peer, int tag) {
  watched(with("recv", peer, tag), [&] { inner_->recv(data, peer, tag); });
}
void WatchedCommunicator::recv_group(std::span<const RecvRequest> requests) {
  const std::string op =
      "recv_group of " + std::to_string(requests.size()) + " receives" +
      (requests.empty() ? "" : ", first" + with("", requests[0].peer, requests[0].tag));
  watched(op, [&] { inner_->recv_group(requests); });
}
void WatchedCommunicator::send_bytes(std::span<const std::byte> data, int peer, int tag) {
  watched(with("send_bytes", peer, tag), [&] { inner_->send_bytes(data, peer, tag); });
}
std::vector<std::byte> WatchedCommunicator::recv_bytes(int peer, int tag) {
  return watched(with("recv_bytes", peer, tag), [&] { return inner_->recv_bytes(peer, tag); });
}
void WatchedCommunicator::flush_sends() {
  watched("flush_sends", [&] { inner_->flush_sends(); });
}
void WatchedCommunicator::post_sends() {
  watched("post_sends", [&] { inner_->post_sends(); });
}
std::unique_ptr<Communicator> WatchedCommunicator::split(int color, int key) {
  auto inner = watched("split (colour " + std::to_string(color) + ")",
                       [&] { return inner_->split(color, key); });
  return std::make_unique<WatchedCommunicator>(std::move(inner), dog_,
                                               name_ + "/" + std::to_string(color));
}

}  // namespace parashift::hw
