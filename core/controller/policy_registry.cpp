#include "core/controller/policy_registry.hpp"

#include <limits>
#include "core/assert.hpp"

#include "core/controller/aggregation_policy.hpp"
#include "core/controller/balancer.hpp"
#include "core/controller/batch_policy.hpp"
#include "core/controller/cost_calibration.hpp"
#include "core/controller/migrate_policy.hpp"
#include "core/controller/replan_policy.hpp"
#include "core/controller/straggler_detector.hpp"
#include "core/controller/sync_policy.hpp"
#include "core/cost/replan_cost.hpp"
#include "core/faults/fault_config.hpp"

namespace parashift::core {

void PolicyRegistry::add(ModuleSpec spec) {
  PARASHIFT_ASSERT(find(spec.name) == nullptr, "policy module registered twice: ", spec.name);
  modules_.push_back(std::move(spec));
}

const ModuleSpec* PolicyRegistry::find(const std::string& name) const {
  for (const auto& m : modules_) {
    if (m.name == name) return &m;
  }
  return nullptr;
}

std::string PolicyRegistry::names() const {
  std::string out;
  for (const auto& m : modules_) out += (out.empty() ? "" : ", ") + m.name;
  return out;
}

namespace {

// Feeds each iteration's report to the controller's calibrated cost model
// (core/controller/cost_calibration.hpp), which later modules read; the
// knobs are read by the Controller when it makes the model.
class CalibrateModule final : public PolicyModule {
 public:
  void run(PolicyContext& context) override {
    if (context.calibration != nullptr && context.report != nullptr)
      context.calibration->observe(*context.report, context.job);
  }
};

}  // namespace

void register_builtin_modules(PolicyRegistry& registry) {
  constexpr double kInf = std::numeric_limits<double>::infinity();
  registry.add({"calibrate",
                "fit the cost model's compute (GEMM, attention, element-wise) and link "
                "(intra-, inter-node) time factors to each iteration by recursive least "
                "squares with forgetting; later modules read the calibrated model",
                {{"forgetting", KnobKind::Number, 0.9, 0.5, 1, "weight of the past per iteration"},
                 {"prior_sd", KnobKind::Number, 0.5, 0.01, 10,
                  "prior standard deviation of each factor around the preset's 1"}},
                [](const ModuleConfig&) -> std::unique_ptr<PolicyModule> {
                  return std::make_unique<CalibrateModule>();
                }});
  registry.add(
      {"straggler",
       "flag a GPU/node/link at >= threshold x the median per-layer time (links: best "
       "rate) for patience iterations; clear below (1+threshold)/2",
       {{"threshold", KnobKind::Number, 1.15, 1.01, 100, "slowdown that flags"},
        {"patience", KnobKind::Int, 3, 1, 1000, "consecutive iterations to flag or clear"}},
       [](const ModuleConfig& c) -> std::unique_ptr<PolicyModule> {
         return std::make_unique<StragglerDetector>(c.knob("threshold"),
                                                    static_cast<int>(c.knob("patience")));
       }});
  registry.add(
      {"balance",
       "re-partition layers (min slowest stage, memory-capped) or re-balance micro-batches "
       "across replicas when gain over the remaining run - move cost >= min_gain_s",
       {{"min_gain_s", KnobKind::Number, 60, 0, kInf, "least net gain to act"},
        {"min_improvement", KnobKind::Number, 0.05, 0, 1, "least share of the iteration saved"},
        {"move_bandwidth_gbps", KnobKind::Number, 400, 1e-3, kInf,
         "per-GPU rate for moving layer state, Gb/s"},
        {"repartition", KnobKind::Bool, 1, 0, 1, "may move layers between stages"},
        {"rebalance", KnobKind::Bool, 1, 0, 1, "may move micro-batches between replicas"},
        {"patience", KnobKind::Int, 3, 1, 1000,
         "consecutive iterations a change must be the best before it is applied"}},
       [](const ModuleConfig& c) -> std::unique_ptr<PolicyModule> {
         BalancerOptions o;
         o.min_gain_s = c.knob("min_gain_s");
         o.min_improvement = c.knob("min_improvement");
         o.move_bandwidth_Bps = gbps(c.knob("move_bandwidth_gbps"));
         o.repartition = c.flag("repartition");
         o.rebalance = c.flag("rebalance");
         o.patience = static_cast<int>(c.knob("patience"));
         return std::make_unique<Balancer>(o);
       }});
  registry.add(
      {"sync",
       "choose the data-parallel sync mode and gradient compressor (flat or hierarchical; "
       "none, int8, powersgd:4/16/64, top-k 1%) by the calibrated cost model, re-planning "
       "when one saves min_improvement for patience evaluations",
       {{"min_improvement", KnobKind::Number, 0.02, 0, 1, "least share of the iteration saved"},
        {"every", KnobKind::Int, 10, 1, 1000000, "iterations between evaluations"},
        {"patience", KnobKind::Int, 2, 1, 1000, "evaluations in a row a change must be the best"},
        {"hierarchical", KnobKind::Bool, 1, 0, 1, "may choose sync: hierarchical"},
        {"delayed", KnobKind::Bool, 0, 0, 1,
         "may choose sync: delayed (updates one iteration stale)"},
        {"int8", KnobKind::Bool, 1, 0, 1, "may choose int8 block quantisation"},
        {"powersgd", KnobKind::Bool, 1, 0, 1, "may choose PowerSGD"},
        {"topk", KnobKind::Bool, 0, 0, 1, "may choose top-k sparsification"},
        {"threshold", KnobKind::Number, 0.25, 0.01, 1,
         "share of a link's healthy rate lost (tenant load, degradation) that congests it; a "
         "change of the congested links re-decides at once"},
        {"max_left_out", KnobKind::Number, 0.5, 0.01, 1,
         "most of the gradient's energy a compressor may leave out where the backend measures "
         "it (the executor); 1: no limit"}},
       [](const ModuleConfig& c) -> std::unique_ptr<PolicyModule> {
         return std::make_unique<SyncPolicy>(sync_policy_options(c));
       }});
  registry.add(
      {"aggregation",
       "re-order each data-parallel group's rings when the congested links (loaded by another "
       "tenant, or degraded) change, so ring edges leave them (needs a backend that reports "
       "routes: the simulator)",
       {{"threshold", KnobKind::Number, 0.25, 0.01, 1,
         "share of a link's healthy rate lost (tenant load, degradation) that congests it"},
        {"min_improvement", KnobKind::Number, 0.05, 0, 1,
         "least share of a group's sync time a new order saves"},
        {"rebuild_s", KnobKind::Number, ns_to_s(kRingRebuildNs), 0, kInf,
         "cost of a new communicator, s"},
        {"max_passes", KnobKind::Int, 32, 1, 100000, "swaps per group and evaluation"}},
       [](const ModuleConfig& c) -> std::unique_ptr<PolicyModule> {
         AggregationOptions o;
         o.threshold = c.knob("threshold");
         o.min_improvement = c.knob("min_improvement");
         o.rebuild_s = c.knob("rebuild_s");
         o.max_passes = static_cast<int>(c.knob("max_passes"));
         return std::make_unique<AggregationPolicy>(o);
       }});
  registry.add(
      {"migrate",
       "move the ranks off a GPU the straggler detector names min_slowdown times slower onto the "
       "nearest spare GPU (snapshot, remap, restore before the next iteration: no work lost) "
       "when the time it saves over the remaining run exceeds the move's cost",
       {{"min_slowdown", KnobKind::Number, 1.15, 1, kInf,
         "least slowdown of a GPU finding that is moved"},
        {"reinit_s", KnobKind::Number, ns_to_s(FaultConfig{}.reinit_ns), 0, kInf,
         "restart of the moved ranks and their communicators, s (faults.reinit's default)"},
        {"whole_host", KnobKind::Bool, 1, 0, 1,
         "move every rank of the slow GPU's host to a spare host (faults.replace: host)"}},
       [](const ModuleConfig& c) -> std::unique_ptr<PolicyModule> {
         MigrateOptions o;
         o.min_slowdown = c.knob("min_slowdown");
         o.reinit_s = c.knob("reinit_s");
         o.whole_host = c.flag("whole_host");
         return std::make_unique<MigratePolicy>(o);
       }});
  registry.add(
      {"replan",
       "re-plan tp/pp/dp/cp, interleaving, micro-batch, recompute and sharding with the "
       "planner on the calibrated cost model when the calibration detects a step change or its "
       "prediction of the running plan drifts by trigger; switch when the best saves "
       "min_improvement and sigmas standard deviations, and its gain over the remaining run "
       "pays the switch (state re-sharded, communicators rebuilt), for patience searches",
       {{"trigger", KnobKind::Number, 0.10, 0.001, 10,
         "share the running plan's calibrated prediction must drift before a search "
         "(a step change the calibration detects searches at once)"},
        {"sigmas", KnobKind::Number, 2, 0, 100,
         "standard deviations of the calibration the saving must exceed"},
        {"min_improvement", KnobKind::Number, 0.05, 0, 1, "least share of the iteration saved"},
        {"min_gain_s", KnobKind::Number, 0, 0, kInf,
         "least gain over the remaining run, net of the switch cost"},
        {"gain_ratio", KnobKind::Number, 2, 1, 1000,
         "least gain over the remaining run, as a multiple of the switch cost"},
        {"warmup", KnobKind::Int, 3, 1, 1000, "iterations observed since a change before a search"},
        {"every", KnobKind::Int, 5, 1, 1000000, "iterations between confirming searches"},
        {"patience", KnobKind::Int, 2, 1, 1000, "searches in a row the same plan must win"},
        {"rebuild_s", KnobKind::Number, 20, 0, kInf,
         "switch fixed part expected until one is measured, s"},
        {"plan_cost_us", KnobKind::Number, 0.35, 0, kInf,
         "counted time to estimate one plan, us (BM_ReplanSearch16k: 14.1 ms / 39,949 plans)"},
        {"background_share", KnobKind::Number, 0.1, 0, kInf,
         "a search counted longer than this share of an iteration runs in the background"}},
       [](const ModuleConfig& c) -> std::unique_ptr<PolicyModule> {
         ReplanPolicyOptions o;
         o.trigger = c.knob("trigger");
         o.sigmas = c.knob("sigmas");
         o.min_improvement = c.knob("min_improvement");
         o.min_gain_s = c.knob("min_gain_s");
         o.gain_ratio = c.knob("gain_ratio");
         o.warmup = static_cast<int>(c.knob("warmup"));
         o.every = static_cast<int>(c.knob("every"));
         o.patience = static_cast<int>(c.knob("patience"));
         o.rebuild_s = c.knob("rebuild_s");
         o.plan_cost_us = c.knob("plan_cost_us");
         o.background_share = c.knob("background_share");
         return std::make_unique<ReplanPolicy>(o);
       }});
  registry.add(
      {"batch",
       "set the global batch for the best goodput (Pollux): the gradient noise scale measured "
       "from each replica's and the reduced gradient's norms (McCandlish et al. 2018), each "
       "candidate batch priced by the calibrated cost model, within min_batch..max_batch in "
       "multiples of dp x micro-batch",
       {{"min_batch", KnobKind::Int, 0, 0, 1e9, "least global batch, sequences (0: dp x mb)"},
        {"max_batch", KnobKind::Int, 0, 0, 1e9,
         "largest global batch, sequences (0: 8 x the starting batch)"},
        {"every", KnobKind::Int, 20, 1, 1000000, "iterations between decisions"},
        {"min_improvement", KnobKind::Number, 0.03, 0, 10, "least goodput share gained"},
        {"patience", KnobKind::Int, 2, 1, 1000, "evaluations in a row the same batch must win"},
        {"smoothing", KnobKind::Number, 0.95, 0, 0.9999,
         "weight of the past in the noise-scale estimate, per iteration"}},
       [](const ModuleConfig& c) -> std::unique_ptr<PolicyModule> {
         BatchPolicyOptions o;
         o.min_batch = static_cast<int>(c.knob("min_batch"));
         o.max_batch = static_cast<int>(c.knob("max_batch"));
         o.every = static_cast<int>(c.knob("every"));
         o.min_improvement = c.knob("min_improvement");
         o.patience = static_cast<int>(c.knob("patience"));
         o.smoothing = c.knob("smoothing");
         return std::make_unique<BatchPolicy>(o);
       }});
}

PolicyRegistry builtin_policy_registry() {
  PolicyRegistry registry;
  register_builtin_modules(registry);
  return registry;
}

}  // namespace parashift::core
