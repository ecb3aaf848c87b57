// How much of a gradient a compressor leaves out: ||x - C(x)||^2 for the
// compressor applied to x alone (one rank, no error feedback). 1 - that
// share is the delta of the delta-contraction ||C(x) - x||^2 <= (1 - delta)
// ||x||^2 on which the convergence of error-feedback compression rests
// (Stich, Cordonnier and Jaggi 2018; Karimireddy et al. 2019): the smaller
// delta, the longer the residual takes to be sent. The `sync` module reads
// it (StepReport::compression_fits) to leave alone the compressors that
// would send too little of the executor's real gradients.
#pragma once

#include <span>

#include "core/compress/compression_spec.hpp"

namespace parashift::core {

/// ||x - C(x)||^2 for x a rows x cols row-major matrix:
///   top-k F: the entries outside the topk_entries(F) largest in magnitude;
///   int8:B: the block quantisation's rounding (x zero-padded to whole blocks);
///   powersgd:R: the best rank-R approximation's error, the squared singular
///     values beyond the R largest (Eckart-Young), which PowerSGD's
///     warm-started power iteration tracks from above;
///   none: 0.
double left_out_sq(const CompressionSpec& spec, std::span<const float> x, int rows, int cols);

}  // namespace parashift::core
