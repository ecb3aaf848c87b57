#include "core/controller/cost_calibration.hpp"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <cstdio>
#include <functional>
#include <limits>
#include <map>
#include <string_view>

#include "core/assert.hpp"
#include "core/controller/group_name.hpp"
#include "core/controller/lower_median.hpp"
#include "core/cost/estimate.hpp"
#include "core/cost/fsdp.hpp"
#include "core/cost/grad_sync.hpp"
#include "core/cost/work_profile.hpp"
#include "core/pipeline_schedule.hpp"
#include "core/rank_layout.hpp"

namespace parashift::core {

namespace {

constexpr int kGemm = static_cast<int>(CostFactor::Gemm);
constexpr int kAttention = static_cast<int>(CostFactor::Attention);
constexpr int kMemory = static_cast<int>(CostFactor::Memory);
constexpr int kIntra = static_cast<int>(CostFactor::IntraNode);
constexpr int kInter = static_cast<int>(CostFactor::InterNode);
// A factor is applied within these bounds (a time 20x off the preset is no
// calibration but a wrong preset); the estimate itself is not clamped.
constexpr double kMinFactor = 0.05, kMaxFactor = 20.0;
// The measurement noise of a normalised row the filter assumes at least
// (model error the factors cannot explain): 2%.
constexpr double kMinNoiseVar = 0.02 * 0.02;
// A row off by more than 5% of itself and 5 standard deviations of the
// noise is a change of the cluster; the factors it resets are those that
// make up at least 1% of it.
constexpr double kChangeShare = 0.05, kChangeSigmas2 = 5.0 * 5.0, kDependsShare = 0.01;

double clamped(double f) {
  return std::clamp(f, kMinFactor, kMaxFactor);
}

// A stage's compute per micro-batch: its layers' forward, backward and
// recompute, and the embedding (stage 0) and head (last stage) passes.
double layer_compute_ns(const WorkProfile& p) {
  return static_cast<double>(p.layer.forward_ns + p.layer.backward_ns + p.layer.recompute_ns);
}
// Stages whose median rank is this much slower than expected or more are
// slow GPUs, not the model: with one rank a stage (pp-only plans) the
// stage's median is that rank, and a 2x GPU would otherwise drag every
// factor up by its share. Over at least 3 stages: a ratio above the stages'
// lower median by 5% and by 3 scaled MADs (the rank-speed rule,
// rank_speed.cpp). Infinity when no stage stands out.
double slow_stage_ratio(const std::vector<std::pair<double, int>>& stage_median) {
  std::vector<double> ratios;
  for (const auto& [ratio, rank] : stage_median)
    if (rank >= 0) ratios.push_back(ratio);
  if (ratios.size() < 3) return std::numeric_limits<double>::infinity();
  const double mid = lower_median(ratios);
  for (double& x : ratios) x = std::abs(x - mid);
  const double spread = 3.0 * 1.4826 * lower_median(ratios);
  return std::max(mid * 1.05, mid + spread);
}

double fixed_compute_ns(const WorkProfile& p, bool first, bool last) {
  double t = 0;
  if (first) t += static_cast<double>(p.embedding_forward_ns + p.embedding_backward_ns);
  if (last) t += static_cast<double>(p.head_forward_ns + p.head_backward_ns);
  return t;
}

double median(std::vector<double> v) {
  return lower_median(v);
}

}  // namespace

CostCalibration::CostCalibration(CostInputs preset, double forgetting, double prior_sd)
    : preset_(std::move(preset)), lambda_(forgetting), prior_var_(prior_sd * prior_sd) {
  PARASHIFT_ASSERT(forgetting > 0 && forgetting <= 1, "forgetting ", forgetting);
  PARASHIFT_ASSERT(prior_sd > 0, "prior_sd ", prior_sd);
  p_ = Eigen::Matrix<double, kCostFactors, kCostFactors>::Identity() * prior_var_;
}

double CostCalibration::stddev(CostFactor f) const {
  const int k = static_cast<int>(f);
  return std::sqrt(std::max(0.0, p_(k, k)));
}

DeviceSpec CostCalibration::device() const {
  return device_at(theta_);
}

ClusterView CostCalibration::cluster() const {
  return cluster_at(theta_);
}

DeviceSpec CostCalibration::calibrated(DeviceSpec d, const Row& theta) {
  d.efficiency.gemm_max /= clamped(theta(kGemm));
  d.efficiency.fp8_gemm_max /= clamped(theta(kGemm));
  d.efficiency.attention /= clamped(theta(kAttention));
  d.efficiency.memory /= clamped(theta(kMemory));
  return d;
}

std::vector<DeviceGroup> CostCalibration::device_groups() const {
  std::vector<DeviceGroup> out = preset_.device_groups;
  for (DeviceGroup& g : out) g.device = calibrated(g.device, theta_);
  return out;
}

ClusterView CostCalibration::cluster_at(const Row& theta) const {
  ClusterView c = preset_.cluster;
  c.intra_node_Bps /= clamped(theta(kIntra));
  c.inter_node_Bps /= clamped(theta(kInter));
  return c;
}

TimeNs CostCalibration::predict_ns(const ParallelPlan& plan) const {
  return preset_.estimate(plan, device(), cluster()).total_ns;
}

CostCalibration::Row CostCalibration::applied_factors() const {
  return theta_.unaryExpr([](double f) { return clamped(f); });
}

CostCalibration::Row CostCalibration::sensitivity(const ParallelPlan& plan) const {
  // Each class's time is work over rate, linear in its factor: the change
  // for a 5% step of one factor, over the step.
  constexpr double kStep = 0.05;
  const auto at = [&](const Row& theta) {
    return static_cast<double>(
        preset_.estimate(plan, device_at(theta), cluster_at(theta)).total_ns);
  };
  const double base = at(theta_);
  Row g;
  for (int k = 0; k < kCostFactors; ++k) {
    Row theta = theta_;
    theta(k) += kStep;
    g(k) = (at(theta) - base) / kStep;
  }
  return g;
}

double CostCalibration::difference_sd_ns(const ParallelPlan& a, const ParallelPlan& b) const {
  const Row g = sensitivity(a) - sensitivity(b);
  return std::sqrt(std::max(0.0, g.dot(p_ * g)));
}

const CostCalibration::Profiles& CostCalibration::profiles(const ParallelPlan& plan) const {
  std::string label = plan.label();
  if (label == profiles_.plan_label) return profiles_;
  // The preset, and the preset with one compute efficiency doubled: each
  // class's share of a stage's time is twice what doubling it saves.
  profiles_.base = preset_.work(preset_.device, plan);
  for (int k : {kGemm, kAttention, kMemory}) {
    DeviceSpec d = preset_.device;
    if (k == kGemm) {
      d.efficiency.gemm_max *= 2;
      d.efficiency.fp8_gemm_max *= 2;
    }
    if (k == kAttention) d.efficiency.attention *= 2;
    if (k == kMemory) d.efficiency.memory *= 2;
    profiles_.doubled[static_cast<std::size_t>(k)] = preset_.work(d, plan);
  }
  profiles_.rank_factor.clear();
  if (!preset_.device_groups.empty()) {
    profiles_.rank_factor.assign(static_cast<std::size_t>(plan.gpus()), 1.0);
    for (const GpuFactor& g : group_factors(preset_.device_groups, preset_.model, preset_.device,
                                            plan, preset_.seq_len, preset_.options))
      if (g.gpu < plan.gpus()) profiles_.rank_factor[static_cast<std::size_t>(g.gpu)] = g.factor;
  }
  profiles_.plan_label = std::move(label);
  return profiles_;
}

std::vector<std::pair<CostCalibration::Expected, double>> CostCalibration::rows(
    const StepReport& report, const JobModel& job) const {
  const ParallelPlan& plan = job.plan;
  const ModelSpec& model = preset_.model;
  const Profiles& prof = profiles(plan);
  const WorkProfile& base = prof.base;
  const std::array<WorkProfile, 3>& doubled = prof.doubled;
  const RankLayout layout(plan);
  auto rank_factor = [&](std::size_t r) {
    return r < prof.rank_factor.size() ? prof.rank_factor[r] : 1.0;
  };
  std::vector<std::pair<Expected, double>> out;
  // Compute: per stage, the median rank's measured time over its expected one
  // (a straggler is the straggler detector's business, not a calibration).
  // One pass over the ranks sorts them by stage.
  std::vector<std::vector<std::pair<double, int>>> by_stage(static_cast<std::size_t>(plan.pp));
  std::vector<double> stage_mb_ns(static_cast<std::size_t>(plan.pp));  // one micro-batch
  for (int s = 0; s < plan.pp; ++s)
    stage_mb_ns[static_cast<std::size_t>(s)] = job.stage_layers(s) * layer_compute_ns(base) +
                                               fixed_compute_ns(base, s == 0, s == plan.pp - 1);
  const int measured = std::min(layout.ranks(), static_cast<int>(report.rank_compute_ns.size()));
  rank_ratio_.assign(static_cast<std::size_t>(measured), RankRatio{});
  dp_stride_ = layout.dp_stride();
  dp_ = plan.dp;
  stage_model_.assign(static_cast<std::size_t>(plan.pp), Expected{});
  const int per_stage = plan.tp * plan.cp * plan.dp;
  for (auto& v : by_stage) v.reserve(static_cast<std::size_t>(per_stage));
  const int even = plan.micro_batches();
  const double per_even = 1.0 / even;
  for (int r = 0; r < measured; ++r) {
    const RankCoord c = layout.coord(r);
    const auto stage = static_cast<std::size_t>(c.pp);
    const auto replica = static_cast<std::size_t>(c.dp);
    const int m = job.micro_batches_per_replica[replica];
    const double expected = m * stage_mb_ns[stage] * rank_factor(static_cast<std::size_t>(r));
    if (expected > 0) {
      const double ratio =
          static_cast<double>(report.rank_compute_ns[static_cast<std::size_t>(r)]) / expected;
      by_stage[stage].push_back({ratio, r});
      rank_ratio_[static_cast<std::size_t>(r)] = {ratio, static_cast<int>(stage), expected,
                                                  even * stage_mb_ns[stage], m * per_even};
    }
  }
  auto split_compute = [&](const std::function<double(const WorkProfile&)>& time) {
    Expected e;
    const double total = time(base);
    for (int k : {kGemm, kAttention, kMemory})
      e.by_class(k) = 2.0 * (total - time(doubled[static_cast<std::size_t>(k)]));
    e.fixed_ns = std::max(0.0, total - e.by_class.sum());
    return e;
  };
  // Each stage's median rank (pairs are distinct: the rank breaks ties), in linear time.
  std::vector<std::pair<double, int>> stage_median(static_cast<std::size_t>(plan.pp), {0.0, -1});
  for (int s = 0; s < plan.pp; ++s) {
    std::vector<std::pair<double, int>>& ratio_rank = by_stage[static_cast<std::size_t>(s)];
    if (ratio_rank.empty()) continue;
    const auto median_at =
        ratio_rank.begin() + static_cast<std::ptrdiff_t>((ratio_rank.size() - 1) / 2);
    std::nth_element(ratio_rank.begin(), median_at, ratio_rank.end());
    stage_median[static_cast<std::size_t>(s)] = *median_at;
  }
  const double slow_stage_above = slow_stage_ratio(stage_median);
  for (int s = 0; s < plan.pp; ++s) {
    const bool first = s == 0, last = s == plan.pp - 1;
    const int layers = job.stage_layers(s);
    auto stage_ns = [&](const WorkProfile& p, int micro_batches) {
      return micro_batches * (layers * layer_compute_ns(p) + fixed_compute_ns(p, first, last));
    };
    const double stage_ratio = stage_median[static_cast<std::size_t>(s)].first;
    const int r = stage_median[static_cast<std::size_t>(s)].second;
    if (r < 0) continue;
    const int m = job.micro_batches_per_replica[static_cast<std::size_t>(layout.coord(r).dp)];
    Expected e = split_compute([&](const WorkProfile& p) { return stage_ns(p, m); });
    // The median rank's device (its group's factor on the preset's time).
    const double f = rank_factor(static_cast<std::size_t>(r));
    e.by_class *= f;
    e.fixed_ns *= f;
    stage_model_[static_cast<std::size_t>(s)] = e;  // the rank speeds' reference, slow or not
    if (stage_ratio <= slow_stage_above)
      out.push_back({e, static_cast<double>(report.rank_compute_ns[r])});
  }
  const int chunk_count = plan.pp * plan.virtual_stages;
  auto chunk_params = [&](int v) {
    return stage_params_on_gpu(base, model.tied_embeddings,
                               job.layers_per_virtual_stage[static_cast<std::size_t>(v)], v == 0,
                               v == chunk_count - 1);
  };
  // The optimizer step (memory-bound: Adam's bytes per parameter the GPU
  // owns), per stage the median of its ranks' times, when the backend times it.
  const std::vector<TimeNs>& optimizer_ns = report.rank_optimizer_ns;
  for (int s = 0; s < plan.pp && !optimizer_ns.empty(); ++s) {
    std::vector<double> times;
    for (const auto& [ratio, r] : by_stage[static_cast<std::size_t>(s)])
      if (static_cast<std::size_t>(r) < optimizer_ns.size())
        times.push_back(static_cast<double>(optimizer_ns[static_cast<std::size_t>(r)]));
    if (times.empty()) continue;
    double params = 0;
    for (int k = 0; k < plan.virtual_stages; ++k)
      params += chunk_params(virtual_stage(plan.pp, s, k));
    const double owned = params / plan.shard_degree();
    out.push_back(
        {split_compute([&](const WorkProfile& p) { return owned * p.optimizer_s_per_param * 1e9; }),
         median(times)});
  }
  // Communication: a group's time with one link class's rate doubled.
  const GroupPlacement place = group_placement(plan, preset_.cluster.gpus_per_node);
  auto split = [&](const std::function<double(const ClusterView&)>& time) {
    ClusterView intra = preset_.cluster, inter = preset_.cluster;
    intra.intra_node_Bps *= 2;
    inter.inter_node_Bps *= 2;
    const double total = time(preset_.cluster);
    Expected e;
    e.by_class(kIntra) = 2.0 * (total - time(intra));
    e.by_class(kInter) = 2.0 * (total - time(inter));
    e.fixed_ns = std::max(0.0, total - e.by_class.sum());
    return e;
  };
  std::map<int, std::vector<double>> tp_busy, dp_busy;
  for (const GroupComm& g : report.comm) {
    if (const GroupName tp = parse_group(g.group, "tp"); tp.stage >= 0) {
      // At the plan's even share: a re-balanced replica runs more or fewer
      // micro-batches, each with its collectives.
      const int s = tp.stage, d = tp.replica;
      const double m = d >= 0 && d < static_cast<int>(job.micro_batches_per_replica.size())
                           ? job.micro_batches_per_replica[static_cast<std::size_t>(d)]
                           : plan.micro_batches();
      tp_busy[s].push_back(static_cast<double>(g.busy_ns) * plan.micro_batches() / m);
    }
    if (const int s = parse_group(g.group, "dp").stage; s >= 0)
      dp_busy[s].push_back(static_cast<double>(g.busy_ns));
  }
  const LayerWork& layer = base.layer;
  for (const auto& entry : tp_busy) {
    const int s = entry.first;
    const std::vector<double>& busy = entry.second;
    if (plan.tp < 2 || s >= plan.pp) continue;
    const int m = plan.micro_batches();
    const int layers = job.stage_layers(s);
    out.push_back({split([&](const ClusterView& view) {
                     double t = 0;
                     for (const CollectiveCall* c :
                          {&layer.tp_forward, &layer.tp_forward_scatter, &layer.tp_backward,
                           &layer.tp_backward_scatter})
                       if (c->count > 0)
                         t += c->count * static_cast<double>(collective_ns(
                                             c->kind, c->bytes, plan.tp, place.tp_per_node, view));
                     return static_cast<double>(m) * layers * t;
                   }),
                   median(busy)});
  }
  // The gradient sync of a stage, in Megatron's buckets per chunk (FSDP's
  // per-pass collectives are not bucketed: no row). The group's measured busy
  // time holds what its stream ran: each bucket's compressor and steps
  // (core::stage_sync; the compressor is no link's: fixed_ns), and a delayed
  // sync's deferred steps once over the stage.
  if (plan.dp > 1 && plan.optimizer_sharding != OptimizerSharding::Fsdp) {
    const bool replicated = plan.optimizer_sharding == OptimizerSharding::None;
    const ComputeRates rates = compute_rates(preset_.device);
    const int chunks = plan.virtual_stages;
    for (const auto& entry : dp_busy) {
      // Not a structured binding: clang 14 (the fuzz build) cannot capture one.
      const int s = entry.first;
      const std::vector<double>& busy = entry.second;
      if (s >= plan.pp) continue;
      out.push_back(
          {split([&](const ClusterView& view) {
             double t = 0, stage = 0;
             for (int k = 0; k < chunks; ++k) {
               const double params = chunk_params(virtual_stage(plan.pp, s, k));
               stage += params;
               if (replicated) {
                 t += static_cast<double>(stage_sync(plan, model, params, base.grad_bytes_per_param,
                                                     place.dp_per_node, view, rates)
                                              .now_ns());
               } else {
                 const double buckets =
                     std::max(1.0, std::ceil(params / megatron_bucket_params(plan.dp)));
                 t += buckets * static_cast<double>(
                                    collective_ns(CollectiveKind::ReduceScatter,
                                                  params / buckets * base.grad_bytes_per_param,
                                                  plan.dp, place.dp_per_node, view));
               }
             }
             if (replicated)
               t += static_cast<double>(stage_sync(plan, model, stage, base.grad_bytes_per_param,
                                                   place.dp_per_node, view, rates)
                                            .deferred_ns);
             return t;
           }),
           median(busy)});
    }
  }
  // FSDP: a stage's data-parallel group gathers every layer's parameters
  // for each forward and backward and reduce-scatters its gradients, per
  // micro-batch and chunk (core/cost/fsdp.hpp), all of it in the group's
  // busy time.
  if (plan.dp > 1 && plan.optimizer_sharding == OptimizerSharding::Fsdp) {
    const int stages = plan.pp * plan.virtual_stages;
    for (const auto& entry : dp_busy) {
      const int s = entry.first;
      const std::vector<double>& busy = entry.second;
      if (s >= plan.pp) continue;
      out.push_back(
          {split([&](const ClusterView& view) {
             const FsdpGroups groups = fsdp_groups(plan, place.dp_per_node);
             double t = 0, stage_params = 0;
             for (int k = 0; k < plan.virtual_stages; ++k) {
               const int v = virtual_stage(plan.pp, s, k);
               const double other = embedding_params_on_gpu(
                   model.tied_embeddings, base.params_per_gpu_embedding, v == 0, v == stages - 1);
               const FsdpComm c = fsdp_comm_of(view, groups, base.params_per_gpu_layer, other,
                                               base.grad_bytes_per_param);
               const int layers = job.layers_per_virtual_stage[static_cast<std::size_t>(v)];
               t += static_cast<double>(fsdp_comm_ns(c, layers));
               stage_params += layers * base.params_per_gpu_layer + other;
             }
             // HSDP: the replicas' all-reduce, once (as estimate_iteration).
             return plan.micro_batches() * t +
                    static_cast<double>(hsdp_replica_sync_ns(view, groups, stage_params,
                                                             base.grad_bytes_per_param));
           }),
           median(busy)});
    }
  }
  return out;
}

void CostCalibration::add_row(const Expected& e, double observed_ns, std::size_t index) {
  const double expected = e.by_class.sum() + e.fixed_ns;
  if (!(expected > 0) || !(observed_ns >= 0) || e.by_class.sum() <= 0) return;
  // Normalised: 1 when the preset is right.
  const Row phi = e.by_class / expected;
  const double y = (observed_ns - e.fixed_ns) / expected;
  const double error = y - phi.dot(theta_);
  const double noise = std::max(kMinNoiseVar, residual_var_);
  // A step change of the cluster (a link degraded from now on, another
  // device), not noise: the row is off by more than kChangeShare and by
  // kChangeSigmas of the noise. Covariance resetting (Goodwin and Sin,
  // Adaptive Filtering, Prediction and Control, 1984, section 3.3): the
  // factors the row depends on get the prior's variance back, so this row
  // and the next move them at once rather than at the forgetting's pace,
  // and the step does not inflate the noise estimate. A row that stays off
  // after its reset is model error the factors cannot explain, not another
  // change: it is not reset again, and its error counts as noise, until it
  // fits again.
  const bool off = std::abs(error) > kChangeShare && error * error > kChangeSigmas2 * noise;
  if (misfit_.size() <= index) misfit_.resize(index + 1, 0);
  const bool step = off && misfit_[index] == 0;
  misfit_[index] = off ? 1 : 0;
  if (step) {
    ++changes_;
    for (int k = 0; k < kCostFactors; ++k) {
      if (phi(k) < kDependsShare) continue;
      p_.row(k).setZero();
      p_.col(k).setZero();
      p_(k, k) = prior_var_;
    }
  }
  const Row gain = p_ * phi / (noise + phi.dot(p_ * phi));
  theta_ += gain * error;
  p_ -= gain * phi.transpose() * p_;
  p_ = 0.5 * (p_ + p_.transpose());  // keep it symmetric against rounding
  ++rows_seen_;
  if (step) return;
  const double w = std::max(0.05, 1.0 / rows_seen_);
  residual_var_ += w * (error * error - residual_var_);
}

void CostCalibration::observe(const StepReport& report, const JobModel& job) {
  CalibrationSample sample;
  sample.iteration = report.iteration;
  sample.observed_ns = report.iteration_ns;
  sample.predicted_ns = predict_observed_ns(job.plan);
  // A warm-up measures no rate: predicted and recorded, not learnt.
  if (!report.warmup) learn(report, job);
  for (int k = 0; k < kCostFactors; ++k) sample.factor[static_cast<std::size_t>(k)] = theta_(k);
  history_.push_back(sample);
}

void CostCalibration::learn(const StepReport& report, const JobModel& job) {
  // Stabilised forgetting (Kulhavý and Zarrop, "On a general concept of
  // forgetting", Int. J. Control 1993): what was learnt weighs lambda less
  // each iteration and the prior's information (1 - lambda) more, so the
  // estimate follows a cluster that changes, while in the directions the
  // rows do not inform (attention against GEMM when every stage mixes them
  // alike) it relaxes to the prior instead of wandering with the noise,
  // and its covariance never exceeds the prior's.
  const Matrix prior_info = Matrix::Identity() / prior_var_;
  const Matrix learnt = lambda_ * p_.inverse();
  const Matrix info = learnt + (1 - lambda_) * prior_info;
  const Row info_theta = learnt * theta_ + (1 - lambda_) * prior_info * Row::Ones();
  p_ = info.inverse();
  p_ = 0.5 * (p_ + p_.transpose());
  theta_ = p_ * info_theta;
  const auto measured = rows(report, job);
  if (misfit_plan_ != profiles_.plan_label) {  // rows are indexed per plan
    misfit_.clear();
    misfit_plan_ = profiles_.plan_label;
  }
  for (std::size_t i = 0; i < measured.size(); ++i)
    add_row(measured[i].first, measured[i].second, i);
  update_rank_speed(profiles_.plan_label);
  PARASHIFT_ASSERT(theta_.allFinite() && p_.allFinite(), "calibration diverged at iteration ",
                   report.iteration);
}

}  // namespace parashift::core
