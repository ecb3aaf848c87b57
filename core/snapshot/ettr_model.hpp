// Expected effective training time ratio (ETTR: useful training time over
// wall time) of a job that checkpoints synchronously every `interval_s` of
// training (stalling `write_s` per checkpoint) and, after each interruption,
// is down `restart_s` (detection, restart, reading the checkpoint) and
// redoes the work since its last checkpoint. Interruptions arrive as a
// Poisson process of rate `rate_per_s` over the whole job.
//
// Two closed forms for the same inputs:
//
//   Kokolis et al. 2024 ("Revisiting Reliability in Large-Scale Machine
//   Learning Research Clusters", arXiv 2410.21680), Meta's first-order model,
//   with lambda = N r_f the job's interruption rate, u0 the restart, dt the
//   interval and w the write:
//     E[ETTR] ~ (1 - lambda (u0 + dt / 2)) / (1 + w / dt)
//   (its text was not retrieved here; the form is the one a public
//   recomputation of the paper's figures uses, and it is the first order of
//   the exact form below).
//
//   The exact value for this model (renewal at each interruption): a gap X
//   between interruptions is Exp(lambda); the first u0 of it restarts, then
//   whole cycles of c = dt + w each save dt of work, the partial cycle is
//   lost. E[saved per gap] = dt * P(X > u0) * sum_k>=1 P(Exp >= k c)
//   = dt e^(-lambda u0) / (e^(lambda c) - 1), over E[X] = 1 / lambda:
//     ETTR = lambda dt e^(-lambda u0) / (e^(lambda (dt + w)) - 1).
//   An interruption during a restart starts the restart again, as the
//   campaign's baseline (sim/faults/baseline_policy.cpp) does.
#pragma once

namespace parashift::core {

struct CheckpointRestart {
  double rate_per_s = 0;  // interruptions of the job per second
  double interval_s = 0;  // training between checkpoints
  double write_s = 0;     // stall per checkpoint
  double restart_s = 0;   // down per interruption
};

/// Kokolis et al.'s first-order E[ETTR] (may fall below 0 when the
/// interruptions outrun the restarts; clamped to [0, 1]).
double kokolis_ettr(const CheckpointRestart& in);
/// The exact long-run ETTR under Poisson interruptions.
double renewal_ettr(const CheckpointRestart& in);

}  // namespace parashift::core
