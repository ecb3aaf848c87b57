// How much of a communication overlapped with compute stays exposed: the
// one formula the cost model (estimate.cpp) and the simulator
// (sim/iteration.cpp) share for overlaps they do not schedule op by op.
#pragma once

#include <algorithm>
#include <cmath>

#include "core/units.hpp"

namespace parashift::core {

/// Compute runs slower while a collective runs beside it: NCCL's kernels hold
/// SMs and share HBM bandwidth with the GEMMs. Lee et al. 2025 (arXiv
/// 2507.03114, "Characterizing Compute-Communication Overlap in
/// GPU-Accelerated Distributed Deep Learning"), training GPT and Llama layers
/// on 4 A100s, H100s, MI250s and MI210s: 18.9% on average, at most 40%. One
/// published figure, not fitted; charged where both models price an overlap
/// with the same formula (FSDP's per-layer gathers and reduce-scatters).
inline constexpr double kOverlapComputeSlowdown = 0.189;

/// What of `comm`, started with `compute` beside it, runs on after the
/// compute ends.
inline TimeNs beyond_ns(TimeNs comm, TimeNs compute) {
  return std::max<TimeNs>(0, comm - compute);
}

/// What a layer computing for `compute` waits for when `comm` runs beside
/// it: the communication beyond the compute, plus the compute's slowdown over
/// the time the two overlap.
inline TimeNs overlapped_exposed_ns(TimeNs comm, TimeNs compute) {
  const TimeNs both = std::max<TimeNs>(0, std::min(comm, compute));
  return beyond_ns(comm, compute) +
         std::llround(kOverlapComputeSlowdown * static_cast<double>(both));
}

/// What of `comm` is not hidden behind `window`; the last `tail` (a bucket
/// or layer that only starts once all compute is done) is always exposed.
inline TimeNs overlap_exposed_ns(TimeNs comm, TimeNs window, TimeNs tail) {
  return std::max(std::min(comm, tail), comm - window);
}

/// The distributed optimizer's parameter all-gather under the next
/// iteration's first forward (Megatron --overlap-param-gather): each layer's
/// gather must land before that layer's first use, so it hides behind one
/// micro-batch's forward over the stage, `first_forward_ns`, and the first
/// layer's share is always exposed.
inline TimeNs param_gather_exposed_ns(TimeNs gather_ns, TimeNs first_forward_ns, TimeNs layers) {
  return overlap_exposed_ns(gather_ns, first_forward_ns, gather_ns / std::max<TimeNs>(1, layers));
}

/// The context-parallel ring's K/V exchange of one layer's pass under its
/// attention (ring attention, Megatron's context parallelism): each step's
/// send and receive run while the current block's attention is computed,
/// so only what the exchange takes beyond the attention is exposed.
inline TimeNs cp_exposed_ns(TimeNs exchange_ns, TimeNs attention_ns) {
  return beyond_ns(exchange_ns, attention_ns);
}

/// A steady-state pipeline send of an interleaved schedule under the next
/// chunk's compute (Megatron posts it, then runs that chunk): what it takes
/// beyond the chunk. The cost model's form; the simulator runs the sends.
inline TimeNs pipeline_send_exposed_ns(TimeNs send_ns, TimeNs chunk_ns) {
  return beyond_ns(send_ns, chunk_ns);
}

}  // namespace parashift::core
