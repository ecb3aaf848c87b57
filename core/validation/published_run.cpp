#include "core/validation/published_run.hpp"

#include <algorithm>
#include <array>
#include <cctype>
#include <charconv>
#include <cmath>
#include <stdexcept>

#include "core/cost/work_profile.hpp"
#include "core/input_error.hpp"
#include "core/scenario/cluster_view.hpp"
#include "core/validation/framework_defaults.hpp"
#include "core/validation/text_match.hpp"

namespace parashift::core {

using text::has;
using text::lower;
using text::trim;

namespace {

enum Col : int {
  kRowId,
  kSourceGroup,
  kModel,
  kArchNotes,
  kLayers,
  kHidden,
  kHeads,
  kKvHeads,
  kFfnHidden,
  kSeqLen,
  kVocab,
  kGpuType,
  kNumGpus,
  kGpusPerNode,
  kInterNode,
  kTp,
  kPp,
  kDp,
  kCp,
  kVp,
  kMicroBatch,
  kGlobalBatch,
  kRecompute,
  kSeqParallel,
  kPrecision,
  kSharding,
  kFramework,
  kNotes,
  kReportedTime,
  kDerivedTime,
  kGroup,
  kSchedule,
  kMfu,
  kHfu,
  kColumnCount
};

struct ColumnName {
  const char* name;
  bool required;
};

constexpr std::array<ColumnName, kColumnCount> kColumns{{
    {"row_id", true},
    {"source_group", false},
    {"model", false},
    {"arch_notes", false},
    {"layers", true},
    {"hidden", true},
    {"heads", true},
    {"kv_heads", false},
    {"ffn_hidden", false},
    {"seq_len", true},
    {"vocab", true},
    {"gpu_type", true},
    {"num_gpus", true},
    {"gpus_per_node", false},
    {"inter_node", false},
    {"tp", true},
    {"pp", true},
    {"dp", false},
    {"cp", false},
    {"vp_interleave", false},
    {"micro_batch", false},
    {"global_batch_seqs", true},
    {"act_recompute", false},
    {"seq_parallel", false},
    {"precision", false},
    {"optimizer_sharding", false},
    {"framework", false},
    {"notes", false},
    {"reported_iteration_time_s", true},
    {"derived_iteration_time_s", false},
    {"group", false},
    {"schedule", false},
    {"reported_mfu_pct", false},
    {"reported_hfu_pct", false},
}};

// A cell that should hold a number but does not: the row is malformed.
struct BadCell : std::runtime_error {
  using std::runtime_error::runtime_error;
};

class Row {
 public:
  Row(const ColumnIndex& columns, const CsvRecord& record) : columns_(columns), record_(record) {}

  std::string text(Col col) const {
    const int at = columns_.position[col];
    return at < 0 ? std::string() : trim(record_.fields[static_cast<std::size_t>(at)]);
  }

  std::optional<double> number(Col col) const {
    const std::string cell = text(col);
    if (cell.empty()) return std::nullopt;
    const auto value = leading_number(cell);
    if (!value) {
      throw BadCell(std::string("column ") + kColumns[col].name + ": expected a number, found '" +
                    cell + "'");
    }
    return value;
  }

  std::optional<int> integer(Col col) const {
    const auto value = number(col);
    if (!value) return std::nullopt;
    const double most = largest(col);
    if (*value != std::floor(*value) || *value < 0 || *value > most) {
      throw BadCell(std::string("column ") + kColumns[col].name + ": expected a whole number " +
                    "from 0 to " + std::to_string(static_cast<long long>(most)) + ", found '" +
                    text(col) + "'");
    }
    return static_cast<int>(*value);
  }

  // Beyond any published run by orders of magnitude, and small enough that
  // the cost model's integer nanoseconds cannot overflow.
  static double largest(Col col) {
    switch (col) {
      case kLayers:
      case kHeads:
      case kKvHeads:
      case kGpusPerNode:
      case kVp:
        return 4096;
      case kHidden:
        return 262'144;
      case kFfnHidden:
        return 1'048'576;
      case kSeqLen:
      case kVocab:
        return 16'777'216;
      case kMicroBatch:
        return 65'536;
      default:
        return 16'777'216;  // GPUs, parallel sizes, global batch
    }
  }

 private:
  const ColumnIndex& columns_;
  const CsvRecord& record_;
};

}  // namespace

ColumnIndex::ColumnIndex(const std::vector<std::string>& header, const std::string& source)
    : position(kColumnCount, -1), width(header.size()) {
  for (std::size_t i = 0; i < header.size(); ++i) {
    const std::string name = trim(header[i]);
    for (int c = 0; c < kColumnCount; ++c) {
      if (name == kColumns[static_cast<std::size_t>(c)].name)
        position[static_cast<std::size_t>(c)] = static_cast<int>(i);
    }
  }
  for (int c = 0; c < kColumnCount; ++c) {
    if (kColumns[static_cast<std::size_t>(c)].required &&
        position[static_cast<std::size_t>(c)] < 0) {
      throw InputError(source + ":1: header lacks the column '" +
                       kColumns[static_cast<std::size_t>(c)].name + "'");
    }
  }
}

ClusterView published_cluster(const DeviceSpec& device, int gpus, int gpus_per_node,
                              double node_network_Bps) {
  // The construction every other command uses (core/scenario/cluster_view.hpp),
  // with the row's network where it states one.
  ClusterView view = cluster_view_of(device, gpus, gpus_per_node);
  if (node_network_Bps > 0) view.inter_node_Bps = node_network_Bps / view.gpus_per_node;
  return view;
}

namespace {

std::string describe(const std::string& source, const CsvRecord& record, const std::string& id) {
  return source + ":" + std::to_string(record.line) + (id.empty() ? "" : " (" + id + ")");
}

}  // namespace

RowReading read_published_run(const ColumnIndex& columns, const CsvRecord& record,
                              const std::string& source) {
  RowReading out;
  PublishedRun& run = out.run;
  if (record.fields.size() != columns.width) {
    out.status = RowStatus::Malformed;
    out.reason = describe(source, record, "") + ": expected " + std::to_string(columns.width) +
                 " fields, found " + std::to_string(record.fields.size());
    return out;
  }
  const Row row(columns, record);
  run.row_id = row.text(kRowId);
  run.source_group = row.text(kSourceGroup);
  run.group = row.text(kGroup);
  const std::string where = describe(source, record, run.row_id);
  run.location = where;
  auto unrecognised = [&](const std::string& why) {
    out.status = RowStatus::Unrecognised;
    out.reason = where + ": " + why;
    return out;
  };
  auto defaulted = [&](const std::string& what) { run.defaults.push_back(what); };

  try {
    // Measured target.
    if (auto t = row.number(kReportedTime)) {
      run.measured_s = *t;
    } else if (auto d = row.number(kDerivedTime)) {
      run.measured_s = *d;
    } else {
      return unrecognised("no reported_iteration_time_s or derived_iteration_time_s");
    }

    // Model.
    ModelSpec& m = run.model;
    m.name = row.text(kModel);
    const auto layers = row.integer(kLayers);
    const auto hidden = row.integer(kHidden);
    const auto heads = row.integer(kHeads);
    const auto seq = row.integer(kSeqLen);
    const auto vocab = row.integer(kVocab);
    if (!layers || !hidden || !heads || !seq || !vocab) {
      return unrecognised("layers, hidden, heads, seq_len and vocab are all needed");
    }
    m.layers = *layers;
    m.hidden = *hidden;
    m.heads = *heads;
    m.vocab = *vocab;
    run.seq_len = *seq;
    if (auto kv = row.integer(kKvHeads)) {
      m.kv_heads = *kv;
    } else {
      m.kv_heads = m.heads;
      defaulted("kv_heads=heads");
    }
    if (auto f = row.integer(kFfnHidden)) {
      m.ffn_hidden = *f;
    } else {
      m.ffn_hidden = 4 * m.hidden;
      defaulted("ffn_hidden=4h");
    }
    const std::string arch = lower(row.text(kArchNotes));
    if (has(arch, "swiglu") || has(arch, "geglu")) {
      m.ffn_kind = FfnKind::SwiGlu;
    } else if (has(arch, "squared-relu") || has(arch, "squared relu") || has(arch, "relu^2") ||
               has(arch, "relu2")) {
      m.ffn_kind = FfnKind::SquaredRelu;
    } else if (has(arch, "gelu") || has(arch, "gpt")) {
      m.ffn_kind = FfnKind::Gelu;
    } else {
      m.ffn_kind = FfnKind::Gelu;
      defaulted("ffn=gelu");
    }
    if (has(arch, "untied")) {
      m.tied_embeddings = false;
    } else if (has(arch, "tied")) {
      m.tied_embeddings = true;
    } else if (has(lower(m.name), "llama")) {
      m.tied_embeddings = false;  // Llama 2 and 3 keep a separate output head
      defaulted("untied embeddings (Llama)");
    } else {
      m.tied_embeddings = true;
      defaulted("tied embeddings");
    }

    // Device.
    const std::string gpu_type = row.text(kGpuType);
    std::string assumption;
    const auto device = device_for_gpu_type(gpu_type, &assumption);
    if (!device) return unrecognised("gpu_type '" + gpu_type + "' matches no device preset");
    run.device = *device;
    if (!assumption.empty()) defaulted(assumption);
    const auto gpus = row.integer(kNumGpus);
    if (!gpus) return unrecognised("num_gpus is empty");
    run.gpus = *gpus;
    if (auto g = row.integer(kGpusPerNode)) {
      run.gpus_per_node = *g;
    } else {
      run.gpus_per_node = 8;
      defaulted("gpus_per_node=8");
    }
    if (auto bw = node_network_Bps_from_text(row.text(kInterNode), run.gpus_per_node))
      run.node_network_Bps = *bw;

    // Plan.
    ParallelPlan& p = run.plan;
    const auto tp = row.integer(kTp);
    const auto pp = row.integer(kPp);
    const auto global = row.integer(kGlobalBatch);
    if (!tp || !pp || !global) return unrecognised("tp, pp and global_batch_seqs are all needed");
    p.tp = *tp;
    p.pp = *pp;
    p.global_batch = *global;
    if (auto cp = row.integer(kCp)) {
      p.cp = *cp;
    } else {
      p.cp = 1;
      defaulted("cp=1");
    }
    if (auto dp = row.integer(kDp)) {
      p.dp = *dp;
    } else {
      p.dp = std::max(1, run.gpus / std::max(1, p.tp * p.pp * p.cp));
      defaulted("dp=num_gpus/(tp*pp*cp)");
    }
    if (auto mb = row.integer(kMicroBatch)) {
      p.micro_batch = *mb;
    } else if (has(lower(row.text(kFramework)), "torchtitan") && p.pp > 1 &&
               p.global_batch % (p.dp * p.pp) == 0) {
      // torchtitan splits each replica's batch into pp micro-batches by default.
      p.micro_batch = p.global_batch / (p.dp * p.pp);
      defaulted("micro_batch=global/(dp*pp) (torchtitan: pp micro-batches)");
    } else {
      p.micro_batch = 1;
      defaulted("micro_batch=1");
    }
    const std::string vp = row.text(kVp);
    if (vp.empty()) {
      p.virtual_stages = 1;
      defaulted("no interleaving");
    } else if (auto yes = yes_no_from_text(vp); yes && vp != "1" && vp != "0") {
      p.virtual_stages = *yes ? 2 : 1;
      if (*yes) defaulted("vp_interleave 'yes' = 2 chunks per rank");
    } else if (auto n = row.integer(kVp)) {
      p.virtual_stages = std::max(1, *n);
    }
    p.schedule = p.virtual_stages > 1 ? Schedule::Interleaved1F1B : Schedule::OneFOneB;
    if (const std::string schedule = lower(row.text(kSchedule)); !schedule.empty()) {
      try {
        p.schedule = parse_schedule(schedule);
      } catch (const InputError&) {
        return unrecognised("schedule '" + schedule +
                            "' not recognised (gpipe, 1f1b, interleaved_1f1b, zb_h1)");
      }
    }

    const std::string recompute = row.text(kRecompute);
    if (recompute.empty()) {
      p.recompute = Recompute::None;
      defaulted("act_recompute=none");
    } else if (recomputes_some_blocks(recompute)) {
      // Whole blocks of some layers, none of the others: the share from the
      // row's HFU / MFU, else every layer.
      p.recompute = Recompute::Full;
      const double stage_layers = static_cast<double>(*layers) / (p.pp * p.virtual_stages);
      if (auto f = recomputed_block_share(row.number(kMfu), row.number(kHfu))) {
        const long k = std::lround(*f * stage_layers);
        if (k == 0) p.recompute = Recompute::None;
        p.recompute_layers = static_cast<double>(k) < stage_layers ? static_cast<int>(k) : 0;
        defaulted("recomputed blocks from HFU/MFU: " + std::to_string(k) + " of " +
                  std::to_string(std::lround(stage_layers)) + " per stage");
      } else {
        defaulted("recomputed blocks not stated: all");
      }
    } else if (auto r = recompute_from_text(recompute)) {
      p.recompute = *r;
    } else {
      return unrecognised("act_recompute '" + recompute +
                          "' not recognised (full, selective, none)");
    }
    const std::string sp = row.text(kSeqParallel);
    if (sp.empty()) {
      p.sequence_parallel = p.tp > 1;
      defaulted(p.tp > 1 ? "seq_parallel=on (tp>1)" : "seq_parallel=off (tp=1)");
    } else if (auto on = yes_no_from_text(sp)) {
      p.sequence_parallel = *on && p.tp > 1;
    } else {
      return unrecognised("seq_parallel '" + sp + "' not recognised (yes, no)");
    }
    const std::string precision = row.text(kPrecision);
    if (precision.empty()) {
      p.precision = Precision::Bf16;
      defaulted("precision=BF16");
    } else if (auto pr = precision_from_text(precision)) {
      p.precision = *pr;
    } else {
      return unrecognised("precision '" + precision + "' not recognised (BF16, FP16, FP8)");
    }
    const std::string sharding = row.text(kSharding);
    if (sharding.empty()) {
      p.optimizer_sharding = OptimizerSharding::Distributed;
      defaulted("optimizer_sharding=distributed optimizer");
    } else if (auto sh = sharding_from_text(sharding)) {
      p.optimizer_sharding = *sh;
    } else {
      return unrecognised("optimizer_sharding '" + sharding +
                          "' not recognised (none, distributed optimizer, FSDP)");
    }
    apply_framework({row.text(kFramework), row.text(kNotes), row.text(kSharding),
                     row.text(kRecompute), row.text(kPrecision)},
                    run);
  } catch (const BadCell& bad) {
    out.status = RowStatus::Malformed;
    out.reason = where + ": " + bad.what();
    return out;
  }

  try {
    run.model.validate();
    run.plan.validate(run.model, run.seq_len, run.gpus);
  } catch (const InputError& e) {
    return unrecognised(std::string("inconsistent configuration: ") + e.what());
  }
  // Sizes each in range can still multiply into an iteration of years; the
  // model's FLOPs at the whole cluster's peak bound it from below.
  constexpr double kLongestIterationAtPeak_s = 1e6;
  const double at_peak_s = model_flops_per_iteration(run.model, run.plan, run.seq_len) /
                           (run.gpus * device_preset(run.device).peak_bf16_flops_per_s);
  if (!(at_peak_s <= kLongestIterationAtPeak_s) || run.plan.micro_batches() > 65'536) {
    return unrecognised(
        "sizes out of range: one iteration would take over 10^6 s at peak, or "
        "more than 65536 micro-batches per replica");
  }
  return out;
}

}  // namespace parashift::core
