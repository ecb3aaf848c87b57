// `parashift collectives`: an nccl-tests-style sweep of one collective on the
// cost model's NCCL closed form (core/cost/nccl_model.hpp), the model every
// other command uses. Columns as nccl-tests prints them: size, count, type,
// time, algbw, busbw, and the algorithm/protocol the model picked.
#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <map>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

#include "core/cost/estimate.hpp"
#include "core/cost/nccl_model.hpp"
#include "core/device_spec.hpp"
#include "core/input_error.hpp"
#include "core/scenario/cluster_view.hpp"
#include "core/scenario/scenario.hpp"
#include "sim/kernel.hpp"
#include "sim/network/flow_network.hpp"
#include "sim/network/nccl_coflow.hpp"
#include "tools/cli/collectives_hw.hpp"
#include "tools/cli/command.hpp"
#include "tools/cli/number_check.hpp"
#include "tools/cli/output_file.hpp"
#include "topologies/topology.hpp"

namespace parashift::tools {

namespace {

struct CollectivesOptions {
  std::string scenario;
  std::string topology;
  std::vector<std::string> params;
  std::string device = "h100-sxm-80gb";
  std::string op;
  int nodes = 0;
  int gpus_per_node = 0;
  int ranks = 0;
  std::string begin = "8";
  std::string end = "8G";
  std::string factor = "2";
  std::string algo = "auto";
  std::string backend = "analytical";
  std::string json_path;
  int warmup = 5;  // --backend hw|cuda: untimed calls per size
  int iters = 20;  // ... and timed ones
};

struct OpInfo {
  const char* name;
  core::CollectiveKind kind;
};
constexpr OpInfo kOps[] = {{"all_reduce", core::CollectiveKind::AllReduce},
                           {"all_gather", core::CollectiveKind::AllGather},
                           {"reduce_scatter", core::CollectiveKind::ReduceScatter},
                           {"alltoall", core::CollectiveKind::AllToAll},
                           {"sendrecv", core::CollectiveKind::SendRecv}};

core::CollectiveKind parse_op(const std::string& text) {
  std::string names;
  for (const OpInfo& op : kOps) {
    if (text == op.name) return op.kind;
    names += std::string(names.empty() ? "" : ", ") + op.name;
  }
  throw core::InputError("--op " + text + ": expected one of " + names);
}

// nccl-tests' sizes: an integer with an optional K, M or G (powers of 1024).
double parse_size(const std::string& option, const std::string& text) {
  const std::string what =
      option + " " + text + ": expected a positive size such as 8, 64K, 1M or 8G";
  if (text.empty()) throw core::InputError(what);
  double scale = 1.0;
  std::string digits = text;
  switch (text.back()) {
    case 'K':
    case 'k':
      scale = 1024.0;
      break;
    case 'M':
    case 'm':
      scale = 1024.0 * 1024.0;
      break;
    case 'G':
    case 'g':
      scale = 1024.0 * 1024.0 * 1024.0;
      break;
    default:
      break;
  }
  if (scale > 1.0) digits.pop_back();
  if (digits.empty() || digits.size() > 15) throw core::InputError(what);
  for (const char c : digits) {
    if (c < '0' || c > '9') throw core::InputError(what);
  }
  const double value = std::stod(digits) * scale;
  if (value <= 0) throw core::InputError(what);
  return value;
}

int parse_factor(const std::string& text) {
  const std::string what = "-f " + text + ": expected an integer factor >= 2";
  if (text.empty() || text.size() > 6) throw core::InputError(what);
  for (const char c : text) {
    if (c < '0' || c > '9') throw core::InputError(what);
  }
  const int f = std::stoi(text);
  if (f < 2) throw core::InputError(what);
  return f;
}

topo::Topology build_topology(const CollectivesOptions& o) {
  const std::filesystem::path path(o.topology);
  if (std::filesystem::exists(path)) {
    if (!o.params.empty()) {
      throw core::InputError("--param applies to generators, not to the file " + o.topology);
    }
    return topo::load_topology(path);
  }
  std::map<std::string, std::string> params;
  for (const auto& p : o.params) {
    const auto eq = p.find('=');
    if (eq == std::string::npos || eq == 0) {
      throw core::InputError("--param " + p + ": expected key=value");
    }
    params[p.substr(0, eq)] = p.substr(eq + 1);
  }
  return topo::generate_topology(o.topology, params);
}

struct Group {
  int ranks = 0;
  int ranks_per_node = 0;
};

// The group: --ranks N (the first N GPUs), --nodes N --gpus-per-node K, or
// every GPU of the cluster.
Group group_of(const CollectivesOptions& o, const core::ClusterView& cluster,
               core::CollectiveKind kind) {
  if (o.ranks > 0 && (o.nodes > 0 || o.gpus_per_node > 0)) {
    throw core::InputError("--ranks: give either --ranks or --nodes with --gpus-per-node");
  }
  if ((o.nodes > 0) != (o.gpus_per_node > 0)) {
    throw core::InputError(o.nodes > 0 ? "--nodes: needs --gpus-per-node too"
                                       : "--gpus-per-node: needs --nodes too");
  }
  Group g;
  if (o.ranks > 0) {
    if (o.ranks > cluster.gpus) {
      throw core::InputError("--ranks " + std::to_string(o.ranks) + ": the cluster has " +
                             std::to_string(cluster.gpus) + " GPUs");
    }
    g.ranks = o.ranks;
    g.ranks_per_node = std::min(o.ranks, cluster.gpus_per_node);
  } else if (o.nodes > 0) {
    if (o.nodes > cluster.nodes()) {
      throw core::InputError("--nodes " + std::to_string(o.nodes) + ": the cluster has " +
                             std::to_string(cluster.nodes()) + " nodes");
    }
    if (o.gpus_per_node > cluster.gpus_per_node) {
      throw core::InputError("--gpus-per-node " + std::to_string(o.gpus_per_node) +
                             ": a node has " + std::to_string(cluster.gpus_per_node) + " GPUs");
    }
    g.ranks = o.nodes * o.gpus_per_node;
    g.ranks_per_node = o.gpus_per_node;
  } else {
    g.ranks = cluster.gpus;
    g.ranks_per_node = cluster.gpus_per_node;
  }
  if (kind == core::CollectiveKind::SendRecv && g.ranks != 2) {
    throw core::InputError("--op sendrecv: runs between 2 ranks, the group has " +
                           std::to_string(g.ranks) +
                           " (use --ranks 2 or --nodes 2 --gpus-per-node 1)");
  }
  if (g.ranks < 2) throw core::InputError("--ranks: a collective needs at least 2 ranks");
  return g;
}

// The group's GPU indices: the first `ranks_per_node` GPUs of each of the
// first nodes (GPUs numbered node by node).
std::vector<int> group_gpus(const Group& g, int gpus_per_node) {
  std::vector<int> gpus;
  for (int r = 0; r < g.ranks; ++r) {
    gpus.push_back((r / g.ranks_per_node) * gpus_per_node + r % g.ranks_per_node);
  }
  return gpus;
}

// One collective alone on the simulator's max-min network (sim/network/
// nccl_coflow.hpp: the ring's or the trees' flows, as NCCL picks): the same
// NCCL model, with the topology's links shared.
core::TimeNs simulate_alone(const topo::Topology& topology, const core::NcclFabric& fabric,
                            core::CollectiveKind kind, double bytes, const std::vector<int>& gpus) {
  sim::Kernel kernel;
  sim::FlowNetwork network(kernel, topology);
  core::TimeNs done = 0;
  sim::start_collective_coflow(network, fabric, kind, bytes, gpus, 0,
                               [&done](core::TimeNs t_ns) { done = t_ns; });
  kernel.run();
  return done;
}

void run_collectives(const CollectivesOptions& o, CliContext& ctx) {
  const core::CollectiveKind kind = parse_op(o.op);
  core::NcclAlgo algo = core::NcclAlgo::Auto;
  if (!core::parse_nccl_algo(o.algo, algo)) {
    throw core::InputError("--algo " + o.algo + ": expected one of auto, ring, tree, nvls");
  }
  const double begin = parse_size("-b", o.begin);
  const double end = parse_size("-e", o.end);
  if (begin > end) {
    throw core::InputError("-b " + o.begin + ": larger than -e " + o.end +
                           " (sizes must go from -b up to -e)");
  }
  const int factor = parse_factor(o.factor);
  if (o.backend == "hw" || o.backend == "cuda") {
    // Measured on the job's own ranks: no model, no topology, no group to pick.
    if (!o.scenario.empty() || !o.topology.empty() || o.ranks > 0 || o.nodes > 0 ||
        algo != core::NcclAlgo::Auto)
      throw core::InputError("--backend " + o.backend +
                             ": measures the collective over the ranks mpirun started; give no "
                             "SCENARIO, --topology, --ranks, --nodes or --algo");
    HwSweepRequest request{o.op, kind, {}, o.warmup, o.iters, o.backend, o.json_path};
    for (double bytes = begin; bytes <= end; bytes *= factor) request.sizes.push_back(bytes);
    return run_collectives_hw(request, ctx);
  }
  if (o.backend != "analytical" && o.backend != "sim") {
    throw core::InputError("--backend " + o.backend + ": expected analytical, sim, hw or cuda");
  }
  const bool simulate = o.backend == "sim";
  if (o.scenario.empty() == o.topology.empty()) {
    throw core::InputError("collectives: give a SCENARIO file or --topology SOURCE (one of them)");
  }
  if (simulate && kind == core::CollectiveKind::AllToAll) {
    throw core::InputError("--backend sim: runs ring collectives and sendrecv, not alltoall");
  }

  topo::Topology topology;
  core::DeviceSpec device;
  core::NcclAlgo pinned = core::NcclAlgo::Auto;  // the scenario's cluster.nccl_algo
  if (!o.scenario.empty()) {
    core::Scenario s = core::load_scenario(o.scenario);
    topology = std::move(s.topology);
    device = s.device;
    pinned = s.nccl_algo;
  } else {
    device = core::device_preset(o.device);
    topology = build_topology(o);
  }
  // The fabric pins --algo, else the scenario's cluster.nccl_algo (falling
  // back to ring where the collective has no such algorithm, as NCCL_ALGO
  // does): the simulator's flows take the algorithm's shape.
  const core::ClusterView cluster =
      core::cluster_view_of(topology, device, algo != core::NcclAlgo::Auto ? algo : pinned);
  const std::string& device_name = device.name;
  const Group g = group_of(o, cluster, kind);
  const core::GroupLinks links = core::group_links(cluster, g.ranks, g.ranks_per_node);
  if (const std::string why = core::nccl_algo_unavailable(cluster.nccl, kind, links, algo);
      !why.empty()) {
    throw core::InputError("--algo " + o.algo + " --op " + o.op + ": " + why +
                           " (use --algo auto or ring)");
  }

  std::ostream& out = ctx.out;
  out << "# parashift collectives: " << o.op << " on " << g.ranks << " ranks (" << links.nodes()
      << " nodes x " << g.ranks_per_node << " GPUs), " << device_name << ", NCCL model"
      << (simulate ? " on the simulator's max-min network" : "") << ", --algo "
      << core::to_string(algo)
      << (algo == core::NcclAlgo::Auto && pinned != core::NcclAlgo::Auto
              ? std::string(" (cluster.nccl_algo ") + core::to_string(pinned) + ")"
              : std::string())
      << "\n";
  out << "#       size         count      type      time     algbw     busbw  algorithm\n";
  out << "#        (B)    (elements)                (us)    (GB/s)    (GB/s)\n";
  const std::vector<int> gpus = group_gpus(g, cluster.gpus_per_node);
  nlohmann::json rows = nlohmann::json::array();
  char line[160];
  for (double bytes = begin; bytes <= end; bytes *= factor) {
    const core::NcclTime t = core::nccl_collective(cluster.nccl, kind, bytes, links, algo);
    const core::TimeNs time_ns =
        simulate ? simulate_alone(topology, cluster.nccl, kind, bytes, gpus) : t.time_ns;
    const double seconds = core::ns_to_s(time_ns);
    const double algbw = seconds > 0 ? bytes / seconds / 1e9 : 0.0;
    const double busbw = algbw * core::nccl_bus_factor(kind, g.ranks);
    const std::string algorithm =
        std::string(core::to_string(t.algo)) + "/" + core::to_string(t.proto);
    std::snprintf(line, sizeof line, "%12.0f  %12.0f  %8s  %8.2f  %8.2f  %8.2f  %s\n", bytes,
                  bytes / 4.0, "float", seconds * 1e6, algbw, busbw, algorithm.c_str());
    out << line;
    rows.push_back({{"op", o.op},
                    {"bytes", bytes},
                    {"time_us", seconds * 1e6},
                    {"algbw_GBps", algbw},
                    {"busbw_GBps", busbw},
                    {"algo", core::to_string(t.algo)},
                    {"proto", core::to_string(t.proto)}});
  }
  if (!o.json_path.empty()) write_json_file(o.json_path, rows);
}

}  // namespace

void add_collectives_command(CLI::App& app, CliContext& ctx) {
  auto o = std::make_shared<CollectivesOptions>();
  CLI::App* cmd =
      app.add_subcommand("collectives",
                         "nccl-tests-style sweep of one collective on the cost model's NCCL model "
                         "(docs/collectives.md)");
  cmd->footer(
      "Examples:\n"
      "  parashift collectives scenarios/default.yaml --op all_reduce --nodes 4 --gpus-per-node 8\n"
      "  parashift collectives --topology rail-fat-tree --param nodes=4 --op all_reduce -b 8 -e 8G "
      "-f 8\n"
      "  parashift collectives --topology dgx-h100 --op all_reduce --ranks 8 --algo nvls --json "
      "ar.json\n"
      "  mpirun -np 4 parashift collectives --backend hw --op all_reduce -b 1K -e 16M -f 4");
  cmd->add_option("scenario", o->scenario, "Scenario YAML (its cluster and device)");
  cmd->add_option("--topology", o->topology, "Topology file or generator instead of a scenario");
  cmd->add_option("--param", o->params, "Generator parameter key=value (repeatable)");
  cmd->add_option("--device", o->device, "Device preset with --topology (default h100-sxm-80gb)");
  cmd->add_option("--op", o->op, "all_reduce, all_gather, reduce_scatter, alltoall or sendrecv")
      ->required();
  cmd->add_option("--nodes", o->nodes, "Nodes of the group (with --gpus-per-node)")
      ->check(positive_number());
  cmd->add_option("--gpus-per-node", o->gpus_per_node, "GPUs of each node in the group")
      ->check(positive_number());
  cmd->add_option("--ranks", o->ranks, "Group of the first N GPUs")->check(positive_number());
  cmd->add_option("-b,--minbytes", o->begin, "Smallest size (8, 64K, 1M, 8G; default 8)");
  cmd->add_option("-e,--maxbytes", o->end, "Largest size (default 8G)");
  cmd->add_option("-f,--stepfactor", o->factor, "Size factor between rows (default 2)");
  cmd->add_option("--algo", o->algo, "auto, ring, tree or nvls (default auto: NCCL's choice)");
  cmd->add_option("--backend", o->backend,
                  "analytical (the closed form, default), sim (the same model on the "
                  "simulator's max-min network of the topology), hw (measured over MPI on the "
                  "ranks mpirun started) or cuda (measured over NCCL, one GPU a rank)");
  cmd->add_option("-w,--warmup_iters", o->warmup, "hw, cuda: untimed calls per size (default 5)")
      ->check(CLI::Range(0, 1000));
  cmd->add_option("-n,--iters", o->iters, "hw, cuda: timed calls per size (default 20)")
      ->check(CLI::Range(1, 100000));
  cmd->add_option("--json", o->json_path, "Also write the rows as JSON to FILE");
  cmd->callback([o, &ctx] { run_collectives(*o, ctx); });
}

}  // namespace parashift::tools
