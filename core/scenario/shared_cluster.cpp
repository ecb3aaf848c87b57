#include "core/scenario/shared_cluster.hpp"

#include <algorithm>
#include <cstdio>
#include <map>
#include <set>

#include "core/faults/duration.hpp"
#include "core/input_error.hpp"
#include "core/input_file.hpp"
#include "core/scenario/scenario_sections.hpp"

namespace parashift::core {

namespace fs = std::filesystem;

namespace {

// `placement.nodes`: node numbers and "a-b" ranges, each node once.
std::vector<int> read_node_list(YamlFields& placement, int host_count) {
  const YAML::Node list = placement.child("nodes");
  if (!list.IsSequence() || list.size() == 0)
    placement.fail("nodes", "expected a list of node numbers and \"a-b\" ranges");
  std::vector<int> nodes;
  for (const YAML::Node& item : list) {
    const std::string text = item.IsScalar() ? item.Scalar() : "";
    int a = -1, b = -1;
    char dash = 0, extra = 0;
    const int n = std::sscanf(text.c_str(), "%d%c%d%c", &a, &dash, &b, &extra);
    if (n == 1) b = a;
    if (!((n == 1 && text.find_first_not_of("0123456789") == std::string::npos) ||
          (n == 3 && dash == '-')) ||
        a < 0 || b < a || b >= host_count)
      placement.fail("nodes", "expected node numbers 0.." + std::to_string(host_count - 1) +
                                  " or ranges \"a-b\" of them, found '" + text + "'");
    for (int k = a; k <= b; ++k) {
      if (std::find(nodes.begin(), nodes.end(), k) != nodes.end())
        placement.fail("nodes", "node " + std::to_string(k) + " is listed twice");
      nodes.push_back(k);
    }
  }
  return nodes;
}

// Job `i` of `list`: its sections on top of the cluster's (`base`).
SharedJob read_job(const YamlFields& top, const YAML::Node& element, std::size_t i,
                   const Scenario& base, const fs::path& dir, int next_free_node) {
  if (!element.IsMap())
    throw InputError(top.where_item("jobs", element, i) +
                     ": expected a map {name, model, training, plan, placement, iterations}");
  YamlFields job = top.item("jobs", element, i);
  SharedJob out;
  Scenario& s = out.scenario;
  s = base;
  s.name = job.optional_string("name").value_or("job" + std::to_string(i));
  s.model = read_model(job, s.file, dir);
  YamlFields training = job.map("training");
  read_training(training, s, dir);
  ScenarioOptions options;
  options.plan_sets_gpus = true;
  read_plan(job, training, s, options);
  read_policy(job, s, dir);
  if (auto iterations = job.optional_positive_int("iterations")) {
    if (*iterations > kMaxRunIterations)
      job.fail("iterations", "expected at most " + std::to_string(kMaxRunIterations));
    s.run.iterations = *iterations;
  }
  const topo::Topology& t = s.topology;
  const int per_node = t.gpus_per_host();
  const int needed = (s.plan.gpus() + per_node - 1) / per_node;
  std::string where = job.where("plan");
  if (job.has("placement")) {
    YamlFields placement = job.map("placement");
    if (placement.has("nodes")) {
      if (placement.has("first_node"))
        placement.fail("first_node", "expected one of first_node or nodes, not both");
      out.nodes = read_node_list(placement, t.host_count());
      where = placement.where("nodes");
      if (static_cast<int>(out.nodes.size()) != needed)
        placement.fail("nodes", "the job's " + std::to_string(s.plan.gpus()) + " GPUs need " +
                                    std::to_string(needed) + " nodes of " +
                                    std::to_string(per_node) + " GPUs, found " +
                                    std::to_string(out.nodes.size()));
    } else {
      if (!placement.has("first_node"))
        placement.fail("first_node", "expected first_node: N or nodes: [...]");
      next_free_node = static_cast<int>(placement.nonnegative_int64("first_node", 0));
      where = placement.where("first_node");
    }
    placement.reject_unknown();
  }
  job.reject_unknown();
  if (out.nodes.empty()) {
    if (next_free_node + needed > t.host_count())
      throw InputError(where + ": the job's " + std::to_string(s.plan.gpus()) + " GPUs on " +
                       std::to_string(needed) + " nodes from node " +
                       std::to_string(next_free_node) + " leave the cluster's " +
                       std::to_string(t.host_count()) + " nodes");
    for (int k = 0; k < needed; ++k) out.nodes.push_back(next_free_node + k);
  }
  for (int r = 0; r < s.plan.gpus(); ++r)
    out.gpu_of_rank.push_back(out.nodes[static_cast<std::size_t>(r / per_node)] * per_node +
                              r % per_node);
  return out;
}

// `tenants:`: each {links, at, duration}, its links named as the topology's.
std::vector<SharedTenant> read_tenants(YamlFields& top, const topo::Topology& t) {
  const YAML::Node list = top.child("tenants");
  if (!list.IsSequence())
    top.fail("tenants", "expected a list of {links: [NAME, ...], at, duration} maps");
  std::map<std::string, int> link_by_name;
  for (int id = 0; id < t.link_count(); ++id) link_by_name[t.link(id).name] = id;
  std::vector<SharedTenant> out;
  for (std::size_t i = 0; i < list.size(); ++i) {
    if (!list[i].IsMap())
      throw InputError(top.where_item("tenants", list[i], i) +
                       ": expected a map {links: [NAME, ...], at, duration}");
    YamlFields f = top.item("tenants", list[i], i);
    SharedTenant tenant;
    const YAML::Node links = f.child("links");
    if (!links.IsSequence() || links.size() == 0)
      f.fail("links", "expected a list of directed link names such as '" + t.link(0).name + "'");
    for (const YAML::Node& name : links) {
      const auto it = link_by_name.find(name.IsScalar() ? name.Scalar() : "");
      if (it == link_by_name.end())
        f.fail("links", "unknown link '" + (name.IsScalar() ? name.Scalar() : "") +
                            "' (expected a directed link name such as '" + t.link(0).name +
                            "'; see parashift topo --dot)");
      tenant.links.push_back(it->second);
    }
    auto duration = [&f](const char* key) {
      try {
        return parse_strict_duration_ns(f.string(key));
      } catch (const InputError& e) {
        f.fail(key, e.what());
      }
    };
    if (f.has("at")) tenant.at_ns = duration("at");
    if (f.has("duration")) {
      tenant.duration_ns = duration("duration");
      if (*tenant.duration_ns <= 0) f.fail("duration", "expected a positive duration");
    }
    f.reject_unknown();
    out.push_back(std::move(tenant));
  }
  return out;
}

}  // namespace

bool is_shared_cluster(const std::string& yaml_text) {
  try {
    const YAML::Node root = YAML::Load(yaml_text);
    return root && root.IsMap() && root["jobs"];
  } catch (const YAML::Exception&) {
    return false;
  }
}

SharedCluster parse_shared_cluster(const std::string& yaml_text, const fs::path& file,
                                   const std::vector<std::string>& overrides) {
  const std::string name = file.string();
  YAML::Node root = load_scenario_root(yaml_text, name);
  apply_overrides(root, overrides);
  std::set<std::string> overridden;
  for (const auto& item : overrides) overridden.insert(item.substr(0, item.find('=')));
  const fs::path dir = file.parent_path();
  YamlFields top(root, "", name, &overridden);
  SharedCluster cluster;
  cluster.file = name;
  cluster.name = top.optional_string("name").value_or(file.stem().string());
  Scenario base;
  base.file = name;
  read_cluster(top, base, dir);
  if (!base.device_groups.empty())
    top.fail("cluster", "a shared cluster is of one device (cluster.groups is not supported)");
  read_run(top, base);
  if (top.has("run")) {
    YamlFields run(top.node()["run"], "run", name, &overridden);
    if (!base.run.contention)  // run.network: path
      run.fail("network", "the jobs of a shared cluster share links by flows; expected maxmin");
    if (base.run.duration_ns > 0)
      run.fail("duration", "a shared cluster runs by iterations; give run.iterations");
  }
  read_traffic(top, base);
  const YAML::Node list = top.child("jobs");
  if (!list.IsSequence() || list.size() == 0)
    top.fail("jobs", "expected a list of jobs, each {name, model, training, plan, placement}");
  std::vector<int> owner(static_cast<std::size_t>(base.topology.gpu_count()), -1);
  int next_free_node = 0;
  for (std::size_t i = 0; i < list.size(); ++i) {
    SharedJob job = read_job(top, list[i], i, base, dir, next_free_node);
    for (int g : job.gpu_of_rank) {
      const int other = owner[static_cast<std::size_t>(g)];
      if (other < 0) continue;
      throw InputError(top.where_item("jobs", list[i], i) + ".placement: the job's node " +
                       std::to_string(g / base.topology.gpus_per_host()) + " already runs job '" +
                       cluster.jobs[static_cast<std::size_t>(other)].scenario.name + "'");
    }
    for (int g : job.gpu_of_rank) owner[static_cast<std::size_t>(g)] = static_cast<int>(i);
    next_free_node = job.nodes.back() + 1;
    cluster.jobs.push_back(std::move(job));
  }
  if (top.has("tenants"))
    cluster.tenants = read_tenants(top, base.topology);
  else
    top.allow("tenants");
  cluster.stagger = top.optional_bool("stagger").value_or(false);
  top.reject_unknown();
  return cluster;
}

SharedCluster load_shared_cluster(const fs::path& file, const std::vector<std::string>& overrides) {
  return parse_shared_cluster(read_input_file(file, "scenario file"), file, overrides);
}

}  // namespace parashift::core
