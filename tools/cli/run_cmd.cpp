// `parashift run SCENARIO --backend hw|cuda|sim`: the same iterations on the
// real-hardware executor (one process per rank, under mpirun; cuda: one GPU
// per rank, CudaKernels and NCCL, then tools/cli/device_run.hpp's summary)
// or on the simulator, every backend through the one loop (core::JobRunner)
// under the scenario's policy and faults, as `simulate` runs them; each
// prints every iteration (hw and cuda with the measured loss) and the
// policy's report (tools/cli/run_report.hpp). --snapshot-every and
// --inject-kill are shorthands for faults.snapshot.every and a kill event.
// `--backend sim --profile CALIB.json` predicts the hw executor instead: the
// simulator gets the calibrated device and the executor's op list timed with
// the calibrated kernels (hw::executor_work_profile), and the executor's own
// replay (hw::predict_iteration) is printed beside it.
#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <iostream>
#include <limits>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "core/controller/calibration_report.hpp"
#include "core/controller/job_runner.hpp"
#include "core/input_error.hpp"
#include "core/scenario/scenario.hpp"
#include "core/work_split.hpp"
#include "hw/calib/counted_profile.hpp"
#include "hw/calib/executor_cost.hpp"
#include "hw/calib/predict.hpp"
#include "hw/comm/virtual_time.hpp"
#include "hw/comm/watchdog.hpp"
#include "hw/exec/training_run.hpp"
#include "sim/iteration.hpp"
#include "sim/sim_backend.hpp"
#include "tools/cli/command.hpp"
#include "tools/cli/elastic_shrink.hpp"
#include "tools/cli/format_number.hpp"
#include "tools/cli/output_file.hpp"
#include "tools/cli/run_options.hpp"
#include "tools/cli/run_report.hpp"

#ifdef PARASHIFT_HAVE_MPI
#include "hw/cpu/mpi_session.hpp"
#endif
#ifdef PARASHIFT_HAVE_CUDA
#include "hw/calib/collective_calibration.hpp"
#include "hw/cuda/cuda_kernels.hpp"
#include "tools/cli/device_run.hpp"
#endif
#if defined(PARASHIFT_HAVE_CUDA) && defined(PARASHIFT_HAVE_MPI)
#include "tools/cli/cuda_rank.hpp"
#endif

namespace parashift::tools {

namespace {

double ms(core::TimeNs t_ns) {
  return static_cast<double>(t_ns) / 1e6;
}

// "5:plan.pp=1,plan.dp=4" -> before iteration 5, the scenario's plan with
// those fields (the scenario re-read with them: every plan check applies).
hw::ScheduledReplan parse_replan(const std::string& text, const RunOptions& opts) {
  const std::string expected =
      "--replan " + text + ": expected ITERATION:plan.FIELD=VALUE,... e.g. 5:plan.pp=1,plan.dp=4";
  const auto colon = text.find(':');
  hw::ScheduledReplan r;
  try {
    if (colon == std::string::npos) throw std::invalid_argument("no ':'");
    std::size_t used = 0;
    r.before_iteration = std::stoi(text.substr(0, colon), &used);
    if (used != colon || r.before_iteration < 0) throw std::invalid_argument("iteration");
  } catch (const std::exception&) {
    throw core::InputError(expected);
  }
  std::vector<std::string> overrides = opts.overrides;
  const std::string rest = text.substr(colon + 1);
  for (std::size_t at = 0; at <= rest.size();) {
    const auto comma = std::min(rest.find(',', at), rest.size());
    const std::string field = rest.substr(at, comma - at);
    if (field.rfind("plan.", 0) != 0 && field.rfind("training.global_batch=", 0) != 0)
      throw core::InputError(expected + " (found '" + field + "')");
    overrides.push_back(field);
    at = comma + 1;
  }
  core::ScenarioOptions read;  // as run reads the scenario (on --node-ids: the plan's GPUs)
  read.plan_sets_gpus = !opts.node_ids.empty();
  try {
    r.plan = core::load_scenario(opts.scenario, overrides, read).plan;
  } catch (const core::InputError& e) {
    throw core::InputError("--replan " + text + ": " + e.what());
  }
  return r;
}

// "3:1,3" -> before iteration 3, layers [1, 3].
hw::ScheduledRepartition parse_repartition(const std::string& text) {
  const auto colon = text.find(':');
  hw::ScheduledRepartition r;
  try {
    if (colon == std::string::npos) throw std::invalid_argument("no ':'");
    r.before_iteration = std::stoi(text.substr(0, colon));
    std::string rest = text.substr(colon + 1);
    for (std::size_t at = 0; at <= rest.size();) {
      const auto comma = std::min(rest.find(',', at), rest.size());
      r.layers_per_stage.push_back(std::stoi(rest.substr(at, comma - at)));
      at = comma + 1;
    }
  } catch (const std::exception&) {
    throw core::InputError("--repartition " + text +
                           ": expected ITERATION:LAYERS,LAYERS,... e.g. 3:1,3");
  }
  return r;
}

// "2@5" -> faults.events gets {kind: kill, rank: 2, at_iteration: 5}.
core::FaultEvent parse_kill(const std::string& text) {
  const auto at = text.find('@');
  core::FaultEvent e;
  e.kind = core::FaultEventKind::Kill;
  e.where = e.rank_where = "--inject-kill " + text;
  try {
    if (at == std::string::npos) throw std::invalid_argument("no '@'");
    std::size_t used = 0;
    e.rank = std::stoi(text.substr(0, at), &used);
    if (used != at || e.rank < 0) throw std::invalid_argument("rank");
    e.at_iteration = std::stoi(text.substr(at + 1), &used);
    if (used != text.size() - at - 1 || e.at_iteration < 0)
      throw std::invalid_argument("iteration");
  } catch (const std::exception&) {
    throw core::InputError("--inject-kill " + text + ": expected RANK@ITERATION, e.g. 2@5");
  }
  return e;
}

void run_sim(const RunOptions& opts, const core::Scenario& scenario, int iterations,
             CliContext& ctx) {
  sim::SimBackend backend(scenario);
  core::JobRunner runner(backend, scenario.plan);
  runner.set_faults(scenario);
  runner.set_policy(scenario, iterations);
  nlohmann::json steps = nlohmann::json::array();
  int restarts = 0;
  std::size_t reported = 0;  // failures printed
  bool alive = true;         // false: a failure ended the run
  while (runner.next_iteration() < iterations && (alive = runner.step())) {
    if (runner.restarts() > restarts) {
      restarts = runner.restarts();
      for (std::size_t k = reported; k < runner.failures().size(); ++k)
        ctx.out << "recovered: " << core::to_string(runner.failures()[k])
                << "; resuming at iteration " << runner.next_iteration() << "\n";
      reported = runner.failures().size();
      continue;
    }
    const core::StepReport& report = *runner.last_report();
    ctx.out << "iteration " << report.iteration << "  time " << fmt("%.3f", ms(report.iteration_ns))
            << " ms  " << comm_summary(report) << "\n";
    steps.push_back(step_json(report));
  }
  const PolicyReport policy = policy_report(core::enabled_modules(scenario.policy), runner);
  print_policy(ctx.out, policy);
  const auto n = std::max<std::int64_t>(1, runner.iterations());
  ctx.out << "mean iteration " << fmt("%.3f", ms(runner.total_ns()) / static_cast<double>(n))
          << " ms (simulated, " << scenario.plan.label() << ")\n";
  if (!alive) ctx.status = 1;
  if (!opts.json_path.empty()) {
    nlohmann::json out{{"backend", "sim"},
                       {"scenario", scenario.name},
                       {"plan", scenario.plan.label()},
                       {"mean_iteration_ns", runner.total_ns() / n},
                       {"iterations", steps}};
    out.update(policy_json(policy));
    write_json_file(opts.json_path, out);
  }
}

// The hw executor's iteration predicted from a calibration profile, twice:
// by the simulator (fed the executor's calibrated work profile, each transfer
// alone on its route) and by the executor's own op-list replay.
void run_sim_calibrated(const RunOptions& opts, const core::Scenario& scenario, CliContext& ctx) {
  const hw::CalibrationProfile profile = hw::load_calibration(opts.profile_path);
  const core::DeviceSpec device = hw::device_from_profile(profile);
  const hw::ExecutorJob job = hw::executor_job(scenario, hw::parse_optimizer(opts.optimizer));
  const core::WorkProfile work = hw::executor_work_profile(job, profile);
  const sim::IterationInput input = sim::scenario_input(scenario, device, sim::NetworkModel::Path);
  const sim::PathModel paths(scenario.topology);
  const sim::IterationResult simulated = sim::simulate_iteration(input, work, paths);
  const hw::IterationPrediction replay = hw::predict_iteration(job, profile);
  ctx.out << "calibrated " << profile.device << " (" << profile.ranks << " rank(s)), "
          << scenario.plan.label() << ", " << opts.optimizer << "\n"
          << "  layer forward " << fmt("%.3f", ms(replay.layer_forward_ns)) << " ms  backward "
          << fmt("%.3f", ms(replay.layer_backward_ns)) << " ms  tp "
          << fmt("%.3f", ms(replay.tp_per_layer_ns)) << " ms per micro-batch\n"
          << "  pipeline " << fmt("%.3f", ms(replay.pipeline_ns)) << " ms  dp "
          << fmt("%.3f", ms(replay.dp_ns)) << " ms  optimizer "
          << fmt("%.3f", ms(replay.optimizer_ns)) << " ms\n"
          << "predicted iteration " << fmt("%.3f", ms(replay.iteration_ns))
          << " ms (hw executor replay)\n"
          << "simulated iteration " << fmt("%.3f", ms(simulated.iteration_ns))
          << " ms (simulator, calibrated executor work profile)\n";
  if (!opts.json_path.empty())
    write_json_file(opts.json_path, {{"backend", "sim"},
                                     {"profile", opts.profile_path},
                                     {"scenario", scenario.name},
                                     {"plan", scenario.plan.label()},
                                     {"predicted_iteration_ns", replay.iteration_ns},
                                     {"simulated_iteration_ns", simulated.iteration_ns},
                                     {"layer_forward_ns", replay.layer_forward_ns},
                                     {"layer_backward_ns", replay.layer_backward_ns},
                                     {"pipeline_ns", replay.pipeline_ns},
                                     {"dp_ns", replay.dp_ns},
                                     {"optimizer_ns", replay.optimizer_ns}});
}

#ifdef PARASHIFT_HAVE_MPI
void run_hw(const RunOptions& opts, const core::Scenario& scenario, int iterations,
            CliContext& ctx) {
  hw::TrainingRunConfig config;
  config.iterations = iterations;
  config.options.optimizer.kind = hw::parse_optimizer(opts.optimizer);
  config.options.optimizer.learning_rate =
      opts.learning_rate > 0
          ? static_cast<float>(opts.learning_rate)
          : hw::default_learning_rate(config.options.optimizer.kind, scenario.model.hidden);
  config.options.job = opts.job.empty() ? scenario.name : opts.job;
  config.options.shm_root = opts.shm_dir;
  config.options.compute_clock =
      opts.clock == "wall" ? hw::ComputeClock::Wall : hw::ComputeClock::Counted;
  hw::VirtualLink link;  // its defaults unless given
  if (opts.link_GBps > 0) link.Bps = opts.link_GBps * 1e9;
  if (opts.link_latency_us >= 0)
    link.latency_ns = static_cast<core::TimeNs>(std::llround(opts.link_latency_us * 1e3));
  if (opts.clock == "virtual") link.degrades = hw::virtual_degrades(scenario);
  // On virtual time the executor's profile is known, not measured: the
  // counted unit and the link (hw/calib/counted_profile.hpp), unless given.
  if (opts.clock == "virtual" && opts.profile_path.empty())
    config.policy_cost = hw::executor_cost_inputs(
        scenario, hw::counted_profile(scenario, config.options.counted_unit_ns, link),
        config.options.optimizer.kind);
  config.restore = opts.restore;
  if (!opts.profile_path.empty()) {
    const hw::CalibrationProfile profile = hw::load_calibration(opts.profile_path);
    try {
      config.policy_cost =
          hw::executor_cost_inputs(scenario, profile, config.options.optimizer.kind);
    } catch (const core::InputError& e) {
      throw core::InputError("--profile " + opts.profile_path + ": " + e.what());
    }
  }
  config.keep_snapshots = opts.keep_snapshots;
  for (const auto& text : opts.replans) config.replans.push_back(parse_replan(text, opts));
  // Checked against the plan before any rank starts: one entry per virtual
  // stage (pp x virtual_stages), at least one layer each, all the layers.
  const core::ParallelPlan& plan = scenario.plan;
  for (const auto& text : opts.repartitions) {
    config.repartitions.push_back(parse_repartition(text));
    core::check_split(config.repartitions.back().layers_per_stage, plan.pp * plan.virtual_stages,
                      scenario.model.layers, 1, "--repartition " + text);
  }

  hw::MpiSession mpi;
  auto world = mpi.world();
  const bool lead = world->rank() == 0;
  config.options.ranks_per_node =
      opts.ranks_per_node >= 0 ? opts.ranks_per_node : mpi.ranks_per_node();
  if (!opts.node_ids.empty()) {
    const int per_node =
        config.options.ranks_per_node > 0 ? config.options.ranks_per_node : world->size();
    config.options.host = parse_node_ids(
        opts.node_ids, world->size(), per_node)[static_cast<std::size_t>(world->rank() / per_node)];
  }
  hw::Communicator* job = world.get();
  // A peer that died or hangs leaves this rank blocked inside MPI, which no
  // exception can leave: the watchdog names the call and ends the job.
  std::optional<hw::Watchdog> dog;
  std::optional<hw::WatchedCommunicator> watched;
  if (opts.watchdog_s > 0 && opts.backend == "hw") {
    dog.emplace(std::chrono::seconds(opts.watchdog_s), world->rank(),
                [&mpi](const std::string& message) {
                  std::cerr << "parashift: error: " << message
                            << " [a peer rank stopped or hangs, or the network failed; after "
                               "fixing it, run again with --restore]\n"
                            << std::flush;
                  mpi.abort_job(3);
                });
    watched.emplace(*world, *dog, "world");
    job = &*watched;
  }
  std::optional<hw::VirtualClock> virtual_clock;
  std::optional<hw::VirtualTimeCommunicator> timed;
  if (opts.clock == "virtual") {
    virtual_clock.emplace();
    timed.emplace(*job, *virtual_clock, link);
    job = &*timed;
    config.options.virtual_clock = &*virtual_clock;
  }
#ifdef PARASHIFT_HAVE_CUDA
  CudaRank cuda;
  if (opts.backend == "cuda") {
    if (opts.device >= 0 && world->size() > 1)  // the same on every rank
      throw core::InputError("--device " + std::to_string(opts.device) + ": with " +
                             std::to_string(world->size()) +
                             " ranks each takes its GPU by its index on the node; leave --device "
                             "out");
    cuda = open_cuda_rank(mpi, opts.device,
                          opts.math == "tf32" ? hw::CudaMath::Tf32 : hw::CudaMath::Fp32, ctx,
                          scenario.nccl_algo);
    job = cuda.world.get();
    config.options.kernels = cuda.kernels.get();
    config.options.resident_data = true;
  }
#endif
  hw::TrainingRunResult result;
  std::vector<hw::CollectivePoint> all_reduce;
  try {
    result = hw::run_training(scenario, config, *job, [&](const hw::IterationRecord& rec) {
      if (!lead) return;
      ctx.out << "iteration " << rec.report.iteration << "  loss " << fmt("%.17g", rec.loss)
              << "  time " << fmt("%.3f", ms(rec.report.iteration_ns)) << " ms  "
              << comm_summary(rec.report) << "\n";
      ctx.out.flush();
    });
    // A failure seen by this rank ends the job; the others would wait for it.
    for (const auto& f : result.failures) {
      ctx.err << "parashift: rank " << world->rank() << ": " << core::to_string(f) << "\n";
      mpi.abort_job(1);
    }
#ifdef PARASHIFT_HAVE_CUDA
    // Every rank: the all-reduce bus bandwidth on the GPUs, over the job and
    // in the plan's tp and dp groups, for the prediction.
    if (cuda.kernels) {
      all_reduce = hw::measure_all_reduce(*job, *cuda.kernels, std::size_t{1} << 30, 5);
      for (const auto& point :
           hw::measure_plan_all_reduce(*job, *cuda.kernels, scenario.plan, std::size_t{1} << 30, 5))
        all_reduce.push_back(point);
    }
#endif
  } catch (const core::InputError&) {
    throw;  // every rank read the same input and fails the same way
  } catch (const std::exception& e) {
    // One rank's failure would leave the others waiting in a collective.
    ctx.err << "parashift: rank " << world->rank() << ": " << e.what() << "\n";
    mpi.abort_job(1);
  }
  if (!lead) return;
  nlohmann::json device_summary;
#ifdef PARASHIFT_HAVE_CUDA
  if (cuda.kernels) {
    std::vector<double> seconds;
    for (const auto& rec : result.iterations)
      seconds.push_back(static_cast<double>(rec.report.iteration_ns) * 1e-9);
    device_summary = report_device_run(*cuda.kernels, scenario, config.options.optimizer.kind,
                                       seconds, all_reduce, 10, ctx);
  }
#endif
  core::TimeNs total_ns = 0;
  nlohmann::json steps = nlohmann::json::array();
  for (const auto& rec : result.iterations) {
    total_ns += rec.report.iteration_ns;
    auto j = step_json(rec.report);
    j["loss"] = rec.loss;
    steps.push_back(j);
  }
  if (result.nothing_to_restore)
    ctx.out << "--restore: no snapshot of job '" << config.options.job
            << "' that every rank can restore; started from iteration 0\n";
  if (result.restored) {
    if (result.restored->resharded) {
      ctx.out << "restored snapshot v" << result.restored->version
              << " resharded from another plan's shards: " << result.restored->shards_fetched
              << " replica(s) read, " << fmt("%.0f", result.restored->bytes_fetched)
              << " bytes exchanged\n";
    } else {
      ctx.out << "restored snapshot v" << result.restored->version << ": fetched "
              << result.restored->shards_fetched << " lost shard(s), "
              << fmt("%.0f", result.restored->bytes_fetched) << " bytes\n";
    }
    // A refused shard counts as lost: its replica was fetched (or an older version used).
    for (const auto& line : result.restored->refused) ctx.out << "  refused " << line << "\n";
  }
  const PolicyReport policy{core::enabled_modules(scenario.policy), result.directives,
                            result.stragglers, result.failures, result.notes};
  print_policy(ctx.out, policy);
  if (result.calibration) core::print_calibration(ctx.out, *result.calibration);
  if (result.noise_scale)
    ctx.out << "gradient noise      " << fmt("%.1f", *result.noise_scale)
            << " sequences (McCandlish B_noise from " << result.noise_observations
            << " iteration(s) of replica and reduced gradient norms)\n";
  const auto n = static_cast<core::TimeNs>(std::max<std::size_t>(1, result.iterations.size()));
  if (!result.controller_wall_ns.empty()) {
    std::vector<core::TimeNs> t = result.controller_wall_ns;
    std::sort(t.begin(), t.end());
    ctx.out << "controller          " << fmt("%.3f", ms(t[(t.size() - 1) / 2])) << " ms median, "
            << fmt("%.3f", ms(t.back())) << " ms max after an iteration (measured, rank 0)\n";
  }
  ctx.out << "mean iteration " << fmt("%.3f", ms(total_ns / n)) << " ms over "
          << result.iterations.size() << " iteration(s) on " << world->size() << " rank(s) ("
          << (config.options.ranks_per_node == 0 ? world->size() : config.options.ranks_per_node)
          << " per node), " << plan_path(scenario.plan, result.final_plan) << ", " << opts.optimizer
          << " lr " << fmt("%g", config.options.optimizer.learning_rate) << "\n";
  if (!opts.json_path.empty()) {
    nlohmann::json out{{"backend", opts.backend},
                       {"scenario", scenario.name},
                       {"plan", scenario.plan.label()},
                       {"final_plan", result.final_plan.label()},
                       {"ranks", world->size()},
                       {"optimizer", opts.optimizer},
                       {"mean_iteration_ns", total_ns / n},
                       {"snapshots", result.snapshots},
                       {"layers_per_stage", result.final_layers_per_stage},
                       {"iterations", steps}};
    out.update(policy_json(policy));
    if (!device_summary.is_null()) out["device"] = device_summary;
    if (result.calibration) out["calibration"] = core::calibration_json(*result.calibration);
    if (result.noise_scale)
      out["noise_scale"] = {{"sequences", *result.noise_scale},
                            {"observations", result.noise_observations}};
    if (result.restored)
      out["restored"] = {{"version", result.restored->version},
                         {"shards_fetched", result.restored->shards_fetched},
                         {"bytes_fetched", result.restored->bytes_fetched},
                         {"refused", result.restored->refused}};
    write_json_file(opts.json_path, out);
  }
}
#endif

}  // namespace

void run_run(const RunOptions& opts, CliContext& ctx) {
  if (opts.elastic) return run_elastic(opts, ctx);
  if (opts.spares > 0 || opts.max_restarts != RunOptions{}.max_restarts ||
      opts.launcher != RunOptions{}.launcher || opts.shrink)
    throw core::InputError("--spares, --max-restarts, --launcher, --shrink: only with --elastic");
  if (!opts.replans.empty() && opts.backend == "sim")
    throw core::InputError(
        "--replan: only with --backend hw or cuda (simulate re-plans through "
        "policy.replan)");
  if (opts.backend != "cuda" && (opts.device >= 0 || !opts.math.empty()))
    throw core::InputError(std::string(opts.device >= 0 ? "--device" : "--math") +
                           ": only with --backend cuda");
  // The old flags are shorthands for scenario fields, set before the
  // scenario is read so that every check of the field applies to them.
  std::vector<std::string> overrides = opts.overrides;
  if (opts.snapshot_every > 0)
    overrides.push_back("faults.snapshot.every=" + std::to_string(opts.snapshot_every));
  // On nodes named by --node-ids (an elastic job shrunk to part of the
  // cluster) the plan sets how many GPUs the job runs on.
  core::ScenarioOptions read;
  read.plan_sets_gpus = !opts.node_ids.empty();
  core::Scenario scenario = core::load_scenario(opts.scenario, overrides, read);
  if (!opts.inject_kill.empty()) {
    if (!scenario.faults) scenario.faults.emplace();
    scenario.faults->events.push_back(parse_kill(opts.inject_kill));
  }
  if (opts.backend != "hw" && opts.clock != "wall")
    throw core::InputError("--clock " + opts.clock + ": only with --backend hw");
  if (opts.clock != "virtual" && (opts.link_GBps > 0 || opts.link_latency_us >= 0))
    throw core::InputError(std::string(opts.link_GBps > 0 ? "--link-GBps" : "--link-latency-us") +
                           ": only with --clock virtual (the modelled link)");
  const int iterations = opts.iterations > 0 ? opts.iterations : scenario.run.iterations;
#if defined(PARASHIFT_HAVE_CUDA) && defined(PARASHIFT_HAVE_MPI)
  if (opts.backend == "cuda") check_cuda_devices(opts.device);
#elif !defined(PARASHIFT_HAVE_CUDA)
  if (opts.backend == "cuda")
    throw core::InputError(
        "--backend cuda: this parashift was built without the CUDA toolkit and NCCL "
        "(configure with PARASHIFT_WITH_CUDA=ON)");
#endif
  if (opts.backend == "sim" && !opts.profile_path.empty())
    return run_sim_calibrated(opts, scenario, ctx);
  if (opts.backend == "sim") return run_sim(opts, scenario, iterations, ctx);
  if (!opts.profile_path.empty() && opts.backend != "hw")
    throw core::InputError(
        "--profile: only with --backend sim (it predicts the hw executor) or hw "
        "(the policy's cost model of the CPU ranks)");
  if (opts.backend == "hw" && opts.profile_path.empty() && opts.clock != "virtual" &&
      scenario.policy.enabled("calibrate"))
    throw core::InputError(
        "policy.calibrate with --backend hw: expected --profile CALIB.json (parashift calibrate "
        "--backend hw --scenario ...); the scenario's device is a GPU preset, not these CPU "
        "ranks");
#ifdef PARASHIFT_HAVE_MPI
  run_hw(opts, scenario, iterations, ctx);
#else
  throw core::InputError("--backend " + opts.backend + ": this parashift was built without MPI");
#endif
}

}  // namespace parashift::tools
