// `simulate --svg`: the pipeline timeline of the replica that finished last,
// from the simulator's trace of the first iteration (sim/trace.hpp).
#pragma once

#include "core/scenario/scenario.hpp"
#include "sim/iteration.hpp"
#include "sim/trace.hpp"
#include "tools/cli/svg_timeline.hpp"

namespace parashift::tools {

/// One row per pipeline stage (that replica's worker at its cp rank) with
/// its forward, backward and weight-gradient passes, then one row per
/// stage's data-parallel group with its gradient syncs. `result` names the
/// critical replica and the worker layout.
Timeline pipeline_timeline(const core::Scenario& scenario, const sim::TraceRecorder& trace,
                           const sim::IterationResult& result);

}  // namespace parashift::tools
