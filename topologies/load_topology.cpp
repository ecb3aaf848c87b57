// load_topology: read a file, pick the reader by extension, and turn the
// RawGraph into a checked Topology.
//
// Node attributes: kind (required: gpu|nvswitch|nic|leaf|spine|core|router),
// host (optional, integer >= 0), gpu (optional GPU index, on all GPUs or on
// none; without it GPUs are numbered in natural name order: g2 before g10).
// Edge attributes: bandwidth_gbps or bandwidth_Bps (one of them, > 0) and
// latency_ns (integer >= 0). An undirected edge is a cable (two links).
#include <algorithm>
#include <cctype>
#include <charconv>
#include <cmath>
#include <fstream>
#include <numeric>
#include <sstream>

#include "topologies/raw_graph.hpp"
#include "topologies/topology.hpp"

namespace parashift::topo {
namespace {

const char* const kKinds = "gpu, nvswitch, nic, leaf, spine, core, router";

template <typename T>
std::optional<T> parse_whole(const std::string& text) {
  T value{};
  const char* end = text.data() + text.size();
  const auto [ptr, ec] = std::from_chars(text.data(), end, value);
  if (ec != std::errc() || ptr != end || text.empty()) return std::nullopt;
  return value;
}

// 256 MiB: the shipped 16K-GPU fat-tree is 1.5 MB of DOT.
constexpr std::uintmax_t kMaxTopologyFileBytes = std::uintmax_t{256} << 20;

std::string read_file(const std::filesystem::path& file) {
  std::error_code ec;
  if (std::filesystem::is_directory(file, ec)) {
    throw TopologyError(file.string() + ": cannot open topology file (it is a directory)");
  }
  std::ifstream in(file, std::ios::binary);
  if (!in) {
    const std::string reason = std::filesystem::exists(file, ec) ? "not readable" : "no such file";
    throw TopologyError(file.string() + ": cannot open topology file (" + reason + ")");
  }
  const std::uintmax_t size = std::filesystem::file_size(file, ec);
  if (!ec && size > kMaxTopologyFileBytes) {
    throw TopologyError(file.string() + ": topology file of " + std::to_string(size) +
                        " bytes; expected at most " + std::to_string(kMaxTopologyFileBytes));
  }
  std::ostringstream text;
  text << in.rdbuf();
  if (in.bad()) throw TopologyError(file.string() + ": read error");
  return text.str();
}

const std::string* find(const std::map<std::string, std::string>& attrs, const char* name) {
  const auto it = attrs.find(name);
  return it == attrs.end() ? nullptr : &it->second;
}

class Converter {
 public:
  Converter(const RawGraph& raw, std::string file) : raw_(raw), file_(std::move(file)) {}

  Topology run() {
    std::vector<int> order(raw_.nodes.size());
    std::iota(order.begin(), order.end(), 0);
    std::stable_sort(order.begin(), order.end(), [&](int a, int b) {
      return natural_less(raw_.nodes[a].name, raw_.nodes[b].name);
    });
    const bool explicit_gpu_index = check_gpu_attribute();
    vertex_.assign(raw_.nodes.size(), -1);
    for (const int i : order) vertex_[i] = add_node(raw_.nodes[i], explicit_gpu_index);
    for (std::size_t e = 0; e < raw_.edges.size(); ++e) add_edge(raw_.edges[e]);
    topology_.validate(file_);
    return std::move(topology_);
  }

 private:
  [[noreturn]] void fail(const std::string& element, const std::string& problem) const {
    throw TopologyError(file_ + ": " + element + ": " + problem);
  }

  // The `gpu` attribute must be on every GPU or on none.
  bool check_gpu_attribute() const {
    const RawNode* with = nullptr;
    const RawNode* without = nullptr;
    for (const RawNode& n : raw_.nodes) {
      const std::string* kind = find(n.attrs, "kind");
      if (kind == nullptr || *kind != "gpu") continue;
      (find(n.attrs, "gpu") != nullptr ? with : without) = &n;
    }
    if (with != nullptr && without != nullptr) {
      fail("node '" + without->name + "'",
           "no 'gpu' index but node '" + with->name +
               "' has one; expected a gpu index on every GPU or on none");
    }
    return with != nullptr;
  }

  int add_node(const RawNode& raw, bool explicit_gpu_index) {
    const std::string element = "node '" + raw.name + "'";
    NodeInfo info;
    info.name = raw.name;
    const std::string* kind = find(raw.attrs, "kind");
    if (kind == nullptr) {
      fail(element, std::string("missing attribute 'kind'; expected one of ") + kKinds +
                        " (a node named only in an edge must still be declared with a kind)");
    }
    const auto parsed_kind = parse_node_kind(*kind);
    if (!parsed_kind) {
      fail(element, "kind '" + *kind + "' is unknown; expected one of " + kKinds);
    }
    info.kind = *parsed_kind;
    if (const std::string* host = find(raw.attrs, "host")) {
      const auto value = parse_whole<int>(*host);
      if (!value || *value < 0) {
        fail(element, "host '" + *host + "' is invalid; expected an integer >= 0");
      }
      info.host = *value;
    }
    if (const std::string* gpu = find(raw.attrs, "gpu");
        gpu != nullptr && explicit_gpu_index && info.kind == NodeKind::Gpu) {
      const auto value = parse_whole<int>(*gpu);
      if (!value || *value < 0) {
        fail(element, "gpu '" + *gpu + "' is invalid; expected a GPU index >= 0");
      }
      info.gpu_index = *value;
    }
    try {
      return topology_.add_node(info);
    } catch (const TopologyError& e) {
      throw TopologyError(file_ + ": " + e.what());
    }
  }

  void add_edge(const RawEdge& raw) {
    const std::string arrow = raw_.directed ? "' -> '" : "' -- '";
    const std::string element =
        "edge '" + raw_.nodes[raw.src].name + arrow + raw_.nodes[raw.dst].name + "'";
    const std::string* gbps = find(raw.attrs, "bandwidth_gbps");
    const std::string* bps = find(raw.attrs, "bandwidth_Bps");
    if (gbps == nullptr && bps == nullptr) {
      fail(element, "missing attribute 'bandwidth_gbps' (or 'bandwidth_Bps'); expected a rate > 0");
    }
    if (gbps != nullptr && bps != nullptr) {
      fail(element, "has both 'bandwidth_gbps' and 'bandwidth_Bps'; expected one of them");
    }
    const std::string& text = gbps != nullptr ? *gbps : *bps;
    const auto rate = parse_whole<double>(text);
    if (!rate || !std::isfinite(*rate) || *rate <= 0) {
      fail(element, std::string(gbps != nullptr ? "bandwidth_gbps" : "bandwidth_Bps") + " '" +
                        text + "' is invalid; expected a number > 0");
    }
    const double bandwidth_Bps = gbps != nullptr ? *rate * 1e9 / 8.0 : *rate;
    const std::string* latency = find(raw.attrs, "latency_ns");
    if (latency == nullptr) {
      fail(element, "missing attribute 'latency_ns'; expected whole nanoseconds >= 0");
    }
    const auto latency_ns = parse_whole<std::int64_t>(*latency);
    if (!latency_ns || *latency_ns < 0) {
      fail(element, "latency_ns '" + *latency + "' is invalid; expected whole nanoseconds >= 0");
    }
    if (raw.src == raw.dst) fail(element, "joins a node to itself; expected two distinct nodes");
    const int src = vertex_[raw.src];
    const int dst = vertex_[raw.dst];
    if (raw_.directed) {
      topology_.add_link(src, dst, bandwidth_Bps, *latency_ns);
    } else {
      topology_.add_cable(src, dst, bandwidth_Bps, *latency_ns);
    }
  }

  const RawGraph& raw_;
  std::string file_;
  std::vector<int> vertex_;  // raw node index -> topology vertex
  Topology topology_;
};

std::string lowercase(std::string text) {
  for (char& c : text) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return text;
}

}  // namespace

bool natural_less(const std::string& a, const std::string& b) {
  std::size_t i = 0;
  std::size_t j = 0;
  const auto is_digit = [](char c) { return std::isdigit(static_cast<unsigned char>(c)) != 0; };
  while (i < a.size() && j < b.size()) {
    if (is_digit(a[i]) && is_digit(b[j])) {
      std::size_t i_end = i;
      std::size_t j_end = j;
      while (i_end < a.size() && is_digit(a[i_end])) ++i_end;
      while (j_end < b.size() && is_digit(b[j_end])) ++j_end;
      std::size_t i_start = i;
      std::size_t j_start = j;
      while (i_start + 1 < i_end && a[i_start] == '0') ++i_start;
      while (j_start + 1 < j_end && b[j_start] == '0') ++j_start;
      const std::size_t i_len = i_end - i_start;
      const std::size_t j_len = j_end - j_start;
      if (i_len != j_len) return i_len < j_len;
      const int c = a.compare(i_start, i_len, b, j_start, j_len);
      if (c != 0) return c < 0;
      i = i_end;
      j = j_end;
    } else {
      if (a[i] != b[j]) return a[i] < b[j];
      ++i;
      ++j;
    }
  }
  if (a.size() - i != b.size() - j) return a.size() - i < b.size() - j;
  return a < b;  // equal up to leading zeros: fall back to plain order
}

Topology load_topology(const std::filesystem::path& file) {
  const std::string name = file.string();
  const std::string extension = lowercase(file.extension().string());
  const bool dot = extension == ".dot" || extension == ".gv";
  if (!dot && extension != ".graphml") {
    throw TopologyError(name + ": unknown topology file extension '" + extension +
                        "'; expected .dot, .gv or .graphml");
  }
  const std::string text = read_file(file);
  const RawGraph raw = dot ? read_dot_text(text, name) : read_graphml_text(text, name);
  return Converter(raw, name).run();
}

}  // namespace parashift::topo
