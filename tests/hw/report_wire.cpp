#include "report_wire.hpp"

#include <cstdint>

#include <nlohmann/json.hpp>

namespace parashift::core {

// nlohmann's field-by-field conversions (found by argument-dependent lookup).
NLOHMANN_DEFINE_TYPE_NON_INTRUSIVE(GroupComm, group, kind, busy_ns, bytes)
NLOHMANN_DEFINE_TYPE_NON_INTRUSIVE(LinkTelemetry, link, bytes, utilisation, foreign_bytes,
                                   capacity_Bps, nominal_Bps)
NLOHMANN_DEFINE_TYPE_NON_INTRUSIVE(FailureSeen, kind, component, at_ns, iteration)
NLOHMANN_DEFINE_TYPE_NON_INTRUSIVE(GradientNorms, replica_sq_norm, replica_batch, global_sq_norm,
                                   global_batch)
NLOHMANN_DEFINE_TYPE_NON_INTRUSIVE(AppliedCost, kind, ns)

}  // namespace parashift::core

namespace parashift::test {

std::vector<std::byte> encode_report(const core::StepReport& r, const JobShape& shape) {
  nlohmann::json j = {{"iteration", r.iteration},
                      {"iteration_ns", r.iteration_ns},
                      {"rank_compute_ns", r.rank_compute_ns},
                      {"rank_optimizer_ns", r.rank_optimizer_ns},
                      {"rank_exposed_comm_ns", r.rank_exposed_comm_ns},
                      {"rank_peak_memory_bytes", r.rank_peak_memory_bytes},
                      {"comm", r.comm},
                      {"links", r.links},
                      {"failures", r.failures},
                      {"applied", r.applied},
                      {"warmup", r.warmup},
                      {"layers", shape.layers_per_stage},
                      {"micro", shape.micro_batches_per_replica},
                      {"iterations_done", shape.iterations_done}};
  if (r.gradients) j["gradients"] = *r.gradients;
  const std::vector<std::uint8_t> cbor = nlohmann::json::to_cbor(j);
  std::vector<std::byte> out(cbor.size());
  for (std::size_t i = 0; i < cbor.size(); ++i) out[i] = static_cast<std::byte>(cbor[i]);
  return out;
}

void decode_report(const std::vector<std::byte>& bytes, core::StepReport& r, JobShape& shape) {
  std::vector<std::uint8_t> cbor(bytes.size());
  for (std::size_t i = 0; i < bytes.size(); ++i) cbor[i] = static_cast<std::uint8_t>(bytes[i]);
  const nlohmann::json j = nlohmann::json::from_cbor(cbor);
  r = core::StepReport{};
  j.at("iteration").get_to(r.iteration);
  j.at("iteration_ns").get_to(r.iteration_ns);
  j.at("rank_compute_ns").get_to(r.rank_compute_ns);
  j.at("rank_optimizer_ns").get_to(r.rank_optimizer_ns);
  j.at("rank_exposed_comm_ns").get_to(r.rank_exposed_comm_ns);
  j.at("rank_peak_memory_bytes").get_to(r.rank_peak_memory_bytes);
  j.at("comm").get_to(r.comm);
  j.at("links").get_to(r.links);
  j.at("failures").get_to(r.failures);
  j.at("applied").get_to(r.applied);
  j.at("warmup").get_to(r.warmup);
  j.at("layers").get_to(shape.layers_per_stage);
  j.at("micro").get_to(shape.micro_batches_per_replica);
  j.at("iterations_done").get_to(shape.iterations_done);
  if (j.contains("gradients")) r.gradients = j.at("gradients").get<core::GradientNorms>();
}

}  // namespace parashift::test
