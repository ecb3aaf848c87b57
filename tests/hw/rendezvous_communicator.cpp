#include "tests/hw/rendezvous_communicator.hpp"

#include <condition_variable>
#include <cstring>
#include <deque>
#include <map>
#include <mutex>
#include <string>

#include "hw/comm/deferred_sends.hpp"
#include "hw/comm/thread_communicator.hpp"
#include "hw/hw_error.hpp"

namespace parashift::test {

namespace {

using Bytes = std::vector<std::byte>;

// One posted send or receive; done once matched.
struct Op {
  const std::byte* src = nullptr;  // send
  std::byte* dst = nullptr;        // receive
  std::size_t bytes = 0;
  bool done = false;
  std::string error;  // a size mismatch
};
using OpPtr = std::shared_ptr<Op>;

// What the ranks of one communicator share: the posted operations per
// (sender, receiver), matched in order.
class Fabric {
 public:
  explicit Fabric(std::chrono::milliseconds patience) : patience_(patience) {}

  OpPtr post_send(int from, int to, const std::byte* data, std::size_t bytes) {
    return post(sends_, from, to, Op{data, nullptr, bytes, false, {}});
  }
  OpPtr post_recv(int from, int to, std::byte* data, std::size_t bytes) {
    return post(recvs_, from, to, Op{nullptr, data, bytes, false, {}});
  }

  // Until every op is done; a rank that waits past the patience declares a
  // deadlock, and every rank waiting here then fails too.
  void wait(int me, const std::vector<OpPtr>& ops) {
    std::unique_lock lock(mutex_);
    const auto all_done = [&] {
      for (const auto& op : ops)
        if (!op->done) return false;
      return true;
    };
    if (!changed_.wait_for(lock, patience_, [&] { return all_done() || !failure_.empty(); }))
      failure_ = "rendezvous: rank " + std::to_string(me) + " waited " +
                 std::to_string(patience_.count()) + " ms for its sends and receives: a deadlock";
    if (!failure_.empty()) {
      changed_.notify_all();
      throw hw::HwError(failure_);
    }
    for (const auto& op : ops)
      if (!op->error.empty()) throw hw::HwError(op->error);
  }

 private:
  using Queues = std::map<std::pair<int, int>, std::deque<OpPtr>>;

  OpPtr post(Queues& queues, int from, int to, Op op) {
    auto posted = std::make_shared<Op>(std::move(op));
    std::lock_guard lock(mutex_);
    queues[{from, to}].push_back(posted);
    match();
    return posted;
  }

  void match() {
    for (auto& [key, sends] : sends_) {
      auto& recvs = recvs_[key];
      while (!sends.empty() && !recvs.empty()) {
        const OpPtr s = sends.front(), r = recvs.front();
        sends.pop_front();
        recvs.pop_front();
        if (s->bytes != r->bytes) {
          s->error = r->error = "rendezvous: rank " + std::to_string(key.first) + " sent " +
                                std::to_string(s->bytes) + " bytes where rank " +
                                std::to_string(key.second) + " receives " +
                                std::to_string(r->bytes);
        } else if (s->bytes > 0) {
          std::memcpy(r->dst, s->src, s->bytes);
        }
        s->done = r->done = true;
      }
    }
    changed_.notify_all();
  }

  const std::chrono::milliseconds patience_;
  std::mutex mutex_;
  std::condition_variable changed_;
  Queues sends_, recvs_;
  std::string failure_;
};

// Fabrics of split children, handed from the child's rank 0 to the others.
class FabricRegistry {
 public:
  static FabricRegistry& instance() {
    static FabricRegistry registry;
    return registry;
  }
  long add(std::shared_ptr<Fabric> fabric, int members) {
    std::lock_guard lock(mutex_);
    entries_[next_] = {std::move(fabric), members};
    return next_++;
  }
  std::shared_ptr<Fabric> take(long id) {
    std::lock_guard lock(mutex_);
    auto it = entries_.find(id);
    auto fabric = it->second.fabric;
    if (--it->second.left == 0) entries_.erase(it);
    return fabric;
  }

 private:
  struct Entry {
    std::shared_ptr<Fabric> fabric;
    int left = 0;
  };
  std::mutex mutex_;
  std::map<long, Entry> entries_;
  long next_ = 0;
};

class RendezvousCommunicator : public hw::Communicator {
 public:
  RendezvousCommunicator(std::unique_ptr<hw::Communicator> inner, std::shared_ptr<Fabric> fabric,
                         SendMode mode, std::chrono::milliseconds patience)
      : inner_(std::move(inner)), fabric_(std::move(fabric)), mode_(mode), patience_(patience) {}

  int rank() const override { return inner_->rank(); }
  int size() const override { return inner_->size(); }

  void all_reduce_sum(std::span<float> data) override {
    before_collective();
    inner_->all_reduce_sum(data);
  }
  void all_reduce_sum(std::span<double> data) override {
    before_collective();
    inner_->all_reduce_sum(data);
  }
  void all_reduce_max(std::span<double> data) override {
    before_collective();
    inner_->all_reduce_max(data);
  }
  std::vector<double> all_gather(std::span<const double> mine) override {
    before_collective();
    return inner_->all_gather(mine);
  }
  void all_gather(std::span<const float> mine, std::span<float> all) override {
    before_collective();
    inner_->all_gather(mine, all);
  }
  void reduce_scatter_sum(std::span<const float> all, std::span<float> mine) override {
    before_collective();
    inner_->reduce_scatter_sum(all, mine);
  }
  void barrier() override {
    before_collective();
    inner_->barrier();
  }

  void send(std::span<const float> data, int peer, int /*tag*/) override {
    const auto bytes = std::as_bytes(data);
    if (!bytes.empty()) queue(Bytes(bytes.begin(), bytes.end()), peer, false);
  }
  void recv(std::span<float> data, int peer, int /*tag*/) override {
    if (!data.empty()) receive({{std::as_writable_bytes(data), peer}}, false);
  }
  void recv_group(std::span<const hw::RecvRequest> requests) override {
    std::vector<Incoming> in;
    for (const hw::RecvRequest& r : requests)
      if (!r.data.empty()) in.push_back({std::as_writable_bytes(r.data), r.peer});
    if (!in.empty()) receive(in, false);
  }
  void send_bytes(std::span<const std::byte> data, int peer, int /*tag*/) override {
    const auto length = static_cast<std::uint64_t>(data.size());
    const auto header = std::as_bytes(std::span<const std::uint64_t>(&length, 1));
    queue(Bytes(header.begin(), header.end()), peer, true);
    if (!data.empty()) queue(Bytes(data.begin(), data.end()), peer, false);
  }
  std::vector<std::byte> recv_bytes(int peer, int /*tag*/) override {
    std::uint64_t length = 0;
    receive({{std::as_writable_bytes(std::span<std::uint64_t>(&length, 1)), peer}}, true);
    Bytes out(length);
    if (length > 0) receive({{out, peer}}, false);
    return out;
  }
  void flush_sends() override {
    group(deferred_.take(false), {});
    wait_in_flight();
  }
  // A group of its own, not waited for: the next group waits behind it.
  void post_sends() override {
    if (mode_ == SendMode::Eager) return;  // sent already
    const auto ids = deferred_.take(false);
    if (!ids.empty()) group(ids, {}, /*wait=*/false);
  }

  std::unique_ptr<hw::Communicator> split(int color, int key) override {
    before_collective();
    auto child = inner_->split(color, key);
    std::shared_ptr<Fabric> fabric;
    constexpr int kFabricTag = 1;
    if (child->rank() == 0) {
      fabric = std::make_shared<Fabric>(patience_);
      if (child->size() == 1)
        return std::make_unique<RendezvousCommunicator>(std::move(child), std::move(fabric), mode_,
                                                        patience_);
      const long id = FabricRegistry::instance().add(fabric, child->size() - 1);
      for (int r = 1; r < child->size(); ++r)
        child->send_bytes(std::as_bytes(std::span<const long>(&id, 1)), r, kFabricTag);
    } else {
      const Bytes id_bytes = child->recv_bytes(0, kFabricTag);
      long id = 0;
      std::memcpy(&id, id_bytes.data(), sizeof id);
      fabric = FabricRegistry::instance().take(id);
    }
    return std::make_unique<RendezvousCommunicator>(std::move(child), std::move(fabric), mode_,
                                                    patience_);
  }

 private:
  struct Incoming {
    std::span<std::byte> into;
    int peer = 0;
  };

  void queue(Bytes payload, int peer, bool header) {
    const std::size_t id = deferred_.queue(peer, header);
    queued_.emplace(id, Queued{std::move(payload), peer});
    if (mode_ == SendMode::Eager) group(deferred_.take(false), {}, /*wait=*/false);
  }

  void receive(const std::vector<Incoming>& in, bool header) {
    std::vector<std::size_t> ids;  // eager: the sends went out on their own
    if (mode_ == SendMode::Deferred) ids = deferred_.take(header);
    if (mode_ == SendMode::DeferredAll) ids = deferred_.take(false);
    group(ids, in);
  }

  // One group: these queued sends and these receives (none: a flush).
  // NCCL runs a communicator's groups in order: earlier ones finish first.
  void group(const std::vector<std::size_t>& ids, const std::vector<Incoming>& in,
             bool wait = true) {
    wait_in_flight();
    std::vector<OpPtr> ops;
    for (const std::size_t id : ids) {
      const Queued& q = queued_.at(id);
      ops.push_back(fabric_->post_send(rank(), q.peer, q.payload.data(), q.payload.size()));
    }
    for (const Incoming& r : in)
      ops.push_back(fabric_->post_recv(r.peer, rank(), r.into.data(), r.into.size()));
    in_flight_ = ops;
    in_flight_ids_ = ids;
    if (wait) wait_in_flight();
  }

  void wait_in_flight() {
    if (in_flight_.empty()) return;
    const auto ops = std::move(in_flight_);
    in_flight_.clear();
    fabric_->wait(rank(), ops);
    for (const std::size_t id : in_flight_ids_) queued_.erase(id);
    in_flight_ids_.clear();
    deferred_.forget_issued();
  }

  void before_collective() {
    if (!deferred_.empty() && mode_ != SendMode::Eager)
      throw hw::HwError("rendezvous: a collective with sends still queued");
    wait_in_flight();
  }

  struct Queued {
    Bytes payload;
    int peer = 0;
  };
  std::unique_ptr<hw::Communicator> inner_;
  std::shared_ptr<Fabric> fabric_;
  SendMode mode_;
  std::chrono::milliseconds patience_;
  hw::DeferredSends deferred_;
  std::map<std::size_t, Queued> queued_;
  std::vector<OpPtr> in_flight_;
  std::vector<std::size_t> in_flight_ids_;
};

}  // namespace

std::vector<std::unique_ptr<hw::Communicator>> make_rendezvous_group(
    int size, SendMode mode, std::chrono::milliseconds patience) {
  auto inner = hw::make_thread_group(size);
  auto fabric = std::make_shared<Fabric>(patience);
  std::vector<std::unique_ptr<hw::Communicator>> out;
  for (auto& comm : inner)
    out.push_back(
        std::make_unique<RendezvousCommunicator>(std::move(comm), fabric, mode, patience));
  return out;
}

}  // namespace parashift::test
