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
// core, one compute slot) and the balancer's patience of 3: all four cases in
// 8. Re-partition failed once (its predicted gain 31% above 11 x the layer
// time of iterations 0-6), the cost gate once (the first rejected proposal
// moved 2 layers, cost 0.64 s, not the 0.32 s of the unique optimum). An
// earlier 10, before the patience and in a noisier hour, passed 3 times;
// detection then failed 4 times (a healthy rank named one iteration before
// the onset, or the slowdown at naming off by more than 10%). The healthy
// ranks' medians move by +-5% and the cases' exact answers need +-3%.
//
// Four of the five cases. The fifth, "1,000 healthy iterations with +-3%
// jitter decide nothing", is about a backend whose noise is that jitter, and
// this machine's is not: a 2-vCPU guest whose cores run at different speeds
// for seconds at a time (thread CPU time counts the host's stolen cycles).
// Run on 16 threaded ranks it issued 33 directives in 1,000 iterations with
// the default 5-sample window and 10 with the longest window (15), before the
// harness pinned its ranks; pinned, 46 with the default window (7 min), most
// undone 6 iterations later. Those made the balancer wait for a change to stay
// the best for 3 iterations (balance.patience): pinned, 2 directives in 1,000.
// The straggler detector still names healthy ranks for a few iterations now
// and then (1.16-1.29x spells, 5 in the same 1,000), where the case expects
// an empty log; its premise does not hold here, so it is not run on this
// harness.
#include "contract_harness.hpp"
#include "controller_contract.hpp"

TEST_CASE_TEMPLATE_INVOKE(contract_detects_slow_gpu, parashift::test::HwHarness);
TEST_CASE_TEMPLATE_INVOKE(contract_repartition, parashift::test::HwHarness);
TEST_CASE_TEMPLATE_INVOKE(contract_rebalance, parashift::test::HwHarness);
TEST_CASE_TEMPLATE_INVOKE(contract_cost_gate, parashift::test::HwHarness);
