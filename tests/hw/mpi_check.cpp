// Run under mpirun (-np 1, 2 or 4): trains the tiny model under every
// tp x pp x dp split of the job and checks each against the same model
// trained on one rank in-process; then every pipeline schedule against
// 1F1B, a live repartition, a rebalance and a snapshot/restore, each against
// an undisturbed run. Prints one line per
// check on rank 0; exit status 0 when all pass, 1 otherwise.
#include <cmath>
#include <cstdio>
#include <string>
#include <vector>

#include "hw/comm/self_communicator.hpp"
#include "hw/cpu/mpi_session.hpp"
#include "hw/exec/hw_backend.hpp"
#include "tests/hw/hw_test_model.hpp"

using namespace parashift;

namespace {

constexpr int kIterations = 4;

std::vector<double> train(hw::HwBackend& backend, const core::ParallelPlan& plan, int from, int to,
                          const std::vector<core::Directive>& at_start = {}) {
  std::vector<double> losses;
  for (int i = from; i < to; ++i) {
    if (i == from)
      for (const auto& d : at_start) backend.apply(d);
    backend.step(plan);
    losses.push_back(backend.last_loss());
  }
  return losses;
}

struct Checker {
  int rank = 0;
  int failures = 0;
  void expect(bool ok, const std::string& what) {
    if (rank == 0) std::printf("%s %s\n", ok ? "PASS" : "FAIL", what.c_str());
    failures += ok ? 0 : 1;
  }
};

// Largest relative difference between two loss trajectories.
double max_rel_diff(const std::vector<double>& a, const std::vector<double>& b) {
  double worst = a.size() == b.size() ? 0.0 : INFINITY;
  for (std::size_t i = 0; i < std::min(a.size(), b.size()); ++i)
    worst = std::max(worst, std::abs(a[i] - b[i]) / std::abs(b[i]));
  return worst;
}

std::string number(double x) {
  char text[32];
  std::snprintf(text, sizeof text, "%.9g", x);
  return text;
}

std::string show(const std::vector<double>& v) {
  std::string s;
  for (double x : v) s += (s.empty() ? "" : " ") + number(x);
  return "[" + s + "]";
}

}  // namespace

int main() {
  hw::MpiSession mpi;
  auto world = mpi.world();
  const int n = world->size();
  Checker check{world->rank(), 0};
  const auto model = test::tiny_model();

  // mpirun started every rank on this machine: one node holding all n ranks,
  // the default `parashift run --backend hw` takes for --ranks-per-node.
  const int per_node = mpi.ranks_per_node();
  check.expect(per_node == n, "ranks per node from the launcher: " + std::to_string(per_node) +
                                  " of " + std::to_string(n) + " on this machine");

  for (auto kind : {hw::OptimizerKind::Sgd, hw::OptimizerKind::Adam}) {
    // Reference: the same model on one rank, in this process.
    hw::SelfCommunicator self;
    const auto one = test::tiny_plan(1, 1, 1);
    hw::HwBackend ref_backend(model, test::kTinySeq, 1, one, test::tiny_options(kind, "ref"), self);
    const auto reference = train(ref_backend, one, 0, kIterations);

    for (int tp = 1; tp <= n; tp *= 2) {
      for (int pp = 1; tp * pp <= n; pp *= 2) {
        const int dp = n / (tp * pp);
        const auto plan = test::tiny_plan(tp, pp, dp);
        hw::HwBackend backend(model, test::kTinySeq, 1, plan, test::tiny_options(kind, "plan"),
                              *world);
        const auto losses = train(backend, plan, 0, kIterations);
        // Same global tensors and samples, summed in another order: fp32
        // rounding only, far below the first step's change (> 1%).
        const double diff = max_rel_diff(losses, reference);
        check.expect(diff < 1e-4, std::string(hw::to_string(kind)) + " tp" + std::to_string(tp) +
                                      " pp" + std::to_string(pp) + " dp" + std::to_string(dp) +
                                      " losses " + show(losses) + " vs 1 rank " + show(reference) +
                                      " (max rel diff " + number(diff) + ")");
      }
    }
  }

  const auto kind = hw::OptimizerKind::Adam;
  if (n >= 2) {
    // Every pipeline schedule on 2 stages: each weight gradient sums its
    // micro-batches in the same order under all of them (ZB-H1's W passes,
    // interleaving's two chunks per stage), so losses equal 1F1B's exactly.
    const auto base = test::tiny_plan(1, 2, n / 2);
    hw::HwBackend reference(model, test::kTinySeq, 1, base, test::tiny_options(kind, "1f1b"),
                            *world);
    const auto expected = train(reference, base, 0, kIterations);
    // Recompute reruns the same kernels on the same inputs: the same bits.
    struct Variant {
      core::Schedule schedule;
      core::Recompute recompute;
    };
    for (const auto [schedule, recompute] :
         {Variant{core::Schedule::GPipe, core::Recompute::None},
          Variant{core::Schedule::ZeroBubbleH1, core::Recompute::None},
          Variant{core::Schedule::Interleaved1F1B, core::Recompute::None},
          Variant{core::Schedule::OneFOneB, core::Recompute::Selective},
          Variant{core::Schedule::Interleaved1F1B, core::Recompute::Full}}) {
      auto plan = base;
      plan.schedule = schedule;
      plan.recompute = recompute;
      plan.virtual_stages = schedule == core::Schedule::Interleaved1F1B ? 2 : 1;
      hw::HwBackend backend(model, test::kTinySeq, 1, plan, test::tiny_options(kind, "sched"),
                            *world);
      const auto losses = train(backend, plan, 0, kIterations);
      check.expect(losses == expected,
                   plan.label() + " losses " + show(losses) + " == 1f1b's " + show(expected));
    }
  }
  if (n >= 4) {
    // Rank order tp-cp-pp-dp (Llama 3's): rank 1 holds stage 1 of replica 0
    // instead of stage 0 of replica 1. Groups are split by coordinates and
    // ordered by the coordinate they span, so every reduction adds the same
    // values in the same order: the same losses, bit for bit. A pipeline
    // send or a replica's shard addressed by Megatron's default stride
    // instead would reach the wrong rank here.
    auto plan = test::tiny_plan(1, 2, n / 2);
    hw::HwBackend stage_major(model, test::kTinySeq, 1, plan, test::tiny_options(kind, "dppp"),
                              *world);
    const auto expected = train(stage_major, plan, 0, kIterations);
    plan.order = core::RankOrder::TpCpPpDp;
    hw::HwBackend replica_major(model, test::kTinySeq, 1, plan, test::tiny_options(kind, "ppdp"),
                                *world);
    const auto losses = train(replica_major, plan, 0, kIterations);
    check.expect(losses == expected,
                 plan.label() + " losses " + show(losses) + " == tp-cp-dp-pp's " + show(expected));
  }
  if (n >= 2) {
    // Sequence parallelism on tp 2 (x pp 2 on 4 ranks): MPI's reduce-scatter
    // adds the same two partial sums its all-reduce would, so the training
    // is the same; the loss, summed per token shard, to double rounding.
    const auto base = test::tiny_plan(2, n / 2, 1);
    auto plan = base;
    plan.sequence_parallel = true;
    hw::HwBackend plain(model, test::kTinySeq, 1, base, test::tiny_options(kind, "tp"), *world);
    const auto expected = train(plain, base, 0, kIterations);
    hw::HwBackend split(model, test::kTinySeq, 1, plan, test::tiny_options(kind, "sp"), *world);
    const auto losses = train(split, plan, 0, kIterations);
    const double diff = max_rel_diff(losses, expected);
    check.expect(diff < 1e-12, plan.label() + " losses " + show(losses) + " vs without sp " +
                                   show(expected) + " (max rel diff " + number(diff) + ")");
  }
  if (n >= 2) {
    // The distributed optimizer over all n replicas: the same sums through
    // MPI's reduce-scatter instead of its all-reduce (in another order on 4
    // ranks: fp32 rounding only), the same element-wise Adam.
    const auto base = test::tiny_plan(1, 1, n);
    auto plan = base;
    plan.optimizer_sharding = core::OptimizerSharding::Distributed;
    hw::HwBackend plain(model, test::kTinySeq, 1, base, test::tiny_options(kind, "dp"), *world);
    const auto expected = train(plain, base, 0, kIterations);
    hw::HwBackend sharded(model, test::kTinySeq, 1, plan, test::tiny_options(kind, "zero1"),
                          *world);
    const auto losses = train(sharded, plan, 0, kIterations);
    const double diff = max_rel_diff(losses, expected);
    check.expect(diff < 1e-4, plan.label() + " losses " + show(losses) + " vs replicated " +
                                  show(expected) + " (max rel diff " + number(diff) + ")");
  }
  if (n >= 2) {
    // Live repartition: all layers but one move to the last stage after 2
    // iterations. Each layer computes the same thing wherever it lives, and
    // its weights and Adam moments move bit for bit, so losses are identical.
    const auto plan = test::tiny_plan(1, 2, n / 2);
    hw::HwBackend steady(model, test::kTinySeq, 1, plan, test::tiny_options(kind, "steady"),
                         *world);
    const auto undisturbed = train(steady, plan, 0, kIterations);
    hw::HwBackend moved(model, test::kTinySeq, 1, plan, test::tiny_options(kind, "moved"), *world);
    auto losses = train(moved, plan, 0, 2);
    const auto after =
        train(moved, plan, 2, kIterations, {{core::RepartitionDirective{{1, 3}}, "test", 0}});
    losses.insert(losses.end(), after.begin(), after.end());
    check.expect(losses == undisturbed && moved.layers_per_stage() == std::vector<int>{1, 3},
                 "repartition [2,2] -> [1,3] after 2 iterations: " + show(losses) +
                     " == " + show(undisturbed));
  }
  if (n >= 2) {
    // Rebalance: replica 0 takes 3 of the 4 micro-batches. The same samples
    // are trained, only split differently: equal up to fp32 rounding.
    const auto plan = test::tiny_plan(1, n / 2, 2);
    hw::HwBackend even(model, test::kTinySeq, 1, plan, test::tiny_options(kind, "even"), *world);
    const auto reference = train(even, plan, 0, kIterations);
    hw::HwBackend skewed(model, test::kTinySeq, 1, plan, test::tiny_options(kind, "skew"), *world);
    const auto losses =
        train(skewed, plan, 0, kIterations, {{core::RebalanceDirective{{3, 1}}, "test", 0}});
    const double diff = max_rel_diff(losses, reference);
    check.expect(diff < 1e-4, "rebalance [2,2] -> [3,1]: max rel diff " + number(diff));
  }
  if (n >= 4) {
    // Live re-plan over MPI: tp2 pp2 -> dp4 (distributed optimizer) -> tp2
    // pp2 after 2 iterations moves bits only, so the losses are the
    // undisturbed run's; tp2 pp2 -> dp4 alone trains on as dp4 (fp32
    // rounding of the first two iterations' other sums: within 1e-4).
    const auto plan = test::tiny_plan(2, 2, n / 4);
    auto via = test::tiny_plan(1, 1, n);
    via.optimizer_sharding = core::OptimizerSharding::Distributed;
    hw::HwBackend steady(model, test::kTinySeq, 1, plan, test::tiny_options(kind, "rp-s"), *world);
    const auto undisturbed = train(steady, plan, 0, kIterations);
    hw::HwBackend there(model, test::kTinySeq, 1, plan, test::tiny_options(kind, "rp-b"), *world);
    auto losses = train(there, plan, 0, 2);
    const auto back =
        train(there, plan, 2, kIterations,
              {{core::ReplanDirective{via}, "test", 0}, {core::ReplanDirective{plan}, "test", 0}});
    losses.insert(losses.end(), back.begin(), back.end());
    check.expect(losses == undisturbed, "re-plan " + plan.label() + " -> " + via.label() +
                                            " -> back after 2 iterations: " + show(losses) +
                                            " == " + show(undisturbed));
    hw::HwBackend flat(model, test::kTinySeq, 1, via, test::tiny_options(kind, "rp-d"), *world);
    const auto as_dp = train(flat, via, 0, kIterations);
    hw::HwBackend once(model, test::kTinySeq, 1, plan, test::tiny_options(kind, "rp-o"), *world);
    auto switched = train(once, plan, 0, 2);
    const auto after = train(once, via, 2, kIterations, {{core::ReplanDirective{via}, "test", 0}});
    switched.insert(switched.end(), after.begin(), after.end());
    const double diff = max_rel_diff(switched, as_dp);
    check.expect(diff < 1e-4, "re-plan " + plan.label() + " -> " + via.label() +
                                  " after 2 iterations vs " + via.label() +
                                  " throughout: max rel diff " + number(diff));
  }
  {
    // Snapshot after 2 iterations, train 2 more, restore, train 2 again.
    const auto plan = test::tiny_plan(n >= 2 ? 2 : 1, n >= 4 ? 2 : 1, 1);
    auto options = test::tiny_options(kind, "snap");
    options.ranks_per_node = n >= 2 ? n / 2 : 0;  // two "nodes" when possible: replicas cross
    hw::HwBackend backend(model, test::kTinySeq, 1, plan, options, *world);
    train(backend, plan, 0, 2);
    backend.apply({core::SnapshotDirective{2}, "test", 0});
    const auto first = train(backend, plan, 2, kIterations);
    const auto version = backend.newest_restorable_snapshot();
    backend.apply({core::RestoreDirective{2}, "test", 0});
    const auto again = train(backend, plan, 2, kIterations);
    check.expect(version == 2 && again == first,
                 "snapshot v2, restore after 4 iterations: " + show(again) + " == " + show(first));
    backend.remove_snapshots();
  }
  if (check.rank == 0) std::printf("%d failure(s)\n", check.failures);
  return check.failures == 0 ? 0 : 1;
}
