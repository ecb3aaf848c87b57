// A shared cluster's scenario (`jobs:`): each job's plan on its own nodes,
// and one located message, exit 2 at the CLI, for every placement or field
// that cannot be.
#include <doctest/doctest.h>

#include <string>

#include "core/controller/job_runner.hpp"
#include "core/input_error.hpp"
#include "core/scenario/scenario.hpp"
#include "core/scenario/shared_cluster.hpp"

using namespace parashift;

namespace {

// Four DGX H100 nodes (8 GPUs each) and two jobs; `jobs` replaces the list.
std::string cluster_yaml(const std::string& jobs) {
  return "cluster:\n"
         "  device: h100-sxm-80gb\n"
         "  topology: {generator: rail-fat-tree, node: dgx-h100, nodes: 4}\n"
         "run: {iterations: 2}\n"
         "jobs:\n" +
         jobs;
}

const std::string kJobA =
    "  - name: a\n"
    "    model: llama2-7b\n"
    "    training: {global_batch: 16, seq_len: 2048}\n"
    "    plan: {tp: 8, dp: 2}\n";
const std::string kJobB =
    "  - name: b\n"
    "    model: llama2-7b\n"
    "    training: {global_batch: 8, seq_len: 2048}\n"
    "    plan: {tp: 4, dp: 2}\n";

// Scenario files resolve model presets from their folder: the shipped one.
const std::string kFile = std::string(PARASHIFT_SOURCE_DIR) + "/scenarios/shared.yaml";

core::SharedCluster parse(const std::string& jobs) {
  return core::parse_shared_cluster(cluster_yaml(jobs), kFile);
}

// The message parsing `yaml` (a whole shared cluster) throws; "" when it parses.
std::string cluster_error(const std::string& yaml) {
  try {
    core::parse_shared_cluster(yaml, kFile);
  } catch (const core::InputError& e) {
    return e.what();
  }
  return "";
}

std::string error_of(const std::string& jobs) {
  return cluster_error(cluster_yaml(jobs));
}

// The cluster's `run:` line replaced by `run`.
std::string with_run(const std::string& run) {
  std::string yaml = cluster_yaml(kJobA);
  return yaml.replace(yaml.find("run: {iterations: 2}"), 20, run);
}

}  // namespace

TEST_CASE("a shared cluster packs jobs without a placement node after node") {
  const core::SharedCluster c = parse(kJobA + kJobB);
  REQUIRE(c.jobs.size() == 2);
  CHECK(c.gpus() == 32);
  // a: tp8 x dp2 = 16 GPUs = nodes 0 and 1; b: tp4 x dp2 = 8 GPUs = node 2.
  CHECK(c.jobs[0].nodes == std::vector<int>{0, 1});
  CHECK(c.jobs[1].nodes == std::vector<int>{2});
  CHECK(c.jobs[1].gpu_of_rank.front() == 16);
  CHECK(c.jobs[1].gpu_of_rank.back() == 23);
  CHECK(c.jobs[0].scenario.plan.gpus() == 16);
  CHECK(c.jobs[0].scenario.run.iterations == 2);  // the cluster's run
  CHECK(c.jobs[1].scenario.name == "b");
  CHECK(core::is_shared_cluster(cluster_yaml(kJobA)));
  CHECK_FALSE(core::is_shared_cluster("model: llama2-7b\n"));
}

TEST_CASE("a shared cluster's job placed on a node list runs its ranks node after node") {
  const core::SharedCluster c =
      parse(kJobA + "    placement: {nodes: [3, \"1-1\"]}\n    iterations: 5\n" + kJobB +
            "    placement: {first_node: 0}\n");
  // Rank 0..7 on node 3 (GPUs 24..31), rank 8..15 on node 1 (GPUs 8..15).
  CHECK(c.jobs[0].gpu_of_rank[0] == 24);
  CHECK(c.jobs[0].gpu_of_rank[8] == 8);
  CHECK(c.jobs[0].scenario.run.iterations == 5);
  CHECK(c.jobs[1].nodes == std::vector<int>{0});
}

TEST_CASE("a shared cluster refuses overlapping, outside and malformed placements by field") {
  // b from node 1 overlaps a's nodes 0 and 1.
  CHECK(error_of(kJobA + kJobB + "    placement: {first_node: 1}\n")
            .find("jobs[1].placement: the job's node 1 already runs job 'a'") != std::string::npos);
  // a's 16 GPUs from node 3 need nodes 3 and 4 of 0..3.
  CHECK(error_of(kJobA + "    placement: {first_node: 3}\n")
            .find("jobs[0].placement.first_node: the job's 16 GPUs on 2 nodes from node 3 "
                  "leave the cluster's 4 nodes") != std::string::npos);
  CHECK(error_of(kJobA + "    placement: {nodes: [0]}\n")
            .find("jobs[0].placement.nodes: the job's 16 GPUs need 2 nodes of 8 GPUs, found 1") !=
        std::string::npos);
  CHECK(error_of(kJobA + "    placement: {nodes: [0, 9]}\n")
            .find("jobs[0].placement.nodes: expected node numbers 0..3") != std::string::npos);
  CHECK(error_of(kJobA + "    placement: {nodes: [\"2-1\"]}\n").find("found '2-1'") !=
        std::string::npos);
  // Two ranks' groups on one node: refused, not run on the same GPUs.
  CHECK(error_of(kJobA + "    placement: {nodes: [1, \"0-1\"]}\n")
            .find("jobs[0].placement.nodes: node 1 is listed twice") != std::string::npos);
  CHECK(error_of(kJobA + "    placement: {}\n")
            .find("jobs[0].placement.first_node: expected first_node: N or nodes") !=
        std::string::npos);
  CHECK(error_of(kJobA + "    placement: {nodes: [0, 1], first_node: 0}\n")
            .find("expected one of first_node or nodes") != std::string::npos);
}

TEST_CASE(
    "a shared cluster refuses a job without dp, an unknown policy module, an empty job list") {
  CHECK(error_of("  - name: a\n    model: llama2-7b\n"
                 "    training: {global_batch: 16, seq_len: 2048}\n    plan: {tp: 8}\n")
            .find("jobs[0].plan.dp: expected dp") != std::string::npos);
  CHECK(error_of(kJobA + "    policy: {balanc: {enabled: true}}\n").find("jobs[0].policy") !=
        std::string::npos);
  CHECK(error_of(kJobA + "    unknown_key: 1\n").find("jobs[0].unknown_key") != std::string::npos);
  CHECK(error_of("  []\n").find("jobs: expected a list of jobs") != std::string::npos);
  CHECK(error_of("  - 3\n").find("jobs[0]: expected a map") != std::string::npos);
}

TEST_CASE("a shared cluster's job has its own policy, every module off by default") {
  const core::SharedCluster c =
      parse(kJobA + "    policy: {calibrate: {enabled: true}, sync: {enabled: true}}\n" + kJobB);
  CHECK(core::enabled_modules(c.jobs[0].scenario.policy) ==
        std::vector<std::string>{"calibrate", "sync"});
  CHECK(core::enabled_modules(c.jobs[1].scenario.policy).empty());
}

TEST_CASE("a shared cluster refuses the path network and a run by duration") {
  CHECK(cluster_error(with_run("run: {network: path}"))
            .find("run.network: the jobs of a shared cluster share links by flows") !=
        std::string::npos);
  CHECK(cluster_error(with_run("run: {duration: 10s}"))
            .find("run.duration: a shared cluster runs by iterations") != std::string::npos);
}

TEST_CASE("a shared cluster is refused by commands that read one job") {
  std::string message;
  try {
    core::parse_scenario(cluster_yaml(kJobA), kFile);
  } catch (const core::InputError& e) {
    message = e.what();
  }
  CHECK(
      message.find("jobs: a shared cluster (several jobs) runs under `parashift simulate` only") !=
      std::string::npos);
}

TEST_CASE("a shared cluster's tenants name the topology's links and a positive duration") {
  const std::string link0 = parse(kJobA).jobs[0].scenario.topology.link(0).name;
  const core::SharedCluster c = core::parse_shared_cluster(
      cluster_yaml(kJobA) + "tenants:\n  - {links: [\"" + link0 + "\"], at: 1s, duration: 2s}\n",
      kFile);
  REQUIRE(c.tenants.size() == 1);
  CHECK(c.tenants[0].links == std::vector<int>{0});
  CHECK(c.tenants[0].at_ns == 1'000'000'000);
  CHECK(c.tenants[0].duration_ns == 2'000'000'000);
  CHECK(cluster_error(cluster_yaml(kJobA) + "tenants:\n  - {links: [\"nowhere\"]}\n")
            .find("tenants[0].links: unknown link 'nowhere'") != std::string::npos);
  CHECK(cluster_error(cluster_yaml(kJobA) + "tenants: 3\n").find("tenants: expected a list") !=
        std::string::npos);
  CHECK(cluster_error(cluster_yaml(kJobA) + "tenants:\n  - {links: [\"" + link0 +
                      "\"], duration: 0s}\n")
            .find("tenants[0].duration: expected a positive duration") != std::string::npos);
}

TEST_CASE("a shared cluster's stagger is true or false, off when absent") {
  CHECK_FALSE(parse(kJobA).stagger);
  CHECK(core::parse_shared_cluster(cluster_yaml(kJobA) + "stagger: true\n", kFile).stagger);
  CHECK(cluster_error(cluster_yaml(kJobA) + "stagger: maybe\n")
            .find("stagger: expected true or false, found 'maybe'") != std::string::npos);
}
