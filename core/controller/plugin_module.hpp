// Policy modules from shared libraries (core/controller/parashift_plugin.h):
// a plugin is loaded once with dlopen, checked (ABI version first, then its
// name, knobs and functions) and becomes a ModuleSpec like a built-in one, so
// its knobs are read and validated by the same code and it runs through the
// same Controller on every backend. The library stays loaded while any spec
// or module made from it lives.
#pragma once

#include <filesystem>
#include <string>

#include "core/controller/policy_registry.hpp"

namespace parashift::core {

/// Loads the plugin at `path`. Throws InputError (its message starts with
/// the path) when the file is missing, is no shared library, exports no
/// `parashift_policy_plugin`, was built for another ABI version, or declares
/// a bad name, knob or function.
ModuleSpec load_policy_plugin(const std::filesystem::path& path);

}  // namespace parashift::core
