#include "sim/iteration.hpp"

#include <algorithm>
#include <cmath>

#include "core/assert.hpp"
#include "core/cost/fsdp.hpp"
#include "core/cost/memory.hpp"
#include "core/cost/overlap.hpp"
#include "core/rank_layout.hpp"
#include "core/scenario/cluster_view.hpp"
#include "core/work_split.hpp"
#include "sim/background_traffic.hpp"
#include "sim/collective.hpp"
#include "sim/grad_sync_run.hpp"
#include "sim/iteration_state.hpp"
#include "sim/kernel.hpp"
#include "sim/network/flow_network.hpp"
#include "sim/trace.hpp"

namespace parashift::sim {

using core::CollectiveKind;
using core::OptimizerSharding;
using core::PassKind;
using core::PassOp;
using core::stage_schedule;
using core::virtual_stage;

namespace detail {  // sim/iteration_state.hpp: Worker, DpGroup, Bucket

class IterationSim {
 public:
  IterationSim(const IterationInput& in, const core::WorkProfile& profile, const PathModel& paths,
               Kernel* shared_kernel = nullptr, FlowNetwork* shared_network = nullptr)
      : in_(in),
        plan_(*in.plan),
        profile_(profile),
        paths_(paths),
        layout_(plan_),
        kernel_(shared_kernel != nullptr ? *shared_kernel : own_kernel_),
        network_(shared_network) {
    if (in.device != nullptr)  // the fabric's NCCL parameters, as the cost model builds them
      fabric_ = core::cluster_view_of(paths_.topology(), *in.device, in.nccl_algo).nccl;
    v_ = plan_.virtual_stages;
    stages_ = plan_.pp;
    micro_batches_ = plan_.micro_batches();
    virtual_stages_ = stages_ * v_;
    layers_ = in.layers_per_virtual_stage.empty()
                  ? core::even_split(in.model->layers, virtual_stages_)
                  : in.layers_per_virtual_stage;
    PARASHIFT_ASSERT(static_cast<int>(layers_.size()) == virtual_stages_);
    check_replica_micro_batches(in.micro_batches_per_replica, plan_);
    fsdp_ = plan_.optimizer_sharding == OptimizerSharding::Fsdp && plan_.dp > 1;
    layer_activation_bytes_ = core::layer_activation_bytes(*in.model, plan_, in.seq_len);
    split_backward_ = plan_.schedule == core::Schedule::ZeroBubbleH1;
    last_gradient_pass_ = split_backward_ ? PassKind::BackwardWeight : PassKind::Backward;
    if (network_ == nullptr && in.network == NetworkModel::MaxMin) {
      own_network_ = make_flow_network(kernel_, paths_, in);
      network_ = own_network_.get();
    }
    build_workers();
    build_dp_groups();
  }

  // Shared kernel: `done` gets the result at the iteration's end.
  void start(std::function<void(IterationResult)> done) { done_ = std::move(done), begin(); }
  IterationResult run() {
    begin();
    kernel_.run();
    return collect();
  }

 private:
  void begin() {
    // Delayed sync: the previous iteration's deferred steps, under this one.
    if (plan_.sync == core::SyncMode::Delayed && plan_.dp > 1)
      start_deferred_syncs({kernel_, network_, paths_, fabric_},
                           {&plan_, in_.model, in_.device, profile_.grad_bytes_per_param}, groups_,
                           workers_, [this](DpGroup& g) { pump(g); });
    if (network_) background_ = std::make_unique<BackgroundTraffic>(*network_, in_);
    for (std::size_t w = 0; w < workers_.size(); ++w) try_start(static_cast<int>(w));
  }

  int replica_micro_batches(int replica) const {
    return in_.micro_batches_per_replica.empty() ? micro_batches_
                                                 : in_.micro_batches_per_replica[replica];
  }

  int worker_index(int stage, int replica, int cp_rank) const {
    return cp_rank + plan_.cp * (replica + plan_.dp * stage);
  }

  void build_workers() {
    workers_.resize(static_cast<std::size_t>(stages_) * plan_.dp * plan_.cp);
    for (int s = 0; s < stages_; ++s) {
      for (int d = 0; d < plan_.dp; ++d) {
        const int micro_batches = replica_micro_batches(d);
        const auto ops = stage_schedule(plan_.schedule, stages_, s, micro_batches, v_);
        for (int c = 0; c < plan_.cp; ++c) {
          Worker& w = workers_[worker_index(s, d, c)];
          w.stage = s;
          w.replica = d;
          w.cp_rank = c;
          w.ops = ops;
          for (int t = 0; t < plan_.tp; ++t) {
            const int gpu = gpu_at({t, c, d, s});
            w.gpus.push_back(gpu);
            // The group runs at the pace of its slowest member.
            if (!in_.gpu_slowdown.empty()) {
              w.slowdown =
                  t == 0 ? in_.gpu_slowdown[gpu] : std::max(w.slowdown, in_.gpu_slowdown[gpu]);
            }
          }
          const auto slots = static_cast<std::size_t>(micro_batches) * v_;
          w.forward_ready.assign(slots, 0);
          w.backward_ready.assign(slots, 0);
          w.backward_left.assign(v_, micro_batches);
          w.inflight.assign(v_, 0);
          std::vector<int> cp_ring;
          for (int r = 0; r < plan_.cp; ++r) cp_ring.push_back(gpu_at({0, r, d, s}));
          set_layer_comm(w, profile_.layer, cp_ring, paths_, fabric_);
          int stage_layers = 0;
          for (int k = 0; k < v_; ++k) stage_layers += layers_[virtual_stage(stages_, s, k)];
          w.layers_on_stage = stage_layers;
          w.params_on_gpu = core::stage_params_on_gpu(profile_, in_.model->tied_embeddings,
                                                      stage_layers, s == 0, s == stages_ - 1);
          w.stats.stage = s;
          w.stats.replica = d;
          w.stats.cp_rank = c;
          w.stats.slowdown = w.slowdown;
          w.stats.static_bytes = w.params_on_gpu * core::resident_bytes_per_param(plan_);
        }
      }
    }
  }

  int gpu_at(const core::RankCoord& c) const { return in_.gpu_of(layout_.rank(c)); }

  void build_dp_groups() {
    groups_.resize(static_cast<std::size_t>(stages_) * plan_.cp);
    for (int s = 0; s < stages_; ++s) {
      for (int c = 0; c < plan_.cp; ++c) {
        DpGroup& g = groups_[c + plan_.cp * s];
        g.index = c + plan_.cp * s;
        g.tp_rings.resize(plan_.tp);
        for (int k = 0; k < plan_.dp; ++k) {
          const int d = in_.replica_at(g.index, k);  // the ring's k-th replica
          g.members.push_back(worker_index(s, d, c));
          for (int t = 0; t < plan_.tp; ++t) g.tp_rings[t].push_back(gpu_at({t, c, d, s}));
        }
        g.reported.assign(v_, 0);
        g.bucket_ready.assign(v_, {});
        if (fsdp_) {
          const std::vector<int> shard_ring = set_fsdp_rings(g, plan_.shard_degree());
          for (int k = 0; k < v_; ++k) {
            const int v = virtual_stage(stages_, s, k);
            g.fsdp_chunk.push_back(fsdp_group_comm(paths_, fabric_, profile_, *in_.model,
                                                   shard_ring, v == 0, v == virtual_stages_ - 1));
          }
        }
      }
    }
  }

  DpGroup& group_of(const Worker& w) { return groups_[w.cp_rank + plan_.cp * w.stage]; }

  int chunk_layers(const Worker& w, int chunk) const {
    return layers_[virtual_stage(stages_, w.stage, chunk)];
  }

  // Compute and in-stream communication of one pass.
  std::pair<TimeNs, TimeNs> pass_time(Worker& w, const PassOp& op, TimeNs& tp_ns, TimeNs& cp_ns,
                                      TimeNs& dp_ns) {
    const int g = virtual_stage(stages_, w.stage, op.chunk);
    const int layers = chunk_layers(w, op.chunk);
    const auto& layer = profile_.layer;
    double compute = 0;
    if (op.kind == PassKind::Forward) {
      compute = static_cast<double>(layers) * static_cast<double>(layer.forward_ns);
      if (g == 0) compute += static_cast<double>(profile_.embedding_forward_ns);
      if (g == virtual_stages_ - 1) compute += static_cast<double>(profile_.head_forward_ns);
      tp_ns = layers * w.tp_forward_ns_per_layer;
      cp_ns = layers * w.cp_forward_ns_per_layer;
    } else if (op.kind == PassKind::BackwardWeight) {
      // ZB-H1's W: the weight-gradient GEMMs, no communication and no send.
      compute = static_cast<double>(layers) *
                static_cast<double>(layer.backward_ns - layer.backward_input_ns);
      if (g == 0) compute += static_cast<double>(profile_.embedding_backward_ns);
      tp_ns = 0;
      cp_ns = 0;
    } else {
      // A whole backward pass, or under ZB-H1 only its input-gradient half (B).
      const TimeNs backward = split_backward_ ? layer.backward_input_ns : layer.backward_ns;
      compute = static_cast<double>(layers) * static_cast<double>(backward + layer.recompute_ns);
      if (g == 0 && !split_backward_)
        compute += static_cast<double>(profile_.embedding_backward_ns);
      if (g == virtual_stages_ - 1) compute += static_cast<double>(profile_.head_backward_ns);
      tp_ns = layers * w.tp_backward_ns_per_layer;
      cp_ns = layers * w.cp_backward_ns_per_layer;
    }
    const auto compute_ns = static_cast<TimeNs>(std::llround(compute * w.slowdown));
    dp_ns = 0;
    if (fsdp_ && op.kind != PassKind::BackwardWeight) {
      // Under ZB-H1 the gathers and reduce-scatters are charged to B.
      const bool fwd = op.kind == PassKind::Forward;
      const TimeNs backward = split_backward_ ? layer.backward_input_ns : layer.backward_ns;
      const double layer_compute =
          static_cast<double>(fwd ? layer.forward_ns : backward + layer.recompute_ns);
      const TimeNs layer_ns = std::llround(layer_compute * w.slowdown) +
                              (fwd ? w.tp_forward_ns_per_layer : w.tp_backward_ns_per_layer);
      dp_ns = fsdp_pass(group_of(w).fsdp_chunk[op.chunk], fwd, layers, layer_ns).exposed_ns;
    }
    return {compute_ns, compute_ns + tp_ns + cp_ns + dp_ns};
  }

  bool deps_met(const Worker& w, const PassOp& op) const {
    if (op.kind == PassKind::BackwardWeight) return true;  // its own B ran earlier on this worker
    const int g = virtual_stage(stages_, w.stage, op.chunk);
    const std::size_t slot = static_cast<std::size_t>(op.micro_batch) * v_ + op.chunk;
    if (op.kind == PassKind::Forward) return g == 0 || w.forward_ready[slot];
    return g == virtual_stages_ - 1 || w.backward_ready[slot];
  }

  void try_start(int wi) {
    Worker& w = workers_[wi];
    if (w.busy || w.at_rendezvous || w.next >= w.ops.size()) return;
    const PassOp op = w.ops[w.next];
    if (!deps_met(w, op)) return;
    if (fsdp_ && op.kind != PassKind::BackwardWeight) {
      // The pass's gathers are collectives of the data-parallel group: it
      // starts when the last member reaches it (members run one schedule).
      DpGroup& g = group_of(w);
      w.at_rendezvous = true;
      g.fsdp_waiting.push_back(wi);
      if (g.fsdp_waiting.size() < g.members.size()) return;
      g.busy_ns += fsdp_pass(g.fsdp_chunk[op.chunk], op.kind == PassKind::Forward,
                             chunk_layers(w, op.chunk), 0)
                       .comm_ns;
      for (int m : std::exchange(g.fsdp_waiting, {})) {
        Worker& member = workers_[m];
        PARASHIFT_ASSERT(member.ops[member.next].kind == op.kind &&
                             member.ops[member.next].micro_batch == op.micro_batch &&
                             member.ops[member.next].chunk == op.chunk,
                         "FSDP members of a data-parallel group at different passes");
        member.at_rendezvous = false;
        start_pass(m);
      }
      return;
    }
    start_pass(wi);
  }

  void start_pass(int wi) {
    Worker& w = workers_[wi];
    const PassOp op = w.ops[w.next];
    ++w.next;
    w.busy = true;
    TimeNs tp_ns = 0, cp_ns = 0, dp_ns = 0;
    const auto [compute_ns, total_ns] = pass_time(w, op, tp_ns, cp_ns, dp_ns);
    w.stats.compute_ns += compute_ns;
    w.stats.tp_comm_ns += tp_ns;
    w.stats.cp_comm_ns += cp_ns;
    w.stats.dp_exposed_ns += dp_ns;
    w.busy_ns += total_ns - dp_ns;  // the bubble subtracts dp_exposed_ns on its own
    if (op.kind == PassKind::Forward) {
      ++w.inflight[op.chunk];
      w.activation_bytes += chunk_layers(w, op.chunk) * layer_activation_bytes_;
      w.stats.peak_activation_bytes = std::max(w.stats.peak_activation_bytes, w.activation_bytes);
    } else if (op.kind == last_gradient_pass_ && --w.backward_left[op.chunk] == 0) {
      // Weight gradients are complete after the pass that computes them: the
      // backward pass, or W under ZB-H1.
      report_last_backward(wi, op.chunk, kernel_.now(), total_ns);
    }
    if (in_.trace != nullptr) in_.trace->pass(wi, op, kernel_.now(), total_ns);
    kernel_.schedule_in(total_ns, [this, wi, op] { finish(wi, op); });
  }

  void finish(int wi, const PassOp& op) {
    Worker& w = workers_[wi];
    w.busy = false;
    const int g = virtual_stage(stages_, w.stage, op.chunk);
    if (op.kind == PassKind::Forward) {
      if (g < virtual_stages_ - 1) send(wi, g + 1, op.micro_batch, true);
    } else {
      // Activations are freed by the last pass that reads them.
      if (op.kind == last_gradient_pass_) {
        --w.inflight[op.chunk];
        w.activation_bytes -= chunk_layers(w, op.chunk) * layer_activation_bytes_;
      }
      if (op.kind == PassKind::Backward && g > 0) send(wi, g - 1, op.micro_batch, false);
    }
    if (w.next == w.ops.size()) {
      w.stats.last_pass_end_ns = kernel_.now();
      if (plan_.dp == 1) start_optimizer(wi, kernel_.now());
      if (w.sync_done_ns >= 0) start_optimizer(wi, w.sync_done_ns);
    }
    try_start(wi);
  }

  void send(int from, int to_virtual_stage, int micro_batch, bool forward) {
    const Worker& src = workers_[from];
    const int stage = to_virtual_stage % stages_;
    const int chunk = to_virtual_stage / stages_;
    const int to = worker_index(stage, src.replica, src.cp_rank);
    auto arrive = [this, from, to, chunk, micro_batch, forward, start = kernel_.now()] {
      workers_[from].stats.pp_send_ns += kernel_.now() - start;
      Worker& dst = workers_[to];
      const std::size_t slot = static_cast<std::size_t>(micro_batch) * v_ + chunk;
      (forward ? dst.forward_ready : dst.backward_ready)[slot] = 1;
      try_start(to);
    };
    // Tensor rank 0's flow stands for every tp rank's share on its rail (header).
    if (network_ && profile_.pp_activation_bytes > 0) {
      network_->start_flow(src.gpus[0], workers_[to].gpus[0], profile_.pp_activation_bytes,
                           std::move(arrive), 0, core::TrafficClass::Pipeline);
    } else {
      kernel_.schedule_in(
          paths_.transfer_ns(src.gpus[0], workers_[to].gpus[0], profile_.pp_activation_bytes),
          std::move(arrive));
    }
  }

  // `chunk`'s buckets become ready evenly over worker `wi`'s last backward of it.
  void report_last_backward(int wi, int chunk, TimeNs start_ns, TimeNs duration_ns) {
    if (plan_.dp == 1) return;
    const Worker& w = workers_[wi];
    DpGroup& g = groups_[w.cp_rank + plan_.cp * w.stage];
    const int v = virtual_stage(stages_, w.stage, chunk);
    const double chunk_params =
        core::stage_params_on_gpu(profile_, in_.model->tied_embeddings, chunk_layers(w, chunk),
                                  v == 0, v == virtual_stages_ - 1);
    if (fsdp_ && g.replica_rings.empty()) {
      // Gradients were reduce-scattered after every backward pass: nothing queues.
      if (++g.reported[chunk] == plan_.dp) ++g.chunks_queued;
      pump(g);
      return;
    }
    // HSDP: the replicas all-reduce the chunk's gradient shards, a layer's
    // after its backward (each FSDP unit's, as PyTorch's HYBRID_SHARD).
    const double params = fsdp_ ? chunk_params / plan_.shard_degree() : chunk_params;
    const int buckets =
        fsdp_ ? std::max(1, chunk_layers(w, chunk))
              : std::max(1, static_cast<int>(std::ceil(params / bucket_params(plan_.dp))));
    auto& ready = g.bucket_ready[chunk];
    if (ready.empty()) ready.assign(buckets, 0);
    for (int b = 0; b < buckets; ++b) {
      const TimeNs t = start_ns + duration_ns * (b + 1) / buckets;
      ready[b] = std::max(ready[b], t);
    }
    if (++g.reported[chunk] < plan_.dp) return;
    // Every member has its buckets timed: queue them on the group's stream.
    const double bucket_bytes = params / buckets * profile_.grad_bytes_per_param;
    for (int b = 0; b < buckets; ++b) g.queue.push_back({ready[b], bucket_bytes});
    ++g.chunks_queued;
    pump(g);
  }

  // The group's next ready bucket on a free stream; after the last, the members step.
  void pump(DpGroup& g) {
    if (g.streaming || g.waiting) return;
    if (g.queue.empty()) {
      if (g.chunks_queued == v_ && !g.deferred_running) sync_done(g);
      return;
    }
    const Bucket bucket = g.queue.front();
    if (bucket.ready_ns > kernel_.now()) {
      g.waiting = true;
      kernel_.schedule_at(bucket.ready_ns, [this, &g] {
        g.waiting = false;
        pump(g);
      });
      return;
    }
    g.queue.pop_front();
    g.streaming = true;
    const TimeNs start = kernel_.now();
    const CollectiveKind kind = bucket_kind(g, plan_);
    auto done = [this, &g, start](TimeNs end) {
      g.busy_ns += end - start;
      if (in_.trace != nullptr) in_.trace->collective(g.index, start, end - start);
      g.streaming = false;
      pump(g);
    };
    start_bucket_sync({kernel_, network_, paths_, fabric_, &g.shape},
                      {&plan_, in_.model, in_.device, profile_.grad_bytes_per_param}, kind,
                      bucket.bytes, bucket_rings(g), static_cast<std::uint64_t>(g.index), done);
  }

  void sync_done(DpGroup& g) {
    const TimeNs done = kernel_.now();
    for (int member : g.members) {
      Worker& m = workers_[member];
      m.sync_done_ns = done;
      if (m.next == m.ops.size() && !m.busy) start_optimizer(member, done);
    }
  }

  void start_optimizer(int wi, TimeNs sync_done_ns) {
    Worker& w = workers_[wi];
    const TimeNs start = std::max(sync_done_ns, w.stats.last_pass_end_ns);
    w.stats.dp_exposed_ns += start - w.stats.last_pass_end_ns;
    const double updated = w.params_on_gpu / plan_.shard_degree();
    w.stats.optimizer_ns = core::seconds_to_ns(updated * profile_.optimizer_s_per_param);
    TimeNs gather = 0;
    if (plan_.optimizer_sharding == OptimizerSharding::Distributed && plan_.dp > 1) {
      const DpGroup& g = groups_[w.cp_rank + plan_.cp * w.stage];
      gather = ring_collective_ns(paths_, fabric_, CollectiveKind::AllGather, w.params_on_gpu * 2.0,
                                  g.tp_rings[0]);
    }
    // Megatron's --overlap-param-gather (sim/iteration_state.hpp).
    w.stats.param_gather_ns = gather;
    const TimeNs exposed = param_gather_tail_ns(w, profile_, plan_.pp, gather);
    w.stats.dp_exposed_ns += exposed;
    w.stats.finish_ns = start + w.stats.optimizer_ns + exposed;
    end_ns_ = std::max(end_ns_, w.stats.finish_ns);
    if (++optimizers_started_ < workers_.size()) return;
    if (background_) background_->stop();
    if (done_) kernel_.schedule_at(end_ns_, [this] { done_(collect()); });
  }

  IterationResult collect() {
    IterationResult r;
    r.events = kernel_.executed() - events0_;
    for (Worker& w : workers_) {
      PARASHIFT_ASSERT(w.next == w.ops.size(), "a worker did not finish its schedule (deadlock)");
      w.stats.finish_ns -= t0_;  // times from the iteration's start
      w.stats.last_pass_end_ns -= t0_;
      r.iteration_ns = std::max(r.iteration_ns, w.stats.finish_ns);
    }
    double bubble_sum = 0;
    for (Worker& w : workers_) {
      // The step ends together (the gradient-norm all-reduce spans every rank):
      // whatever time a worker neither computes, communicates in its pass
      // stream, waits for its gradient sync nor steps its optimizer is bubble.
      w.stats.bubble_ns = r.iteration_ns - w.busy_ns - w.stats.dp_exposed_ns - w.stats.optimizer_ns;
      bubble_sum += static_cast<double>(w.stats.bubble_ns);
      r.peak_memory_bytes =
          std::max(r.peak_memory_bytes, w.stats.static_bytes + w.stats.peak_activation_bytes);
      r.workers.push_back(w.stats);
    }
    for (const DpGroup& g : groups_) {
      r.dp_sync_ns = std::max(r.dp_sync_ns, g.busy_ns);
      r.dp_group_busy_ns.push_back(g.busy_ns);
      r.dp_group_tree.push_back(g.shape.mostly_tree());
    }
    if (own_network_) r.links = link_uses(*own_network_);  // not a shared one's
    if (background_) background_->collect(r);
    if (background_ && r.snapshot_done_ns >= 0) r.snapshot_done_ns -= t0_;
    r.bubble_share =
        bubble_sum / static_cast<double>(workers_.size()) / static_cast<double>(r.iteration_ns);
    fill_rates(r, in_);
    return r;
  }

  const IterationInput& in_;
  const core::ParallelPlan& plan_;
  const core::WorkProfile& profile_;
  const PathModel& paths_;
  core::NcclFabric fabric_;
  core::RankLayout layout_;
  Kernel own_kernel_;
  Kernel& kernel_;             // own_kernel_, or one other jobs' iterations share
  TimeNs t0_ = kernel_.now();  // at the start
  std::uint64_t events0_ = kernel_.executed();
  TimeNs end_ns_ = 0;  // the last worker's finish
  std::function<void(IterationResult)> done_;
  int v_ = 1, stages_ = 1, micro_batches_ = 1, virtual_stages_ = 1;
  std::vector<int> layers_;
  std::vector<Worker> workers_;
  std::vector<DpGroup> groups_;
  FlowNetwork* network_ = nullptr;  // null under NetworkModel::Path
  std::unique_ptr<FlowNetwork> own_network_;
  std::unique_ptr<BackgroundTraffic> background_;  // tenants, snapshot replication
  std::size_t optimizers_started_ = 0;
  double layer_activation_bytes_ = 0;
  bool split_backward_ = false;  // ZB-H1: backward = B + W
  bool fsdp_ = false;            // FSDP over dp > 1: per-pass gathers, no bucket sync
  PassKind last_gradient_pass_ = PassKind::Backward;
};

}  // namespace detail

IterationResult simulate_iteration(const IterationInput& input, const core::WorkProfile& profile,
                                   const PathModel& paths) {
  return detail::IterationSim(input, profile, paths).run();
}

SharedIteration start_shared_iteration(const IterationInput& input,
                                       const core::WorkProfile& profile, const PathModel& paths,
                                       Kernel& kernel, FlowNetwork& network,
                                       std::function<void(IterationResult)> done) {
  PARASHIFT_ASSERT(input.trace == nullptr, "a shared iteration records no trace");
  auto sim = std::make_shared<detail::IterationSim>(input, profile, paths, &kernel, &network);
  sim->start(std::move(done));
  return sim;
}

}  // namespace parashift::sim
