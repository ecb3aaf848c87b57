// RFC 4180 CSV text: a field quoted when it must be, and one line split
// back into its fields (sweep's --csv and --resume).
#pragma once

#include <string>
#include <vector>

namespace parashift::tools {

/// `text` as a CSV field: quoted when it holds a comma, quote or newline.
std::string csv_field(const std::string& text);
/// One CSV line's fields, quotes removed and doubled quotes undone.
std::vector<std::string> csv_fields(const std::string& line);

}  // namespace parashift::tools
