#include "core/controller/controller.hpp"

#include <algorithm>
#include <sstream>
#include <variant>

namespace parashift::core {

std::string to_string(const Decision& decision) {
  std::ostringstream out;
  out.precision(4);
  out << "[" << decision.iteration << "] " << decision.module << ": " << decision.message;
  if (decision.directive && decision.applied) {
    out << " {gain " << decision.gain_s << " s, cost " << decision.cost_s << " s}";
  }
  return out.str();
}

Controller::Controller(JobModel job, PolicyConfig config, Capabilities capabilities)
    : Controller(std::move(job), config, capabilities,
                 config.registry ? *config.registry : builtin_policy_registry()) {}

Controller::Controller(JobModel job, PolicyConfig config, Capabilities capabilities,
                       const PolicyRegistry& registry)
    : job_(std::move(job)),
      config_(std::move(config)),
      capabilities_(capabilities),
      registry_(registry),
      state_(job_.plan, config_.window),
      rules_(config_.rules),
      since_change_(config_.window) {
  job_.normalise();
  build_modules();
}

void Controller::build_modules(const std::vector<std::string>* rebuild) {
  auto old = std::move(modules_);
  modules_.clear();
  // The calibrated model outlives rule changes and re-plans: its factors
  // are the cluster's, not the plan's.
  const ModuleConfig* calibrate = config_.find("calibrate");
  if (calibrate != nullptr && calibrate->enabled && job_.cost && !calibration_) {
    calibration_.emplace(*job_.cost, calibrate->knob("forgetting"), calibrate->knob("prior_sd"));
  }
  for (const auto& spec : registry_.modules()) {
    const ModuleConfig* m = config_.find(spec.name);
    if (m == nullptr || !m->enabled) continue;
    const bool remake = rebuild == nullptr ||
                        std::find(rebuild->begin(), rebuild->end(), spec.name) != rebuild->end();
    auto kept =
        std::find_if(old.begin(), old.end(), [&](const auto& e) { return e.first == spec.name; });
    if (!remake && kept != old.end()) {
      modules_.push_back(std::move(*kept));
    } else {
      modules_.emplace_back(spec.name, spec.make(*m));
    }
  }
}

void Controller::run_rules() {
  std::vector<std::string> changed;
  for (const PolicyRule* rule : rules_.evaluate(iteration_, state_, stragglers_)) {
    std::string message = rule->label + " (" + rule->describe() + "):";
    const auto lines = apply_rule(*rule, config_, changed);
    for (std::size_t i = 0; i < lines.size(); ++i) message += (i ? ", " : " ") + lines[i];
    log_.push_back({iteration_, "rules", message, std::nullopt, false, 0, 0});
  }
  if (!changed.empty()) build_modules(&changed);
}

std::vector<Directive> Controller::observe(const StepReport& report) {
  iteration_ = report.iteration;
  state_.add(report, job_);
  std::vector<Directive> directives;
  PolicyContext context{iteration_,    since_change_, job_,       state_,
                        capabilities_, stragglers_,   directives, log_};
  context.report = &report;
  context.calibration = calibration_ ? &*calibration_ : nullptr;
  for (auto& module : modules_) module.second->run(context);
  if (!rules_.empty()) run_rules();
  ++since_change_;
  issued_ += static_cast<std::int64_t>(directives.size());
  return directives;
}

void Controller::applied(const Directive& directive) {
  since_change_ = 0;
  if (const auto* d = std::get_if<RepartitionDirective>(&directive.action)) {
    job_.layers_per_virtual_stage = d->layers_per_stage;
  } else if (const auto* b = std::get_if<RebalanceDirective>(&directive.action)) {
    job_.micro_batches_per_replica = b->micro_batches;
  } else if (const auto* p = std::get_if<ReplanDirective>(&directive.action)) {
    // Another plan: other ranks and stages, so estimates and module state
    // start over; the job's per-layer constants are the new plan's. Only
    // `replan` (its reference) and `batch` (its noise estimate) keep their
    // state: it is of the job, not of the plan.
    if (job_.cost) {
      const CostInputs& c = *job_.cost;
      JobModel next = make_job_model(c.model, c.device, p->plan, c.work(c.device, p->plan),
                                     c.seq_len, job_.total_iterations, job_.gpus_per_node);
      limit_memory_by_group(next, c.device_groups, c.device);
      next.cost = job_.cost;
      job_ = std::move(next);
    } else {
      job_.plan = p->plan;
      job_.layers_per_virtual_stage.clear();
      job_.micro_batches_per_replica.clear();
      job_.stage_fixed_ns.assign(static_cast<std::size_t>(p->plan.pp), 0);
      job_.normalise();
    }
    state_ = StateEstimate(job_.plan, config_.window);
    stragglers_.clear();
    std::vector<std::string> rebuild;
    for (const auto& m : modules_)
      if (m.first != "replan" && m.first != "batch") rebuild.push_back(m.first);
    build_modules(&rebuild);
  }
}

const PolicyModule* Controller::module(const std::string& name) const {
  for (const auto& m : modules_)
    if (m.first == name) return m.second.get();
  return nullptr;
}

StepReport Controller::step(Backend& backend) {
  StepReport report = backend.step(job_.plan);
  for (const auto& directive : observe(report)) {
    backend.apply(directive);
    applied(directive);
  }
  return report;
}

}  // namespace parashift::core
