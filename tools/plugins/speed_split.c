/* An example policy plugin (docs/plugins.md), in C to show the ABI needs no
 * C++: split the pipeline's layers in proportion to each stage's speed.
 *
 * A stage runs as fast as its slowest GPU, so stage s takes L_s * t_s per
 * micro-batch, t_s being the largest per-layer time of its ranks; with
 * layers in proportion to 1/t_s (at least one each, largest remainders) the
 * slowest stage is as short as a whole-layer split allows. Over a 1F1B
 * iteration the slowest stage sets m + pp - 1 of the steps, so the gain over
 * the remaining run is (old - new slowest stage) * (m + pp - 1) * iterations
 * left. It acts when that gain, net of the `move_cost_s` knob, is at least
 * `min_gain_s` and the slowest stage gets `min_improvement` shorter, once the
 * controller's estimate is ready and `patience` iterations after any change.
 * Interleaved schedules (virtual_stages > 1) are left alone.
 *
 * Build: cc -shared -fPIC -I<parashift source> speed_split.c -o libspeed_split.so
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>

#include "core/controller/parashift_plugin.h"

#define MAX_STAGES 512

typedef struct {
  double min_gain_s;
  double min_improvement;
  double move_cost_s;
  double patience;
} speed_split;

static void* create(const double* knobs) {
  speed_split* self = calloc(1, sizeof *self);
  if (self == NULL) return NULL;
  self->min_gain_s = knobs[0];
  self->min_improvement = knobs[1];
  self->move_cost_s = knobs[2];
  self->patience = knobs[3];
  return self;
}

static void destroy(void* instance) {
  free(instance);
}

/* The slowest stage's time per micro-batch under `layers`. */
static double slowest(const int* layers, const double* t, int pp, int* which) {
  double worst = 0;
  for (int s = 0; s < pp; ++s) {
    if (layers[s] * t[s] > worst) {
      worst = layers[s] * t[s];
      *which = s;
    }
  }
  return worst;
}

static void decide(void* instance, const parashift_state_v1* st, parashift_emit_v1 emit,
                   void* sink) {
  const speed_split* self = instance;
  const int pp = st->pp;
  if (!st->ready || !st->can_repartition || st->virtual_stages != 1 || pp < 2 || pp > MAX_STAGES ||
      st->iterations_since_change < (int64_t)self->patience) {
    return;
  }
  double t[MAX_STAGES] = {0};
  for (int r = 0; r < st->ranks; ++r) {
    const int s = st->stage_of_rank[r];
    if (st->layer_ns[r] > t[s]) t[s] = st->layer_ns[r];
  }
  int total = 0;
  double speed_sum = 0;
  for (int s = 0; s < pp; ++s) {
    if (t[s] <= 0) return;
    total += st->layers_per_virtual_stage[s];
    speed_sum += 1.0 / t[s];
  }
  /* Layers in proportion to speed: one each first, then the rest by share,
   * largest remainders last. */
  int layers[MAX_STAGES];
  double remainder[MAX_STAGES];
  int given = 0;
  for (int s = 0; s < pp; ++s) {
    const double share = 1 + (total - pp) * (1.0 / t[s]) / speed_sum;
    layers[s] = (int)floor(share);
    remainder[s] = share - layers[s];
    given += layers[s];
  }
  for (; given < total; ++given) {
    int best = 0;
    for (int s = 1; s < pp; ++s) {
      if (remainder[s] > remainder[best]) best = s;
    }
    ++layers[best];
    remainder[best] = -1;
  }
  int old_stage = 0, new_stage = 0;
  const double old_ns = slowest(st->layers_per_virtual_stage, t, pp, &old_stage);
  const double new_ns = slowest(layers, t, pp, &new_stage);
  if (new_ns >= old_ns * (1 - self->min_improvement)) return;
  int m = 0;
  for (int d = 0; d < st->dp; ++d) {
    if (st->micro_batches_per_replica[d] > m) m = st->micro_batches_per_replica[d];
  }
  const double gain_s = (old_ns - new_ns) * 1e-9 * (m + pp - 1) * (double)st->remaining_iterations;
  if (gain_s - self->move_cost_s < self->min_gain_s) return;
  char reason[160];
  snprintf(reason, sizeof reason, "stage %d %.2fx the median layer time: layers by stage speed",
           old_stage, t[old_stage] / st->median_layer_ns);
  const parashift_decision_v1 d = {
      PARASHIFT_DECISION_REPARTITION, layers, pp, gain_s, self->move_cost_s, reason};
  emit(sink, &d);
}

static const parashift_knob_v1 knobs[] = {
    {"min_gain_s", 10, 0, HUGE_VAL, "least net gain over the remaining run to act, s"},
    {"min_improvement", 0.05, 0, 1, "least share of the slowest stage's time saved"},
    {"move_cost_s", 1, 0, HUGE_VAL, "charged for each re-partition, s"},
    {"patience", 3, 1, 1000, "iterations after any change before acting again"},
};

const parashift_policy_plugin_v1 parashift_policy_plugin = {
    PARASHIFT_PLUGIN_ABI_VERSION,
    "speed_split",
    "layers per pipeline stage in proportion to the stage's speed",
    knobs,
    sizeof knobs / sizeof knobs[0],
    create,
    destroy,
    decide,
};
