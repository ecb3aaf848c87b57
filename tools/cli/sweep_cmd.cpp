// `parashift sweep SCENARIO --grid KEY=V1,V2 ...`: run every point of a grid
// of scenario overrides (simulate, plan or faults: tools/cli/sweep_point),
// in parallel over the cores, and write one CSV row per point in grid order
// (the last --grid varies fastest), plus an optional SVG plot of the run's
// main figure against the first grid key and a JSON copy. --random N runs a
// seeded sample of the grid; --resume keeps the rows a CSV already holds.
#include <algorithm>
#include <atomic>
#include <exception>
#include <fstream>
#include <map>
#include <memory>
#include <mutex>
#include <random>
#include <string>
#include <thread>
#include <vector>

#include "core/input_error.hpp"
#include "core/scenario/scenario.hpp"
#include "tools/cli/command.hpp"
#include "tools/cli/csv_text.hpp"
#include "tools/cli/format_number.hpp"
#include "tools/cli/output_file.hpp"
#include "tools/cli/output_path.hpp"
#include "tools/cli/progress.hpp"
#include "tools/cli/svg_plot.hpp"
#include "tools/cli/sweep_point.hpp"
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
  std::string json_path;
  std::string run = "simulate";
  int seeds = 10;
  double days = 0;
  long long random = 0;  // 0: every point
  long long seed = 1;
  bool resume = false;
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
  SweepResult result;
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

std::vector<std::string> values_of(const std::vector<GridAxis>& axes, long long point) {
  std::vector<std::string> values(axes.size());
  long long rest = point;
  for (std::size_t a = axes.size(); a-- > 0;) {
    const auto n = static_cast<long long>(axes[a].values.size());
    values[a] = axes[a].values[static_cast<std::size_t>(rest % n)];
    rest /= n;
  }
  return values;
}

Row run_point(const SweepOptions& opts, const SweepSettings& settings,
              const std::vector<GridAxis>& axes, long long point) {
  Row row;
  row.point = point;
  row.values = values_of(axes, point);
  std::vector<std::string> overrides = opts.overrides;
  for (std::size_t a = 0; a < axes.size(); ++a) {
    overrides.push_back(axes[a].key + "=" + row.values[a]);
  }
  row.result = run_sweep_point(opts.scenario, overrides, settings);
  return row;
}

std::string csv_header(const std::vector<GridAxis>& axes, SweepRun run) {
  std::string header = "point";
  for (const auto& a : axes) header += "," + csv_field(a.key);
  header += ",status";
  for (const auto& c : result_columns(run)) header += "," + c;
  return header;
}

void write_csv(const std::string& path, const std::string& header, SweepRun run,
               const std::vector<Row>& rows) {
  std::ofstream file = open_output_file(path);
  file << header << "\n";
  for (const Row& r : rows) {
    file << r.point;
    for (const auto& v : r.values) file << ',' << csv_field(v);
    file << ',' << csv_field(r.result.status);
    for (std::size_t c = 0; c < result_columns(run).size(); ++c) {
      file << ',' << (c < r.result.cells.size() ? csv_field(r.result.cells[c]) : "");
    }
    file << '\n';
  }
  if (!file) throw core::InputError(path + ": write failed");
}

// --resume: the rows an earlier run of the same sweep wrote to `path`, by
// point. A file with another header is another sweep: refused.
std::map<long long, Row> read_done(const std::string& path, const std::string& header,
                                   const std::vector<GridAxis>& axes, SweepRun run) {
  std::map<long long, Row> done;
  std::ifstream in(path);
  if (!in) return done;  // nothing yet: the whole sweep runs
  std::string line;
  if (!std::getline(in, line)) return done;
  if (line != header) {
    throw core::InputError("--resume: " + path + ": its header is '" + line + "', this sweep's '" +
                           header + "' (another grid or --run?)");
  }
  const std::size_t width = 2 + axes.size() + result_columns(run).size();
  for (int line_no = 2; std::getline(in, line); ++line_no) {
    const auto fields = csv_fields(line);
    Row row;
    std::size_t used = 0;
    try {
      row.point = std::stoll(fields[0], &used);
    } catch (const std::exception&) {
      used = 0;
    }
    if (fields.size() != width || used == 0 || used != fields[0].size() || row.point < 0) {
      throw core::InputError("--resume: " + path + ":" + std::to_string(line_no) + ": expected " +
                             std::to_string(width) + " fields starting with a point number");
    }
    row.values.assign(fields.begin() + 1, fields.begin() + 1 + static_cast<long>(axes.size()));
    if (row.values != values_of(axes, row.point)) {
      throw core::InputError("--resume: " + path + ":" + std::to_string(line_no) + ": point " +
                             fields[0] + " holds other grid values than this sweep's");
    }
    row.result.status = fields[1 + axes.size()];
    if (row.result.status == "ok") {
      row.result.cells.assign(fields.begin() + 2 + static_cast<long>(axes.size()), fields.end());
    }
    done[row.point] = std::move(row);
  }
  return done;
}

void write_json(const std::string& path, const std::vector<GridAxis>& axes, SweepRun run,
                const std::vector<Row>& rows) {
  nlohmann::json out = nlohmann::json::array();
  for (const Row& r : rows) {
    nlohmann::json j = {{"point", r.point}, {"status", r.result.status}};
    for (std::size_t a = 0; a < axes.size(); ++a) j[axes[a].key] = r.values[a];
    for (std::size_t c = 0; c < r.result.cells.size(); ++c) {
      const std::string& cell = r.result.cells[c];
      std::size_t used = 0;
      double number = 0;
      try {
        number = std::stod(cell, &used);
      } catch (const std::exception&) {
        used = 0;
      }
      if (cell == "true" || cell == "false") {
        j[result_columns(run)[c]] = cell == "true";
      } else if (used == cell.size() && used > 0) {
        j[result_columns(run)[c]] = number;
      } else {
        j[result_columns(run)[c]] = cell;
      }
    }
    out.push_back(std::move(j));
  }
  write_json_file(path, out);
}

// The run's figure against the first grid key, one line per combination of
// the other keys' values.
void write_plot(const std::string& path, const SweepOptions& opts, SweepRun run,
                const std::vector<GridAxis>& axes, const std::vector<Row>& rows) {
  LinePlot plot;
  plot.title = "parashift sweep --run " + opts.run + ": " + opts.scenario;
  plot.x_label = axes.front().key;
  plot.y_label = plotted_label(run);
  plot.x_ticks = axes.front().values;
  std::map<std::string, std::size_t> series_of;
  for (const Row& r : rows) {
    std::string label;
    for (std::size_t a = 1; a < axes.size(); ++a) {
      label += (label.empty() ? "" : " ") + axes[a].key + "=" + r.values[a];
    }
    if (label.empty()) label = plotted_label(run);
    auto [it, added] = series_of.emplace(label, plot.series.size());
    if (added)
      plot.series.push_back({label, std::vector<std::optional<double>>(plot.x_ticks.size())});
    if (r.result.status != "ok") continue;
    const auto x = std::find(plot.x_ticks.begin(), plot.x_ticks.end(), r.values.front());
    plot.series[it->second].y[static_cast<std::size_t>(x - plot.x_ticks.begin())] =
        best_value(run, r.result);
  }
  // A series with no result at all only clutters the legend.
  std::erase_if(plot.series, [](const PlotSeries& s) {
    return std::none_of(s.y.begin(), s.y.end(), [](const auto& y) { return y.has_value(); });
  });
  std::ofstream file = open_output_file(path);
  write_svg(file, plot);
}

// --random N: N distinct points of [0, total), drawn with `seed`, in grid order.
std::vector<long long> sample_points(long long total, long long n, long long seed) {
  std::vector<long long> all(static_cast<std::size_t>(total));
  for (long long p = 0; p < total; ++p) all[static_cast<std::size_t>(p)] = p;
  std::mt19937_64 rng(static_cast<std::uint64_t>(seed));
  // A partial Fisher-Yates shuffle: the first n are a uniform sample.
  for (long long i = 0; i < n; ++i) {
    std::uniform_int_distribution<long long> pick(i, total - 1);
    std::swap(all[static_cast<std::size_t>(i)], all[static_cast<std::size_t>(pick(rng))]);
  }
  all.resize(static_cast<std::size_t>(n));
  std::sort(all.begin(), all.end());
  return all;
}

void run_sweep(const SweepOptions& opts, CliContext& ctx) {
  check_output_path("--csv", opts.csv_path);
  check_output_path("--plot", opts.plot_path);
  check_output_path("--json", opts.json_path);
  SweepSettings settings;
  if (!parse_sweep_run(opts.run, settings.run)) {
    throw core::InputError("--run " + opts.run + ": expected simulate, plan or faults");
  }
  settings.seeds = opts.seeds;
  settings.days = opts.days;
  const SweepRun run = settings.run;
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
  if (opts.random > total) {
    throw core::InputError("--random " + std::to_string(opts.random) + ": the grid has " +
                           std::to_string(total) + " points");
  }
  core::ScenarioOptions load;
  load.plan_optional = run == SweepRun::Plan;
  const core::Scenario base = core::load_scenario(opts.scenario, opts.overrides, load);
  if (run == SweepRun::Faults && !base.faults) {
    throw core::InputError(opts.scenario +
                           ": faults: missing; --run faults needs a faults section");
  }
  for (const auto& axis : axes) check_key(opts, axis);

  const std::vector<long long> grid =
      opts.random > 0 ? sample_points(total, opts.random, opts.seed) : std::vector<long long>{};
  std::vector<long long> points;
  if (opts.random > 0) {
    for (long long p : grid) {
      if (p % shard.count == shard.index) points.push_back(p);
    }
  } else {
    for (long long p = shard.index; p < total; p += shard.count) points.push_back(p);
  }
  const std::string header = csv_header(axes, run);
  std::map<long long, Row> done;
  if (opts.resume) done = read_done(opts.csv_path, header, axes, run);
  std::vector<Row> rows(points.size());
  std::vector<std::size_t> todo;
  for (std::size_t i = 0; i < points.size(); ++i) {
    const auto it = done.find(points[i]);
    if (it != done.end()) {
      rows[i] = it->second;
    } else {
      todo.push_back(i);
    }
  }
  const unsigned cores = std::max(1U, std::thread::hardware_concurrency());
  const auto jobs = static_cast<std::size_t>(
      std::clamp<long long>(opts.jobs > 0 ? opts.jobs : cores, 1,
                            std::max<long long>(1, static_cast<long long>(todo.size()))));

  // Each thread takes the next point; rows land at their point's place, so
  // the CSV is in grid order whatever the number of threads.
  std::atomic<std::size_t> next{0};
  std::exception_ptr failure;
  std::mutex failure_mutex;
  std::atomic<long long> finished{0};
  Progress bar(ctx, "points");
  auto work = [&] {
    for (std::size_t k = next++; k < todo.size(); k = next++) {
      try {
        rows[todo[k]] = run_point(opts, settings, axes, points[todo[k]]);
        bar.update(++finished, static_cast<long long>(todo.size()));
      } catch (...) {
        const std::lock_guard<std::mutex> lock(failure_mutex);
        if (!failure) failure = std::current_exception();
        next = todo.size();
      }
    }
  };
  std::vector<std::thread> threads;
  for (std::size_t t = 1; t < jobs; ++t) threads.emplace_back(work);
  work();
  for (auto& t : threads) t.join();
  bar.finish();
  if (failure) std::rethrow_exception(failure);

  write_csv(opts.csv_path, header, run, rows);
  if (!opts.plot_path.empty()) write_plot(opts.plot_path, opts, run, axes, rows);
  if (!opts.json_path.empty()) write_json(opts.json_path, axes, run, rows);

  const auto ok =
      std::count_if(rows.begin(), rows.end(), [](const Row& r) { return r.result.status == "ok"; });
  ctx.out << "sweep: " << opts.scenario << ": " << points.size() << " of " << total << " points"
          << (opts.random > 0 ? " (a random " + std::to_string(opts.random) + ", seed " +
                                    std::to_string(opts.seed) + ")"
                              : std::string())
          << (shard.count > 1 ? " (shard " + opts.shard + ")" : std::string()) << ", " << jobs
          << (jobs == 1 ? " thread" : " threads") << "; "
          << (opts.resume ? std::to_string(points.size() - todo.size()) + " kept from " +
                                opts.csv_path + ", "
                          : std::string())
          << ok << " with a result (--run " << opts.run << "), "
          << points.size() - static_cast<std::size_t>(ok) << " without (the reason is in "
          << "the status column)\n";
  const Row* best = nullptr;
  for (const Row& r : rows) {
    if (best_eligible(run, r.result) &&
        (best == nullptr || best_value(run, r.result) > best_value(run, best->result))) {
      best = &r;
    }
  }
  if (best != nullptr) {
    ctx.out << best_heading(run) << ": point " << best->point;
    for (std::size_t a = 0; a < axes.size(); ++a) {
      ctx.out << " " << axes[a].key << "=" << best->values[a];
    }
    ctx.out << ": " << best_summary(run, best->result) << "\n";
  }
  ctx.out << "wrote " << opts.csv_path << (opts.plot_path.empty() ? "" : ", " + opts.plot_path)
          << (opts.json_path.empty() ? "" : ", " + opts.json_path) << "\n";
}

}  // namespace

void add_sweep_command(CLI::App& app, CliContext& ctx) {
  auto opts = std::make_shared<SweepOptions>();
  CLI::App* cmd = app.add_subcommand(
      "sweep",
      "Simulate, plan or run a fault campaign over a grid of scenario field values (parallel "
      "over the cores, resumable, shardable) and write one CSV row per point, optionally a "
      "JSON copy and an SVG plot against the first grid key");
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
  cmd->add_option("--run", opts->run,
                  "What each point runs: simulate (tokens/s of the scenario's plan), plan (the "
                  "planner's best plan) or faults (a campaign's ETTR)")
      ->capture_default_str();
  cmd->add_option("--seeds", opts->seeds, "--run faults: failure draws per point")
      ->check(CLI::Range(1, 100000))
      ->capture_default_str();
  cmd->add_option("--days", opts->days,
                  "--run faults: simulated days per seed (default: the scenario's faults.days)")
      ->check(CLI::Range(1e-6, 3650.0));
  cmd->add_option("--random", opts->random, "Run N points of the grid drawn at random (--seed)")
      ->check(CLI::Range(1LL, 10'000'000LL))
      ->type_name("N");
  cmd->add_option("--seed", opts->seed, "Seed of --random's draw")
      ->check(CLI::NonNegativeNumber)
      ->capture_default_str();
  cmd->add_flag("--resume", opts->resume,
                "Keep the rows --csv FILE already holds from the same sweep and run the rest");
  cmd->add_option("--csv", opts->csv_path, "Write one row per point to FILE")
      ->required()
      ->type_name("FILE");
  cmd->add_option("--json", opts->json_path, "Also write the rows as a JSON array to FILE")
      ->type_name("FILE");
  cmd->add_option("--plot", opts->plot_path,
                  "Also draw the run's figure (tokens/s; faults: ETTR p50) against the first grid "
                  "key, one line per combination of the others, as SVG")
      ->type_name("FILE.svg");
  cmd->footer(
      "Examples:\n"
      "  parashift sweep scenarios/default.yaml --set plan.dp=null \\\n"
      "    --grid cluster.topology.nodes=8,16,32,64 --grid plan.tp=4,8 --csv s.csv --plot s.svg\n"
      "  parashift sweep scenarios/default.yaml --run plan --grid "
      "cluster.topology.nodes=8,16,32,64 "
      "--csv p.csv\n"
      "  parashift sweep scenarios/faults-llama3-405b-16k.yaml --run faults --seeds 5 --days 2 \\\n"
      "    --grid faults.gpu_mtbf_hours=5000,20000,80000 --csv e.csv --plot ettr.svg");
  cmd->callback([opts, &ctx] { run_sweep(*opts, ctx); });
}

}  // namespace parashift::tools
