#include "core/scenario/scenario.hpp"

#include <algorithm>
#include <cmath>
#include <fstream>
#include <set>
#include <sstream>

#include "core/controller/policy_registry.hpp"
#include "core/data_dir.hpp"
#include "core/faults/duration.hpp"
#include "core/input_error.hpp"
#include "core/input_file.hpp"
#include "core/scenario/cluster_groups.hpp"
#include "core/scenario/cluster_truth.hpp"
#include "core/scenario/hf_config.hpp"
#include "core/scenario/model_yaml.hpp"
#include "core/scenario/yaml_fields.hpp"

namespace parashift::core {

namespace {

// A bound, not a tuning: 1,000 re-simulated iterations of the noisy 64-GPU
// scenario take ~15 s, and the mutation check found 10^7 running past 300 s.
constexpr int kMaxRunIterations = 1'000'000;

}  // namespace

namespace fs = std::filesystem;

std::string TopologySource::describe() const {
  if (!file.empty()) return file;
  std::string s = generator;
  for (const auto& [key, value] : params) s += " " + key + "=" + value;
  return s;
}

void apply_overrides(YAML::Node& root, const std::vector<std::string>& overrides) {
  for (const auto& item : overrides) {
    const auto eq = item.find('=');
    if (eq == std::string::npos || eq == 0) {
      throw InputError("--set " + item + ": expected key.path=value");
    }
    const std::string key = item.substr(0, eq);
    const std::string text = item.substr(eq + 1);
    std::vector<std::string> parts;
    std::stringstream split(key);
    for (std::string part; std::getline(split, part, '.');) {
      if (part.empty()) throw InputError("--set " + item + ": empty field name in '" + key + "'");
      parts.push_back(part);
    }
    YAML::Node value;
    try {
      value = YAML::Load(text);
    } catch (const YAML::Exception& e) {
      throw InputError("--set " + item + ": value is not valid YAML (" + e.msg + ")");
    }
    // Walk with reset() copies: yaml-cpp nodes are handles into one document.
    YAML::Node cursor;
    cursor.reset(root);
    for (std::size_t i = 0; i + 1 < parts.size(); ++i) {
      YAML::Node next = cursor[parts[i]];
      if (i == 0 && parts[0] == "model" && next && next.IsScalar()) {
        // `model: llama3-70b` with `--set model.layers=40`: the preset plus an override.
        YAML::Node with_preset(YAML::NodeType::Map);
        with_preset["preset"] = next.Scalar();
        cursor["model"] = with_preset;
        next.reset(cursor["model"]);
      }
      if (next && !next.IsNull() && !next.IsMap()) {
        std::string prefix;
        for (std::size_t j = 0; j <= i; ++j) prefix += (j ? "." : "") + parts[j];
        throw InputError("--set " + item + ": '" + prefix + "' is not a map of fields");
      }
      if (!next || next.IsNull()) {
        cursor[parts[i]] = YAML::Node(YAML::NodeType::Map);
        next.reset(cursor[parts[i]]);
      }
      cursor.reset(next);
    }
    cursor[parts.back()] = value;
  }
}

ModelSpec load_model_preset(const std::string& name, const fs::path& scenario_dir) {
  const std::vector<fs::path> dirs = {scenario_dir / "models", shipped_data_dir() / "models"};
  for (const auto& dir : dirs) {
    const fs::path file = dir / (name + ".yaml");
    // A name too long for a path, with '/' or with a NUL (the path would end at
    // the directory) is an unknown preset, not a crash.
    std::error_code ec;
    if (name.find_first_of(std::string("/\0", 2)) != std::string::npos ||
        !fs::is_regular_file(file, ec)) {
      continue;
    }
    YAML::Node doc;
    try {
      doc = YAML::LoadFile(file.string());
    } catch (const YAML::Exception& e) {
      throw InputError(file.string() + ":" + std::to_string(e.mark.line + 1) + ": " + e.msg);
    }
    YamlFields fields(doc, "model", file.string());
    ModelSpec m = read_model_fields(fields, ModelSpec{});
    fields.reject_unknown();
    if (m.name.empty()) m.name = name;
    try {
      m.validate();
    } catch (const InputError& e) {
      throw InputError(file.string() + ": " + e.what());
    }
    return m;
  }
  // Each name once: the scenario's own models/ folder is often the shipped one.
  std::set<std::string> names;
  for (const auto& dir : dirs) {
    if (!fs::is_directory(dir)) continue;
    for (const auto& entry : fs::directory_iterator(dir)) {
      if (entry.path().extension() == ".yaml") names.insert(entry.path().stem().string());
    }
  }
  std::string known;
  for (const auto& n : names) known += (known.empty() ? "" : ", ") + n;
  std::error_code ec;
  const bool same = fs::equivalent(dirs[0], dirs[1], ec);
  throw InputError("unknown model preset '" + name + "' (known: " + known + "; looked in " +
                   dirs[0].string() + (same ? "" : " and " + dirs[1].string()) + ")");
}

namespace {

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
  const int gpus = s.topology.gpu_count();
  const int model_parallel = p.tp * p.pp * p.cp;
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
  enum_field("optimizer_sharding", parse_optimizer_sharding, p.optimizer_sharding);
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

}  // namespace

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

Scenario parse_scenario(const std::string& yaml_text, const fs::path& file,
                        const std::vector<std::string>& overrides, const ScenarioOptions& options) {
  const std::string name = file.string();
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
  apply_overrides(root, overrides);
  std::set<std::string> overridden;
  for (const auto& item : overrides) overridden.insert(item.substr(0, item.find('=')));

  const fs::path dir = file.parent_path();
  Scenario s;
  s.file = name;
  YamlFields top(root, "", name, &overridden);
  s.name = top.optional_string("name").value_or(file.stem().string());
  s.model = read_model(top, name, dir);

  {
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
    cluster.reject_unknown();
    try {
      s.topology =
          s.topology_source.file.empty()
              ? topo::generate_topology(s.topology_source.generator, s.topology_source.params)
              : topo::load_topology(s.topology_source.file);
    } catch (const topo::TopologyError& e) {
      cluster.fail("topology", e.what());
    }
    if (!groups.empty())
      s.device_groups = place_groups(groups, s.topology, cluster.where("groups"));
  }

  YamlFields training = top.map("training");
  {
    s.training.global_batch = training.positive_int("global_batch");
    s.training.seq_len = training.positive_int("seq_len");
    // Bounds that keep every simulated time inside int64 nanoseconds: 16M
    // tokens a sequence (the longest published context is 10M), 2^36 (69
    // billion) tokens a batch (Llama 3 405B trained on 16M a batch).
    constexpr int kMaxSeqLen = 1 << 24;
    constexpr long long kMaxBatchTokens = 1LL << 36;
    if (s.training.seq_len > kMaxSeqLen) {
      training.fail("seq_len", "expected at most " + std::to_string(kMaxSeqLen) +
                                   " tokens, found " + std::to_string(s.training.seq_len));
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
    training.reject_unknown();
    if (s.training.precision == Precision::Fp8 && s.device.peak_fp8_flops_per_s <= 0) {
      training.fail("precision",
                    "fp8 needs a device with FP8 tensor cores; " + s.device.name + " has none");
    }
  }

  if (options.plan_optional && !top.has("plan")) {
    top.allow("plan");
    s.has_plan = false;
    s.plan.dp = s.topology.gpu_count();
    s.plan.global_batch = s.training.global_batch;
    s.plan.precision = s.training.precision;
  } else {
    read_plan(top, training, s, options);
  }

  if (top.has("run")) {
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
  } else {
    top.allow("run");
  }
  if (top.has("policy")) {
    YamlFields policy = top.map("policy");
    s.policy = read_policy_config(policy, dir);
    if (s.has_plan && s.plan_problem.empty()) check_batch_bounds(s, policy);
  } else {
    top.allow("policy");
    s.policy = default_policy_config(builtin_policy_registry());
  }
  if (top.has("faults")) {
    YamlFields faults = top.map("faults");
    s.faults = read_fault_config(faults);
    for (const FaultEvent& e : s.faults->events)
      if (e.kind == FaultEventKind::Tenant && !s.run.contention)
        throw InputError(e.where +
                         ": a tenant shares links by flows; expected run.network: "
                         "maxmin, found path");
  } else {
    top.allow("faults");
  }
  if (top.has("traffic")) {
    YamlFields traffic = top.map("traffic");
    s.traffic = read_traffic_weights(traffic);
  } else {
    top.allow("traffic");
  }
  if (top.has("convergence")) {
    YamlFields convergence = top.map("convergence");
    s.convergence = read_convergence(convergence, dir);
  } else {
    top.allow("convergence");
  }
  top.reject_unknown();
  return s;
}

Scenario load_scenario(const fs::path& file, const std::vector<std::string>& overrides,
                       const ScenarioOptions& options) {
  return parse_scenario(read_input_file(file, "scenario file"), file, overrides, options);
}

}  // namespace parashift::core
