// A small RFC 4180 CSV reader: quoted fields may hold commas, doubled
// quotes and line breaks; CRLF and LF both end a record.
#pragma once

#include <string>
#include <vector>

namespace parashift::core {

struct CsvRecord {
  int line = 0;  // 1-based line where the record starts
  std::vector<std::string> fields;
};

struct CsvTable {
  std::vector<std::string> header;
  std::vector<CsvRecord> records;  // without the header; blank lines skipped
};

/// Parses CSV text; the first record is the header. `source` names the
/// input in errors. Throws InputError on an unterminated quoted field.
CsvTable parse_csv(const std::string& text, const std::string& source);

/// Reads and parses a file; throws InputError "<path>: cannot open ..." when
/// it cannot be read.
CsvTable read_csv_file(const std::string& path);

}  // namespace parashift::core
