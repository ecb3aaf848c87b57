// The controller contract (tests/core/controller/controller_contract.hpp) on
// the CPU executor's real HwBackend ranks (threads of this process), timed
// on the counted clock (contract_harness.hpp, CountedHwHarness): slowdowns
// are counted work, so every check is the exact one the fake is held to
// and the outcome does not depend on the machine. In CI (no timing label).
// The healthy case (1,000 iterations, about a minute of real compute) is
// left out here: on the counted clock there is no noise for it to resist;
// the measured harness runs it (hw_contract_test.cpp, label timing).
#include "contract_harness.hpp"
#include "controller_contract.hpp"

TEST_CASE_TEMPLATE_INVOKE(contract_detects_slow_gpu, parashift::test::CountedHwHarness);
TEST_CASE_TEMPLATE_INVOKE(contract_repartition, parashift::test::CountedHwHarness);
TEST_CASE_TEMPLATE_INVOKE(contract_rebalance, parashift::test::CountedHwHarness);
TEST_CASE_TEMPLATE_INVOKE(contract_cost_gate, parashift::test::CountedHwHarness);
TEST_CASE_TEMPLATE_INVOKE(contract_replan, parashift::test::CountedHwHarness);
