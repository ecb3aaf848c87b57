// Software options a published run's framework and notes imply (attention
// kernel, overlap, reduction precision, TP overlap, FSDP's gathered
// parameters under pipelining), each with its source in a comment and each
// default recorded in the run's `defaults`.
#pragma once

#include <string>

#include "core/validation/published_run.hpp"

namespace parashift::core {

/// The free-text cells the framework options are read from.
struct RowCells {
  std::string framework, notes, sharding, recompute, precision;
};

void apply_framework(const RowCells& row, PublishedRun& run);

}  // namespace parashift::core
