#include "hw/comm/thread_communicator.hpp"

#include <algorithm>
#include <condition_variable>
#include <cstring>
#include <deque>
#include <map>
#include <mutex>
#include <tuple>

#include "hw/hw_error.hpp"

namespace parashift::hw {

namespace {

using Bytes = std::vector<std::byte>;

// What the members of one group share.
class Hub {
 public:
  explicit Hub(int size) : size_(size), slots_(static_cast<std::size_t>(size)) {}
  int size() const { return size_; }

  // Every rank's bytes, in rank order, once all have arrived.
  std::shared_ptr<const std::vector<Bytes>> gather(int rank, Bytes mine) {
    std::unique_lock lock(mutex_);
    slots_[static_cast<std::size_t>(rank)] = std::move(mine);
    const long generation = generation_;
    if (++arrived_ == size_) {
      result_ = std::make_shared<const std::vector<Bytes>>(std::move(slots_));
      slots_.assign(static_cast<std::size_t>(size_), Bytes{});
      arrived_ = 0;
      ++generation_;
      changed_.notify_all();
    } else {
      changed_.wait(lock, [&] { return generation_ != generation; });
    }
    return result_;  // valid until this rank joins the next collective
  }

  void post(int from, int to, int tag, Bytes message) {
    {
      std::lock_guard lock(mutex_);
      mailbox_[{from, to, tag}].push_back(std::move(message));
    }
    changed_.notify_all();
  }

  Bytes take(int from, int to, int tag) {
    std::unique_lock lock(mutex_);
    auto& queue = mailbox_[{from, to, tag}];
    changed_.wait(lock, [&] { return !queue.empty(); });
    Bytes out = std::move(queue.front());
    queue.pop_front();
    return out;
  }

  // The child hub of split number `split` for `color`, created by its first member.
  std::shared_ptr<Hub> child(long split, int color, int members) {
    std::lock_guard lock(mutex_);
    auto& entry = children_[{split, color}];
    if (!entry.hub) entry.hub = std::make_shared<Hub>(members);
    auto hub = entry.hub;
    if (++entry.taken == members) children_.erase({split, color});
    return hub;
  }

 private:
  struct Child {
    std::shared_ptr<Hub> hub;
    int taken = 0;
  };
  const int size_;
  std::mutex mutex_;
  std::condition_variable changed_;
  std::vector<Bytes> slots_;
  int arrived_ = 0;
  long generation_ = 0;
  std::shared_ptr<const std::vector<Bytes>> result_;
  std::map<std::tuple<int, int, int>, std::deque<Bytes>> mailbox_;
  std::map<std::pair<long, int>, Child> children_;
};

template <typename T>
Bytes bytes_of(std::span<const T> data) {
  const auto b = std::as_bytes(data);
  return Bytes(b.begin(), b.end());
}

class ThreadCommunicator : public Communicator {
 public:
  ThreadCommunicator(std::shared_ptr<Hub> hub, int rank) : hub_(std::move(hub)), rank_(rank) {}

  int rank() const override { return rank_; }
  int size() const override { return hub_->size(); }

  void all_reduce_sum(std::span<float> data) override {
    reduce(data, [](float a, float b) { return a + b; });
  }
  void all_reduce_sum(std::span<double> data) override {
    reduce(data, [](double a, double b) { return a + b; });
  }
  void all_reduce_max(std::span<double> data) override {
    reduce(data, [](double a, double b) { return std::max(a, b); });
  }
  std::vector<double> all_gather(std::span<const double> mine) override {
    const auto all = hub_->gather(rank_, bytes_of(mine));
    std::vector<double> out(mine.size() * all->size());
    for (std::size_t r = 0; r < all->size(); ++r)
      std::memcpy(out.data() + r * mine.size(), (*all)[r].data(), mine.size_bytes());
    return out;
  }
  void all_gather(std::span<const float> mine, std::span<float> all) override {
    check_block(mine.size(), all.size(), size(), "all_gather");
    const auto gathered = hub_->gather(rank_, bytes_of(mine));
    for (std::size_t r = 0; r < gathered->size(); ++r)
      std::memcpy(all.data() + r * mine.size(), (*gathered)[r].data(), mine.size_bytes());
  }
  // Block rank() of the sum, added in rank order (as reduce() does).
  void reduce_scatter_sum(std::span<const float> all, std::span<float> mine) override {
    check_block(mine.size(), all.size(), size(), "reduce_scatter_sum");
    const auto gathered = hub_->gather(rank_, bytes_of(all));
    const std::size_t at = static_cast<std::size_t>(rank_) * mine.size();
    std::vector<float> theirs(mine.size());
    for (std::size_t r = 0; r < gathered->size(); ++r) {
      std::memcpy(theirs.data(), (*gathered)[r].data() + at * sizeof(float), mine.size_bytes());
      for (std::size_t i = 0; i < mine.size(); ++i)
        mine[i] = r == 0 ? theirs[i] : mine[i] + theirs[i];
    }
  }
  void barrier() override { hub_->gather(rank_, {}); }

  void send(std::span<const float> data, int peer, int tag) override {
    hub_->post(rank_, peer, tag, bytes_of(data));
  }
  void recv(std::span<float> data, int peer, int tag) override {
    const Bytes message = hub_->take(peer, rank_, tag);
    if (message.size() != data.size_bytes())
      throw HwError("thread communicator: rank " + std::to_string(rank_) + " expected " +
                    std::to_string(data.size_bytes()) + " bytes from rank " + std::to_string(peer) +
                    " (tag " + std::to_string(tag) + "), got " + std::to_string(message.size()));
    std::memcpy(data.data(), message.data(), message.size());
  }
  void send_bytes(std::span<const std::byte> data, int peer, int tag) override {
    hub_->post(rank_, peer, tag, Bytes(data.begin(), data.end()));
  }
  std::vector<std::byte> recv_bytes(int peer, int tag) override {
    return hub_->take(peer, rank_, tag);
  }
  void flush_sends() override {}  // delivered when posted

  std::unique_ptr<Communicator> split(int color, int key) override {
    const int mine[2] = {color, key};
    const auto all = hub_->gather(rank_, bytes_of(std::span<const int>(mine, 2)));
    std::vector<std::pair<int, int>> members;  // (key, rank) of this color
    for (std::size_t r = 0; r < all->size(); ++r) {
      int theirs[2];
      std::memcpy(theirs, (*all)[r].data(), sizeof theirs);
      if (theirs[0] == color) members.emplace_back(theirs[1], static_cast<int>(r));
    }
    std::sort(members.begin(), members.end());
    const auto me = std::find(members.begin(), members.end(), std::pair{key, rank_});
    auto child = hub_->child(splits_++, color, static_cast<int>(members.size()));
    return std::make_unique<ThreadCommunicator>(std::move(child),
                                                static_cast<int>(me - members.begin()));
  }

 private:
  template <typename T, typename Op>
  void reduce(std::span<T> data, Op op) {
    const auto all = hub_->gather(rank_, bytes_of(std::span<const T>(data)));
    std::vector<T> theirs(data.size());
    for (std::size_t r = 0; r < all->size(); ++r) {
      std::memcpy(theirs.data(), (*all)[r].data(), data.size_bytes());
      for (std::size_t i = 0; i < data.size(); ++i)
        data[i] = r == 0 ? theirs[i] : op(data[i], theirs[i]);
    }
  }

  std::shared_ptr<Hub> hub_;
  int rank_;
  long splits_ = 0;
};

}  // namespace

std::vector<std::unique_ptr<Communicator>> make_thread_group(int size) {
  auto hub = std::make_shared<Hub>(size);
  std::vector<std::unique_ptr<Communicator>> out;
  for (int r = 0; r < size; ++r) out.push_back(std::make_unique<ThreadCommunicator>(hub, r));
  return out;
}

}  // namespace parashift::hw
