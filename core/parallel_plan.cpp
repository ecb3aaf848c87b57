#include "core/parallel_plan.hpp"

#include <algorithm>
#include <array>
#include <utility>

#include "core/input_error.hpp"

namespace parashift::core {

namespace {

template <typename Enum, std::size_t N>
Enum parse_enum(const std::string& text, const std::array<std::pair<const char*, Enum>, N>& names) {
  std::string expected;
  for (const auto& [name, value] : names) {
    if (text == name) return value;
    expected += (expected.empty() ? "" : ", ") + std::string(name);
  }
  throw InputError("expected one of " + expected + ", found '" + text + "'");
}

constexpr std::array<std::pair<const char*, Schedule>, 4> kSchedules{{
    {"gpipe", Schedule::GPipe},
    {"1f1b", Schedule::OneFOneB},
    {"interleaved_1f1b", Schedule::Interleaved1F1B},
    {"zb_h1", Schedule::ZeroBubbleH1},
}};
constexpr std::array<std::pair<const char*, Recompute>, 3> kRecomputes{{
    {"none", Recompute::None},
    {"selective", Recompute::Selective},
    {"full", Recompute::Full},
}};
constexpr std::array<std::pair<const char*, OptimizerSharding>, 3> kShardings{{
    {"none", OptimizerSharding::None},
    {"distributed", OptimizerSharding::Distributed},
    {"fsdp", OptimizerSharding::Fsdp},
}};
constexpr std::array<std::pair<const char*, Precision>, 2> kPrecisions{{
    {"bf16", Precision::Bf16},
    {"fp8", Precision::Fp8},
}};

constexpr std::array<std::pair<const char*, SyncMode>, 3> kSyncModes{{
    {"flat", SyncMode::Flat},
    {"hierarchical", SyncMode::Hierarchical},
    {"delayed", SyncMode::Delayed},
}};

constexpr std::array<std::pair<const char*, RankOrder>, 2> kRankOrders{{
    {"tp-cp-dp-pp", RankOrder::TpCpDpPp},
    {"tp-cp-pp-dp", RankOrder::TpCpPpDp},
}};

template <typename Enum, std::size_t N>
const char* name_of(Enum value, const std::array<std::pair<const char*, Enum>, N>& names) {
  for (const auto& [name, v] : names) {
    if (v == value) return name;
  }
  return "?";
}

}  // namespace

const char* to_string(Schedule value) {
  return name_of(value, kSchedules);
}
const char* to_string(Recompute value) {
  return name_of(value, kRecomputes);
}
const char* to_string(OptimizerSharding value) {
  return name_of(value, kShardings);
}
const char* to_string(Precision value) {
  return name_of(value, kPrecisions);
}
const char* to_string(SyncMode value) {
  return name_of(value, kSyncModes);
}
const char* to_string(RankOrder value) {
  return name_of(value, kRankOrders);
}
RankOrder parse_rank_order(const std::string& text) {
  return parse_enum(text, kRankOrders);
}
SyncMode parse_sync_mode(const std::string& text) {
  return parse_enum(text, kSyncModes);
}
Schedule parse_schedule(const std::string& text) {
  return parse_enum(text, kSchedules);
}
Recompute parse_recompute(const std::string& text) {
  return parse_enum(text, kRecomputes);
}
OptimizerSharding parse_optimizer_sharding(const std::string& text) {
  return parse_enum(text, kShardings);
}
Precision parse_precision(const std::string& text) {
  return parse_enum(text, kPrecisions);
}

int ParallelPlan::shard_degree() const {
  if (optimizer_sharding == OptimizerSharding::None) return 1;
  if (optimizer_sharding == OptimizerSharding::Fsdp && dp_shard > 0) return dp_shard;
  return dp;
}

double ParallelPlan::full_recompute_share(int model_layers) const {
  if (recompute != Recompute::Full) return 0.0;
  if (recompute_layers <= 0) return 1.0;
  const double stage_layers = static_cast<double>(model_layers) / (pp * virtual_stages);
  return stage_layers > 0 ? std::min(1.0, recompute_layers / stage_layers) : 1.0;
}

std::vector<std::string> ParallelPlan::problems(const ModelSpec& model, int seq_len,
                                                int gpu_count) const {
  std::vector<std::string> out;
  auto text = [](int v) { return std::to_string(v); };
  const std::array<std::pair<const char*, int>, 6> positives{{{"tp", tp},
                                                              {"pp", pp},
                                                              {"dp", dp},
                                                              {"cp", cp},
                                                              {"virtual_stages", virtual_stages},
                                                              {"micro_batch", micro_batch}}};
  for (const auto& [field, value] : positives) {
    if (value < 1)
      out.push_back(std::string(field) + ": expected an integer >= 1, found " + text(value));
  }
  if (global_batch < 1)
    out.push_back("global_batch: expected an integer >= 1, found " + text(global_batch));
  if (!out.empty()) return out;

  if (model.heads % tp != 0) {
    out.push_back("tp: tp=" + text(tp) + " does not divide heads=" + text(model.heads));
  }
  if (model.kv_heads % tp != 0 && tp % model.kv_heads != 0) {
    out.push_back("tp: tp=" + text(tp) + " and kv_heads=" + text(model.kv_heads) +
                  " do not divide one another");
  }
  if (model.ffn_hidden % tp != 0) {
    out.push_back("tp: tp=" + text(tp) + " does not divide ffn_hidden=" + text(model.ffn_hidden));
  }
  if (gpus() != gpu_count) {
    out.push_back("dp: tp*pp*dp*cp=" + text(tp) + "*" + text(pp) + "*" + text(dp) + "*" + text(cp) +
                  "=" + text(gpus()) + " differs from the cluster's " + text(gpu_count) + " GPUs");
  }
  if (model.layers < pp * virtual_stages) {
    out.push_back("pp: pp*virtual_stages=" + text(pp * virtual_stages) +
                  " exceeds layers=" + text(model.layers));
  }
  if (global_batch % (dp * micro_batch) != 0) {
    out.push_back("global_batch: " + text(global_batch) +
                  " is not divisible by dp*micro_batch=" + text(dp * micro_batch));
  }
  if (seq_len % (2 * cp) != 0 && cp > 1) {
    out.push_back("cp: seq_len=" + text(seq_len) + " is not divisible by 2*cp=" + text(2 * cp));
  }
  if (virtual_stages > 1 && schedule != Schedule::Interleaved1F1B) {
    out.push_back("virtual_stages: " + text(virtual_stages) +
                  " chunks need schedule interleaved_1f1b, found " + to_string(schedule));
  }
  if (schedule == Schedule::Interleaved1F1B && pp > 1 && global_batch % (dp * micro_batch) == 0 &&
      micro_batches() % pp != 0) {
    out.push_back("schedule: interleaved_1f1b needs micro-batches (" + text(micro_batches()) +
                  ") to be a multiple of pp=" + text(pp));
  }
  if (recompute_layers < 0) {
    out.push_back("recompute_layers: expected an integer >= 0, found " + text(recompute_layers));
  } else if (recompute_layers > 0 && recompute != Recompute::Full) {
    out.push_back("recompute_layers: " + text(recompute_layers) +
                  " layers recomputed need recompute full, found " + to_string(recompute));
  } else if (recompute_layers > 0 && pp * virtual_stages <= model.layers &&
             recompute_layers > (model.layers + pp * virtual_stages - 1) / (pp * virtual_stages)) {
    out.push_back("recompute_layers: " + text(recompute_layers) +
                  " exceeds the layers of a stage (" +
                  text((model.layers + pp * virtual_stages - 1) / (pp * virtual_stages)) + ")");
  }
  if (dp_shard < 0) {
    out.push_back("dp_shard: expected an integer >= 0, found " + text(dp_shard));
  } else if (dp_shard > 0 && optimizer_sharding != OptimizerSharding::Fsdp) {
    out.push_back("dp_shard: sharding over " + text(dp_shard) +
                  " ranks needs optimizer_sharding fsdp, found " + to_string(optimizer_sharding));
  } else if (dp_shard > 0 && dp % dp_shard != 0) {
    out.push_back("dp_shard: " + text(dp_shard) + " does not divide dp=" + text(dp));
  }
  if (sequence_parallel && tp == 1) {
    out.push_back("sequence_parallel: needs tp > 1");
  }
  // Compression and the hierarchical sync are of the replicated gradient
  // all-reduce; the sharded optimizers reduce-scatter instead.
  const bool replicated = optimizer_sharding == OptimizerSharding::None;
  if (sync != SyncMode::Flat && !replicated) {
    out.push_back(std::string("sync: ") + to_string(sync) +
                  " needs optimizer_sharding none (the replicated gradient all-reduce), found " +
                  to_string(optimizer_sharding));
  }
  if (compression.enabled() && !replicated) {
    out.push_back("compression: " + to_string(compression) +
                  " needs optimizer_sharding none (the replicated gradient all-reduce), found " +
                  to_string(optimizer_sharding));
  }
  // PowerSGD's rank cannot exceed the smallest gradient matrix's rank: the
  // attention output and FFN matrices have hidden / tp and ffn_hidden / tp rows.
  const int smallest = std::min(model.hidden, model.ffn_hidden) / tp;
  if (compression.kind == CompressorKind::PowerSgd && compression.rank > smallest) {
    out.push_back("compression: powersgd rank " + text(compression.rank) +
                  " exceeds the smallest gradient matrix's rank, min(hidden, ffn_hidden)/tp = " +
                  text(smallest));
  }
  return out;
}

void ParallelPlan::validate(const ModelSpec& model, int seq_len, int gpu_count) const {
  const auto found = problems(model, seq_len, gpu_count);
  if (!found.empty()) throw InputError("plan." + found.front());
}

std::string ParallelPlan::label() const {
  std::string s = "tp" + std::to_string(tp) + " pp" + std::to_string(pp) + " dp" +
                  std::to_string(dp) + " cp" + std::to_string(cp);
  if (virtual_stages > 1) s += " v" + std::to_string(virtual_stages);
  s += " mb" + std::to_string(micro_batch) + " " + to_string(schedule) +
       " rc:" + to_string(recompute);
  if (recompute == Recompute::Full && recompute_layers > 0) s += std::to_string(recompute_layers);
  if (sequence_parallel) s += " sp";
  s += std::string(" os:") + to_string(optimizer_sharding);
  if (optimizer_sharding == OptimizerSharding::Fsdp && dp_shard > 0 && dp_shard < dp)
    s += "/" + std::to_string(dp_shard);  // HSDP
  s += std::string(" ") + to_string(precision);
  if (sync != SyncMode::Flat) s += std::string(" sync:") + to_string(sync);
  if (compression.enabled()) s += " gc:" + to_string(compression);
  if (order != RankOrder::TpCpDpPp) s += std::string(" order:") + to_string(order);
  return s;
}

}  // namespace parashift::core
