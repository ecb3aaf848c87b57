#include <doctest/doctest.h>

#include <nlohmann/json.hpp>

#include "core/directive.hpp"

using namespace parashift::core;

TEST_CASE("directives print and serialise with their reason and gain") {
  Directive d{RepartitionDirective{{10, 10, 12, 10}}, "stage 2 fast", 12.5};
  CHECK(to_string(d) == "repartition [10,10,12,10] (stage 2 fast; gain 12.5 s)");
  nlohmann::json j = d;
  CHECK(j["kind"] == "repartition");
  CHECK(j["layers_per_stage"] == nlohmann::json::array({10, 10, 12, 10}));
  CHECK(j["predicted_gain_s"] == 12.5);

  Directive remap{RemapDirective{17, 1030}, "gpu 17 failed", 0};
  CHECK(to_string(remap) == "remap rank 17 -> gpu 1030 (gpu 17 failed; gain 0 s)");
  CHECK(nlohmann::json(remap)["spare_gpu"] == 1030);
}
