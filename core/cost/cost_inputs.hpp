// What the cost model's estimate of a job needs: the model, the device and
// the cluster as the policy knows them (the presets, never a simulated
// cluster's hidden truth), and the sequence length.
#pragma once

#include "core/cost/cluster_view.hpp"
#include "core/device_spec.hpp"
#include "core/model_spec.hpp"

namespace parashift::core {

struct CostInputs {
  ModelSpec model;
  DeviceSpec device;
  ClusterView cluster;
  int seq_len = 0;
};

}  // namespace parashift::core
