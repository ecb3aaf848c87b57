// The options of `parashift run` (tools/cli/run_args.cpp registers them),
// and its two ways to run: as one rank of a job (or the simulator), and as
// the elastic supervisor that launches the job's ranks and relaunches them
// after a failure (tools/cli/elastic_launch.cpp).
#pragma once

#include <string>
#include <vector>

#include "tools/cli/command.hpp"

namespace parashift::tools {

struct RunOptions {
  std::string scenario;
  std::string backend = "sim";
  int iterations = 0;  // 0: the scenario's run.iterations
  std::vector<std::string> overrides;
  std::string json_path;
  std::string profile_path;  // sim: predict the hw executor from this calibration
  std::string optimizer = "adam";
  double learning_rate = 0;  // 0: hw::default_learning_rate for the model
  std::string job;
  std::string shm_dir = "/dev/shm";
  int ranks_per_node = -1;  // -1: as the launcher placed the ranks (MPI)
  int snapshot_every = 0;
  bool restore = false;
  bool keep_snapshots = false;
  std::vector<std::string> repartitions;
  std::vector<std::string> replans;  // "5:plan.pp=1,plan.dp=4"
  std::string inject_kill;
  std::string clock = "wall";   // hw: how compute is timed (wall, counted, virtual)
  double link_GBps = 0;         // hw --clock virtual: the modelled link (0: not given, 10)
  double link_latency_us = -1;  // ... its latency a step (-1: not given, 5)
  int device = -1;              // cuda: GPU index (-1: not given, each rank its index on its node)
  std::string math;             // cuda: fp32 or tf32 (empty: not given, fp32)
  int watchdog_s = 300;         // hw: a communication call stalled this long ends the job; 0: off
  std::string node_ids;         // hw: the node of each group of ranks_per_node ranks ("0,2")
  // --elastic: this process is the job's supervisor, not a rank (elastic_launch.cpp).
  bool elastic = false;
  int spares = 0;        // spare nodes a failed rank's node is replaced by
  int max_restarts = 3;  // relaunches before the supervisor gives up
  bool shrink = false;   // with no spare left, a failed node is lost and the job shrinks
  std::string launcher = "mpirun";
};

/// `parashift run` (tools/cli/run_cmd.cpp).
void run_run(const RunOptions& opts, CliContext& ctx);

/// `parashift run ... --elastic` (tools/cli/elastic_launch.cpp).
void run_elastic(const RunOptions& opts, CliContext& ctx);

/// The arguments after `parashift` that run `opts` as the ranks of a job:
/// every option as given but the supervisor's own (--elastic, --spares,
/// --max-restarts, --launcher); `relaunch` adds --restore and drops
/// --inject-kill (an injection of the first launch).
std::vector<std::string> rank_arguments(const RunOptions& opts, bool relaunch);

}  // namespace parashift::tools
