// How often to snapshot: the interval that minimises expected lost time
// given the cost C of one snapshot (training stalled) and the mean time
// between failures M of the whole job.
//
//   Young (1974), "A first order approximation to the optimum checkpoint
//   interval", CACM 17(9):  tau = sqrt(2 C M).
//   Daly (2006), "A higher order estimate of the optimum checkpoint interval
//   for restart dumps", FGCS 22(3), eq. (37): for C < 2M,
//     tau = sqrt(2 C M) * [1 + (1/3) sqrt(C / (2M)) + (1/9) (C / (2M))] - C,
//   and tau = M otherwise. tau is compute time between the end of one
//   snapshot and the start of the next.
#pragma once

namespace parashift::core {

double young_interval_s(double cost_s, double mtbf_s);
double daly_interval_s(double cost_s, double mtbf_s);

}  // namespace parashift::core
