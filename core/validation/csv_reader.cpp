#include "core/validation/csv_reader.hpp"

#include <cerrno>
#include <cstring>
#include <fstream>
#include <sstream>

#include "core/input_error.hpp"

namespace parashift::core {

namespace {

bool blank(const CsvRecord& r) {
  return r.fields.size() == 1 && r.fields[0].empty();
}

}  // namespace

CsvTable parse_csv(const std::string& text, const std::string& source) {
  std::vector<CsvRecord> records;
  CsvRecord current;
  std::string field;
  bool quoted = false;
  int line = 1;
  int quote_line = 0;
  current.line = 1;
  auto end_record = [&](int next_line) {
    current.fields.push_back(std::move(field));
    field.clear();
    if (!blank(current)) records.push_back(std::move(current));
    current = CsvRecord{};
    current.line = next_line;
  };
  for (std::size_t i = 0; i < text.size(); ++i) {
    const char ch = text[i];
    if (quoted) {
      if (ch == '"') {
        if (i + 1 < text.size() && text[i + 1] == '"') {
          field.push_back('"');
          ++i;
        } else {
          quoted = false;
        }
      } else {
        if (ch == '\n') ++line;
        field.push_back(ch);
      }
      continue;
    }
    switch (ch) {
      case '"':
        quoted = true;
        quote_line = line;
        break;
      case ',':
        current.fields.push_back(std::move(field));
        field.clear();
        break;
      case '\r':
        break;  // CRLF: the '\n' ends the record
      case '\n':
        ++line;
        end_record(line);
        break;
      default:
        field.push_back(ch);
    }
  }
  if (quoted) {
    throw InputError(source + ":" + std::to_string(quote_line) +
                     ": quoted field never closed (expected a closing '\"')");
  }
  if (!field.empty() || !current.fields.empty()) end_record(line);

  CsvTable table;
  if (records.empty()) return table;
  table.header = std::move(records.front().fields);
  table.records.assign(std::make_move_iterator(records.begin() + 1),
                       std::make_move_iterator(records.end()));
  return table;
}

CsvTable read_csv_file(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) {
    throw InputError(path + ": cannot open (" + std::strerror(errno) + ")");
  }
  std::ostringstream text;
  text << in.rdbuf();
  return parse_csv(text.str(), path);
}

}  // namespace parashift::core
