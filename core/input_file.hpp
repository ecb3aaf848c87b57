// Reading a hand-written input file whole, with a size bound: a file over
// the bound is refused with one line (InputError) before it is read, so a
// wrong path (a log, a device, a multi-GB dump) cannot exhaust memory.
#pragma once

#include <cstdint>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <system_error>

#include "core/errors.hpp"

namespace parashift::core {

/// 64 MiB: far above any scenario, model config, profile or trace written by hand.
inline constexpr std::uintmax_t kMaxInputFileBytes = std::uintmax_t{64} << 20;

/// The file's text. `what` names it in errors ("scenario file", "config.json").
inline std::string read_input_file(const std::filesystem::path& file, const std::string& what,
                                   std::uintmax_t max_bytes = kMaxInputFileBytes) {
  std::error_code ec;
  // A directory opens as a stream on Linux and throws on the first read.
  if (std::filesystem::is_directory(file, ec)) {
    throw InputError(file.string() + ": cannot open " + what + " (it is a directory)");
  }
  std::ifstream in(file, std::ios::binary);
  if (!in) throw InputError(file.string() + ": cannot open " + what);
  const std::uintmax_t size = std::filesystem::file_size(file, ec);
  if (!ec && size > max_bytes) {
    throw InputError(file.string() + ": " + what + " of " + std::to_string(size) +
                     " bytes; expected at most " + std::to_string(max_bytes));
  }
  std::ostringstream text;
  text << in.rdbuf();
  return text.str();
}

}  // namespace parashift::core
