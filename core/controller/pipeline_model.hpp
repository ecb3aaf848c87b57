// The controller's model of a pipelined, data-parallel iteration, and the
// two balancing problems solved on it.
//
// Worker (stage s, replica d) spends t_sd = fixed_s + n_s * c_sd per
// micro-batch (forward + backward), where c_sd is the slowest of its ranks'
// per-layer times and n_s the layers on stage s. Replica d with m_d
// micro-batches and v chunks per stage takes
//     T_d = (m_d - 1) * max_s t_sd + sum_s t_sd / v
// (steady state paced by the slowest stage, plus one fill and drain), and the
// iteration ends with the slowest replica: T = max_d T_d. It is the 1F1B /
// GPipe time of a heterogeneous pipeline; it overstates ZB-H1's drain, which
// changes the predicted times but hardly the comparison of two splits.
#pragma once

#include <vector>

#include "core/controller/job_model.hpp"
#include "core/controller/state_estimate.hpp"

namespace parashift::core {

struct StageCosts {
  int stages = 0;
  int replicas = 0;
  int chunks = 1;                // virtual stages per physical stage
  std::vector<double> layer_ns;  // [d * stages + s]: c_sd
  std::vector<double> fixed_ns;  // [s]
  std::vector<double>
      memory_bytes;  // [d * stages + s]: latest peak, max over its ranks; empty: unknown

  double cost(int stage, int replica) const {
    return layer_ns[static_cast<std::size_t>(replica * stages + stage)];
  }
  /// max_d c_sd: the per-layer time a stage's layers take in its slowest replica.
  double slowest_cost(int stage) const;
};

StageCosts stage_costs(const StateEstimate& state, const JobModel& job);

/// T_d above, for `stage_layers` layers per physical stage.
double replica_time_ns(const StageCosts& costs, const std::vector<int>& stage_layers, int replica,
                       int micro_batches);
/// T above.
double iteration_time_ns(const StageCosts& costs, const std::vector<int>& stage_layers,
                         const std::vector<int>& micro_batches);

/// Layers per physical stage minimising max_s (fixed_s + n_s * cost_s), with
/// min_layers <= n_s <= max_layers[s] and sum n_s = layers; empty when the
/// caps leave no solution. Marginal allocation: from min_layers everywhere,
/// each further layer goes to the stage whose time after taking it is least
/// (ties: lowest stage). Exact: since each stage's successive times are
/// increasing, the layers placed are the `layers` smallest of all candidate
/// times, so the largest of them, the result, bounds every other split from
/// below.
std::vector<int> balanced_stage_layers(const std::vector<double>& cost_ns,
                                       const std::vector<double>& fixed_ns, int layers,
                                       int min_layers, const std::vector<int>& max_layers);

/// Physical-stage layer counts as layers per virtual stage (pp * v entries):
/// stage s's n_s over its v chunks, the first (n_s mod v) chunks one more.
std::vector<int> chunk_split(const std::vector<int>& stage_layers, int chunks);

/// Micro-batches per replica minimising max_d T_d with 1 <= m_d <= max_micro[d]
/// and sum m_d = total (kept exact); empty when the caps leave no solution.
/// Marginal allocation as above (T_d increases with m_d). `current`, counts
/// of some allocation of `total` (each >= 1), only speeds it up; may be empty.
/// Every m_d is a multiple of `step` (interleaved 1F1B needs multiples of pp;
/// `total` must be one): the allocation runs in units of `step`.
std::vector<int> balanced_micro_batches(const StageCosts& costs,
                                        const std::vector<int>& stage_layers, int total,
                                        const std::vector<int>& max_micro,
                                        const std::vector<int>& current = {}, int step = 1);

}  // namespace parashift::core
