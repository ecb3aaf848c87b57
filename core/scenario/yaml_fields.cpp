#include "core/scenario/yaml_fields.hpp"

#include <algorithm>
#include <limits>
#include <vector>

#include "core/input_error.hpp"

namespace parashift::core {

namespace {

// Levenshtein distance: how many single-character edits turn a into b.
std::size_t edit_distance(const std::string& a, const std::string& b) {
  std::vector<std::size_t> row(b.size() + 1);
  for (std::size_t j = 0; j <= b.size(); ++j) row[j] = j;
  for (std::size_t i = 1; i <= a.size(); ++i) {
    std::size_t diagonal = row[0];
    row[0] = i;
    for (std::size_t j = 1; j <= b.size(); ++j) {
      const std::size_t up = row[j];
      row[j] = std::min({row[j] + 1, row[j - 1] + 1, diagonal + (a[i - 1] == b[j - 1] ? 0 : 1)});
      diagonal = up;
    }
  }
  return row[b.size()];
}

// A typo: at most 2 edits, and fewer than half the word's letters.
bool looks_like(const std::string& typed, const std::string& meant) {
  const std::size_t d = edit_distance(typed, meant);
  return d > 0 && d <= 2 && 2 * d < meant.size();
}

}  // namespace

std::string yaml_location(const std::string& file, const YAML::Node& node) {
  const YAML::Mark mark = node.Mark();
  if (mark.is_null()) return file + ": ";
  return file + ":" + std::to_string(mark.line + 1) + ":" + std::to_string(mark.column + 1) + ": ";
}

YamlFields::YamlFields(const YAML::Node& map, std::string path, std::string file,
                       const std::set<std::string>* overridden)
    : map_(map), path_(std::move(path)), file_(std::move(file)), overridden_(overridden) {
  if (!map_.IsMap()) {
    throw InputError(yaml_location(file_, map_) + (path_.empty() ? "document" : path_) +
                     ": expected a map of fields");
  }
}

std::string YamlFields::field(const std::string& key) const {
  return path_.empty() ? key : path_ + "." + key;
}

bool YamlFields::is_overridden(const std::string& key) const {
  if (overridden_ == nullptr) return false;
  // The field itself, or a map above it, was set on the command line.
  const std::string full = field(key);
  for (std::size_t end = 0; end != std::string::npos;) {
    end = full.find('.', end + 1);
    if (overridden_->count(full.substr(0, end))) return true;
  }
  return false;
}

std::string YamlFields::where(const std::string& key) const {
  const YAML::Node value = map_[key];
  if (is_overridden(key)) {
    return file_ + ": " + field(key) + " (set on the command line)";
  }
  return yaml_location(file_, value ? value : map_) + field(key);
}

void YamlFields::fail(const std::string& key, const std::string& what) const {
  throw InputError(where(key) + ": " + what);
}

std::string YamlFields::key_name(const YAML::Node& key_node) const {
  if (!key_node.IsScalar()) {
    throw InputError(yaml_location(file_, key_node) + (path_.empty() ? "top level" : path_) +
                     ": expected field names, found a map or list as a key");
  }
  return key_node.Scalar();
}

void YamlFields::allow(const std::string& key) {
  known_.push_back(key);
  read_.insert(key);
}

bool YamlFields::has(const std::string& key) const {
  const YAML::Node value = map_[key];
  return value && !value.IsNull();
}

// yaml-cpp nodes are handles: assigning one Node to another overwrites the
// document, so nodes here are only ever copy-constructed, never assigned.
YAML::Node YamlFields::scalar(const std::string& key, const char* expected) {
  known_.push_back(key);
  read_.insert(key);
  const YAML::Node value = map_[key];
  if (!value || value.IsNull()) {
    fail_on_typo_of(key);
    fail(key, std::string("missing; expected ") + expected);
  }
  if (!value.IsScalar())
    fail(key,
         std::string("expected ") + expected + ", found a " + (value.IsMap() ? "map" : "list"));
  return value;
}

int YamlFields::positive_int(const std::string& key) {
  const YAML::Node value = scalar(key, "a positive integer");
  long long parsed = 0;
  if (!YAML::convert<long long>::decode(value, parsed) || parsed < 1 ||
      parsed > std::numeric_limits<int>::max()) {
    fail(key, "expected a positive integer, found '" + value.Scalar() + "'");
  }
  return static_cast<int>(parsed);
}

std::optional<int> YamlFields::optional_positive_int(const std::string& key) {
  if (!has(key)) {
    known_.push_back(key);
    read_.insert(key);
    return std::nullopt;
  }
  return positive_int(key);
}

long long YamlFields::nonnegative_int64(const std::string& key, long long fallback) {
  if (!has(key)) {
    known_.push_back(key);
    read_.insert(key);
    return fallback;
  }
  const YAML::Node value = scalar(key, "a non-negative integer");
  long long parsed = 0;
  if (!YAML::convert<long long>::decode(value, parsed) || parsed < 0) {
    fail(key, "expected a non-negative integer, found '" + value.Scalar() + "'");
  }
  return parsed;
}

double YamlFields::positive_double(const std::string& key) {
  const YAML::Node value = scalar(key, "a positive number");
  double parsed = 0;
  if (!YAML::convert<double>::decode(value, parsed) || !(parsed > 0)) {
    fail(key, "expected a positive number, found '" + value.Scalar() + "'");
  }
  return parsed;
}

std::string YamlFields::string(const std::string& key) {
  return scalar(key, "a string").Scalar();
}

std::optional<std::string> YamlFields::optional_string(const std::string& key) {
  if (!has(key)) {
    known_.push_back(key);
    read_.insert(key);
    return std::nullopt;
  }
  return string(key);
}

std::optional<bool> YamlFields::optional_bool(const std::string& key) {
  if (!has(key)) {
    known_.push_back(key);
    read_.insert(key);
    return std::nullopt;
  }
  const YAML::Node value = scalar(key, "true or false");
  bool parsed = false;
  if (!YAML::convert<bool>::decode(value, parsed)) {
    fail(key, "expected true or false, found '" + value.Scalar() + "'");
  }
  return parsed;
}

YAML::Node YamlFields::child(const std::string& key) {
  known_.push_back(key);
  read_.insert(key);
  YAML::Node value = map_[key];
  if (!value || value.IsNull()) {
    fail_on_typo_of(key);
    fail(key, "missing");
  }
  return value;
}

YamlFields YamlFields::map(const std::string& key) {
  YAML::Node value = child(key);
  if (!value.IsMap()) fail(key, "expected a map of fields");
  return YamlFields(value, field(key), file_, overridden_);
}

YamlFields YamlFields::item(const std::string& key, const YAML::Node& element,
                            std::size_t index) const {
  return YamlFields(element, field(key) + "[" + std::to_string(index) + "]", file_, overridden_);
}

std::string YamlFields::where_item(const std::string& key, const YAML::Node& element,
                                   std::size_t index) const {
  const std::string path = field(key) + "[" + std::to_string(index) + "]";
  if (is_overridden(key)) return file_ + ": " + path + " (set on the command line)";
  return yaml_location(file_, element) + path;
}

std::string YamlFields::origin_of(const YAML::Node& key_node, const std::string& key) const {
  return is_overridden(key) ? file_ + ": " + field(key) + " (set on the command line)"
                            : yaml_location(file_, key_node) + field(key);
}

void YamlFields::fail_on_typo_of(const std::string& missing) const {
  for (const auto& entry : map_) {
    const std::string key = key_name(entry.first);
    if (read_.count(key) || !looks_like(key, missing)) continue;
    throw InputError(origin_of(entry.first, key) + ": unknown field; did you mean '" + missing +
                     "'?");
  }
}

void YamlFields::reject_unknown(const std::vector<std::string>& also_allowed) const {
  for (const auto& entry : map_) {
    const std::string key = key_name(entry.first);
    if (read_.count(key) ||
        std::find(also_allowed.begin(), also_allowed.end(), key) != also_allowed.end()) {
      continue;
    }
    std::string expected;
    for (const auto& k : known_) expected += (expected.empty() ? "" : ", ") + k;
    for (const auto& k : also_allowed) expected += (expected.empty() ? "" : ", ") + k;
    std::string hint;
    for (const auto& k : known_) {
      if (looks_like(key, k)) {
        hint = "did you mean '" + k + "'? ";
        break;
      }
    }
    throw InputError(origin_of(entry.first, key) + ": unknown field (" + hint +
                     "expected one of: " + expected + ")");
  }
}

}  // namespace parashift::core
