#include "sim/shared_report.hpp"

#include <algorithm>
#include <cstdio>
#include <string>

#include "core/directive.hpp"
#include "core/plan_json.hpp"

namespace parashift::sim {

namespace {

std::string fmt(const char* format, double value) {
  char buf[64];
  std::snprintf(buf, sizeof buf, format, value);
  return buf;
}

std::string pad(std::string text, std::size_t width) {
  if (text.size() < width) text.append(width - text.size(), ' ');
  return text;
}

// "0-15,32-47": the job's nodes as ranges.
std::string nodes_of(const core::SharedJob& job) {
  std::string out;
  const auto& n = job.nodes;
  for (std::size_t a = 0; a < n.size();) {
    std::size_t b = a;
    while (b + 1 < n.size() && n[b + 1] == n[b] + 1) ++b;
    out +=
        (out.empty() ? "" : ",") + std::to_string(n[a]) + (b > a ? "-" + std::to_string(n[b]) : "");
    a = b + 1;
  }
  return out;
}

std::string rate(double tokens_per_s) {
  return tokens_per_s >= 1e6 ? fmt("%.2fM", tokens_per_s / 1e6) : fmt("%.0fk", tokens_per_s / 1e3);
}

// The shared links' uses, busiest first (ties by link id: deterministic).
std::vector<LinkUse> shared_uses(const SharedClusterResult& result) {
  std::vector<LinkUse> out;
  for (const LinkUse& use : result.links)
    if (std::binary_search(result.shared_links.begin(), result.shared_links.end(), use.link))
      out.push_back(use);
  std::stable_sort(out.begin(), out.end(),
                   [](const LinkUse& a, const LinkUse& b) { return a.busy_ns > b.busy_ns; });
  return out;
}

}  // namespace

void print_shared_cluster(std::ostream& out, const core::SharedCluster& cluster,
                          const SharedClusterResult& result) {
  const core::Scenario& first = cluster.jobs.front().scenario;
  int busy_gpus = 0;
  for (const core::SharedJob& j : cluster.jobs) busy_gpus += j.scenario.plan.gpus();
  out << "shared cluster " << cluster.name << ": " << cluster.jobs.size() << " jobs on "
      << busy_gpus << " of " << cluster.gpus() << " " << first.device.name << " GPUs ("
      << first.topology_source.describe() << "), links shared by max-min, traffic "
      << (first.traffic.describe().empty() ? "classes all at weight 1" : first.traffic.describe())
      << "\n";
  std::size_t name_width = 4, nodes_width = 6;
  for (const core::SharedJob& j : cluster.jobs) {
    name_width = std::max(name_width, j.scenario.name.size() + 2);
    nodes_width = std::max(nodes_width, nodes_of(j).size() + 2);
  }
  out << pad("job", name_width) << pad("nodes", nodes_width) << pad("GPUs", 6) << pad("iters", 7)
      << pad("iteration", 11) << pad("alone", 10) << pad("sharing", 9) << pad("tokens/s", 10)
      << pad("MFU", 7) << "plan\n";
  for (std::size_t i = 0; i < cluster.jobs.size(); ++i) {
    const core::SharedJob& job = cluster.jobs[i];
    const SharedJobResult& r = result.jobs[i];
    out << pad(job.scenario.name, name_width) << pad(nodes_of(job), nodes_width)
        << pad(std::to_string(job.scenario.plan.gpus()), 6)
        << pad(std::to_string(r.iteration_ns.size()), 7)
        << pad(fmt("%.3f s", core::ns_to_s(r.mean_iteration_ns())), 11)
        << pad(fmt("%.3f s", core::ns_to_s(r.alone_ns)), 10)
        << pad(fmt("%+.1f%%", 100.0 * r.slowdown()), 9) << pad(rate(r.tokens_per_s()), 10)
        << pad(fmt("%.1f%%", 100.0 * r.last.mfu), 7) << r.final_plan.label() << "\n";
  }
  if (result.stagger) {
    // The cluster-level module's starts and the overlap it expects.
    const StaggerPlan& st = *result.stagger;
    out << "stagger:";
    for (std::size_t i = 0; i < cluster.jobs.size(); ++i)
      out << (i ? ", " : " ") << cluster.jobs[i].scenario.name << " at "
          << fmt("%.3f s", core::ns_to_s(st.start_ns[i]));
    out << " (alone, their traffic on shared links overlaps "
        << fmt("%.3f s", core::ns_to_s(st.overlap_ns)) << ", summed over links, in "
        << fmt("%.1f s", core::ns_to_s(st.horizon_ns)) << ", against "
        << fmt("%.3f s", core::ns_to_s(st.unstaggered_overlap_ns)) << " all at 0)\n";
  }
  for (std::size_t i = 0; i < cluster.jobs.size(); ++i)
    for (const core::TakenDirective& t : result.jobs[i].directives)
      out << cluster.jobs[i].scenario.name << " before iteration " << t.iteration << ": "
          << core::to_string(t.directive) << "\n";
  out << "cluster: the last job ends at " << fmt("%.3f", core::ns_to_s(result.end_ns))
      << " s; the jobs train " << rate(result.tokens_per_s()) << " tokens/s together; "
      << result.shared_links.size() << " links carry two or more jobs' traffic\n";
  for (std::size_t t = 0; t < cluster.tenants.size(); ++t) {
    const auto& links = cluster.tenants[t].links;
    out << "tenant " << t << " on " << links.size() << " link" << (links.size() > 1 ? "s" : "")
        << " (" << first.topology.link(links.front()).name << (links.size() > 1 ? ", ..." : "")
        << "): " << fmt("%.1f", result.tenant_bytes[t] / 1e9) << " GB sent\n";
  }
  const auto uses = shared_uses(result);
  if (uses.empty()) return;
  out << "busiest shared links:";
  for (std::size_t k = 0; k < uses.size() && k < 4; ++k) {
    const auto& link = first.topology.link(uses[k].link);
    out << (k ? ", " : " ") << link.name << " "
        << fmt("%.0f%%",
               100.0 * static_cast<double>(uses[k].busy_ns) / static_cast<double>(result.end_ns))
        << " busy";
  }
  out << "\n";
}

nlohmann::json shared_cluster_json(const core::SharedCluster& cluster,
                                   const SharedClusterResult& result) {
  nlohmann::json jobs = nlohmann::json::array();
  for (std::size_t i = 0; i < cluster.jobs.size(); ++i) {
    const core::SharedJob& job = cluster.jobs[i];
    const SharedJobResult& r = result.jobs[i];
    nlohmann::json times = nlohmann::json::array();
    for (TimeNs t : r.iteration_ns) times.push_back(core::ns_to_s(t));
    jobs.push_back({{"name", job.scenario.name},
                    {"model", job.scenario.model.name},
                    {"plan", job.scenario.plan},
                    {"final_plan", r.final_plan},
                    {"directives", r.directives.size()},
                    {"nodes", job.nodes},
                    {"gpus", job.scenario.plan.gpus()},
                    {"iterations", r.iteration_ns.size()},
                    {"iteration_time_s", times},
                    {"mean_iteration_time_s", core::ns_to_s(r.mean_iteration_ns())},
                    {"alone_iteration_time_s", core::ns_to_s(r.alone_ns)},
                    {"slowdown", r.slowdown()},
                    {"start_s", core::ns_to_s(r.start_ns)},
                    {"tokens_per_s", r.tokens_per_s()},
                    {"mfu", r.last.mfu}});
  }
  nlohmann::json links = nlohmann::json::array();
  const core::Scenario& first = cluster.jobs.front().scenario;
  for (const LinkUse& use : shared_uses(result))
    links.push_back({{"link", first.topology.link(use.link).name},
                     {"bytes", use.bytes},
                     {"busy_s", core::ns_to_s(use.busy_ns)}});
  nlohmann::json tenants = nlohmann::json::array();
  for (std::size_t t = 0; t < cluster.tenants.size(); ++t) {
    nlohmann::json names = nlohmann::json::array();
    for (int link : cluster.tenants[t].links) names.push_back(first.topology.link(link).name);
    tenants.push_back({{"links", names}, {"bytes", result.tenant_bytes[t]}});
  }
  nlohmann::json out = {{"scenario", cluster.name},
                        {"gpus", cluster.gpus()},
                        {"time_s", core::ns_to_s(result.end_ns)},
                        {"tokens_per_s", result.tokens_per_s()},
                        {"events", result.events},
                        {"jobs", jobs},
                        {"shared_links", links},
                        {"tenants", tenants}};
  if (result.stagger)
    out["stagger"] = {
        {"overlap_s", core::ns_to_s(result.stagger->overlap_ns)},
        {"unstaggered_overlap_s", core::ns_to_s(result.stagger->unstaggered_overlap_ns)},
        {"horizon_s", core::ns_to_s(result.stagger->horizon_ns)}};
  return out;
}

}  // namespace parashift::sim
