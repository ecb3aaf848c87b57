#include <doctest/doctest.h>

#include <array>

#include "core/compress/compression.hpp"
#include "core/compress/compression_fit.hpp"
#include "core/input_error.hpp"

using namespace parashift::core;

TEST_CASE("compression specs read and print the same text") {
  for (const char* text : {"none", "powersgd:4", "topk:0.01", "int8:256", "int8:64"})
    CHECK(to_string(parse_compression(text)) == text);
  CHECK(parse_compression("int8").block == kDefaultInt8Block);
  CHECK(parse_compression("powersgd:2").rank == 2);
  CHECK(parse_compression("topk:0.25").density == doctest::Approx(0.25));
  CHECK_FALSE(parse_compression("none").enabled());
}

TEST_CASE("a bad compression spec names the form expected and the text found") {
  for (const char* text : {"", "zip", "powersgd", "powersgd:0", "powersgd:-1", "powersgd:2x",
                           "topk:0", "topk:1", "topk:abc", "topk:", "int8:6", "int8:0", "none:1"}) {
    CAPTURE(text);
    try {
      parse_compression(text);
      FAIL("accepted");
    } catch (const InputError& e) {
      const std::string what = e.what();
      CHECK(what.find("expected none, powersgd:R") != std::string::npos);
      CHECK(what.find(std::string("found '") + text + "'") != std::string::npos);
    }
  }
}

TEST_CASE("sync_calls counts each compressor's bytes on the wire") {
  // Two matrices, 1024 x 256 and 256 x 1024: 524,288 elements, rows + cols
  // = 2,560 in all.
  const std::array<MatrixShape, 2> m{{{1024, 256}, {256, 1024}}};
  SUBCASE("none: one all-reduce of the fp32 gradients, 4 B each") {
    const auto calls = sync_calls(parse_compression("none"), m, 4.0, 8);
    REQUIRE(calls.size() == 1);
    CHECK(calls[0].kind == CollectiveKind::AllReduce);
    CHECK(calls[0].bytes == 524288.0 * 4);
  }
  SUBCASE("powersgd:4: P is (1024 + 256) x 4 floats, Q the same") {
    const auto calls = sync_calls(parse_compression("powersgd:4"), m, 4.0, 8);
    REQUIRE(calls.size() == 2);
    CHECK(calls[0].bytes == 1280.0 * 4 * 4);
    CHECK(calls[1].bytes == 1280.0 * 4 * 4);
  }
  SUBCASE("topk:0.01: round(0.01 x 262,144) = 2,621 pairs a matrix, 8 B each, from 8 ranks") {
    const auto calls = sync_calls(parse_compression("topk:0.01"), m, 4.0, 8);
    REQUIRE(calls.size() == 1);
    CHECK(calls[0].kind == CollectiveKind::AllGather);
    CHECK(calls[0].bytes == 2.0 * 2621 * 8 * 8);
  }
  SUBCASE("int8:256: 1 B an element and 4 B per 256-element block, twice") {
    const auto calls = sync_calls(parse_compression("int8:256"), m, 4.0, 8);
    REQUIRE(calls.size() == 2);
    CHECK(calls[0].kind == CollectiveKind::AllToAll);
    CHECK(calls[1].kind == CollectiveKind::AllGather);
    CHECK(calls[0].bytes == 524288.0 + 4.0 * 2048);
  }
}

TEST_CASE("what each compressor leaves out of a matrix") {
  // x = [[3, 0], [0, 4]]: energy 25.
  const std::vector<float> x{3, 0, 0, 4};
  // top-k at 0.25 keeps round(0.25 x 4) = 1 entry, the 4: 9 left out.
  CHECK(left_out_sq(parse_compression("topk:0.25"), x, 2, 2) == doctest::Approx(9));
  // Rank 1: singular values 4 and 3, the best rank-1 approximation leaves 3^2.
  CHECK(left_out_sq(parse_compression("powersgd:1"), x, 2, 2) == doctest::Approx(9));
  CHECK(left_out_sq(parse_compression("powersgd:2"), x, 2, 2) == doctest::Approx(0).epsilon(1e-9));
  CHECK(left_out_sq(parse_compression("none"), x, 2, 2) == 0);
  // int8 in one block of 4: scale 4/127; 4 and 0 are exact, 3 rounds to
  // code 95 (3 x 127 / 4 = 95.25), 95 x 4 / 127 = 2.99213: (0.00787)^2 left.
  const double d = 3.0 - 95.0 * 4.0 / 127.0;
  CHECK(left_out_sq(parse_compression("int8:4"), x, 2, 2) == doctest::Approx(d * d).epsilon(1e-3));
  // A rank-1 matrix (outer product) is all kept by rank 1.
  std::vector<float> outer;
  for (int r = 0; r < 3; ++r)
    for (int c = 0; c < 5; ++c) outer.push_back(static_cast<float>((r + 1) * (c - 2)));
  CHECK(left_out_sq(parse_compression("powersgd:1"), outer, 3, 5) ==
        doctest::Approx(0).epsilon(1e-6).scale(1));
}
