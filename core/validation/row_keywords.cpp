// The keyword recognisers of published-run cells (declared in
// published_run.hpp and text_match.hpp).
#include <algorithm>
#include <cctype>
#include <charconv>
#include <cmath>

#include "core/validation/published_run.hpp"
#include "core/validation/text_match.hpp"

namespace parashift::core {

using text::has;
using text::lower;
using text::trim;

std::optional<double> leading_number(const std::string& raw) {
  const std::string text = trim(raw);
  if (text.empty()) return std::nullopt;
  double value = 0;
  const char* begin = text.data();
  const char* end = text.data() + text.size();
  const auto [ptr, ec] = std::from_chars(begin, end, value);
  if (ec != std::errc() || ptr == begin || !std::isfinite(value)) return std::nullopt;
  // Allow a trailing comment: "8192 (default cfg)", "40 GB".
  if (ptr != end && !std::isspace(static_cast<unsigned char>(*ptr)) && *ptr != '(') {
    return std::nullopt;
  }
  return value;
}

namespace {

// A GPU named only by its dense BF16 peak ("312 TFLOP/s Ampere part"): the
// preset with that peak, the smallest-memory variant's sibling as the
// catalogue orders them (a100-80gb for 312, h100-sxm-80gb for 989).
std::optional<std::string> device_for_peak(const std::string& lowered) {
  const auto at = lowered.find("tflop");
  if (at == std::string::npos) return std::nullopt;
  std::size_t begin = at;
  while (begin > 0 && (std::isdigit(static_cast<unsigned char>(lowered[begin - 1])) ||
                       lowered[begin - 1] == '.' || lowered[begin - 1] == ' ')) {
    --begin;
  }
  const auto peak = leading_number(lowered.substr(begin, at - begin));
  if (!peak) return std::nullopt;
  for (const char* name : {"a100-80gb", "h100-sxm-80gb"}) {
    const double preset_tflops = device_preset(name).peak_bf16_flops_per_s / 1e12;
    if (std::fabs(*peak - preset_tflops) <= 0.01 * preset_tflops) return std::string(name);
  }
  return std::nullopt;
}

}  // namespace

std::optional<std::string> device_for_gpu_type(const std::string& text, std::string* assumption) {
  const std::string t = lower(text);
  auto assume = [assumption](const std::string& what) {
    if (assumption) *assumption = what;
  };
  if (has(t, "pcie") || has(t, " nvl")) return std::nullopt;  // no preset for PCIe / NVL parts
  if (has(t, "a100")) {
    if (has(t, "40gb") || has(t, "40 gb")) return "a100-40gb";
    if (!has(t, "80gb") && !has(t, "80 gb")) assume("gpu_type=A100 80GB (size not stated)");
    return "a100-80gb";
  }
  if (has(t, "h200")) return "h200";
  if (has(t, "h100")) {
    if (has(t, "96gb") || has(t, "96 gb") || has(t, "500 w") || has(t, "500w")) {
      return "h100-96gb-500w";
    }
    if (!has(t, "sxm") && !has(t, "80gb") && !has(t, "80 gb")) {
      assume("gpu_type=H100 SXM5 80GB (variant not stated)");
    }
    return "h100-sxm-80gb";
  }
  if (auto by_peak = device_for_peak(t)) {
    assume("gpu_type named by its peak: " + *by_peak);
    return by_peak;
  }
  return std::nullopt;
}

std::optional<Precision> precision_from_text(const std::string& text) {
  const std::string t = lower(text);
  if (has(t, "fp8") || has(t, "float8") || has(t, "e4m3")) return Precision::Fp8;
  if (has(t, "bf16") || has(t, "bfloat16") || has(t, "fp16") || has(t, "float16") ||
      has(t, "16-bit") || has(t, "16 bit") || has(t, "mixed precision")) {
    return Precision::Bf16;
  }
  return std::nullopt;
}

std::optional<OptimizerSharding> sharding_from_text(const std::string& text) {
  const std::string t = lower(text);
  if (has(t, "fsdp") || has(t, "zero-3") || has(t, "zero3") || has(t, "zero stage 3") ||
      has(t, "full shard")) {
    return OptimizerSharding::Fsdp;
  }
  if (has(t, "distributed") || has(t, "zero-1") || has(t, "zero1") || has(t, "zero-2") ||
      has(t, "zero2")) {
    return OptimizerSharding::Distributed;
  }
  if (t == "none" || t == "no" || has(t, "ddp") || t == "off") return OptimizerSharding::None;
  return std::nullopt;
}

std::optional<Recompute> recompute_from_text(const std::string& text) {
  const std::string t = lower(text);
  if (has(t, "selective") || has(t, "per-op") || has(t, "per op")) return Recompute::Selective;
  // "implied" (a source whose FLOP count assumes recomputation without
  // naming the mode) is Megatron's full recomputation of that era.
  if (has(t, "full") || has(t, "implied")) return Recompute::Full;
  if (t == "none" || t == "no" || t == "off" || t == "false") return Recompute::None;
  return std::nullopt;
}

bool recomputes_some_blocks(const std::string& text) {
  const std::string t = lower(text);
  return has(t, "fraction of blocks") || has(t, "recompute-method block") ||
         has(t, "recompute_method block");
}

std::optional<double> recomputed_block_share(std::optional<double> mfu_pct,
                                             std::optional<double> hfu_pct) {
  if (!mfu_pct || !hfu_pct || *mfu_pct <= 0 || *hfu_pct <= 0) return std::nullopt;
  return std::clamp(3.0 * (*hfu_pct / *mfu_pct - 1.0), 0.0, 1.0);
}

std::optional<double> node_network_Bps_from_text(const std::string& text, int gpus_per_node) {
  // By hand, not std::regex: libstdc++'s recurses per character and a long
  // cell would exhaust the stack. Each look is bounded, so this is linear.
  const std::string t = lower(text);
  constexpr double kBytesPerGbit = 1e9 / 8.0;
  constexpr std::size_t kLongestQualifier = 120;  // "Gb/s ... per node" within one clause
  auto digit = [&](std::size_t i) { return std::isdigit(static_cast<unsigned char>(t[i])) != 0; };
  auto skip_spaces_back = [&](std::size_t i) {
    while (i > 0 && t[i - 1] == ' ') --i;
    return i;
  };
  for (std::size_t at = t.find("gb"); at != std::string::npos; at = t.find("gb", at + 2)) {
    if (t.compare(at, 4, "gb/s") != 0 && t.compare(at, 4, "gbps") != 0) continue;
    const std::size_t end = skip_spaces_back(at);
    std::size_t begin = end;
    while (begin > 0 && (digit(begin - 1) || t[begin - 1] == '.')) --begin;
    const auto rate = leading_number(t.substr(begin, end - begin));
    if (begin == end || !rate) continue;
    // "N x R Gb/s": N NICs of R.
    double nics = 0;
    if (const std::size_t x = skip_spaces_back(begin); x > 0 && t[x - 1] == 'x') {
      const std::size_t count_end = skip_spaces_back(x - 1);
      std::size_t count_begin = count_end;
      while (count_begin > 0 && digit(count_begin - 1)) --count_begin;
      if (auto n = leading_number(t.substr(count_begin, count_end - count_begin))) nics = *n;
    }
    // What the rate is of, said before the clause ends (';' or '(').
    std::string clause = t.substr(at, kLongestQualifier);
    clause = clause.substr(0, clause.find_first_of(";("));
    if (nics > 0 && has(clause, "per node")) return nics * *rate * kBytesPerGbit;
    if (has(clause, "per gpu")) return *rate * kBytesPerGbit * gpus_per_node;
    if (has(clause, "per node")) return *rate * kBytesPerGbit;
  }
  return std::nullopt;
}

std::optional<bool> yes_no_from_text(const std::string& text) {
  const std::string t = lower(trim(text));
  if (t == "yes" || t == "y" || t == "true" || t == "on" || t == "1") return true;
  if (t == "no" || t == "n" || t == "false" || t == "off" || t == "0") return false;
  return std::nullopt;
}

namespace text {

int release_year(const std::string& lowered) {
  for (std::size_t i = 0; i + 4 <= lowered.size(); ++i) {
    if (i > 0 && std::isdigit(static_cast<unsigned char>(lowered[i - 1]))) continue;
    auto digit = [&](std::size_t k) {
      return k < lowered.size() && std::isdigit(static_cast<unsigned char>(lowered[k]));
    };
    if (digit(i) && digit(i + 1) && digit(i + 2) && digit(i + 3) && !digit(i + 4) &&
        lowered.compare(i, 3, "201") >= 0 && lowered.compare(i, 3, "202") <= 0) {
      return std::stoi(lowered.substr(i, 4));
    }
    if (digit(i) && digit(i + 1) && i + 2 < lowered.size() && lowered[i + 2] == '.' &&
        digit(i + 3) && digit(i + 4) && !digit(i + 5)) {
      const int yy = std::stoi(lowered.substr(i, 2));
      if (yy >= 19 && yy <= 29) return 2000 + yy;
    }
  }
  return 0;
}

}  // namespace text

}  // namespace parashift::core
