// The sections of a scenario file read into a Scenario, shared by one-job
// scenarios (scenario.cpp) and the jobs of a shared cluster
// (shared_cluster.cpp).
#include "core/scenario/scenario_sections.hpp"

#include <algorithm>
#include <cmath>
#include <string>
#include <vector>

#include "core/controller/policy_registry.hpp"
#include "core/faults/duration.hpp"
#include "core/input_error.hpp"
#include "core/scenario/cluster_groups.hpp"
#include "core/scenario/cluster_truth.hpp"
#include "core/scenario/hf_config.hpp"
#include "core/scenario/model_yaml.hpp"
#include "core/traffic_class.hpp"

namespace parashift::core {

namespace fs = std::filesystem;

YAML::Node load_scenario_root(const std::string& yaml_text, const std::string& name) {
  YAML::Node root;
  try {
    root = YAML::Load(yaml_text);
  } catch (const YAML::Exception& e) {
    throw InputError(name + ":" + std::to_string(e.mark.line + 1) + ":" +
                     std::to_string(e.mark.column + 1) + ": malformed YAML: " + e.msg);
  }
  if (!root || root.IsNull())
    throw InputError(name + ": empty scenario (expected a map of fields)");
  if (!root.IsMap()) throw InputError(name + ": expected a map of fields at the top level");
  return root;
}

ModelSpec read_model(YamlFields& root, const std::string& file, const fs::path& dir) {
  const YAML::Node node = root.child("model");
  if (node.IsScalar()) {
    try {
      return load_model_preset(node.Scalar(), dir);
    } catch (const InputError& e) {
      root.fail("model", e.what());
    }
  }
  YamlFields fields = root.map("model");
  ModelSpec base;
  if (auto preset = fields.optional_string("preset")) {
    try {
      base = load_model_preset(*preset, dir);
    } catch (const InputError& e) {
      fields.fail("preset", e.what());
    }
  }
  if (auto hf = fields.optional_string("hf_config")) {
    try {
      base = load_hf_config((dir / *hf).lexically_normal());
    } catch (const InputError& e) {
      fields.fail("hf_config", e.what());
    }
  }
  ModelSpec m = read_model_fields(fields, base);
  fields.reject_unknown();
  try {
    m.validate();
  } catch (const InputError& e) {
    throw InputError(yaml_location(file, node) + e.what());
  }
  return m;
}

namespace {

TopologySource read_topology_source(YamlFields& cluster, const fs::path& dir) {
  TopologySource src;
  const YAML::Node node = cluster.child("topology");
  if (node.IsScalar()) {
    src.file = (dir / node.Scalar()).lexically_normal().string();
    return src;
  }
  YamlFields fields = cluster.map("topology");
  if (auto file = fields.optional_string("file")) {
    src.file = (dir / *file).lexically_normal().string();
    fields.reject_unknown();
    return src;
  }
  src.generator = fields.string("generator");
  for (const auto& entry : fields.node()) {
    const std::string key = fields.key_name(entry.first);
    if (key == "generator" || key == "file") continue;
    if (!entry.second.IsScalar()) {
      fields.fail(key, "expected a scalar generator parameter");
    }
    src.params[key] = entry.second.Scalar();
  }
  return src;
}

}  // namespace

// The `plan:` section. Under options.plan_optional a plan that does not fit
// the cluster, model or batch is recorded in s.plan_problem, not refused.
void read_plan(YamlFields& top, const YamlFields& training, Scenario& s,
               const ScenarioOptions& options) {
  YamlFields plan = top.map("plan");
  ParallelPlan& p = s.plan;
  p.tp = plan.optional_positive_int("tp").value_or(1);
  p.pp = plan.optional_positive_int("pp").value_or(1);
  p.cp = plan.optional_positive_int("cp").value_or(1);
  const auto dp = plan.optional_positive_int("dp");
  if (options.plan_sets_gpus && !dp)
    plan.fail("dp", "expected dp: a job of a shared cluster sets its own GPU count");
  const int model_parallel = p.tp * p.pp * p.cp;
  const int gpus = options.plan_sets_gpus ? model_parallel * *dp : s.topology.gpu_count();
  p.dp = dp.value_or(gpus % model_parallel == 0 ? gpus / model_parallel : 0);
  p.virtual_stages = plan.optional_positive_int("virtual_stages").value_or(1);
  p.micro_batch = plan.optional_positive_int("micro_batch").value_or(1);
  auto enum_field = [&](const char* key, auto parse, auto& target) {
    if (auto v = plan.optional_string(key)) {
      try {
        target = parse(*v);
      } catch (const InputError& e) {
        plan.fail(key, e.what());
      }
    }
  };
  enum_field("schedule", parse_schedule, p.schedule);
  enum_field("recompute", parse_recompute, p.recompute);
  // 0, as when left out: every layer (plan_overrides writes it so).
  p.recompute_layers = static_cast<int>(
      std::min<long long>(plan.nonnegative_int64("recompute_layers", 0), 1'000'000'000));
  enum_field("optimizer_sharding", parse_optimizer_sharding, p.optimizer_sharding);
  p.dp_shard =
      static_cast<int>(std::min<long long>(plan.nonnegative_int64("dp_shard", 0), 1'000'000'000));
  if (auto sp = plan.optional_bool("sequence_parallel")) p.sequence_parallel = *sp;
  enum_field("sync", parse_sync_mode, p.sync);
  enum_field("compression", parse_compression, p.compression);
  enum_field("order", parse_rank_order, p.order);
  plan.reject_unknown();
  p.global_batch = s.training.global_batch;
  p.precision = s.training.precision;
  try {
    if (!dp && p.dp == 0) {
      p.dp = 1;
      plan.fail("tp", "tp*pp*cp=" + std::to_string(model_parallel) + " does not divide the " +
                          std::to_string(gpus) + " GPUs of the cluster");
    }
    const auto problems = p.problems(s.model, s.training.seq_len, gpus);
    if (!problems.empty()) {
      const std::string first = problems.front();
      const std::string key = first.substr(0, first.find(':'));
      const std::string what = first.substr(first.find(':') + 2);
      if (key == "global_batch") training.fail(key, what);
      if (plan.has(key)) plan.fail(key, what);
      throw InputError(yaml_location(s.file, plan.node()) + "plan." + key + ": " + what);
    }
  } catch (const InputError& e) {
    if (!options.plan_optional) throw;
    s.plan_problem = e.what();
  }
}

void read_cluster(YamlFields& top, Scenario& s, const fs::path& dir) {
  YamlFields cluster = top.map("cluster");
  std::vector<GroupSpec> groups;
  if (cluster.has("groups")) {
    if (cluster.has("device"))
      cluster.fail("device", "expected one of device or groups (each group names its device)");
    groups = read_cluster_groups(cluster);
    s.device = groups.front().device;
  } else {
    const std::string device = cluster.string("device");
    try {
      s.device = device_preset(device);
    } catch (const InputError& e) {
      cluster.fail("device", e.what());
    }
  }
  s.topology_source = read_topology_source(cluster, dir);
  if (cluster.has("truth")) {
    YamlFields truth = cluster.map("truth");
    s.truth = read_cluster_truth(truth);
  }
  if (cluster.has("nccl_algo")) {
    const std::string algo = cluster.string("nccl_algo");
    if (!parse_nccl_algo(algo, s.nccl_algo))
      cluster.fail("nccl_algo", "expected auto, ring, tree or nvls, got '" + algo + "'");
  }
  cluster.reject_unknown();
  try {
    s.topology =
        s.topology_source.file.empty()
            ? topo::generate_topology(s.topology_source.generator, s.topology_source.params)
            : topo::load_topology(s.topology_source.file);
  } catch (const topo::TopologyError& e) {
    cluster.fail("topology", e.what());
  }
  if (!groups.empty()) s.device_groups = place_groups(groups, s.topology, cluster.where("groups"));
}

void read_training(YamlFields& training, Scenario& s, const fs::path& dir) {
  s.training.global_batch = training.positive_int("global_batch");
  s.training.seq_len = training.positive_int("seq_len");
  // Bounds that keep every simulated time inside int64 nanoseconds: 16M
  // tokens a sequence (the longest published context is 10M), 2^36 (69
  // billion) tokens a batch (Llama 3 405B trained on 16M a batch).
  constexpr int kMaxSeqLen = 1 << 24;
  constexpr long long kMaxBatchTokens = 1LL << 36;
  if (s.training.seq_len > kMaxSeqLen) {
    training.fail("seq_len", "expected at most " + std::to_string(kMaxSeqLen) + " tokens, found " +
                                 std::to_string(s.training.seq_len));
  }
  if (static_cast<long long>(s.training.global_batch) * s.training.seq_len > kMaxBatchTokens) {
    training.fail(
        "global_batch",
        "global_batch x seq_len = " +
            std::to_string(static_cast<long long>(s.training.global_batch) * s.training.seq_len) +
            " tokens a batch; expected at most " + std::to_string(kMaxBatchTokens));
  }
  if (auto p = training.optional_string("precision")) {
    try {
      s.training.precision = parse_precision(*p);
    } catch (const InputError& e) {
      training.fail("precision", e.what());
    }
  }
  if (auto text = training.optional_string("text")) {
    const fs::path file = (dir / *text).lexically_normal();
    if (!fs::is_regular_file(file))
      training.fail("text",
                    "expected a readable text file, found no file at '" + file.string() + "'");
    s.training.text = file.string();
  }
  training.reject_unknown();
  if (s.training.precision == Precision::Fp8 && s.device.peak_fp8_flops_per_s <= 0) {
    training.fail("precision",
                  "fp8 needs a device with FP8 tensor cores; " + s.device.name + " has none");
  }
}

void read_run(YamlFields& top, Scenario& s) {
  if (!top.has("run")) {
    top.allow("run");
    return;
  }
  YamlFields run = top.map("run");
  const auto iterations = run.optional_positive_int("iterations");
  s.run.iterations = iterations.value_or(1);
  if (s.run.iterations > kMaxRunIterations) {
    run.fail("iterations", "expected at most " + std::to_string(kMaxRunIterations) +
                               " iterations, found " + std::to_string(s.run.iterations) +
                               " (give run.duration for longer runs)");
  }
  if (auto duration = run.optional_string("duration")) {
    if (iterations) run.fail("duration", "give either run.iterations or run.duration, not both");
    try {
      s.run.duration_ns = parse_strict_duration_ns(*duration);
    } catch (const InputError& e) {
      run.fail("duration", e.what());
    }
    if (s.run.duration_ns <= 0) run.fail("duration", "expected a positive duration, found 0");
  }
  s.run.seed = static_cast<std::uint64_t>(run.nonnegative_int64("seed", 1));
  if (auto network = run.optional_string("network")) {
    if (*network != "maxmin" && *network != "path") {
      run.fail("network", "expected one of maxmin, path, found '" + *network + "'");
    }
    s.run.contention = *network == "maxmin";
  }
  run.reject_unknown();
}

namespace {

// The batch module's bounds must hold a global batch the plan can take: a
// multiple of dp x micro_batch that the plan admits (e.g. interleaving's
// micro-batches in multiples of pp).
void check_batch_bounds(const Scenario& s, YamlFields& policy) {
  const ModuleConfig* batch = s.policy.find("batch");
  if (batch == nullptr || !batch->enabled) return;
  const int step = s.plan.dp * s.plan.micro_batch;
  const double low = batch->knob("min_batch");
  const double high =
      batch->knob("max_batch") > 0 ? batch->knob("max_batch") : 8.0 * s.plan.global_batch;
  // Validity repeats with the batch (divisibility), so a few thousand
  // consecutive multiples settle it without walking a huge range.
  const double first = std::max<double>(step, std::ceil(low / step) * step);
  for (double b = first; b <= high && b < first + 4096.0 * step; b += step) {
    ParallelPlan p = s.plan;
    p.global_batch = static_cast<int>(b);
    if (p.problems(s.model, s.training.seq_len, p.gpus()).empty()) return;
  }
  policy.fail("batch", "no global batch in [" + std::to_string(static_cast<long long>(low)) + ", " +
                           std::to_string(static_cast<long long>(high)) +
                           "] that the plan can take (a multiple of dp x micro_batch = " +
                           std::to_string(step) + " it admits)");
}

}  // namespace

void read_traffic(YamlFields& top, Scenario& s) {
  if (!top.has("traffic")) {
    top.allow("traffic");
    return;
  }
  YamlFields traffic = top.map("traffic");
  s.traffic = read_traffic_weights(traffic);
}

void read_policy(YamlFields& top, Scenario& s, const fs::path& dir) {
  if (!top.has("policy")) {
    top.allow("policy");
    s.policy = default_policy_config(builtin_policy_registry());
    return;
  }
  YamlFields policy = top.map("policy");
  s.policy = read_policy_config(policy, dir);
  if (s.has_plan && s.plan_problem.empty()) check_batch_bounds(s, policy);
}

}  // namespace parashift::core
