#include <doctest/doctest.h>

#include <string>

#include "cli_harness.hpp"

namespace {

const std::string kData = std::string(PARASHIFT_SOURCE_DIR) + "/tests/tools/data/";
const std::string kDev = std::string(PARASHIFT_SOURCE_DIR) + "/tests/data/dev.csv";

}  // namespace

TEST_CASE("validate --cv group: held-out column and the cross-validated MAPE line") {
  const auto r = parashift::test::run_parashift({"validate", kDev, "--cv", "group"});
  CHECK(r.status == 0);
  CHECK(r.out.find("held_out_%") != std::string::npos);
  CHECK(r.out.find("leave-one-group-out MAPE") != std::string::npos);
  CHECK(r.out.find("over 63 rows in 6 source groups") != std::string::npos);
}

TEST_CASE("validate: a plan group of one row is named with exit 2, and '1 row' is singular") {
  const auto r = parashift::test::run_parashift({"validate", kData + "lonely_group.csv"});
  CHECK(r.status == 2);
  CHECK(r.err.find("lonely_group.csv:4 (C): group 'alone' has one row; a ranking group needs at "
                   "least two plans") != std::string::npos);
  // G2 has one row: "1 row", not "1 rows".
  CHECK(r.out.find(" 1 row ") != std::string::npos);
  CHECK(r.out.find("1 rows") == std::string::npos);
  // The pair is still ranked.
  CHECK(r.out.find("pair") != std::string::npos);
}

TEST_CASE("validate --cv takes 'group' only") {
  const auto r = parashift::test::run_parashift({"validate", kDev, "--cv", "row"});
  CHECK(r.status == 2);
  CHECK(r.err.find("--cv: expected 'group'") != std::string::npos);
}
