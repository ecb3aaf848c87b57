#include "hw/exec/hw_backend.hpp"

#include <algorithm>
#include <array>
#include <chrono>
#include <numeric>
#include <stdexcept>
#include <string>
#include <utility>

#include <cmath>
#include <csignal>

#include <time.h>
#include <unistd.h>

#include "core/input_error.hpp"
#include "core/pipeline_schedule.hpp"
#include "core/work_split.hpp"
#include "hw/cpu/host_allocator.hpp"
#include "hw/device/host_kernels.hpp"
#include "hw/exec/step_counters.hpp"
#include "hw/model/layer_ops.hpp"

namespace parashift::hw {

namespace {

core::TimeNs thread_cpu_ns() {
  timespec ts{};
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
  return static_cast<core::TimeNs>(ts.tv_sec) * 1'000'000'000 + ts.tv_nsec;
}

// Holds a compute slot, when the job has them, while in scope; give() and
// take() let it go around a collective inside a compute segment.
class SlotGuard {
 public:
  explicit SlotGuard(ComputeSlots* slots) : slots_(slots) { take(); }
  ~SlotGuard() { give(); }
  SlotGuard(const SlotGuard&) = delete;
  SlotGuard& operator=(const SlotGuard&) = delete;
  void give() {
    if (slots_ != nullptr && held_) slots_->release();
    held_ = false;
  }
  void take() {
    if (slots_ != nullptr && !held_) slots_->acquire();
    held_ = true;
  }

 private:
  ComputeSlots* slots_;
  bool held_ = false;
};

// Tags on the pipeline group: the activations into virtual stage g 2g, the
// gradients into it 2g + 1. MPI matches by tag, and within a tag in order
// (non-overtaking): every stage's schedule lists a tag's micro-batches in
// the same order. NCCL has no tags and matches a pair's messages by order
// alone, which agrees because the two stages' steps post a pair's messages
// across tags in the same order too (tests/hw/rendezvous_test.cpp checks
// the losses against the tag-matching thread group).
int forward_tag(int virtual_stage) {
  return 2 * virtual_stage;
}
int backward_tag(int virtual_stage) {
  return 2 * virtual_stage + 1;
}

std::span<float> span_of(DeviceBuffer& b) {
  return {b.data(), b.size()};
}

}  // namespace

HwBackend::HwBackend(const core::ModelSpec& model, int seq_len, std::uint64_t seed,
                     const core::ParallelPlan& plan, HwOptions options, Communicator& world)
    : own_kernels_(options.kernels == nullptr ? std::make_unique<HostKernels>() : nullptr),
      kernels_(options.kernels == nullptr ? own_kernels_.get() : options.kernels),
      model_(model),
      plan_(plan),
      seed_(seed),
      options_(std::move(options)),
      world_(world),
      store_(options_.shm_root, options_.job, host(), plan.label()) {
  keep_freed_host_memory();  // iterations reuse their buffers instead of faulting them in
  if (options_.virtual_clock != nullptr && options_.compute_clock != ComputeClock::Counted)
    throw std::invalid_argument("hw backend: a virtual clock needs the counted compute clock");
  if (options_.virtual_clock != nullptr)
    virtual_world_ = dynamic_cast<VirtualTimeCommunicator*>(&world_);
  if (world.size() != plan.gpus())
    throw core::InputError("plan: tp*pp*dp*cp=" + std::to_string(plan.gpus()) +
                           " ranks, but the job has " + std::to_string(world.size()) +
                           " (launch with mpirun -np " + std::to_string(plan.gpus()) + ")");
  if (const std::string problem = executor_plan_problem(plan, seq_len); !problem.empty())
    throw core::InputError(problem);
  plan.validate(model, seq_len, world.size());
  if (world.size() % ranks_per_node() != 0)
    throw core::InputError("ranks_per_node=" + std::to_string(ranks_per_node()) +
                           " does not divide the job's " + std::to_string(world.size()) + " ranks");
  shape_.seq_len = seq_len;
  if (options_.text) text_embedding_ = options_.text->embedding(model_.hidden, seed_);
  setup();
  const std::vector<int> offsets = core::offsets_of(layers_per_stage_);
  for (int chunk = 0; chunk < plan.virtual_stages; ++chunk) {
    const auto g = static_cast<std::size_t>(core::virtual_stage(plan.pp, groups_.coord.pp, chunk));
    for (int l = offsets[g]; l < offsets[g + 1]; ++l) layers_.emplace(l, new_slot(l));
  }
  // The buffers' zeroing and uploads are done before a communicator (NCCL,
  // on its own stream) may write into them.
  kernels_->synchronize();
}

void HwBackend::setup() {
  const core::ParallelPlan& plan = plan_;
  shape_ = {model_.hidden,  model_.heads,     model_.ffn_hidden,     plan.tp,
            shape_.seq_len, plan.micro_batch, plan.sequence_parallel};
  groups_ = make_comm_groups(world_, plan);
  dp_orders_.clear();  // the new groups start in the launch order
  rebuild_sync();
  workspace_.emplace(*kernels_, shape_, plan.recompute);
  // This rank's tokens x hidden: all of them, or its shard under sequence parallelism.
  const auto activation = static_cast<std::size_t>(shape_.tokens_local()) * shape_.hidden;
  activation_ = DeviceBuffer(*kernels_, activation);
  gradient_ = DeviceBuffer(*kernels_, activation);
  target_ = DeviceBuffer(*kernels_, activation);
  layers_per_stage_ = core::even_split(model_.layers, plan.pp * plan.virtual_stages);
  micro_batches_ = std::vector<int>(static_cast<std::size_t>(plan.dp), plan.micro_batches());
}

core::TimeNs HwBackend::compute_now_ns() const {
  return options_.compute_clock == ComputeClock::ThreadCpu ? thread_cpu_ns() : now_ns();
}

core::TimeNs HwBackend::counted_ns(double units) const {
  return static_cast<core::TimeNs>(std::llround(units * plan_.micro_batch / plan_.tp *
                                                static_cast<double>(options_.counted_unit_ns) *
                                                slowdown_));
}

void HwBackend::set_compute_slowdown(double factor) {
  if (!(factor >= 1.0))
    throw std::invalid_argument("compute slowdown: expected a factor >= 1, found " +
                                std::to_string(factor));
  slowdown_ = factor;
}

void HwBackend::stretch(core::TimeNs segment_ns) const {
  if (slowdown_ == 1.0 || options_.compute_clock == ComputeClock::Counted) return;
  const auto extra = static_cast<core::TimeNs>(static_cast<double>(segment_ns) * (slowdown_ - 1.0));
  const core::TimeNs start = compute_now_ns();
  while (compute_now_ns() - start < extra) {
  }
}

HwBackend::LayerSlot HwBackend::new_slot(int layer) const {
  LayerSlot slot;
  slot.weights = init_device_layer(*kernels_, shape_, seed_, layer, groups_.coord.tp);
  slot.grads = zero_device_layer(*kernels_, shape_);
  slot.state = optimizer_state();
  return slot;
}

bool HwBackend::sharded_optimizer() const {
  // (One replica has nothing to share out: the replicated update is the same.)
  return plan_.optimizer_sharding == core::OptimizerSharding::Distributed && plan_.dp > 1;
}

DeviceOptimizerState HwBackend::optimizer_state() const {
  const bool sharded = sharded_optimizer();
  return zero_device_state(*kernels_, options_.optimizer, shape_, sharded ? plan_.dp : 1,
                           sharded ? groups_.coord.dp : 0);
}

HwBackend::LayerSlot HwBackend::blank_slot() const {
  LayerSlot slot;
  slot.weights = zero_device_layer(*kernels_, shape_);
  slot.grads = zero_device_layer(*kernels_, shape_);
  slot.state = optimizer_state();
  return slot;
}

namespace {

// The last of `pool`'s spares, or a new one when it has none.
template <typename T, typename Make>
T take_spare(std::vector<T>& pool, const Make& make) {
  if (pool.empty()) return make();
  T spare = std::move(pool.back());
  pool.pop_back();
  return spare;
}

}  // namespace

DeviceOutputGrads HwBackend::take_grads() {
  return take_spare(free_grads_, [&] { return DeviceOutputGrads(*kernels_, shape_); });
}

DeviceStash HwBackend::take_stash() {
  return take_spare(free_stash_, [&] { return DeviceStash(*kernels_, shape_, plan_.recompute); });
}

core::StepReport HwBackend::run_step(const core::ParallelPlan& plan) {
  if (plan.label() != plan_.label() || plan.global_batch != plan_.global_batch)
    throw std::invalid_argument("hw backend built for plan '" + plan_.label() +
                                "' cannot step plan '" + plan.label() +
                                "' (apply a ReplanDirective first)");
  if (options_.kill_before_iteration == iteration_)
    ::kill(::getpid(), SIGKILL);  // a real kill -9: no clean-up, shards stay in /dev/shm
  Counters counters;
  const core::TimeNs start = now_ns(options_.virtual_clock);
  for (auto& [index, slot] : layers_)
    for (DeviceBuffer* g : slot.grads.all()) kernels_->fill_zero(g->data(), g->size());
  run_pipeline(counters);
  const bool norms = measures_gradient_norms();
  const double local_sq = norms ? gradient_sq_sum() : 0.0;
  // The local gradients the compressors' fits are measured on, after the
  // iteration's time is taken (only the copy is in it).
  const bool probe = !options_.compression_probes.empty() &&
                     iteration_ % std::max(1, options_.compression_probe_every) == 0;
  const std::vector<HostMatrix> probed = probe ? host_gradients() : std::vector<HostMatrix>{};
  const bool sharded = sharded_optimizer();
  if (sharded) {
    reduce_scatter_gradients(counters);
  } else {
    all_reduce_gradients(counters);
  }
  {
    SlotGuard held(options_.compute_slots);
    const core::TimeNs t0 = compute_now_ns();
    if (sharded) {
      update_weight_shards();
    } else {
      for (auto& [index, slot] : layers_)
        device_optimizer_update(*kernels_, options_.optimizer, iteration_ + 1, slot.weights,
                                slot.grads, slot.state);
    }
    kernels_->synchronize();
    stretch(compute_now_ns() - t0);
    // Its own time, apart from the layers' compute as the simulator reports
    // it; counted work covers layers alone (ComputeClock).
    if (options_.compute_clock != ComputeClock::Counted)
      counters.optimizer_ns += compute_now_ns() - t0;
  }
  if (sharded) all_gather_weights(counters);
  // The loss lives on the last stage's tp-rank-0 members; one sum gives it to everyone.
  // (Under sequence parallelism each tp rank holds the loss of its tokens.)
  const bool holds_loss =
      groups_.coord.pp == plan_.pp - 1 && (groups_.coord.tp == 0 || shape_.sequence_parallel);
  std::array<double, 3> sums{holds_loss ? counters.loss : 0.0, local_sq,
                             norms ? gradient_sq_sum() : 0.0};
  world_.all_reduce_sum(std::span<double>(sums));
  last_loss_ = sums[0];
  counters.wall_ns = now_ns(options_.virtual_clock) - start + std::exchange(applied_ns_, 0);
  core::StepReport report = make_report(counters);
  report.applied = std::exchange(applied_, {});
  if (norms) report.gradients = gradient_norms(sums[1], sums[2]);
  if (probe) {
    // Every rank's energy and each probe's left-out part of it.
    std::vector<double> fits = compression_probe_sums(options_.compression_probes, probed);
    world_.all_reduce_sum(std::span<double>(fits));
    if (fits[0] > 0)
      for (std::size_t p = 0; p < options_.compression_probes.size(); ++p)
        report.compression_fits.push_back({options_.compression_probes[p], fits[1 + p] / fits[0]});
  }
  report.warmup = !std::exchange(warm_, true);
  ++iteration_;
  return report;
}

// One micro-batch's state on one local chunk between its passes: each
// layer's stash (forward to the backward that frees it: B, or W under
// ZB-H1) and, under ZB-H1, each layer's output gradients (B to W).
struct HwBackend::InFlight {
  std::vector<DeviceStash> stash;
  std::vector<DeviceOutputGrads> grads;
  double bytes() const {
    double n = 0;
    for (const auto& s : stash) n += static_cast<double>(s.bytes());
    for (const auto& g : grads) n += static_cast<double>(g.bytes());
    return n;
  }
};

void HwBackend::run_pipeline(Counters& c) {
  Communicator& pp = *groups_.pp;
  DeviceKernels& k = *kernels_;
  const int stage = groups_.coord.pp;
  const int virtual_stages = plan_.pp * plan_.virtual_stages;
  // Chunk outputs go to the next stage round the ring (stage pp-1's chunk
  // k feeds stage 0's chunk k+1), gradients back the other way.
  const int next = (stage + 1) % plan_.pp, prev = (stage + plan_.pp - 1) % plan_.pp;
  const bool split_backward = plan_.schedule == core::Schedule::ZeroBubbleH1;
  const std::vector<int> offsets = core::offsets_of(layers_per_stage_);
  const int my_micro_batches = micro_batches_[static_cast<std::size_t>(groups_.coord.dp)];
  const int all_micro_batches = std::accumulate(micro_batches_.begin(), micro_batches_.end(), 0);
  const int global_offset =
      core::offsets_of(micro_batches_)[static_cast<std::size_t>(groups_.coord.dp)];
  const std::size_t activation = activation_.size();  // this rank's tokens x hidden
  const double activation_bytes = static_cast<double>(activation) * 4.0;

  core::TimeNs tp_compute_clock_ns = 0;  // tp all-reduces on the compute clock
  SlotGuard* held = nullptr;  // the compute segment's slot, given up around a tp all-reduce
  // A collective of the tp group inside a compute segment: the layer's work
  // so far is compute (synchronized), the collective's time goes to tp, its
  // slot is given up meanwhile; bytes as nccl-tests counts them (all-reduce:
  // the buffer; all-gather and reduce-scatter: the whole gathered buffer).
  auto tp_collective = [&](auto&& run, std::size_t bytes) {
    k.synchronize();
    const core::TimeNs t0 = compute_now_ns();
    {
      ScopedTimer timer(c.tp_ns, options_.virtual_clock);
      held->give();
      run();
      held->take();
    }
    tp_compute_clock_ns += compute_now_ns() - t0;
    c.tp_bytes += static_cast<double>(bytes);
  };
  Communicator& tp_group = *groups_.tp;
  const auto ranks = static_cast<std::size_t>(plan_.tp);
  const DeviceTpComm tp{[&](float* data, std::size_t n) {
                          if (plan_.tp == 1) return;
                          tp_collective([&] { tp_group.all_reduce_sum(std::span<float>(data, n)); },
                                        n * sizeof(float));
                        },
                        [&](const float* local, float* full, std::size_t n) {
                          tp_collective(
                              [&] {
                                tp_group.all_gather({local, n}, {full, n * ranks});
                              },
                              n * ranks * sizeof(float));
                        },
                        [&](const float* full, float* local, std::size_t n) {
                          tp_collective(
                              [&] {
                                tp_group.reduce_scatter_sum({full, n * ranks}, {local, n});
                              },
                              n * ranks * sizeof(float));
                        }};
  // Runs `work` as one compute segment: on a compute slot, timed on the
  // compute clock without its tp collectives, stretched by the slowdown (the
  // stretch counts as compute: it is what a throttled device would take).
  // `units`: the segment's layer work on the counted clock (ComputeClock).
  auto compute_segment = [&](double units, auto&& work) {
    SlotGuard slot_held(options_.compute_slots);
    held = &slot_held;
    const core::TimeNs tp_before = tp_compute_clock_ns;
    const core::TimeNs t0 = compute_now_ns();
    work();
    k.synchronize();
    const core::TimeNs tp_ns = tp_compute_clock_ns - tp_before;
    stretch(compute_now_ns() - t0 - tp_ns);
    if (options_.compute_clock == ComputeClock::Counted) {
      const core::TimeNs counted = counted_ns(units);
      c.compute_ns += counted;
      if (options_.virtual_clock != nullptr) options_.virtual_clock->advance(counted);
    } else {
      c.compute_ns += compute_now_ns() - t0 - tp_ns;
    }
  };
  const double recompute = recompute_units(shape_, plan_.recompute);
  auto send = [&](DeviceBuffer& from, int peer, int tag) {
    ScopedTimer timer(c.pp_ns, options_.virtual_clock);
    pp.send(span_of(from), peer, tag);
    c.pp_bytes += activation_bytes;
  };
  std::map<std::pair<int, int>, InFlight> in_flight;  // by (micro-batch, chunk)
  double live_bytes = 0;
  auto release = [&](InFlight& f) {
    live_bytes -= f.bytes();
    for (auto& s : f.stash) free_stash_.push_back(std::move(s));
    for (auto& g : f.grads) free_grads_.push_back(std::move(g));
    f.stash.clear();
    f.grads.clear();
  };

  // Step by step (core::stage_steps): a step's inputs (a forward's
  // activations into activation_, a backward's gradients into gradient_)
  // arrive together before its passes; its outputs are sent after them.
  auto inputs_of = [&](const std::vector<core::PassOp>& step) {
    std::vector<RecvRequest> inputs;
    for (const core::PassOp& op : step) {
      const int g = core::virtual_stage(plan_.pp, stage, op.chunk);
      if (op.kind == core::PassKind::Forward && g > 0)
        inputs.push_back({span_of(activation_), prev, forward_tag(g)});
      if (op.kind == core::PassKind::Backward && g < virtual_stages - 1)
        inputs.push_back({span_of(gradient_), next, backward_tag(g)});
    }
    return inputs;
  };
  const auto steps =
      core::stage_steps(plan_.schedule, plan_.pp, stage, my_micro_batches, plan_.virtual_stages);
  for (std::size_t at = 0; at < steps.size(); ++at) {
    const auto& step = steps[at];
    // Sends still queued go out now when the next step receives nothing to
    // carry them (ZB-H1's weight passes, the first stage's forwards): on
    // NCCL they would otherwise wait through it (deadlock-free on the
    // rendezvous model for every schedule, tests/hw/rendezvous_test.cpp).
    const std::vector<RecvRequest> inputs = inputs_of(step);
    if (at > 0 && inputs.empty()) pp.post_sends();
    if (!inputs.empty()) {
      ScopedTimer timer(c.pp_ns, options_.virtual_clock);
      pp.recv_group(inputs);
    }
    for (const core::PassOp& op : step) {
      const auto mb = static_cast<std::size_t>(op.micro_batch);
      const int g = core::virtual_stage(plan_.pp, stage, op.chunk);
      const auto g_at = static_cast<std::size_t>(g);
      InFlight& flight = in_flight[{op.micro_batch, op.chunk}];
      if (op.kind == core::PassKind::Forward) {
        if (g == 0) {
          const float* x = sample(global_offset + op.micro_batch, false, activation_);
          if (x != activation_.data()) k.copy(x, activation_.data(), activation);
        }
        const int layers_here = offsets[g_at + 1] - offsets[g_at];
        compute_segment(layers_here, [&] {
          for (int l = offsets[g_at]; l < offsets[g_at + 1]; ++l) {
            flight.stash.push_back(take_stash());
            device_layer_forward(k, layers_.at(l).weights, shape_, activation_.data(),
                                 activation_.data(), flight.stash.back(), *workspace_, tp);
          }
          if (g == virtual_stages - 1) {
            c.loss += last_stage_loss(global_offset + op.micro_batch, mb, all_micro_batches);
          }
        });
        live_bytes += flight.bytes();
        c.peak_stash_bytes = std::max(c.peak_stash_bytes, live_bytes);
        if (g < virtual_stages - 1) send(activation_, next, forward_tag(g + 1));
      } else if (op.kind == core::PassKind::Backward) {
        const double per_layer = (split_backward ? 1 : 2) + recompute;
        compute_segment(per_layer * (offsets[g_at + 1] - offsets[g_at]), [&] {
          // The last virtual stage starts from the loss gradient, the others from what arrived.
          const float* dy = g == virtual_stages - 1 ? loss_grad(mb).data() : gradient_.data();
          const double before = flight.bytes();
          for (int l = offsets[g_at + 1] - 1; l >= offsets[g_at]; --l) {
            LayerSlot& slot = layers_.at(l);
            DeviceStash& st = flight.stash[static_cast<std::size_t>(l - offsets[g_at])];
            if (split_backward) {
              flight.grads.push_back(take_grads());
              device_layer_backward_input(k, slot.weights, shape_, st, dy, gradient_.data(),
                                          flight.grads.back(), *workspace_, tp);
            } else {
              device_layer_backward(k, slot.weights, shape_, st, dy, gradient_.data(), slot.grads,
                                    *workspace_, tp);
            }
            dy = gradient_.data();
          }
          live_bytes += flight.bytes() - before;
          c.peak_stash_bytes = std::max(c.peak_stash_bytes, live_bytes);
          if (!split_backward) release(flight);
        });
        if (g > 0) send(gradient_, prev, backward_tag(g - 1));
      } else {  // ZB-H1's weight pass: no communication
        compute_segment(offsets[g_at + 1] - offsets[g_at], [&] {
          const auto n = static_cast<std::size_t>(offsets[g_at + 1] - offsets[g_at]);
          for (std::size_t i = 0; i < n; ++i)  // grads were pushed last layer first
            device_layer_backward_weight(k, shape_, flight.stash[i], flight.grads[n - 1 - i],
                                         layers_.at(offsets[g_at] + static_cast<int>(i)).grads,
                                         *workspace_);
          release(flight);
        });
      }
    }
  }
  if (plan_.pp == 1) return;
  ScopedTimer timer(c.pp_ns, options_.virtual_clock);
  pp.flush_sends();
}

}  // namespace parashift::hw
