// Putting lost ranks on spare GPUs, nearest first so communication groups
// keep their locality: a spare on the same host as the lost GPU, else one in
// the same rack, else anywhere. Ranks lost together from one host (a
// tensor-parallel group on NVLink) are kept together: among spares equally
// near, the host already chosen for a rank of the same lost host wins, then
// the host with the most free spares (the group fits), then the lowest GPU id.
#pragma once

#include <functional>
#include <vector>

namespace parashift::core {

struct GpuPlace {
  int host = 0;
  int rack = 0;
};

enum class Nearness { SameHost = 0, SameRack = 1, Anywhere = 2 };
const char* to_string(Nearness nearness);

struct LostRank {
  int rank = 0;
  int gpu = 0;  // the GPU it ran on
};

struct Placement {
  int rank = 0;
  int from_gpu = 0;
  int to_gpu = 0;
  Nearness nearness = Nearness::Anywhere;
};

struct RemapResult {
  std::vector<Placement> placed;
  std::vector<LostRank> unplaced;  // no spare left
};

/// Assigns `lost` ranks to GPUs from `spares` (the ones used are removed
/// from it). `place_of(gpu)` gives host and rack of any GPU, spare or not.
RemapResult remap_to_spares(const std::vector<LostRank>& lost, std::vector<int>& spares,
                            const std::function<GpuPlace(int gpu)>& place_of);

}  // namespace parashift::core
