// Checking an output path (--json, --trace, --links, --csv) before a long
// run, so a typo in a directory fails in a second, not after the run.
#pragma once

#include <string>

namespace parashift::tools {

/// Throws core::InputError naming `option` and `path` when the file could not
/// be written: its folder is missing or not writable, or the path is a
/// folder. Creates and truncates nothing. An empty path is accepted (unset).
void check_output_path(const std::string& option, const std::string& path);

}  // namespace parashift::tools
