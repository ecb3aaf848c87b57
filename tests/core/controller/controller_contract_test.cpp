// The controller contract on the fake backend; the simulator's and the
// hardware executor's suites invoke the same cases with their harnesses.
#include "controller_contract.hpp"

PARASHIFT_CONTROLLER_CONTRACT(parashift::test::FakeHarness);
