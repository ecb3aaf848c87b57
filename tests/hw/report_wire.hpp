// A step's report and the job's shape as bytes, for the MPI contract
// harness: the process of the job's rank 0 sends them to every process of
// the world, so each one's controller sees the same report (including the
// processes that hold no rank of the job: spares, failed GPUs).
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

#include "core/backend.hpp"

namespace parashift::test {

struct JobShape {
  std::vector<int> layers_per_stage;
  std::vector<int> micro_batches_per_replica;
  std::int64_t iterations_done = 0;
};

/// CBOR (nlohmann::json::to_cbor): doubles and integers round-trip exactly.
std::vector<std::byte> encode_report(const core::StepReport& report, const JobShape& shape);
void decode_report(const std::vector<std::byte>& bytes, core::StepReport& report, JobShape& shape);

}  // namespace parashift::test
