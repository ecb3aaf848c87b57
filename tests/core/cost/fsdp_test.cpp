#include <doctest/doctest.h>

#include "core/cost/fsdp.hpp"

using namespace parashift;

TEST_CASE("FSDP: per-layer gathers hide under compute beyond each pass's first") {
  // One layer's gather 10, reduce-scatter 20; the embedding's 5 and 7.
  const core::FsdpComm c{10, 20, 5, 7};
  // 4 layers of 6 forward: the first gather (10) and the embedding's (5)
  // wait; each of the other 3 gathers exceeds its layer by 10 - 6 = 4.
  CHECK(core::fsdp_forward_exposed_ns(c, 4, 6) == 10 + 5 + 3 * 4);
  // Backward, 25 per layer: the last reduce-scatter (20) and the
  // embedding's (7), and 3 x (10 + 20 - 25) = 15.
  CHECK(core::fsdp_backward_exposed_ns(c, 4, 25) == 20 + 7 + 15);
  // Compute longer than the communication hides all but the ends.
  CHECK(core::fsdp_forward_exposed_ns(c, 4, 100) == 15);
  CHECK(core::fsdp_backward_exposed_ns(c, 4, 100) == 27);
  // Traffic: 4 gathers + the embedding's forward; 4 x (10 + 20) + 5 + 7 backward.
  CHECK(core::fsdp_forward_comm_ns(c, 4) == 45);
  CHECK(core::fsdp_backward_comm_ns(c, 4) == 132);
  CHECK(core::fsdp_comm_ns(c, 4) == 177);
}

TEST_CASE("FSDP: an interleaved stage pays each chunk's first gather, the sum is the chunks'") {
  const core::FsdpComm c{10, 20, 5, 7};
  const core::FsdpComm layers_only{10, 20, 0, 0};
  // 4 layers in 2 passes of 2: 2 first gathers, 2 hidden-layer excesses of 4.
  CHECK(core::fsdp_forward_exposed_ns(c, 4, 6, 2) == 2 * 10 + 5 + 2 * 4);
  // The same as a chunk with the embedding plus a chunk without it, 2 layers each.
  CHECK(core::fsdp_forward_exposed_ns(c, 4, 6, 2) ==
        core::fsdp_forward_exposed_ns(c, 2, 6) + core::fsdp_forward_exposed_ns(layers_only, 2, 6));
  CHECK(core::fsdp_backward_exposed_ns(c, 4, 25, 2) ==
        core::fsdp_backward_exposed_ns(c, 2, 25) +
            core::fsdp_backward_exposed_ns(layers_only, 2, 25));
  // One layer per pass: nothing hides (every gather is a pass's first).
  CHECK(core::fsdp_forward_exposed_ns(c, 4, 1000, 4) == 4 * 10 + 5);
}
