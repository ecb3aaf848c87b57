// The host allocator's steady state for the executor. An iteration frees and
// reallocates the same buffers (stashed activations, GEMM outputs, gradient
// buckets: 64 KB to a few MB each). glibc serves such sizes with mmap or trims
// them off the heap top when freed, so every iteration page-faults its
// buffers in again; on the dev VM that made a layer's forward 20-30% slower
// than its calibrated kernels. Framework caching allocators (PyTorch's, the
// CUDA caching allocator) keep freed blocks for reuse instead; this does the
// same with glibc's knobs: no mmap below 32 MiB (its largest threshold) and no trimming, so freed
// buffers stay in the process and are reused. Memory the process peaks at is
// kept until exit, as with those allocators.
#pragma once

namespace parashift::hw {

/// Process-wide and idempotent; the executor and its calibration call it
/// before their first buffer.
void keep_freed_host_memory();

}  // namespace parashift::hw
