// One published training run (a row of tests/data/dev.csv's schema) turned
// into what the cost model takes: model, device, plan, software options and
// the measured iteration time. Free-text cells are recognised by keywords;
// empty cells get documented defaults, each recorded in `defaults`.
//
// Defaults for empty cells:
//   kv_heads = heads; ffn_hidden = 4*hidden; cp = 1; dp = num_gpus/(tp*pp*cp);
//   gpus_per_node = 8; vp_interleave = 1 (no interleaving; "yes" = 2 chunks);
//   micro_batch = 1 (torchtitan with pp > 1: its default of pp micro-batches);
//   act_recompute = none; precision = BF16;
//   seq_parallel = on when tp > 1 (Megatron-Core, NeMo and torchtitan TP default);
//   optimizer_sharding = distributed optimizer (Megatron-Core / NeMo recipes);
//   arch_notes without an FFN keyword = GELU; without "tied"/"untied" = tied.
// Software options follow the framework cell: Megatron-LM of 2022 or before
// ran unfused attention and reduced gradients after the backward; torchtitan
// "selective" is op-level SAC and reduces gradients in FP32; AsyncTP or
// --tp-comm-overlap overlap the TP collectives.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "core/cost/cluster_view.hpp"
#include "core/cost/cost_options.hpp"
#include "core/device_spec.hpp"
#include "core/model_spec.hpp"
#include "core/parallel_plan.hpp"
#include "core/validation/csv_reader.hpp"

namespace parashift::core {

struct PublishedRun {
  std::string row_id;
  std::string location;  // "file:line (row_id)", for messages
  std::string source_group;
  std::string group;  // rows of one model on one cluster with different plans (ranking)
  ModelSpec model;
  std::string device;  // a device_preset name
  ParallelPlan plan;
  int seq_len = 0;
  int gpus = 0;
  int gpus_per_node = 8;
  /// The inter-node bandwidth of one node, one direction, when the row
  /// states it (inter_node); 0: the device preset's NIC per GPU.
  double node_network_Bps = 0;
  CostOptions options;
  double measured_s = 0;
  std::vector<std::string> defaults;  // "micro_batch=1", ... one per defaulted cell
};

enum class RowStatus { Ok, Unrecognised, Malformed };

struct RowReading {
  RowStatus status = RowStatus::Ok;
  PublishedRun run;
  std::string reason;  // why Unrecognised / Malformed (names file, line and row)
};

/// Column positions of one file's header; throws InputError naming the
/// first required column the header lacks.
struct ColumnIndex {
  explicit ColumnIndex(const std::vector<std::string>& header, const std::string& source);
  std::vector<int> position;  // per known column, -1 when absent (optional columns)
  std::size_t width = 0;
};

RowReading read_published_run(const ColumnIndex& columns, const CsvRecord& record,
                              const std::string& source);

/// The two-level cluster a run used: NVLink inside a node and one NIC per GPU
/// at the achievable share of their datasheet rates (nccl-tests bus
/// bandwidth: ~80% of NVLink, ~90% of the NIC), 2 us and 5 us per ring step.
ClusterView published_cluster(const DeviceSpec& device, int gpus, int gpus_per_node,
                              double node_network_Bps = 0);

// Keyword recognisers, case-insensitive; nullopt when nothing matches.
std::optional<std::string> device_for_gpu_type(const std::string& text, std::string* assumption);
std::optional<Precision> precision_from_text(const std::string& text);
std::optional<OptimizerSharding> sharding_from_text(const std::string& text);
std::optional<Recompute> recompute_from_text(const std::string& text);
/// Whether a recompute cell names checkpointing of a fraction of whole
/// blocks (fms-fsdp's "Selective AC", Megatron's block method): full
/// recompute of some layers, none of the others.
bool recomputes_some_blocks(const std::string& text);
/// The fraction of blocks recomputed in full, read from a row's reported
/// hardware and model FLOPs utilisation: HFU counts the recomputed forward
/// (2 of a layer's 6 FLOPs per parameter and token) and MFU does not, so
/// HFU / MFU = 1 + f / 3 whatever the speed. Clamped to [0, 1]; nullopt
/// unless both are positive.
std::optional<double> recomputed_block_share(std::optional<double> mfu_pct,
                                             std::optional<double> hfu_pct);
std::optional<bool> yes_no_from_text(const std::string& text);
/// A node's inter-node bandwidth (bytes/s, one direction) from an inter_node
/// cell that states it: "8x400 Gb/s ... per node" (NICs x rate), "400 Gb/s
/// per GPU" (times `gpus_per_node`), "800 Gb/s per node"; nullopt for a cell
/// that names no rate or does not say what it is of.
std::optional<double> node_network_Bps_from_text(const std::string& text, int gpus_per_node);
/// The number a cell starts with ("8192 (default cfg)" -> 8192); nullopt
/// when the cell does not start with one or trails anything but a comment.
std::optional<double> leading_number(const std::string& text);

}  // namespace parashift::core
