// How layers are split over pipeline stages and micro-batches over
// data-parallel replicas, and where each stage's / replica's share starts.
#pragma once

#include <string>
#include <vector>

namespace parashift::core {

/// layers spread as evenly as possible, earlier stages taking the remainder.
std::vector<int> even_split(int total, int parts);
/// Layers on pipeline stage `stage` of `pp`: the sum over its chunks (virtual
/// stages stage, stage + pp, ...) of `layers_per_virtual_stage`.
int layers_on_stage(const std::vector<int>& layers_per_virtual_stage, int pp, int stage);
/// Prefix sums: offsets[i] = sum of counts[0..i).
std::vector<int> offsets_of(const std::vector<int>& counts);
/// Throws InputError "<what>: expected <parts> entries >= <min> summing to <total>".
void check_split(const std::vector<int>& counts, int parts, int total, int min_each,
                 const std::string& what);

}  // namespace parashift::core
