#include "core/snapshot/recovery_plan.hpp"

#include <cstdio>
#include <stdexcept>

#include <nlohmann/json.hpp>

namespace parashift::core {

double RecoveryPlan::moved_bytes() const {
  double sum = 0;
  for (const auto& m : moves) sum += m.bytes;
  return sum;
}

std::vector<Directive> RecoveryPlan::directives() const {
  std::vector<Directive> out;
  for (const auto& p : remaps) {
    out.push_back(Directive{RemapDirective{p.rank, p.to_gpu},
                            std::string("rank lost; spare on ") + to_string(p.nearness), 0});
  }
  if (replan) out.push_back(Directive{ReplanDirective{*replan}, "no spare left: shrink dp", 0});
  out.push_back(Directive{
      RestoreDirective{version, from_remote_checkpoint},
      from_remote_checkpoint ? "restore from remote checkpoint" : "restore lost shards from peers",
      0});
  return out;
}

void check_moves_only_lost(const RecoveryPlan& plan, const std::set<int>& lost_ranks) {
  for (const auto& m : plan.moves) {
    if (lost_ranks.count(m.rank) == 0) {
      throw std::logic_error("recovery moves " + std::string(to_string(m.kind)) + " of rank " +
                             std::to_string(m.rank) + ", which was not lost");
    }
  }
}

std::string to_string(const RecoveryPlan& plan) {
  char buf[256];
  std::snprintf(buf, sizeof buf,
                "restore %s %lld: %zu ranks remapped, %zu shard moves (%.3f GB), "
                "detect %.1f s + reinit %.1f s + transfer %.3f s = %.3f s",
                plan.from_remote_checkpoint ? "remote checkpoint" : "version", plan.version,
                plan.remaps.size(), plan.moves.size(), plan.moved_bytes() / 1e9,
                ns_to_s(plan.detect_ns), ns_to_s(plan.reinit_ns), ns_to_s(plan.transfer_ns),
                ns_to_s(plan.total_ns()));
  std::string s = buf;
  if (plan.replan) s += "; replan " + plan.replan->label();
  if (!plan.note.empty()) s += "; " + plan.note;
  return s;
}

void to_json(nlohmann::json& out, const RecoveryPlan& plan) {
  out = nlohmann::json::object();
  out["version"] = plan.version;
  out["from_remote_checkpoint"] = plan.from_remote_checkpoint;
  auto& remaps = out["remaps"] = nlohmann::json::array();
  for (const auto& p : plan.remaps) {
    remaps.push_back({{"rank", p.rank},
                      {"from_gpu", p.from_gpu},
                      {"to_gpu", p.to_gpu},
                      {"nearness", to_string(p.nearness)}});
  }
  auto& moves = out["moves"] = nlohmann::json::array();
  for (const auto& m : plan.moves) {
    moves.push_back({{"rank", m.rank},
                     {"shard", to_string(m.kind)},
                     {"version", m.version},
                     {"from_host", m.from_host},
                     {"to_gpu", m.to_gpu},
                     {"bytes", m.bytes}});
  }
  if (plan.replan) out["replan"] = plan.replan->label();
  out["moved_bytes"] = plan.moved_bytes();
  out["predicted_s"] = ns_to_s(plan.total_ns());
  out["detect_s"] = ns_to_s(plan.detect_ns);
  out["reinit_s"] = ns_to_s(plan.reinit_ns);
  out["transfer_s"] = ns_to_s(plan.transfer_ns);
  if (!plan.note.empty()) out["note"] = plan.note;
}

}  // namespace parashift::core
