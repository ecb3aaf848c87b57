#include "contract_harness.hpp"

#include <algorithm>
#include <cstdint>
#include <exception>
#include <filesystem>
#include <functional>
#include <thread>
#include <utility>
#include <variant>

#include <pthread.h>
#include <sched.h>

#include "core/rank_layout.hpp"
#include "hw/comm/thread_communicator.hpp"
#include "hw/snapshot/shard_store.hpp"
#include "tests/temp_dir.hpp"

namespace parashift::test {

namespace {

constexpr int kSeqLen = 8;

core::ModelSpec contract_model(int layers) {
  core::ModelSpec m;
  m.name = "contract-tiny";
  m.layers = layers;
  m.hidden = 32;
  m.heads = 2;
  m.kv_heads = 2;
  m.ffn_hidden = 4 * m.hidden;
  m.vocab = 16;
  return m;
}

// The executor runs neither recompute nor optimizer sharding.
core::ParallelPlan executor_plan(core::ParallelPlan plan) {
  plan.recompute = core::Recompute::None;
  plan.optimizer_sharding = core::OptimizerSharding::None;
  plan.micro_batch = 1;
  return plan;
}

// Runs `work(r)` for every rank on its own thread, pinned to `cpu` unless it
// is negative; rethrows the first failure.
void on_every_rank(int ranks, int cpu, const std::function<void(int)>& work) {
  std::vector<std::exception_ptr> errors(static_cast<std::size_t>(ranks));
  {
    std::vector<std::jthread> threads;
    for (int r = 0; r < ranks; ++r)
      threads.emplace_back([&, r] {
        if (cpu >= 0) {
          cpu_set_t set;
          CPU_ZERO(&set);
          CPU_SET(cpu, &set);
          pthread_setaffinity_np(pthread_self(), sizeof(set), &set);
        }
        try {
          work(r);
        } catch (...) {
          errors[static_cast<std::size_t>(r)] = std::current_exception();
        }
      });
  }
  for (const auto& e : errors)
    if (e) std::rethrow_exception(e);
}

}  // namespace

ThreadedHwBackend::ThreadedHwBackend(const core::ModelSpec& model, int seq_len,
                                     const core::ParallelPlan& plan, hw::ComputeClock clock,
                                     std::optional<hw::VirtualLink> link, int spare_gpus,
                                     hw::Communicator* world)
    : model_(model),
      seq_len_(seq_len),
      link_(link),
      placement_(plan.gpus(), spare_gpus),
      cpu_(world == nullptr ? sched_getcpu() : -1),
      slots_(std::make_unique<hw::ComputeSlots>(1)),
      world_(world) {
  options_.compute_clock = clock;
  options_.compute_slots = world == nullptr ? slots_.get() : nullptr;  // a process computes alone
  options_.optimizer.kind = hw::OptimizerKind::Sgd;
  options_.shm_root = test::process_temp_dir().path();  // never /dev/shm's shared names
  // Threads: one job per backend in this process. MPI: each process's own
  // directory, the same job name in every process (its count of them).
  static int jobs = 0;
  options_.job = world == nullptr
                     ? "contract-" + std::to_string(reinterpret_cast<std::uintptr_t>(this))
                     : "contract-mpi-" + std::to_string(jobs++);
  options_.ranks_per_node = 1;  // every GPU a host of its own
  launch(plan);
}

ThreadedHwBackend::~ThreadedHwBackend() {
  std::error_code ec;
  std::filesystem::remove_all(hw::ShardStore::job_dir(options_.shm_root, options_.job), ec);
}

bool ThreadedHwBackend::local(int rank) const {
  return world_ == nullptr || placement_.gpu_of_rank(rank) == world_->rank();
}

void ThreadedHwBackend::on_local_ranks(const std::function<void(int)>& work) {
  if (world_ == nullptr) {
    on_every_rank(static_cast<int>(ranks_.size()), cpu_, work);
    return;
  }
  for (int r = 0; r < static_cast<int>(ranks_.size()); ++r)
    if (local(r)) work(r);
}

core::StepReport ThreadedHwBackend::share(const core::StepReport& mine) {
  constexpr int kTag = 9001;  // the world's own: the ranks talk over groups split from it
  const int root = placement_.gpu_of_rank(0);
  std::vector<std::byte> bytes;
  if (world_->rank() == root) {
    bytes =
        encode_report(mine, {ranks_[0]->layers_per_stage(), ranks_[0]->micro_batches_per_replica(),
                             ranks_[0]->iterations_done()});
    for (int q = 0; q < world_->size(); ++q)
      if (q != root) world_->send_bytes(bytes, q, kTag);
    world_->flush_sends();
  } else {
    bytes = world_->recv_bytes(root, kTag);
  }
  core::StepReport report;
  decode_report(bytes, report, shape_);
  return report;
}

const std::vector<int>& ThreadedHwBackend::layers_per_stage() const {
  return world_ != nullptr ? shape_.layers_per_stage : ranks_[0]->layers_per_stage();
}

const std::vector<int>& ThreadedHwBackend::micro_batches_per_replica() const {
  return world_ != nullptr ? shape_.micro_batches_per_replica
                           : ranks_[0]->micro_batches_per_replica();
}

void ThreadedHwBackend::set_compute_slowdown(int rank, double factor) {
  if (local(rank)) ranks_[static_cast<std::size_t>(rank)]->set_compute_slowdown(factor);
}

void ThreadedHwBackend::launch(const core::ParallelPlan& plan) {
  ranks_.clear();  // the old ranks go before their group
  timed_comms_.clear();
  comms_.clear();
  idle_.reset();
  plan_ = plan;
  const int n = plan.gpus();
  core::TimeNs now = 0;  // the job's virtual time: the old clocks' latest
  for (const auto& c : clocks_)
    if (c) now = std::max(now, c->now_ns());
  if (world_ != nullptr) {
    // This process's rank: the one the placement put on its GPU, if any.
    int mine = -1;
    for (int r = 0; r < n; ++r)
      if (placement_.gpu_of_rank(r) == world_->rank()) mine = r;
    auto group = world_->split(mine >= 0 ? 0 : 1, mine >= 0 ? mine : world_->rank());
    comms_.resize(static_cast<std::size_t>(n));
    (mine >= 0 ? comms_[static_cast<std::size_t>(mine)] : idle_) = std::move(group);
    double t = static_cast<double>(now);  // exact below 2^53 ns
    world_->all_reduce_max(std::span<double>(&t, 1));
    now = static_cast<core::TimeNs>(t);
  } else {
    comms_ = hw::make_thread_group(n);
  }
  clocks_.clear();
  clocks_.resize(comms_.size());
  timed_comms_.resize(comms_.size());
  ranks_.resize(comms_.size());
  for (std::size_t r = 0; r < comms_.size(); ++r) {
    if (!link_ || !comms_[r]) continue;
    clocks_[r] = std::make_unique<hw::VirtualClock>();
    clocks_[r]->reach(now);
    timed_comms_[r] =
        std::make_unique<hw::VirtualTimeCommunicator>(*comms_[r], *clocks_[r], *link_);
  }
  on_local_ranks([&](int r) {
    const auto at = static_cast<std::size_t>(r);
    hw::HwOptions mine = options_;
    mine.host = placement_.gpu_of_rank(r);
    if (link_) mine.virtual_clock = clocks_[at].get();
    ranks_[at] = std::make_unique<hw::HwBackend>(model_, seq_len_, 1, plan, mine,
                                                 link_ ? *timed_comms_[at] : *comms_[at]);
  });
  share_shape();
}

core::Capabilities ThreadedHwBackend::capabilities() const {
  core::Capabilities caps = hw::HwBackend::capabilities_for(model_, seq_len_, plan_.gpus());
  placement_.describe(caps);
  // On virtual time the ranks' links and rings (hw_backend_rings.cpp), as
  // the first local rank's backend describes them.
  for (const auto& rank : ranks_)
    if (rank) {
      const core::Capabilities own = rank->capabilities();
      caps.link_telemetry = own.link_telemetry;
      caps.ring_routes = own.ring_routes;
      break;
    }
  return caps;
}

core::StepReport ThreadedHwBackend::step(const core::ParallelPlan& plan) {
  if (!failing_.empty()) {
    core::StepReport failed;
    failed.iteration = world_ != nullptr ? shape_.iterations_done : ranks_[0]->iterations_done();
    for (int g : std::exchange(failing_, {})) {
      placement_.fail(g);
      std::error_code ec;  // the host's shared memory goes with it
      std::filesystem::remove_all(hw::ShardStore(options_.shm_root, options_.job, g).node_dir(),
                                  ec);
      failed.failures.push_back({"fail", "gpu " + std::to_string(g), 0, failed.iteration, {}});
    }
    return failed;
  }
  std::vector<core::StepReport> reports(ranks_.size());
  on_local_ranks([&](int r) {
    reports[static_cast<std::size_t>(r)] = ranks_[static_cast<std::size_t>(r)]->step(plan);
  });
  // Every rank built the same report; rank 0's is everyone's.
  core::StepReport report = world_ != nullptr ? share(reports[0]) : std::move(reports[0]);
  const core::RankLayout layout(plan);
  const auto& layers = layers_per_stage();
  const auto& micro = micro_batches_per_replica();
  std::vector<double> per_layer;
  for (int r = 0; r < layout.ranks(); ++r) {
    const auto c = layout.coord(r);
    per_layer.push_back(
        static_cast<double>(report.rank_compute_ns[static_cast<std::size_t>(r)]) /
        (micro[static_cast<std::size_t>(c.dp)] * layers[static_cast<std::size_t>(c.pp)]));
  }
  per_layer_ns_.push_back(std::move(per_layer));
  return report;
}

void ThreadedHwBackend::apply(const core::Directive& directive) {
  if (const auto* d = std::get_if<core::RemapDirective>(&directive.action)) {
    placement_.remap(d->rank, d->spare_gpu, "hw harness");
    const core::ParallelPlan plan = plan_;  // a copy: launch() replaces it
    launch(plan);
    return;
  }
  const auto* p = std::get_if<core::ReplanDirective>(&directive.action);
  if (p != nullptr && p->plan.gpus() != static_cast<int>(ranks_.size())) {
    placement_.place_afresh(p->plan.gpus(), p->plan.label(), "hw harness");
    launch(p->plan);
    return;
  }
  on_local_ranks([&](int r) { ranks_[static_cast<std::size_t>(r)]->apply(directive); });
  if (p != nullptr) plan_ = world_ != nullptr ? p->plan : ranks_[0]->plan();
  share_shape();
}

HwHarness::HwHarness(const ContractCase& c, hw::ComputeClock clock,
                     std::optional<hw::VirtualLink> link, hw::Communicator* world)
    : case_(c),
      plan_(executor_plan(c.plan)),
      backend_(contract_model(c.layers), kSeqLen, plan_, clock, link, c.spare_gpus, world),
      slowdown_(static_cast<std::size_t>(plan_.gpus()), 1.0) {}

void HwHarness::slow_down(int rank, double factor) {
  slowdown_[static_cast<std::size_t>(rank)] = factor;
  backend_.set_compute_slowdown(rank, factor);
}

core::JobModel HwHarness::job(std::int64_t total_iterations) const {
  // The case states the parameters a layer holds, from which the controller
  // prices moving it; the tiny executor layers move their real buffers.
  ContractCase c = case_;
  c.plan = plan_;
  return contract_job(c, total_iterations);
}

core::TimeNs HwHarness::layer_ns() const {
  std::vector<double> samples;
  const auto& steps = backend_.per_layer_ns();
  for (std::size_t i = 0; i < std::min(steps.size(), kDecisionWindow); ++i)
    for (std::size_t r = 0; r < steps[i].size(); ++r)
      if (slowdown_[r] == 1.0) samples.push_back(steps[i][r]);
  if (samples.empty()) return 0;
  std::nth_element(samples.begin(),
                   samples.begin() + static_cast<std::ptrdiff_t>(samples.size() / 2),
                   samples.end());
  return static_cast<core::TimeNs>(samples[samples.size() / 2]);
}

std::vector<int> HwHarness::layers_per_virtual_stage() const {
  return backend_.layers_per_stage();
}

std::vector<int> HwHarness::micro_batches() const {
  return backend_.micro_batches_per_replica();
}

hw::Communicator*& mpi_world() {
  static hw::Communicator* world = nullptr;
  return world;
}

}  // namespace parashift::test
