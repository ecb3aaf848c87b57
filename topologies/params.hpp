// Typed, checked reading of a generator's string parameters.
#pragma once

#include <map>
#include <string>
#include <vector>

namespace parashift::topo {

/// One parameter a generator accepts. An empty default_value means required.
struct ParamDoc {
  std::string name;
  std::string default_value;
  std::string meaning;
};

/// Reads parameters given as strings (as written in YAML). Every failure is a
/// TopologyError that names the generator, the parameter, the value given and
/// what was expected.
class ParamReader {
 public:
  /// Throws when `given` holds a name that `docs` does not list.
  ParamReader(std::string generator, std::vector<ParamDoc> docs,
              std::map<std::string, std::string> given);

  const std::string& generator() const { return generator_; }
  /// True when the user gave the parameter (not its default).
  bool given(const std::string& name) const;
  /// The value given, else the documented default; throws when required and missing.
  std::string text(const std::string& name) const;
  /// An integer in [min_value, max_value].
  int integer(const std::string& name, int min_value, int max_value) const;
  /// A finite number >= min_value (> min_value when exclusive).
  double number(const std::string& name, double min_value, bool exclusive = false) const;
  /// One of `options`.
  std::string choice(const std::string& name, const std::vector<std::string>& options) const;
  /// Sizes written "8x8" or "4x4x4": between min_dims and max_dims sizes, each >= 1.
  std::vector<int> sizes(const std::string& name, int min_dims, int max_dims) const;

  /// Throws TopologyError: "generator 'g': parameter 'p' = 'v': expected <expected>".
  [[noreturn]] void fail(const std::string& name, const std::string& expected) const;

 private:
  const ParamDoc& doc(const std::string& name) const;

  std::string generator_;
  std::vector<ParamDoc> docs_;
  std::map<std::string, std::string> given_;
};

}  // namespace parashift::topo
