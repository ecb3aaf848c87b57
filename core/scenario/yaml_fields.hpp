// Reads one YAML map against a schema: typed getters that name the file,
// line and field on error, and a final check that rejects unknown fields.
#pragma once

#include <optional>
#include <set>
#include <string>
#include <vector>

#include <yaml-cpp/yaml.h>

namespace parashift::core {

class YamlFields {
 public:
  /// `path` is the dotted field path of `map` ("" for the root, "plan", ...).
  /// `overridden` holds the dotted paths set on the command line (--set), so
  /// messages about them say so; it must outlive this reader.
  YamlFields(const YAML::Node& map, std::string path, std::string file,
             const std::set<std::string>* overridden = nullptr);

  bool has(const std::string& key) const;
  /// Marks an optional key as known without reading it.
  void allow(const std::string& key);
  const YAML::Node& node() const { return map_; }

  int positive_int(const std::string& key);
  std::optional<int> optional_positive_int(const std::string& key);
  long long nonnegative_int64(const std::string& key, long long fallback);
  double positive_double(const std::string& key);
  std::string string(const std::string& key);
  std::optional<std::string> optional_string(const std::string& key);
  std::optional<bool> optional_bool(const std::string& key);
  /// The raw child node (marked as read). Throws when absent.
  YAML::Node child(const std::string& key);
  /// Nested map reader for `key`; throws unless it is a map.
  YamlFields map(const std::string& key);

  /// Reader for element `index` (a map) of the list under `key`, with path
  /// "key[index]", and where that element is for messages.
  YamlFields item(const std::string& key, const YAML::Node& element, std::size_t index) const;
  std::string where_item(const std::string& key, const YAML::Node& element,
                         std::size_t index) const;

  /// Every key not read so far is an unknown field: throws naming it and the
  /// expected ones. Call after reading all fields of this map.
  void reject_unknown(const std::vector<std::string>& also_allowed = {}) const;

  /// "file:line:col: path.key" (or "file: path.key (set on the command line)").
  std::string where(const std::string& key) const;
  [[noreturn]] void fail(const std::string& key, const std::string& what) const;
  /// The name of a key of this map; a map or list written as a key ("? [a]")
  /// is refused with its position.
  std::string key_name(const YAML::Node& key_node) const;

 private:
  std::string field(const std::string& key) const;
  bool is_overridden(const std::string& key) const;
  YAML::Node scalar(const std::string& key, const char* expected);
  /// "file:line:col: path.key" for a key of this map as written.
  std::string origin_of(const YAML::Node& key_node, const std::string& key) const;
  /// When `missing` is absent but an unread key is a typo of it
  /// ("global_bach"), throws naming that key as unknown with a did-you-mean.
  void fail_on_typo_of(const std::string& missing) const;

  YAML::Node map_;
  std::string path_;
  std::string file_;
  const std::set<std::string>* overridden_;
  std::set<std::string> read_;
  std::vector<std::string> known_;  // keys asked for, in order, for the error message
};

/// "file:line:col: " for a node (just "file: " when it has no position).
std::string yaml_location(const std::string& file, const YAML::Node& node);

}  // namespace parashift::core
