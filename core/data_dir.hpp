// Where the shipped scenarios and model presets are, for `model: <preset>`.
// An installed binary (PREFIX/bin/parashift) reads PREFIX/share/parashift/
// scenarios; a binary in the build tree reads the source tree it was
// configured from. Nothing is chosen by the current directory.
#pragma once

#include <filesystem>

namespace parashift::core {

/// PREFIX/share/parashift/scenarios when the running executable is
/// PREFIX/bin/<name> and that folder holds models/; otherwise the source
/// tree's scenarios/ (the build-time PARASHIFT_DATA_DIR).
std::filesystem::path shipped_data_dir();

/// The same rule for a given executable path (tested without installing).
std::filesystem::path shipped_data_dir_for(const std::filesystem::path& executable);

/// Where a policy plugin named without a '/' is looked for: PREFIX/lib/
/// parashift/plugins when the running executable is PREFIX/bin/<name> and
/// that folder exists; otherwise the build tree's plugin folder (the
/// build-time PARASHIFT_PLUGIN_DIR).
std::filesystem::path shipped_plugin_dir();
std::filesystem::path shipped_plugin_dir_for(const std::filesystem::path& executable);

}  // namespace parashift::core
