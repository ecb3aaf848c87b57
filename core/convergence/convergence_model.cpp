#include "core/convergence/convergence_model.hpp"

#include <algorithm>
#include <cmath>
#include <random>

#include "core/input_error.hpp"
#include "core/scenario/yaml_fields.hpp"
#include "core/validation/csv_reader.hpp"

namespace parashift::core {

double NoiseScaleTrace::at(double share) const {
  share = std::clamp(share, 0.0, 1.0);
  const auto it = std::upper_bound(progress.begin(), progress.end(), share);
  if (it == progress.end()) return noise_scale_tokens.back();
  const auto i = static_cast<std::size_t>(it - progress.begin());
  if (i == 0) return noise_scale_tokens.front();
  const double t = (share - progress[i - 1]) / (progress[i] - progress[i - 1]);
  return noise_scale_tokens[i - 1] + t * (noise_scale_tokens[i] - noise_scale_tokens[i - 1]);
}

NoiseScaleTrace read_noise_scale_trace(const std::filesystem::path& file,
                                       const std::string& shown) {
  const CsvTable table = read_csv_file(file.string());
  auto fail = [&](int line, const std::string& what) -> void {
    throw InputError(shown + ":" + std::to_string(line) + ": " + what);
  };
  if (table.header.size() != 2 || table.header[0] != "progress" ||
      table.header[1] != "noise_scale_tokens")
    fail(1, "expected the header 'progress,noise_scale_tokens'");
  NoiseScaleTrace trace;
  trace.file = shown;
  for (const CsvRecord& r : table.records) {
    if (r.fields.size() != 2)
      fail(r.line, "expected 2 fields (progress, noise_scale_tokens), found " +
                       std::to_string(r.fields.size()));
    double v[2] = {0, 0};
    for (int k = 0; k < 2; ++k) {
      const std::string& text = r.fields[static_cast<std::size_t>(k)];
      std::size_t used = 0;
      try {
        v[k] = std::stod(text, &used);
      } catch (const std::exception&) {
        used = 0;
      }
      if (used == 0 || used != text.size() || !std::isfinite(v[k]))
        fail(r.line, std::string(k == 0 ? "progress" : "noise_scale_tokens") +
                         ": expected a number, found '" + text + "'");
    }
    if (v[0] < 0 || v[0] > 1) fail(r.line, "progress: expected a share in [0, 1]");
    if (!trace.progress.empty() && v[0] <= trace.progress.back())
      fail(r.line, "progress: expected rows in increasing order of progress");
    if (v[1] <= 0) fail(r.line, "noise_scale_tokens: expected a number > 0");
    trace.progress.push_back(v[0]);
    trace.noise_scale_tokens.push_back(v[1]);
  }
  if (trace.progress.size() < 2) fail(1, "expected at least 2 rows");
  return trace;
}

ConvergenceSpec read_convergence(YamlFields& f, const std::filesystem::path& dir) {
  ConvergenceSpec c;
  c.target_steps = f.positive_double("target_steps");
  const std::string trace = f.string("noise_scale");
  const std::filesystem::path path = dir / trace;
  try {
    c.trace = read_noise_scale_trace(path, path.string());
  } catch (const InputError& e) {
    f.fail("noise_scale", e.what());
  }
  if (f.has("measurement_noise")) {
    c.measurement_noise = f.positive_double("measurement_noise");
    if (c.measurement_noise > 1) f.fail("measurement_noise", "expected a share in (0, 1]");
  }
  f.reject_unknown();
  return c;
}

MeasuredNorms measured_norms(double noise_scale, int replica_batch, int replicas, int global_batch,
                             double noise, std::uint64_t seed, std::int64_t step) {
  std::mt19937_64 rng(seed * 0xbf58476d1ce4e5b9ULL + static_cast<std::uint64_t>(step));
  std::normal_distribution<double> z(0.0, 1.0);
  auto noisy = [&](double x) { return x * std::max(0.0, 1.0 + noise * z(rng)); };
  MeasuredNorms m;
  // Each replica's estimate fluctuates on its own: their mean's noise
  // shrinks with the square root of their count.
  m.replica_sq_norm =
      (1.0 + noise_scale / replica_batch) *
      std::max(0.0, 1.0 + noise / std::sqrt(static_cast<double>(replicas)) * z(rng));
  m.global_sq_norm = noisy(1.0 + noise_scale / global_batch);
  return m;
}

}  // namespace parashift::core
