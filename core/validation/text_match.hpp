// Case-insensitive keyword matching for the free-text cells of published
// runs (core/validation/published_run.cpp, row_keywords.cpp).
#pragma once

#include <algorithm>
#include <cctype>
#include <string>

namespace parashift::core::text {

inline std::string lower(const std::string& text) {
  std::string out(text);
  std::transform(out.begin(), out.end(), out.begin(),
                 [](unsigned char ch) { return static_cast<char>(std::tolower(ch)); });
  return out;
}

inline std::string trim(const std::string& text) {
  const auto first = text.find_first_not_of(" \t\r\n");
  if (first == std::string::npos) return {};
  const auto last = text.find_last_not_of(" \t\r\n");
  return text.substr(first, last - first + 1);
}

inline bool has(const std::string& lowered, const char* word) {
  return lowered.find(word) != std::string::npos;
}

/// The year of a framework release named in a cell: a four-digit year
/// (2019..2029) or a container version "YY.MM" ("NeMo Megatron 22.06"); 0
/// when none is found. `lowered` is already lower case.
int release_year(const std::string& lowered);

}  // namespace parashift::core::text
