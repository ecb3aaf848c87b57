#include "core/cost/fsdp.hpp"

#include <algorithm>

#include "core/cost/overlap.hpp"
#include "core/cost/work_profile.hpp"

namespace parashift::core {

double embedding_params_on_gpu(bool tied_embeddings, double params_per_gpu_embedding, bool first,
                               bool last) {
  const int copies = tied_embeddings ? (first || last ? 1 : 0) : (first ? 1 : 0) + (last ? 1 : 0);
  return copies * params_per_gpu_embedding;
}

double stage_params_on_gpu(const WorkProfile& profile, bool tied_embeddings, double layers,
                           bool first, bool last) {
  return layers * profile.params_per_gpu_layer +
         embedding_params_on_gpu(tied_embeddings, profile.params_per_gpu_embedding, first, last);
}

TimeNs fsdp_forward_comm_ns(const FsdpComm& c, TimeNs layers) {
  return layers * c.gather_ns + c.other_gather_ns;
}

TimeNs fsdp_backward_comm_ns(const FsdpComm& c, TimeNs layers) {
  return layers * (c.gather_ns + c.scatter_ns) + c.other_gather_ns + c.other_scatter_ns;
}

TimeNs fsdp_comm_ns(const FsdpComm& c, TimeNs layers) {
  return fsdp_forward_comm_ns(c, layers) + fsdp_backward_comm_ns(c, layers);
}

TimeNs fsdp_forward_exposed_ns(const FsdpComm& c, TimeNs layers, TimeNs layer_ns, TimeNs passes) {
  passes = std::clamp<TimeNs>(passes, 0, layers);
  return passes * c.gather_ns + c.other_gather_ns +
         (layers - passes) * overlapped_exposed_ns(c.gather_ns, layer_ns);
}

TimeNs fsdp_backward_exposed_ns(const FsdpComm& c, TimeNs layers, TimeNs layer_ns, TimeNs passes) {
  passes = std::clamp<TimeNs>(passes, 0, layers);
  return passes * c.scatter_ns + c.other_scatter_ns +
         (layers - passes) * overlapped_exposed_ns(c.gather_ns + c.scatter_ns, layer_ns);
}

}  // namespace parashift::core
