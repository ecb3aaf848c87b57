#include "core/controller/plugin_module.hpp"

#include <dlfcn.h>

#include <cmath>
#include <cstring>
#include <functional>
#include <memory>
#include <numeric>
#include <system_error>
#include <vector>

#include "core/controller/parashift_plugin.h"
#include "core/input_error.hpp"

namespace parashift::core {

namespace fs = std::filesystem;

namespace {

// The library handle; dlclose when the last spec or module made from it goes.
struct Library {
  void* handle = nullptr;
  const parashift_policy_plugin_v1* api = nullptr;
  std::string where;  // "path (plugin name)" for messages
  ~Library() {
    if (handle != nullptr) ::dlclose(handle);
  }
};

bool valid_name(const char* name) {
  if (name == nullptr || *name == '\0' || std::strlen(name) > 64) return false;
  for (const char* c = name; *c != '\0'; ++c) {
    if (!((*c >= 'a' && *c <= 'z') || (*c >= '0' && *c <= '9') || *c == '_' || *c == '-')) {
      return false;
    }
  }
  return true;
}

void check_knobs(const parashift_policy_plugin_v1& api, const std::string& where) {
  if (api.knob_count < 0 || api.knob_count > 64 || (api.knob_count > 0 && api.knobs == nullptr)) {
    throw InputError(where + ": knob_count " + std::to_string(api.knob_count) +
                     " (expected 0..64 knobs, with a knobs array when any)");
  }
  for (int i = 0; i < api.knob_count; ++i) {
    const parashift_knob_v1& k = api.knobs[i];
    const std::string which = where + ": knob " + std::to_string(i);
    if (!valid_name(k.name) || std::strcmp(k.name, "enabled") == 0) {
      throw InputError(which + ": expected a name of [a-z0-9_-] other than 'enabled'");
    }
    if (std::isnan(k.min_value) || std::isnan(k.max_value) || !std::isfinite(k.default_value) ||
        k.min_value > k.default_value || k.default_value > k.max_value) {
      throw InputError(which + " '" + k.name + "': expected min <= default <= max, finite default");
    }
  }
}

std::shared_ptr<Library> open_library(const fs::path& path) {
  std::error_code ec;
  if (!fs::is_regular_file(path, ec)) {
    throw InputError(path.string() + ": no such plugin file");
  }
  auto lib = std::make_shared<Library>();
  // RTLD_LOCAL: two plugins may define the same symbols.
  lib->handle = ::dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL);
  if (lib->handle == nullptr) {
    const char* why = ::dlerror();
    throw InputError(path.string() + ": not a loadable shared library (" +
                     (why != nullptr ? why : "dlopen failed") + ")");
  }
  const void* symbol = ::dlsym(lib->handle, PARASHIFT_PLUGIN_SYMBOL);
  if (symbol == nullptr) {
    throw InputError(path.string() + ": not a parashift plugin (it exports no '" +
                     PARASHIFT_PLUGIN_SYMBOL + "'; see core/controller/parashift_plugin.h)");
  }
  // Every version starts with the version field: read it before the rest.
  std::uint32_t version = 0;
  std::memcpy(&version, symbol, sizeof version);
  if (version != PARASHIFT_PLUGIN_ABI_VERSION) {
    throw InputError(path.string() + ": plugin ABI version " + std::to_string(version) +
                     "; this parashift loads version " +
                     std::to_string(PARASHIFT_PLUGIN_ABI_VERSION) +
                     " (rebuild it against "
                     "core/controller/parashift_plugin.h)");
  }
  lib->api = static_cast<const parashift_policy_plugin_v1*>(symbol);
  const parashift_policy_plugin_v1& api = *lib->api;
  if (!valid_name(api.name)) {
    throw InputError(path.string() + ": plugin name expected of 1-64 characters [a-z0-9_-]");
  }
  lib->where = path.string() + " (plugin '" + api.name + "')";
  if (api.create == nullptr || api.destroy == nullptr || api.decide == nullptr) {
    throw InputError(lib->where + ": create, destroy and decide must all be set");
  }
  check_knobs(api, lib->where);
  return lib;
}

// What decide() hands back, checked against the job before it is a Directive.
struct Sink {
  const Library* lib;
  PolicyContext* context;
  std::vector<std::string> errors;  // thrown after decide() returns, never across C
};

std::string check_split(const PolicyContext& c, const parashift_decision_v1& d,
                        std::vector<int>& values) {
  if (d.count < 0 || d.count > 1'000'000 || (d.count > 0 && d.values == nullptr)) {
    return "a decision with " + std::to_string(d.count) + " values";
  }
  values.assign(d.values, d.values + d.count);
  const bool repartition = d.kind == PARASHIFT_DECISION_REPARTITION;
  const int want = repartition ? c.job.virtual_stage_count() : c.job.plan.dp;
  const long long total = repartition ? c.job.layers
                                      : std::accumulate(c.job.micro_batches_per_replica.begin(),
                                                        c.job.micro_batches_per_replica.end(), 0LL);
  const char* what = repartition ? "layers per virtual stage" : "micro-batches per replica";
  if (d.count != want) {
    return std::string(what) + ": " + std::to_string(d.count) + " values, the plan has " +
           std::to_string(want);
  }
  long long sum = 0;
  for (int v : values) {
    if (v < 1) return std::string(what) + ": " + format_int_list(values) + " has a value below 1";
    sum += v;
  }
  if (sum != total) {
    return std::string(what) + ": " + format_int_list(values) + " sums to " + std::to_string(sum) +
           ", expected " + std::to_string(total);
  }
  if (!repartition && !c.job.plan.replicas_may_differ() &&
      std::adjacent_find(values.begin(), values.end(), std::not_equal_to<>()) != values.end()) {
    return std::string(what) + ": " + format_int_list(values) +
           " differ, but under FSDP every replica runs the same passes";
  }
  if (!c.capabilities.live_repartition) {
    return std::string(what) + ": this backend cannot re-partition or re-balance live";
  }
  return "";
}

void emit(void* sink_ptr, const parashift_decision_v1* decision) {
  auto& sink = *static_cast<Sink*>(sink_ptr);
  if (decision == nullptr) return;
  PolicyContext& c = *sink.context;
  const parashift_decision_v1& d = *decision;
  const std::string module = sink.lib->api->name;
  const std::string reason = d.reason != nullptr ? std::string(d.reason).substr(0, 400) : "";
  if (d.kind == PARASHIFT_DECISION_NOTE) {
    c.log.push_back({c.iteration, module, reason.empty() ? "(note)" : reason, {}, false, 0, 0});
    return;
  }
  if (d.kind != PARASHIFT_DECISION_REPARTITION && d.kind != PARASHIFT_DECISION_REBALANCE) {
    sink.errors.push_back("decision kind " + std::to_string(d.kind) +
                          " (expected 0 note, 1 repartition, 2 rebalance)");
    return;
  }
  if (!std::isfinite(d.gain_s) || !std::isfinite(d.cost_s) || d.cost_s < 0) {
    sink.errors.push_back("gain and cost must be finite, cost >= 0");
    return;
  }
  std::vector<int> values;
  if (std::string bad = check_split(c, d, values); !bad.empty()) {
    sink.errors.push_back(bad);
    return;
  }
  Directive directive;
  if (d.kind == PARASHIFT_DECISION_REPARTITION) {
    directive.action = RepartitionDirective{values};
  } else {
    directive.action = RebalanceDirective{values};
  }
  directive.reason = reason;
  directive.predicted_gain_s = d.gain_s - d.cost_s;
  c.log.push_back({c.iteration, module, to_string(directive), directive, true, d.gain_s, d.cost_s});
  c.directives.push_back(std::move(directive));
}

class PluginModule final : public PolicyModule {
 public:
  PluginModule(std::shared_ptr<Library> lib, const ModuleConfig& config) : lib_(std::move(lib)) {
    std::vector<double> values;
    for (int i = 0; i < lib_->api->knob_count; ++i) {
      values.push_back(config.knob(lib_->api->knobs[i].name));
    }
    instance_ = lib_->api->create(values.data());
    if (instance_ == nullptr) throw InputError(lib_->where + ": create() refused its knobs");
  }
  ~PluginModule() override { lib_->api->destroy(instance_); }
  PluginModule(const PluginModule&) = delete;
  PluginModule& operator=(const PluginModule&) = delete;

  void run(PolicyContext& context) override {
    const StateEstimate& s = context.state;
    const JobModel& job = context.job;
    stage_of_.resize(static_cast<std::size_t>(s.ranks()));
    replica_of_.resize(stage_of_.size());
    for (int r = 0; r < s.ranks(); ++r) {
      stage_of_[static_cast<std::size_t>(r)] = s.stage_of(r);
      replica_of_[static_cast<std::size_t>(r)] = s.replica_of(r);
    }
    stragglers_.clear();
    for (const auto& f : context.stragglers) {
      stragglers_.push_back({static_cast<int>(f.kind), f.id, f.slowdown});
    }
    parashift_state_v1 state{};
    state.iteration = context.iteration;
    state.iterations_since_change = context.iterations_since_change;
    state.remaining_iterations =
        std::max<std::int64_t>(0, job.total_iterations - context.iteration - 1);
    state.tp = job.plan.tp;
    state.pp = job.plan.pp;
    state.dp = job.plan.dp;
    state.virtual_stages = job.plan.virtual_stages;
    state.ready = s.ready() ? 1 : 0;
    state.can_repartition = context.capabilities.live_repartition ? 1 : 0;
    state.iteration_ns = s.iteration_ns();
    state.median_layer_ns = s.median_layer_ns();
    state.ranks = s.ranks();
    state.layer_ns = s.layer_ns().data();
    state.stage_of_rank = stage_of_.data();
    state.replica_of_rank = replica_of_.data();
    state.virtual_stage_count = static_cast<int>(job.layers_per_virtual_stage.size());
    state.layers_per_virtual_stage = job.layers_per_virtual_stage.data();
    state.micro_batches_per_replica = job.micro_batches_per_replica.data();
    state.straggler_count = static_cast<int>(stragglers_.size());
    state.stragglers = stragglers_.data();
    Sink sink{lib_.get(), &context, {}};
    lib_->api->decide(instance_, &state, &emit, &sink);
    if (!sink.errors.empty()) {
      throw InputError(lib_->where + ": iteration " + std::to_string(context.iteration) + ": " +
                       sink.errors.front());
    }
  }

 private:
  std::shared_ptr<Library> lib_;
  void* instance_ = nullptr;
  std::vector<int> stage_of_;
  std::vector<int> replica_of_;
  std::vector<parashift_straggler_v1> stragglers_;
};

}  // namespace

ModuleSpec load_policy_plugin(const fs::path& path) {
  std::shared_ptr<Library> lib = open_library(path);
  const parashift_policy_plugin_v1& api = *lib->api;
  ModuleSpec spec;
  spec.name = api.name;
  spec.description = api.description != nullptr ? api.description : "";
  spec.description += " (plugin " + path.filename().string() + ")";
  for (int i = 0; i < api.knob_count; ++i) {
    const parashift_knob_v1& k = api.knobs[i];
    spec.knobs.push_back({k.name, KnobKind::Number, k.default_value, k.min_value, k.max_value,
                          k.description != nullptr ? k.description : ""});
  }
  spec.make = [lib](const ModuleConfig& config) -> std::unique_ptr<PolicyModule> {
    return std::make_unique<PluginModule>(lib, config);
  };
  return spec;
}

}  // namespace parashift::core
