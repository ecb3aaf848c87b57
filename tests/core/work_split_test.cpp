#include <doctest/doctest.h>

#include "core/input_error.hpp"
#include "core/work_split.hpp"

using namespace parashift;

TEST_CASE("layer splits: even with the remainder on early stages, checked directives") {
  CHECK(core::even_split(10, 4) == std::vector<int>{3, 3, 2, 2});
  // 10 layers over pp=2 x 2 chunks: {3,3,2,2}; stage 0 holds virtual stages 0 and 2.
  CHECK(core::layers_on_stage({3, 3, 2, 2}, 2, 0) == 5);
  CHECK(core::layers_on_stage({3, 3, 2, 2}, 2, 1) == 5);
  CHECK(core::layers_on_stage({3, 3, 2, 2}, 4, 3) == 2);
  CHECK(core::offsets_of({3, 3, 2, 2}) == std::vector<int>{0, 3, 6, 8, 10});
  CHECK_NOTHROW(core::check_split({1, 3}, 2, 4, 1, "x"));
  CHECK_THROWS_WITH_AS(core::check_split({0, 4}, 2, 4, 1, "repartition"),
                       "repartition: expected 2 entries >= 1 summing to 4, found [0,4]",
                       core::InputError);
  CHECK_THROWS_AS(core::check_split({2, 3}, 2, 4, 1, "x"), core::InputError);
}
