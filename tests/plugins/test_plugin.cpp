// Plugins for the loader's tests (tests/core/controller/plugin_test.cpp),
// one source built four ways, in C++ to show the header serves both
// languages:
//   VARIANT_GOOD       "always_rebalance": from iteration `at` on, asks
//                      once for replica 0 to give one micro-batch to replica 1;
//   VARIANT_ABI_99     the same struct with ABI version 99;
//   VARIANT_NO_SYMBOL  exports no parashift_policy_plugin;
//   VARIANT_BAD_SPLIT  asks for a split with one stage too few.
#include <cmath>
#include <cstdlib>
#include <vector>

#include "core/controller/parashift_plugin.h"

#ifndef VARIANT_NO_SYMBOL
namespace {

struct State {
  double at = 0;
  bool done = false;
};

void* create(const double* knobs) {
  return new State{knobs[0], false};
}
void destroy(void* instance) {
  delete static_cast<State*>(instance);
}

void decide(void* instance, const parashift_state_v1* st, parashift_emit_v1 emit, void* sink) {
  auto& self = *static_cast<State*>(instance);
  if (self.done || static_cast<double>(st->iteration) < self.at) return;
  self.done = true;
  const parashift_decision_v1 note{PARASHIFT_DECISION_NOTE, nullptr, 0, 0, 0, "looked at it"};
  emit(sink, &note);
#ifdef VARIANT_BAD_SPLIT
  std::vector<int> layers(st->layers_per_virtual_stage,
                          st->layers_per_virtual_stage + st->virtual_stage_count - 1);
  const parashift_decision_v1 d{PARASHIFT_DECISION_REPARTITION,
                                layers.data(),
                                static_cast<int>(layers.size()),
                                5,
                                1,
                                "one stage short"};
#else
  std::vector<int> micro(st->micro_batches_per_replica, st->micro_batches_per_replica + st->dp);
  micro[0] -= 1;
  micro[1] += 1;
  const parashift_decision_v1 d{PARASHIFT_DECISION_REBALANCE, micro.data(), st->dp, 5, 1,
                                "replica 1 takes one"};
#endif
  emit(sink, &d);
}

const parashift_knob_v1 knobs[] = {{"at", 4, 0, HUGE_VAL, "first iteration to act"}};

}  // namespace

#ifdef VARIANT_ABI_99
#define TEST_ABI 99
#else
#define TEST_ABI PARASHIFT_PLUGIN_ABI_VERSION
#endif

extern "C" {
extern const parashift_policy_plugin_v1 parashift_policy_plugin;
const parashift_policy_plugin_v1 parashift_policy_plugin = {
    TEST_ABI, "always_rebalance", "a test plugin", knobs, 1, create, destroy, decide};
}
#else
extern "C" int parashift_not_a_plugin() {
  return 0;
}
#endif
