// `parashift sweep SCENARIO --grid KEY=V1,V2 ...`: simulate every point of
// a grid of scenario overrides, in parallel over the cores, and write one
// CSV row per point in grid order (the last --grid varies fastest), plus an
// optional SVG plot of throughput against the first grid key.
#include <algorithm>
#include <atomic>
#include <exception>
#include <fstream>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "core/input_error.hpp"
#include "core/scenario/scenario.hpp"
#include "sim/run.hpp"
#include "tools/cli/command.hpp"
#include "tools/cli/format_number.hpp"
#include "tools/cli/output_path.hpp"
#include "tools/cli/progress.hpp"
#include "tools/cli/svg_plot.hpp"
#include "topologies/topology.hpp"

namespace parashift::tools {

namespace {

struct SweepOptions {
  std::string scenario;
  std::vector<std::string> grids;
  std::vector<std::string> overrides;
  int jobs = 0;  // 0: every core
  std::string shard = "0/1";
  std::string csv_path;
  std::string plot_path;
};

struct GridAxis {
  std::string key;
  std::vector<std::string> values;
};

struct Shard {
  long long index = 0;
  long long count = 1;
};

// The outcome of one grid point.
struct Row {
  long long point = 0;
  std::vector<std::string> values;  // one per axis
  std::string status = "ok";        // or the one-line reason the point has no result
  int gpus = 0;
  std::string plan;
  double iteration_s = 0, tokens_per_s = 0, mfu = 0, bubble_share = 0, peak_memory_gib = 0;
  bool fits_memory = false;
};

GridAxis parse_grid(const std::string& item) {
  const auto eq = item.find('=');
  if (eq == std::string::npos || eq == 0) {
    throw core::InputError("--grid " + item + ": expected KEY=V1,V2,... (e.g. plan.tp=2,4,8)");
  }
  GridAxis axis{item.substr(0, eq), {}};
  const std::string list = item.substr(eq + 1);
  if (list.empty()) throw core::InputError("--grid " + item + ": empty list of values");
  std::size_t start = 0;
  while (true) {
    const auto comma = list.find(',', start);
    const std::string value = list.substr(start, comma - start);
    if (value.empty()) {
      throw core::InputError("--grid " + item + ": empty value in the list (expected V1,V2,...)");
    }
    if (std::find(axis.values.begin(), axis.values.end(), value) != axis.values.end()) {
      throw core::InputError("--grid " + item + ": value '" + value + "' given twice");
    }
    axis.values.push_back(value);
    if (comma == std::string::npos) break;
    start = comma + 1;
  }
  return axis;
}

Shard parse_shard(const std::string& text) {
  const auto slash = text.find('/');
  Shard s;
  try {
    std::size_t used_i = 0, used_n = 0;
    if (slash == std::string::npos) throw std::invalid_argument("no slash");
    s.index = std::stoll(text.substr(0, slash), &used_i);
    s.count = std::stoll(text.substr(slash + 1), &used_n);
    if (used_i != slash || used_n != text.size() - slash - 1) throw std::invalid_argument("junk");
  } catch (const std::exception&) {
    throw core::InputError("--shard " + text + ": expected I/N (e.g. 0/4: the first of 4 shards)");
  }
  if (s.count < 1 || s.index < 0 || s.index >= s.count) {
    throw core::InputError("--shard " + text + ": expected I/N with 0 <= I < N, found I=" +
                           std::to_string(s.index) + " N=" + std::to_string(s.count));
  }
  return s;
}

// A grid key must be a scenario field: setting it to its first value may
// make an invalid plan (that point's row says so) but no unknown field.
void check_key(const SweepOptions& opts, const GridAxis& axis) {
  std::vector<std::string> overrides = opts.overrides;
  overrides.push_back(axis.key + "=" + axis.values.front());
  try {
    core::load_scenario(opts.scenario, overrides);
  } catch (const core::InputError& e) {
    const std::string what = e.what();
    for (const char* structural :
         {"unknown field", "is not a map of fields", "empty field name", "unknown policy module"}) {
      if (what.find(structural) != std::string::npos) {
        throw core::InputError("--grid " + axis.key + ": not a scenario field: " + what);
      }
    }
  }
}

Row run_point(const SweepOptions& opts, const std::vector<GridAxis>& axes, long long point) {
  Row row;
  row.point = point;
  std::vector<std::string> overrides = opts.overrides;
  long long rest = point;
  row.values.resize(axes.size());
  for (std::size_t a = axes.size(); a-- > 0;) {
    const auto n = static_cast<long long>(axes[a].values.size());
    row.values[a] = axes[a].values[static_cast<std::size_t>(rest % n)];
    rest /= n;
  }
  for (std::size_t a = 0; a < axes.size(); ++a) {
    overrides.push_back(axes[a].key + "=" + row.values[a]);
  }
  try {
    const core::Scenario scenario = core::load_scenario(opts.scenario, overrides);
    for (const auto& e :
         scenario.faults ? scenario.faults->events : std::vector<core::FaultEvent>{}) {
      if (e.kind == core::FaultEventKind::Fail) {
        throw core::InputError(e.where + ": kind fail is played by `parashift faults`");
      }
    }
    const sim::RunSummary run = sim::run_scenario(scenario);
    row.gpus = scenario.topology.gpu_count();
    row.plan = scenario.plan.label();
    row.iteration_s = core::ns_to_s(run.last.iteration_ns);
    row.tokens_per_s = run.tokens_per_s();
    row.mfu = run.last.mfu;
    row.bubble_share = run.last.bubble_share;
    row.peak_memory_gib = run.last.peak_memory_bytes / core::gib(1);
    row.fits_memory = run.last.peak_memory_bytes <= scenario.device.hbm_bytes;
  } catch (const core::InputError& e) {  // topology errors are input errors too
    row.status = e.what();
  }
  return row;
}

// RFC 4180: quoted when it holds a comma, quote or newline; quotes doubled.
std::string csv_field(const std::string& text) {
  if (text.find_first_of(",\"\n") == std::string::npos) return text;
  std::string out = "\"";
  for (const char c : text) out += c == '"' ? std::string("\"\"") : std::string(1, c);
  return out + "\"";
}

void write_csv(const std::string& path, const std::vector<GridAxis>& axes,
               const std::vector<Row>& rows) {
  std::ofstream file(path);
  if (!file) throw core::InputError(path + ": cannot open for writing");
  file << "point";
  for (const auto& a : axes) file << ',' << csv_field(a.key);
  file << ",status,gpus,plan,iteration_s,tokens_per_s,mfu,bubble_share,peak_memory_gib,"
          "fits_memory\n";
  for (const Row& r : rows) {
    file << r.point;
    for (const auto& v : r.values) file << ',' << csv_field(v);
    file << ',' << csv_field(r.status);
    if (r.status == "ok") {
      file << ',' << r.gpus << ',' << csv_field(r.plan) << ',' << fmt("%.6f", r.iteration_s) << ','
           << fmt("%.1f", r.tokens_per_s) << ',' << fmt("%.5f", r.mfu) << ','
           << fmt("%.5f", r.bubble_share) << ',' << fmt("%.3f", r.peak_memory_gib) << ','
           << (r.fits_memory ? "true" : "false");
    } else {
      file << ",,,,,,,,";
    }
    file << '\n';
  }
  if (!file) throw core::InputError(path + ": write failed");
}

// Throughput against the first grid key, one line per combination of the
// other keys' values.
void write_plot(const std::string& path, const SweepOptions& opts,
                const std::vector<GridAxis>& axes, const std::vector<Row>& rows) {
  LinePlot plot;
  plot.title = "parashift sweep: " + opts.scenario;
  plot.x_label = axes.front().key;
  plot.y_label = "tokens/s";
  plot.x_ticks = axes.front().values;
  std::map<std::string, std::size_t> series_of;
  for (const Row& r : rows) {
    std::string label;
    for (std::size_t a = 1; a < axes.size(); ++a) {
      label += (label.empty() ? "" : " ") + axes[a].key + "=" + r.values[a];
    }
    if (label.empty()) label = "tokens/s";
    auto [it, added] = series_of.emplace(label, plot.series.size());
    if (added)
      plot.series.push_back({label, std::vector<std::optional<double>>(plot.x_ticks.size())});
    if (r.status != "ok") continue;
    const auto x = std::find(plot.x_ticks.begin(), plot.x_ticks.end(), r.values.front());
    plot.series[it->second].y[static_cast<std::size_t>(x - plot.x_ticks.begin())] = r.tokens_per_s;
  }
  // A series with no result at all only clutters the legend.
  std::erase_if(plot.series, [](const PlotSeries& s) {
    return std::none_of(s.y.begin(), s.y.end(), [](const auto& y) { return y.has_value(); });
  });
  std::ofstream file(path);
  if (!file) throw core::InputError(path + ": cannot open for writing");
  write_svg(file, plot);
}

void run_sweep(const SweepOptions& opts, CliContext& ctx) {
  check_output_path("--csv", opts.csv_path);
  check_output_path("--plot", opts.plot_path);
  const Shard shard = parse_shard(opts.shard);
  std::vector<GridAxis> axes;
  long long total = 1;
  for (const auto& item : opts.grids) {
    GridAxis axis = parse_grid(item);
    for (const auto& other : axes) {
      if (other.key == axis.key) throw core::InputError("--grid " + axis.key + ": given twice");
    }
    total *= static_cast<long long>(axis.values.size());
    if (total > 10'000'000) throw core::InputError("--grid: more than 10,000,000 points");
    axes.push_back(std::move(axis));
  }
  core::load_scenario(opts.scenario, opts.overrides);  // the file itself, before any point
  for (const auto& axis : axes) check_key(opts, axis);

  std::vector<long long> points;
  for (long long p = shard.index; p < total; p += shard.count) points.push_back(p);
  const unsigned cores = std::max(1U, std::thread::hardware_concurrency());
  const auto jobs = static_cast<std::size_t>(
      std::clamp<long long>(opts.jobs > 0 ? opts.jobs : cores, 1,
                            std::max<long long>(1, static_cast<long long>(points.size()))));

  // Each thread takes the next point; rows land at their point's place, so
  // the CSV is in grid order whatever the number of threads.
  std::vector<Row> rows(points.size());
  std::atomic<std::size_t> next{0};
  std::exception_ptr failure;
  std::mutex failure_mutex;
  std::atomic<long long> done{0};
  Progress bar(ctx, "points");
  auto work = [&] {
    for (std::size_t i = next++; i < points.size(); i = next++) {
      try {
        rows[i] = run_point(opts, axes, points[i]);
        bar.update(++done, static_cast<long long>(points.size()));
      } catch (...) {
        const std::lock_guard<std::mutex> lock(failure_mutex);
        if (!failure) failure = std::current_exception();
        next = points.size();
      }
    }
  };
  std::vector<std::thread> threads;
  for (std::size_t t = 1; t < jobs; ++t) threads.emplace_back(work);
  work();
  for (auto& t : threads) t.join();
  bar.finish();
  if (failure) std::rethrow_exception(failure);

  write_csv(opts.csv_path, axes, rows);
  if (!opts.plot_path.empty()) write_plot(opts.plot_path, opts, axes, rows);

  const auto ok =
      std::count_if(rows.begin(), rows.end(), [](const Row& r) { return r.status == "ok"; });
  ctx.out << "sweep: " << opts.scenario << ": " << points.size() << " of " << total << " points"
          << (shard.count > 1 ? " (shard " + opts.shard + ")" : std::string()) << ", " << jobs
          << (jobs == 1 ? " thread" : " threads") << "; " << ok << " simulated, "
          << points.size() - static_cast<std::size_t>(ok) << " without a result (the reason is in "
          << "the status column)\n";
  const auto best = std::max_element(rows.begin(), rows.end(), [](const Row& a, const Row& b) {
    const double ta = a.status == "ok" && a.fits_memory ? a.tokens_per_s : -1;
    const double tb = b.status == "ok" && b.fits_memory ? b.tokens_per_s : -1;
    return ta < tb;
  });
  if (best != rows.end() && best->status == "ok" && best->fits_memory) {
    ctx.out << "best that fits in memory: point " << best->point;
    for (std::size_t a = 0; a < axes.size(); ++a) {
      ctx.out << " " << axes[a].key << "=" << best->values[a];
    }
    ctx.out << ": " << fmt("%.0f", best->tokens_per_s) << " tokens/s, iteration "
            << fmt("%.3f", best->iteration_s) << " s, " << best->plan << "\n";
  }
  ctx.out << "wrote " << opts.csv_path << (opts.plot_path.empty() ? "" : " and " + opts.plot_path)
          << "\n";
}

}  // namespace

void add_sweep_command(CLI::App& app, CliContext& ctx) {
  auto opts = std::make_shared<SweepOptions>();
  CLI::App* cmd = app.add_subcommand(
      "sweep",
      "Simulate a scenario over a grid of field values (parallel over the cores) and write one "
      "CSV row per point, optionally an SVG plot of throughput against the first grid key");
  cmd->add_option("scenario", opts->scenario, "Scenario YAML file")->required();
  cmd->add_option("--grid", opts->grids,
                  "A scenario field and its values, e.g. --grid cluster.topology.nodes=8,16,32 "
                  "(repeatable; the last varies fastest)")
      ->type_name("KEY=V1,V2,...")
      ->required()
      ->allow_extra_args(false);
  cmd->add_option("--set", opts->overrides,
                  "Override a scenario field at every point, e.g. --set plan.dp=null (repeatable)")
      ->type_name("KEY=VALUE")
      ->allow_extra_args(false);
  add_quiet_flag(*cmd, ctx);
  cmd->add_option("--jobs", opts->jobs, "Threads (default: every core)")
      ->check(CLI::Range(1, 1024))
      ->type_name("N");
  cmd->add_option("--shard", opts->shard,
                  "Run only points p with p % N == I, for job arrays (e.g. Slurm's "
                  "--shard $SLURM_ARRAY_TASK_ID/$SLURM_ARRAY_TASK_COUNT)")
      ->capture_default_str()
      ->type_name("I/N");
  cmd->add_option("--csv", opts->csv_path, "Write one row per point to FILE")
      ->required()
      ->type_name("FILE");
  cmd->add_option("--plot", opts->plot_path,
                  "Also draw tokens/s against the first grid key, one line per combination of "
                  "the others, as SVG")
      ->type_name("FILE.svg");
  cmd->footer(
      "Examples:\n"
      "  parashift sweep scenarios/default.yaml --set plan.dp=null \\\n"
      "    --grid cluster.topology.nodes=8,16,32,64 --grid plan.tp=4,8 --csv s.csv --plot s.svg");
  cmd->callback([opts, &ctx] { run_sweep(*opts, ctx); });
}

}  // namespace parashift::tools
