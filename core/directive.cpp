#include "core/directive.hpp"

#include "core/backend.hpp"

#include <algorithm>
#include <sstream>
#include <stdexcept>

#include <nlohmann/json.hpp>

namespace parashift::core {

namespace {

template <class... Ts>
struct Overloaded : Ts... {
  using Ts::operator()...;
};
template <class... Ts>
Overloaded(Ts...) -> Overloaded<Ts...>;

}  // namespace

std::string format_int_list(const std::vector<int>& values) {
  std::ostringstream out;
  out << '[';
  for (std::size_t i = 0; i < values.size(); ++i) out << (i ? "," : "") << values[i];
  out << ']';
  return out.str();
}

const char* kind_name(const DirectiveAction& action) {
  return std::visit(Overloaded{
                        [](const ReplanDirective&) { return "replan"; },
                        [](const RepartitionDirective&) { return "repartition"; },
                        [](const RebalanceDirective&) { return "rebalance"; },
                        [](const SnapshotDirective&) { return "snapshot"; },
                        [](const RestoreDirective&) { return "restore"; },
                        [](const RemapDirective&) { return "remap"; },
                        [](const ReorderDirective&) { return "reorder"; },
                    },
                    action);
}

std::string to_string(const FailureSeen& failure) {
  return failure.kind + " " + failure.component + " at iteration " +
         std::to_string(failure.iteration) +
         (failure.detail.empty() ? std::string() : " (" + failure.detail + ")");
}

std::string to_string(const Directive& directive) {
  std::string body = std::visit(
      Overloaded{
          [](const ReplanDirective& d) {
            return d.plan.label() + ", global batch " + std::to_string(d.plan.global_batch);
          },
          [](const RepartitionDirective& d) { return format_int_list(d.layers_per_stage); },
          [](const RebalanceDirective& d) { return format_int_list(d.micro_batches); },
          [](const SnapshotDirective& d) { return "v" + std::to_string(d.version); },
          [](const RestoreDirective& d) {
            return "v" + std::to_string(d.version) + (d.from_remote ? " from remote" : "");
          },
          [](const RemapDirective& d) {
            return "rank " + std::to_string(d.rank) + " -> gpu " + std::to_string(d.spare_gpu);
          },
          [](const ReorderDirective& d) {
            return "dp group " + std::to_string(d.group) + " ring " + format_int_list(d.order);
          },
      },
      directive.action);
  std::ostringstream out;
  out << kind_name(directive.action) << ' ' << body << " (" << directive.reason;
  out << "; gain " << directive.predicted_gain_s << " s)";
  return out.str();
}

void to_json(nlohmann::json& out, const Directive& directive) {
  out = nlohmann::json{{"kind", kind_name(directive.action)},
                       {"reason", directive.reason},
                       {"predicted_gain_s", directive.predicted_gain_s}};
  std::visit(
      Overloaded{
          [&](const ReplanDirective& d) {
            out["plan"] = d.plan.label();
            out["global_batch"] = d.plan.global_batch;
          },
          [&](const RepartitionDirective& d) { out["layers_per_stage"] = d.layers_per_stage; },
          [&](const RebalanceDirective& d) { out["micro_batches"] = d.micro_batches; },
          [&](const SnapshotDirective& d) { out["version"] = d.version; },
          [&](const RestoreDirective& d) {
            out["version"] = d.version;
            if (d.from_remote) out["from_remote"] = true;
          },
          [&](const RemapDirective& d) {
            out["rank"] = d.rank;
            out["spare_gpu"] = d.spare_gpu;
          },
          [&](const ReorderDirective& d) {
            out["group"] = d.group;
            out["order"] = d.order;
          },
      },
      directive.action);
}

void check_reorder(const ReorderDirective& directive, int groups, int dp) {
  const std::string what = "reorder dp group " + std::to_string(directive.group);
  if (directive.group < 0 || directive.group >= groups)
    throw std::invalid_argument(what + ": the plan has data-parallel groups 0.." +
                                std::to_string(groups - 1));
  std::vector<int> sorted = directive.order;
  std::sort(sorted.begin(), sorted.end());
  bool permutation = static_cast<int>(sorted.size()) == dp;
  for (int k = 0; permutation && k < dp; ++k)
    permutation = sorted[static_cast<std::size_t>(k)] == k;
  if (!permutation)
    throw std::invalid_argument(what + ": expected an order of the replicas 0.." +
                                std::to_string(dp - 1) + ", each once");
}

}  // namespace parashift::core
