#include <doctest/doctest.h>

#include "core/input_error.hpp"
#include "core/validation/csv_reader.hpp"

using namespace parashift::core;

TEST_CASE("csv: quoted commas, doubled quotes, line breaks inside quotes, CRLF") {
  const std::string text =
      "a,b,c\r\n"
      "1,\"x, y\",\"say \"\"hi\"\"\"\r\n"
      "\n"
      "2,\"two\nlines\",\r\n";
  const CsvTable t = parse_csv(text, "t.csv");
  REQUIRE(t.header.size() == 3);
  REQUIRE(t.records.size() == 2);
  CHECK(t.records[0].line == 2);
  CHECK(t.records[0].fields[1] == "x, y");
  CHECK(t.records[0].fields[2] == "say \"hi\"");
  // The blank line 3 is skipped; the record starts on line 4.
  CHECK(t.records[1].line == 4);
  CHECK(t.records[1].fields[1] == "two\nlines");
  CHECK(t.records[1].fields[2].empty());
}

TEST_CASE("csv: unterminated quote and missing file are input errors") {
  CHECK_THROWS_WITH_AS(parse_csv("a\n\"open\n", "bad.csv"),
                       doctest::Contains("bad.csv:2: quoted field never closed"), InputError);
  CHECK_THROWS_WITH_AS(read_csv_file("/nonexistent/dev.csv"),
                       doctest::Contains("/nonexistent/dev.csv: cannot open"), InputError);
}
