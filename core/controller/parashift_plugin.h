/* parashift policy plugins: a policy module in a shared library, loaded at
 * run time by `policy.plugins: [path/libmodule.so]` (docs/plugins.md).
 *
 * The ABI is plain C and versioned the way NCCL's tuner and net plugins are:
 * the library exports one object, `parashift_policy_plugin`, a struct of
 * function pointers whose first field is the ABI version it was built
 * against. parashift reads that field before anything else and refuses a
 * library built for another version. A change to any struct below is a new
 * version (a new _vN type and PARASHIFT_PLUGIN_ABI_VERSION + 1).
 *
 * Each iteration the controller runs the built-in modules, then each plugin
 * in the order listed; decide() sees the controller's state estimate (robust
 * per-rank times, the current layer split and micro-batch shares, the
 * stragglers the built-in detector named) and hands back decisions through
 * `emit`. Every pointer in the state is valid only during the call. A plugin
 * returns a layer split or micro-batch shares; parashift checks them (sizes,
 * sums, the backend's capabilities) and logs and applies them like its own.
 */
#ifndef PARASHIFT_PLUGIN_H
#define PARASHIFT_PLUGIN_H

#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#define PARASHIFT_PLUGIN_ABI_VERSION 1
#define PARASHIFT_PLUGIN_SYMBOL "parashift_policy_plugin"

/* A number the scenario may set under the plugin's name (policy.<name>.<knob>). */
typedef struct parashift_knob_v1 {
  const char* name;
  double default_value;
  double min_value; /* inclusive */
  double max_value; /* inclusive; HUGE_VAL for none */
  const char* description;
} parashift_knob_v1;

/* A straggler the built-in detector named. */
typedef struct parashift_straggler_v1 {
  int kind; /* 0: GPU (id = rank), 1: node (id = node), 2: link */
  int id;
  double slowdown; /* x slower than the median */
} parashift_straggler_v1;

typedef struct parashift_state_v1 {
  int64_t iteration;               /* the iteration just observed */
  int64_t iterations_since_change; /* since a directive was last applied */
  int64_t remaining_iterations;    /* of the run, for gains "over the remaining run" */
  int tp, pp, dp, virtual_stages;
  int ready;              /* 1 once a full window of samples is in; times below are 0 before */
  int can_repartition;    /* the backend applies layer splits and micro-batch shares */
  double iteration_ns;    /* median iteration time */
  double median_layer_ns; /* median rank's per-layer, per-micro-batch compute */
  int ranks;
  const double* layer_ns;               /* [ranks] per-layer, per-micro-batch compute */
  const int* stage_of_rank;             /* [ranks] physical pipeline stage */
  const int* replica_of_rank;           /* [ranks] data-parallel replica */
  int virtual_stage_count;              /* pp * virtual_stages */
  const int* layers_per_virtual_stage;  /* [virtual_stage_count] the current split */
  const int* micro_batches_per_replica; /* [dp] the current shares */
  int straggler_count;
  const parashift_straggler_v1* stragglers; /* [straggler_count] */
} parashift_state_v1;

#define PARASHIFT_DECISION_NOTE 0        /* a finding for the log; nothing changes */
#define PARASHIFT_DECISION_REPARTITION 1 /* values: layers per virtual stage */
#define PARASHIFT_DECISION_REBALANCE 2   /* values: micro-batches per replica */

typedef struct parashift_decision_v1 {
  int kind;
  const int* values; /* copied before emit returns */
  int count;
  double gain_s;      /* predicted over the remaining run, before cost */
  double cost_s;      /* of making the change */
  const char* reason; /* copied; NULL: none */
} parashift_decision_v1;

typedef void (*parashift_emit_v1)(void* sink, const parashift_decision_v1* decision);

typedef struct parashift_policy_plugin_v1 {
  uint32_t abi_version; /* PARASHIFT_PLUGIN_ABI_VERSION; read first */
  const char* name;     /* the module's name in policy: and in the log, [a-z0-9_-]+ */
  const char* description;
  const parashift_knob_v1* knobs;
  int knob_count;
  /* One instance per run; knob_values in the order of knobs. NULL: refused. */
  void* (*create)(const double* knob_values);
  void (*destroy)(void* instance);
  void (*decide)(void* instance, const parashift_state_v1* state, parashift_emit_v1 emit,
                 void* sink);
} parashift_policy_plugin_v1;

#ifdef __cplusplus
}
#endif

#endif /* PARASHIFT_PLUGIN_H */
