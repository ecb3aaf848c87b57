// The communication policy's sweep (issue #17's goal): setups of the shipped
// models on 8 to 4,096 H100s with 25 to 400 Gb/s a rail, each simulated
// with the flat uncompressed sync, with every fixed sync mode and
// compressor the `sync` module may choose, and with the module's own choice
// (core::rank_sync_choices on the presets: here the simulated cluster is
// the preset). Prints one row per setup and the goals' counts:
//   sync_sweep [--list] [--batch-tokens N] [--setup MODEL:GPUS:GBPS]... [LIMIT]
//     LIMIT: the first LIMIT setups only
//     --setup: only the named setups (e.g. llama2-7b:128:50), each one that
//     the sweep builds
//     --list: print the setups (MODEL:GPUS:GBPS, plan, global batch), run none
//     --batch-tokens N: a global batch of at least N tokens (4,194,304: the
//     4M tokens of production pre-training runs) instead of the smallest
// Setups: for each shipped model, 8 GPUs (one node, one row: its sync stays
// on NVLink) and 16 to 4,096 at each rail speed, with the smallest tp x pp
// (tp <= 8 within a node, pp <= 32 and admitted by the model's layers) whose
// replicated-optimizer memory fits 80 GB, dp = GPUs / (tp pp) >= 2, global
// batch = max(64, dp, N / 4,096) sequences of 4,096 tokens, rounded down to
// a multiple of dp, 1F1B. Setups run in parallel over the cores; rows print
// in setup order.
#include <algorithm>
#include <atomic>
#include <cstdio>
#include <cstdlib>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "core/controller/sync_policy.hpp"
#include "core/cost/memory.hpp"
#include "core/errors.hpp"
#include "core/scenario/cluster_view.hpp"
#include "core/scenario/scenario.hpp"
#include "sim/run.hpp"

using namespace parashift;

namespace {

struct Setup {
  std::string model;
  int gpus = 0;
  int nic_gbps = 0;
  int tp = 1, pp = 1, dp = 1, global_batch = 1;
};

std::string yaml(const Setup& s, const std::string& sync, const std::string& compression) {
  return "name: sweep\nmodel: " + s.model +
         "\ncluster:\n  device: h100-sxm-80gb\n  topology:\n    generator: rail-fat-tree\n"
         "    node: dgx-h100\n    nodes: " +
         std::to_string(s.gpus / 8) + "\n    tiers: " + (s.gpus / 8 > 256 ? "3" : "2") +
         "\n    nic_gbps: " + std::to_string(s.nic_gbps) +
         "\ntraining:\n  global_batch: " + std::to_string(s.global_batch) +
         "\n  seq_len: 4096\n  precision: bf16\nplan:\n  tp: " + std::to_string(s.tp) +
         "\n  pp: " + std::to_string(s.pp) + "\n  dp: " + std::to_string(s.dp) +
         "\n  schedule: 1f1b\n  recompute: selective\n  sequence_parallel: " +
         (s.tp > 1 ? "true" : "false") + "\n  optimizer_sharding: none\n  sync: " + sync +
         "\n  compression: " + compression + "\nrun:\n  iterations: 2\n  seed: 1\n";
}

// Every model shipped in scenarios/models.
constexpr const char* kModels[] = {"llama2-7b",   "llama3-8b",   "llama2-70b",
                                   "llama3-70b",  "gpt3-175b",   "bloom-176b",
                                   "llama3-405b", "mt-nlg-530b", "megatron-1t"};

const std::filesystem::path kFile =
    std::filesystem::path(PARASHIFT_SOURCE_DIR) / "scenarios/x.yaml";

// The plans are checked against the model alone (ParallelPlan::problems and
// the memory model): one scenario per model, not one cluster graph per try.
std::vector<Setup> setups(long batch_tokens) {
  std::vector<Setup> out;
  for (const char* model : kModels) {
    const core::Scenario base =
        core::parse_scenario(yaml(Setup{model, 8, 400, 1, 1, 8, 64}, "flat", "none"), kFile, {});
    for (int gpus : {8, 16, 32, 64, 128, 256, 512, 1024, 2048, 4096})
      for (int nic : {25, 50, 100, 200, 400}) {
        // One node: its sync never leaves NVLink, so one rail speed stands for all.
        if (gpus == 8 && nic != 400) continue;
        Setup s{model, gpus, nic};
        bool found = false;
        for (int pp : {1, 2, 4, 8, 16, 32})
          for (int tp : {1, 2, 4, 8}) {
            if (found || tp * pp * 2 > gpus) continue;
            s.tp = tp;
            s.pp = pp;
            s.dp = gpus / (tp * pp);
            const long sequences = std::max<long>({64, s.dp, batch_tokens / 4096});
            s.global_batch = static_cast<int>(sequences / s.dp * s.dp);
            core::ParallelPlan plan = base.plan;
            plan.tp = s.tp;
            plan.pp = s.pp;
            plan.dp = s.dp;
            plan.global_batch = s.global_batch;
            plan.sequence_parallel = s.tp > 1;
            // A plan the model does not admit (pp not dividing its layers): the next.
            if (!plan.problems(base.model, 4096, gpus).empty()) continue;
            const double peak = core::peak_memory(base.model, plan, 4096).total_bytes();
            found = peak <= 0.95 * base.device.hbm_bytes;
          }
        if (found) out.push_back(s);
      }
  }
  return out;
}

double iteration_s(const Setup& s, core::SyncMode sync, const core::CompressionSpec& c) {
  const auto run = sim::run_scenario(
      core::parse_scenario(yaml(s, core::to_string(sync), core::to_string(c)), kFile, {}));
  return core::ns_to_s(run.total_ns) / run.iterations;
}

struct Row {
  double flat_s = 0, best_s = 1e300, pick_s = 0;
  std::string best_label, pick_label;
  bool picked_change = false;
};

Row evaluate(const Setup& s) {
  const core::Scenario sc = core::parse_scenario(yaml(s, "flat", "none"), kFile, {});
  core::JobModel job;
  job.plan = sc.plan;
  auto inputs = std::make_shared<core::CostInputs>();
  inputs->model = sc.model;
  inputs->device = sc.device;
  inputs->cluster = core::cluster_view_of(sc.topology, sc.device, sc.nccl_algo);
  inputs->seq_len = sc.training.seq_len;
  job.cost = inputs;
  const auto ranked = core::rank_sync_choices(job, core::SyncPolicyOptions{}, nullptr);
  // The module's pick from the flat uncompressed plan (its knobs' defaults).
  const core::SyncChoice& flat_choice =
      *std::find_if(ranked.begin(), ranked.end(), [](const core::SyncChoice& c) {
        return c.sync == core::SyncMode::Flat && !c.compression.enabled();
      });
  const core::SyncChoice& pick =
      core::sync_pick(ranked, flat_choice, core::SyncPolicyOptions{}.min_improvement);
  Row row;
  row.pick_label = pick.label();
  row.picked_change = &pick != &flat_choice;
  for (const core::SyncChoice& c : ranked) {
    const double t = iteration_s(s, c.sync, c.compression);
    if (&c == &flat_choice) row.flat_s = t;
    if (&c == &pick) row.pick_s = t;
    if (t < row.best_s) {
      row.best_s = t;
      row.best_label = c.label();
    }
  }
  return row;
}

// A whole number of at most 9 digits, or -1.
long whole(const std::string& text) {
  if (text.empty() || text.size() > 9 || text.find_first_not_of("0123456789") != std::string::npos)
    return -1;
  return std::strtol(text.c_str(), nullptr, 10);
}

}  // namespace

int main(int argc, char** argv) {
  std::size_t limit = 0;
  bool limit_given = false;
  bool list_only = false;
  long batch_tokens = 0;
  std::vector<std::string> named;  // --setup
  const char* usage = "[--list] [--batch-tokens N] [--setup MODEL:GPUS:GBPS]... [LIMIT]";
  for (int i = 1; i < argc; ++i) {
    const std::string arg = argv[i];
    if (arg == "--batch-tokens") {
      batch_tokens = i + 1 < argc ? whole(argv[i + 1]) : -1;
      if (batch_tokens <= 0) {
        std::fprintf(
            stderr, "sync_sweep: --batch-tokens: expected a whole number of tokens > 0, got '%s'\n",
            i + 1 < argc ? argv[i + 1] : "");
        return 2;
      }
      ++i;
    } else if (arg == "--list") {
      list_only = true;
    } else if (arg == "--setup" && i + 1 < argc) {
      named.emplace_back(argv[++i]);
    } else if (const long n = whole(arg); n >= 0 && !limit_given) {
      limit = static_cast<std::size_t>(n);
      limit_given = true;
    } else {
      std::fprintf(stderr, "sync_sweep: expected %s, LIMIT a whole number of setups, got '%s'\n",
                   usage, arg.c_str());
      return 2;
    }
  }
  auto all = setups(batch_tokens);
  if (!named.empty()) {
    std::vector<Setup> picked;
    for (const std::string& name : named) {
      const auto at = std::find_if(all.begin(), all.end(), [&](const Setup& s) {
        return s.model + ":" + std::to_string(s.gpus) + ":" + std::to_string(s.nic_gbps) == name;
      });
      if (at == all.end()) {
        std::fprintf(
            stderr,
            "sync_sweep: --setup: no setup '%s' (expected MODEL:GPUS:GBPS, one of the "
            "setups the sweep builds: a model in scenarios/models; 16 to 4096 GPUs, powers of "
            "two, at 25, 50, 100, 200 or 400 Gb/s, or 8 GPUs at 400; a plan that fits)\n",
            name.c_str());
        return 2;
      }
      picked.push_back(*at);
    }
    all = std::move(picked);
  }
  if (limit > 0 && limit < all.size()) all.resize(limit);
  if (list_only) {
    for (const Setup& s : all)
      std::printf("%s:%d:%d tp%d pp%d dp%d %d\n", s.model.c_str(), s.gpus, s.nic_gbps, s.tp, s.pp,
                  s.dp, s.global_batch);
    return 0;
  }
  std::vector<Row> rows(all.size());
  std::atomic<std::size_t> next{0};
  std::vector<std::thread> pool;
  for (unsigned t = 0; t < std::max(1u, std::thread::hardware_concurrency()); ++t)
    pool.emplace_back([&] {
      for (std::size_t i = next++; i < all.size(); i = next++) rows[i] = evaluate(all[i]);
    });
  for (auto& t : pool) t.join();
  int slower = 0, off_best = 0, slow_rails = 0, slow_rails_2x = 0, changed = 0, wins = 0;
  std::printf("%-10s %5s %4s %-14s %6s %9s %9s %9s  %s\n", "model", "gpus", "Gb/s", "plan", "batch",
              "flat s", "best s", "chosen s", "chosen (best)");
  for (std::size_t i = 0; i < all.size(); ++i) {
    const Setup& s = all[i];
    const Row& r = rows[i];
    slower += r.pick_s > 1.02 * r.flat_s;
    off_best += r.pick_s > 1.05 * r.best_s;
    changed += r.picked_change;
    wins += r.best_s < 0.95 * r.flat_s;
    // A rail per GPU (nic_gbps / 8 GB/s) against NVLink's 450 GB/s a direction (H100).
    // One node (8 GPUs) has no inter-node link to compare.
    if (s.gpus > 8 && s.nic_gbps / 8.0 <= 450.0 / 8) {
      ++slow_rails;
      slow_rails_2x += r.flat_s >= 2 * r.pick_s;
    }
    const std::string plan =
        "tp" + std::to_string(s.tp) + " pp" + std::to_string(s.pp) + " dp" + std::to_string(s.dp);
    std::printf("%-10s %5d %4d %-14s %6d %9.4f %9.4f %9.4f  %s (%s)\n", s.model.c_str(), s.gpus,
                s.nic_gbps, plan.c_str(), s.global_batch, r.flat_s, r.best_s, r.pick_s,
                r.pick_label.c_str(), r.best_label.c_str());
  }
  std::printf("\n%zu setups; the module re-plans %d\n", all.size(), changed);
  std::printf("chosen > 2%% slower than flat uncompressed: %d\n", slower);
  std::printf("chosen > 5%% slower than the best fixed choice: %d\n", off_best);
  std::printf("some fixed choice >= 5%% faster than flat uncompressed: %d\n", wins);
  std::printf("rails <= 1/8 of NVLink per GPU: %d setups, chosen >= 2x faster than flat: %d\n",
              slow_rails, slow_rails_2x);
  return 0;
}
