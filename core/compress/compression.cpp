#include "core/compress/compression.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>

#include "core/input_error.hpp"

namespace parashift::core {
namespace {

[[noreturn]] void bad(const std::string& text, const std::string& why) {
  throw InputError(
      "expected none, powersgd:R (an integer R >= 1), topk:F (0 < F < 1) or "
      "int8[:B] (B a multiple of 4), found '" +
      text + "'" + (why.empty() ? "" : " (" + why + ")"));
}

int parse_int(const std::string& text, const std::string& digits) {
  if (digits.empty() || digits.size() > 9 ||
      !std::all_of(digits.begin(), digits.end(), [](char c) { return c >= '0' && c <= '9'; }))
    bad(text, "");
  return std::atoi(digits.c_str());
}

}  // namespace

CompressionSpec parse_compression(const std::string& text) {
  const auto colon = text.find(':');
  const std::string name = text.substr(0, colon);
  const bool has_arg = colon != std::string::npos;
  const std::string arg = has_arg ? text.substr(colon + 1) : "";
  CompressionSpec s;
  if (name == "none" && !has_arg) return s;
  if (name == "powersgd" && has_arg) {
    s.kind = CompressorKind::PowerSgd;
    s.rank = parse_int(text, arg);
    if (s.rank < 1) bad(text, "the rank must be >= 1");
    return s;
  }
  if (name == "topk" && has_arg) {
    char* end = nullptr;
    s.kind = CompressorKind::TopK;
    s.density = std::strtod(arg.c_str(), &end);
    if (arg.empty() || end != arg.c_str() + arg.size() || !(s.density > 0.0 && s.density < 1.0))
      bad(text, "the share must be in (0, 1)");
    return s;
  }
  if (name == "int8") {
    s.kind = CompressorKind::Int8;
    s.block = has_arg ? parse_int(text, arg) : kDefaultInt8Block;
    if (s.block < 4 || s.block % 4 != 0) bad(text, "the block must be a multiple of 4");
    return s;
  }
  bad(text, "");
}

std::string to_string(const CompressionSpec& spec) {
  switch (spec.kind) {
    case CompressorKind::None:
      return "none";
    case CompressorKind::PowerSgd:
      return "powersgd:" + std::to_string(spec.rank);
    case CompressorKind::TopK: {
      char buf[32];
      std::snprintf(buf, sizeof buf, "topk:%g", spec.density);
      return buf;
    }
    case CompressorKind::Int8:
      return "int8:" + std::to_string(spec.block);
  }
  return "none";
}

double int8_payload_bytes(double elements, int block) {
  return elements + 4.0 * std::ceil(elements / block);
}

double topk_entries(double elements, double density) {
  return std::max(1.0, std::round(density * elements));
}

std::vector<WireCall> sync_calls(const CompressionSpec& spec, std::span<const MatrixShape> matrices,
                                 double elem_bytes, int ranks) {
  double elements = 0;
  double p_floats = 0;
  double q_floats = 0;
  double pairs = 0;
  for (const MatrixShape& m : matrices) {
    elements += m.count * m.elements();
    p_floats += m.count * m.rows * spec.rank;
    q_floats += m.count * m.cols * spec.rank;
    pairs += spec.kind == CompressorKind::TopK ? m.count * topk_entries(m.elements(), spec.density)
                                               : 0.0;
  }
  switch (spec.kind) {
    case CompressorKind::None:
      return {{CollectiveKind::AllReduce, elements * elem_bytes}};
    case CompressorKind::PowerSgd:
      return {{CollectiveKind::AllReduce, 4.0 * p_floats},
              {CollectiveKind::AllReduce, 4.0 * q_floats}};
    case CompressorKind::TopK:
      return {{CollectiveKind::AllGather, 8.0 * pairs * ranks}};
    case CompressorKind::Int8: {
      const double payload = int8_payload_bytes(elements, spec.block);
      return {{CollectiveKind::AllToAll, payload}, {CollectiveKind::AllGather, payload}};
    }
  }
  return {};
}

}  // namespace parashift::core
