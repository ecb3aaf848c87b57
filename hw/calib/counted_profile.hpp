// The calibration profile of the CPU executor on virtual time (counted
// compute, hw/comm/virtual_time.hpp): what `parashift calibrate --backend hw`
// would measure there, derived instead of measured. Counted work charges a
// layer pass by its GEMMs' share of work (forward 1 unit per sequence,
// backward 2, split by tp), so the profile runs every GEMM at the one rate
// that makes a layer's forward over one sequence on one rank take
// `unit_ns`; the executor's other kernels and its memory streams, which
// counted work does not charge, cost nothing; and its all-reduce points are
// the virtual link's ring times. With the true unit and link it is the truth
// the policy's cost model should find; tests hand the policy a wrong one.
#pragma once

#include "core/scenario/scenario.hpp"
#include "core/units.hpp"
#include "hw/calib/calibration.hpp"
#include "hw/comm/virtual_time.hpp"

namespace parashift::hw {

CalibrationProfile counted_profile(const core::Scenario& scenario, core::TimeNs unit_ns,
                                   const VirtualLink& link);

}  // namespace parashift::hw
