// ParamReader: parse and check generator parameters.
#include "topologies/params.hpp"

#include <charconv>
#include <cmath>
#include <limits>
#include <sstream>

#include "topologies/topology.hpp"

namespace parashift::topo {
namespace {

std::string join(const std::vector<std::string>& items, const std::string& separator) {
  std::string out;
  for (const auto& item : items) {
    if (!out.empty()) out += separator;
    out += item;
  }
  return out;
}

template <typename T>
bool parse_whole(const std::string& text, T& value) {
  const char* end = text.data() + text.size();
  const auto [ptr, ec] = std::from_chars(text.data(), end, value);
  return ec == std::errc() && ptr == end && !text.empty();
}

std::string format_number(double value) {
  std::ostringstream out;
  out << value;
  return out.str();
}

}  // namespace

ParamReader::ParamReader(std::string generator, std::vector<ParamDoc> docs,
                         std::map<std::string, std::string> given)
    : generator_(std::move(generator)), docs_(std::move(docs)), given_(std::move(given)) {
  for (const auto& [name, value] : given_) {
    bool known = false;
    for (const auto& d : docs_) known = known || d.name == name;
    if (!known) {
      std::vector<std::string> names;
      for (const auto& d : docs_) names.push_back(d.name);
      throw TopologyError("generator '" + generator_ + "': unknown parameter '" + name +
                          "'; expected one of: " + (names.empty() ? "(none)" : join(names, ", ")));
    }
  }
}

const ParamDoc& ParamReader::doc(const std::string& name) const {
  for (const auto& d : docs_) {
    if (d.name == name) return d;
  }
  throw std::logic_error("ParamReader: parameter '" + name + "' is not documented");
}

bool ParamReader::given(const std::string& name) const {
  return given_.count(name) > 0;
}

std::string ParamReader::text(const std::string& name) const {
  const ParamDoc& d = doc(name);
  const auto it = given_.find(name);
  if (it != given_.end()) return it->second;
  if (d.default_value.empty()) {
    throw TopologyError("generator '" + generator_ + "': missing required parameter '" + name +
                        "' (" + d.meaning + ")");
  }
  return d.default_value;
}

void ParamReader::fail(const std::string& name, const std::string& expected) const {
  const auto it = given_.find(name);
  const std::string shown = it != given_.end() ? it->second : doc(name).default_value;
  throw TopologyError("generator '" + generator_ + "': parameter '" + name + "' = '" + shown +
                      "': expected " + expected);
}

int ParamReader::integer(const std::string& name, int min_value, int max_value) const {
  int value = 0;
  if (!parse_whole(text(name), value) || value < min_value || value > max_value) {
    fail(name, "an integer from " + std::to_string(min_value) + " to " + std::to_string(max_value));
  }
  return value;
}

double ParamReader::number(const std::string& name, double min_value, bool exclusive) const {
  double value = 0;
  const bool ok = parse_whole(text(name), value) && std::isfinite(value) &&
                  (exclusive ? value > min_value : value >= min_value);
  if (!ok) {
    fail(name, std::string("a number ") + (exclusive ? "> " : ">= ") + format_number(min_value));
  }
  return value;
}

std::string ParamReader::choice(const std::string& name,
                                const std::vector<std::string>& options) const {
  const std::string value = text(name);
  for (const auto& option : options) {
    if (option == value) return value;
  }
  fail(name, "one of: " + join(options, ", "));
}

std::vector<int> ParamReader::sizes(const std::string& name, int min_dims, int max_dims) const {
  const std::string value = text(name);
  std::vector<int> result;
  std::size_t start = 0;
  bool ok = true;
  while (ok) {
    const std::size_t x = value.find('x', start);
    const std::string part = value.substr(start, x == std::string::npos ? x : x - start);
    int size = 0;
    ok = parse_whole(part, size) && size >= 1;
    result.push_back(size);
    if (x == std::string::npos) break;
    start = x + 1;
  }
  if (!ok || static_cast<int>(result.size()) < min_dims ||
      static_cast<int>(result.size()) > max_dims) {
    fail(name, "sizes >= 1 written like '8x8' or '4x4x4' (" + std::to_string(min_dims) + " to " +
                   std::to_string(max_dims) + " of them)");
  }
  return result;
}

}  // namespace parashift::topo
