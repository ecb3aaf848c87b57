// Online calibration of the cost model from what each iteration measured.
//
// The cost model's physical parameters are refined while the job runs: the
// time of each compute class (GEMMs, fused attention, element-wise kernels)
// and the bandwidth term of each link class (inside a node, between nodes)
// carry a factor, truth time over preset time (1 = the preset is right). The
// measured times are linear in these factors: a stage's compute is the sum of
// its classes' preset times, each times its factor; a communication group's
// time is its latency plus each link class's bandwidth term times its factor.
// The classes' preset shares of each measured quantity come from the cost
// model itself (core/cost/work_profile.hpp, core/cost/estimate.hpp) by
// doubling one efficiency or link rate at a time: every kernel and
// bandwidth term is work over (rate x efficiency), so doubling the rate
// halves exactly that class's part. No formula is copied here.
//
// Estimator: recursive least squares with stabilised forgetting (Ljung and
// Söderström 1983; Haykin, Adaptive Filter Theory, ch. 10) over the five
// factors, one row per measured quantity (each pipeline stage's median rank's
// compute, each stage's tensor-parallel and data-parallel group time),
// normalised by its preset prediction so each row weighs its relative error.
// The prior is the preset (every factor 1) with standard deviation
// `prior_sd`; forgetting `lambda` per iteration lets the estimate follow a
// cluster that changes (old iterations weigh lambda^age). Each factor's
// confidence is its posterior standard deviation, sqrt(P_kk x sigma^2), with
// sigma^2 the running variance of the normalised residuals; a factor no row
// depends on keeps the prior's.
#pragma once

#include <Eigen/Dense>
#include <array>
#include <cstdint>
#include <string>
#include <vector>

#include "core/backend.hpp"
#include "core/controller/job_model.hpp"
#include "core/cost/cost_inputs.hpp"
#include "core/cost/speed_balance.hpp"
#include "core/cost/work_profile.hpp"

namespace parashift::core {

enum class CostFactor { Gemm, Attention, Memory, IntraNode, InterNode };
inline constexpr int kCostFactors = 5;
/// "gemm", "attention", "memory", "intra_node", "inter_node".
const char* to_string(CostFactor factor);

struct CalibrationSample {
  std::int64_t iteration = 0;
  TimeNs observed_ns = 0;
  TimeNs predicted_ns = 0;                    // before this iteration was observed (one step ahead)
  std::array<double, kCostFactors> factor{};  // after it
};

/// The calibration at the end of a run: each factor and its standard
/// deviation, and every iteration's prediction and factors.
struct CalibrationSummary {
  std::array<double, kCostFactors> factor{};
  std::array<double, kCostFactors> stddev{};
  std::vector<CalibrationSample> history;
  /// The first iteration from which every prediction is within `share` of
  /// what was observed (-1: none).
  std::int64_t settled_at(double share) const;
};

class CostCalibration {
 public:
  /// Asserts 0 < forgetting <= 1 and prior_sd > 0.
  CostCalibration(CostInputs preset, double forgetting, double prior_sd);

  /// Predicts the iteration `job` runs, then refines the factors from what
  /// `report` measured and records both (history()).
  void observe(const StepReport& report, const JobModel& job);

  double factor(CostFactor f) const { return theta_(static_cast<int>(f)); }
  /// Posterior standard deviation of a factor.
  double stddev(CostFactor f) const;
  /// The device and cluster the factors say the job runs on: each
  /// efficiency (link rate) divided by its time factor.
  DeviceSpec device() const;
  ClusterView cluster() const;
  /// The preset's device groups with the same factors applied to each
  /// group's device (empty: one device type).
  std::vector<DeviceGroup> device_groups() const;
  /// The cost model's iteration time for `plan` on the calibrated device and cluster.
  TimeNs predict_ns(const ParallelPlan& plan) const;
  /// The running plan's next iteration as it will be measured: predict_ns
  /// with each replica's passes at its slowest rank's measured pace and its
  /// share of the micro-batches, the last to finish the critical path (a
  /// plan not measured yet: the device groups' factors). predict_ns stays
  /// the model of the plan on healthy ranks; modules comparing plans read
  /// predict_balanced_ns.
  TimeNs predict_observed_ns(const ParallelPlan& plan) const;
  /// How much the slowest rank stretches the critical path's compute: max
  /// over ranks of its smoothed time over what the fitted factors predict
  /// for it (a slow rank, or a stage the factors fit short), beyond 3
  /// robust standard deviations of that spread over the ranks (jitter
  /// alone is not a slow rank), times its stage's work with its replica's
  /// micro-batches, over the busiest stage's work with the plan's even
  /// share (a re-balance moves micro-batches off the slow replicas onto
  /// the others). 1: no rank is slow, or nothing measured yet.
  double rank_stretch() const;
  /// The ranks of the running plan slower than jitter explains, each as a
  /// GPU (rank r on GPU r) with its compute factor: 1 + the excess of its
  /// smoothed speed over the median rank's plus the jitter floor, over the
  /// median rank's. Empty: none, or nothing measured yet.
  const std::vector<GpuFactor>& slow_ranks() const { return slow_ranks_; }
  /// The running plan's iteration on the calibrated model with the device
  /// groups' and the slow ranks' GPUs balanced as the balance module would
  /// (core/cost/speed_balance): what the replan module compares against the
  /// plans it could switch to.
  TimeNs predict_balanced_ns(const ParallelPlan& plan) const;
  /// The standard deviation of predict_ns(a) - predict_ns(b) under the
  /// factors' posterior covariance (each plan's time linearised in the
  /// factors): how far the calibration can be trusted to rank the two.
  double difference_sd_ns(const ParallelPlan& a, const ParallelPlan& b) const;
  /// Step changes of the cluster detected so far (rows off by more than
  /// 5% and 5 standard deviations of the noise; each resets the covariance
  /// of the factors it depends on to the prior's).
  int changes() const { return changes_; }
  const std::vector<CalibrationSample>& history() const { return history_; }
  CalibrationSummary summary() const;
  const CostInputs& preset() const { return preset_; }

 private:
  using Row = Eigen::Matrix<double, kCostFactors, 1>;
  using Matrix = Eigen::Matrix<double, kCostFactors, kCostFactors>;
  /// One measured quantity: its preset time split by class, and the part
  /// no factor scales (communication latency).
  struct Expected {
    Row by_class = Row::Zero();
    double fixed_ns = 0;
  };
  /// Row `index` of this iteration's rows (in rows()' order, stable while
  /// the plan stays).
  void add_row(const Expected& e, double observed_ns, std::size_t index);
  /// The forgetting, this report's rows and the per-rank speeds.
  void learn(const StepReport& report, const JobModel& job);
  DeviceSpec device_at(const Row& theta) const { return calibrated(preset_.device, theta); }
  /// `preset` with each efficiency divided by its time factor.
  static DeviceSpec calibrated(DeviceSpec preset, const Row& theta);
  /// The factors as predictions apply them (each within its bounds).
  Row applied_factors() const;
  ClusterView cluster_at(const Row& theta) const;
  /// d predict_ns(plan) / d factor, at the current estimate.
  Row sensitivity(const ParallelPlan& plan) const;
  std::vector<std::pair<Expected, double>> rows(const StepReport& report,
                                                const JobModel& job) const;
  /// Each rank's compute over its preset time, its stage (rows() fills it;
  /// ratio 0 for a rank not measured) and its stage's expected compute.
  struct RankRatio {
    double ratio = 0;
    int stage = 0;
    double stage_ns = 0;  // with its replica's micro-batches
    double even_ns = 0;   // with the plan's even share (what predict_ns assumes)
    double share = 1;     // its replica's micro-batches over the even share
  };
  /// Each stage's compute row (by_class empty: not measured).
  mutable std::vector<Expected> stage_model_;
  mutable std::vector<RankRatio> rank_ratio_;
  /// Per-rank speed: each rank's time over what the fitted factors predict
  /// for its stage, smoothed by the forgetting, for the running plan (reset
  /// when the plan changes).
  void update_rank_speed(const std::string& plan_label);
  /// The device groups' compute factors for `plan` on the calibrated devices.
  std::vector<GpuFactor> plan_group_factors(const ParallelPlan& plan) const;
  std::vector<double> rank_speed_;
  std::vector<double> speed_scratch_;   // update_rank_speed's, kept to reuse its memory
  std::vector<double> raw_scratch_;     // ... this iteration's speed per rank
  std::vector<signed char> rank_step_;  // per rank: side of a first step seen (0: none)
  std::string rank_speed_plan_;
  /// Each replica's slowest compute over the busiest stage's at the even
  /// share, and its micro-batches over the even share (empty: nothing
  /// measured); dp_stride_ and dp_ are the running plan's (core/rank_layout.hpp).
  struct ReplicaPace {
    double stretch = 0;
    double share = 1;
  };
  std::vector<ReplicaPace> replica_pace_;
  std::vector<GpuFactor> slow_ranks_;
  mutable int dp_stride_ = 1;
  mutable int dp_ = 1;
  /// The preset's work profile of `plan` and the three with one compute
  /// efficiency doubled, kept while the plan stays (rows() runs per report).
  struct Profiles {
    std::string plan_label;
    WorkProfile base;
    std::array<WorkProfile, 3> doubled;
    /// Each rank's compute factor on the preset device (its group's, by
    /// rank r on GPU r); empty: one device type.
    std::vector<double> rank_factor;
  };
  const Profiles& profiles(const ParallelPlan& plan) const;
  mutable Profiles profiles_;

  CostInputs preset_;
  double lambda_;
  double prior_var_;
  Row theta_ = Row::Ones();
  Matrix p_;
  double residual_var_ = 0;  // running mean of squared normalised residuals
  int rows_seen_ = 0;
  int changes_ = 0;
  std::vector<char> misfit_;  // per row: off at its last observation (see add_row)
  std::string misfit_plan_;   // the plan misfit_ is of
  std::vector<CalibrationSample> history_;
};

}  // namespace parashift::core
