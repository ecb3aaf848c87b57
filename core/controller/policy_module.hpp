// The interface of a policy module and what it sees and writes each
// iteration. Modules run in registration order; a module earlier in the
// order (the straggler detector) can leave findings for later ones.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "core/backend.hpp"
#include "core/controller/job_model.hpp"
#include "core/controller/state_estimate.hpp"
#include "core/directive.hpp"

namespace parashift::core {

class CostCalibration;

/// A slow GPU (rank), node or link, and how much slower than normal.
struct StragglerFinding {
  enum class Kind { Gpu, Node, Link };
  Kind kind = Kind::Gpu;
  int id = 0;           // rank (Gpu) or node index (Node)
  std::string link;     // Link: its name
  double slowdown = 1;  // Gpu/Node: per-layer time / median; Link: best rate / current rate
  std::int64_t since_iteration = 0;  // when it was flagged
  /// "gpu 17", "node 2", "link leaf3-spine1".
  std::string subject() const;
  /// "gpu 17 1.5x slower", "node 2 1.48x slower", "link leaf3-spine1 2x slower".
  std::string describe() const;
  bool same_subject(const StragglerFinding& other) const {
    return kind == other.kind && id == other.id && link == other.link;
  }
};

/// One line of the decision log: a finding, a directive issued, or a change
/// considered and not applied (with the gain and cost that decided it).
struct Decision {
  std::int64_t iteration = 0;
  std::string module;
  std::string message;
  std::optional<Directive> directive;  // set when one was issued
  bool applied = false;                // directive issued (false: considered, rejected)
  double gain_s = 0;                   // predicted over the remaining run, before cost
  double cost_s = 0;                   // of making the change
};
std::string to_string(const Decision& decision);

struct PolicyContext {
  std::int64_t iteration = 0;
  std::int64_t iterations_since_change = 0;  // since the last directive was applied
  const JobModel& job;
  const StateEstimate& state;
  const Capabilities& capabilities;
  std::vector<StragglerFinding>& stragglers;  // current findings (the detector's output)
  std::vector<Directive>& directives;         // to apply after this iteration, in order
  std::vector<Decision>& log;
  const StepReport* report = nullptr;      // what this iteration measured
  CostCalibration* calibration = nullptr;  // the calibrated cost model, when calibrating
};

class PolicyModule {
 public:
  virtual ~PolicyModule() = default;
  virtual void run(PolicyContext& context) = 0;
};

}  // namespace parashift::core
