// The controller contract (tests/core/controller/controller_contract.hpp) on
// the hw executor: the case's plan runs as real HwBackend ranks, threads of
// this process (contract_harness.hpp), with real compute measured in thread
// CPU time and slowdowns injected by stretching a rank's compute. The harness
// is kMeasured: where a case's exact numbers come from the fake's +-3% jitter
// it says what they widen to on a measured machine. About 28 s on the 2-core
// dev box; labelled `timing` (ctest -L timing), as its outcome depends on the
// machine's noise.
//
// Pass rate on the dev VM, 10 runs with the final harness (pinned to one
// core, one compute slot): all four cases in 3 runs. By case: rebalance 10 of
// 10, cost gate 9 (once the first rejected proposal moved 2 layers, cost 0.64 s,
// not the 0.32 s of the unique optimum), re-partition 7 (3 times a second
// directive followed the right first one), detection 6 (once a healthy
// rank's 5-sample median stayed at 1.17x for 3 iterations and it was named
// one iteration before the onset; 3 times the slowdown at naming was off by
// more than 10%: 1.21 for 1.5x, 1.68 and 2.36 for 2x). The healthy ranks'
// medians move by +-5% and the cases' exact answers need +-3%.
//
// Four of the five cases. The fifth, "1,000 healthy iterations with +-3%
// jitter decide nothing", is about a backend whose noise is that jitter, and
// this machine's is not: a 2-vCPU guest whose cores run at different speeds
// for seconds at a time (thread CPU time counts the host's stolen cycles).
// Run on 16 threaded ranks it issued 33 directives in 1,000 iterations with
// the default 5-sample window and 10 with the longest window (15), before the
// harness pinned its ranks; pinned, 46 with the default window (7 min). Each
// was a rebalance or re-partition worth 5-17% of the iteration by the medians
// of the moment, and most were undone 6 iterations later (the window + 1, the
// earliest the balancer looks again). The balancer acts on any slowness that
// outlasts the window, and has no hysteresis against undoing its last change;
// the case's premise does not hold here, so it is not run on this harness.
#include "contract_harness.hpp"
#include "controller_contract.hpp"

TEST_CASE_TEMPLATE_INVOKE(contract_detects_slow_gpu, parashift::test::HwHarness);
TEST_CASE_TEMPLATE_INVOKE(contract_repartition, parashift::test::HwHarness);
TEST_CASE_TEMPLATE_INVOKE(contract_rebalance, parashift::test::HwHarness);
TEST_CASE_TEMPLATE_INVOKE(contract_cost_gate, parashift::test::HwHarness);
