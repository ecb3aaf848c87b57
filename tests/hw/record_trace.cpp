// Records what the hw executor reports, iteration by iteration, on the
// controller contract's pp 4 x dp 4 job (threaded HwBackend ranks,
// contract_harness.hpp; 32 layers, 8 micro-batches per replica) with no
// controller: healthy, or with one rank's compute stretched by FACTOR from
// iteration ONSET on. The controller's replay tests
// (tests/core/controller/measured_trace_test.cpp) feed such traces to the
// live policy: a measured machine's noise, replayed deterministically.
//   build/tests/hw/hw_record_trace OUT.csv [ITERATIONS [RANK FACTOR ONSET]]
// ITERATIONS defaults to 1000. One line per iteration: iteration_ns, then
// compute_ns of ranks 0..15 (what the controller's state estimate reads);
// lines starting with '#' are comments.
#include <cstdio>
#include <cstdlib>
#include <ctime>
#include <string>

#include "contract_harness.hpp"

namespace {

// argv[i] as a number in [lo, hi], or exit 2 naming it.
double number_arg(char** argv, int i, const char* name, double lo, double hi) {
  char* end = nullptr;
  const double v = std::strtod(argv[i], &end);
  if (end == argv[i] || *end != '\0' || !(v >= lo && v <= hi)) {
    std::fprintf(stderr, "%s: %s: expected a number in %g..%g, got '%s'\n", argv[0], name, lo, hi,
                 argv[i]);
    std::exit(2);
  }
  return v;
}

// argv[i] as a whole number in [lo, hi], or exit 2 naming it.
long integer_arg(char** argv, int i, const char* name, long lo, long hi) {
  char* end = nullptr;
  const long v = std::strtol(argv[i], &end, 10);
  if (end == argv[i] || *end != '\0' || v < lo || v > hi) {
    std::fprintf(stderr, "%s: %s: expected a whole number in %ld..%ld, got '%s'\n", argv[0], name,
                 lo, hi, argv[i]);
    std::exit(2);
  }
  return v;
}

}  // namespace

int main(int argc, char** argv) {
  using namespace parashift;
  if (argc != 2 && argc != 3 && argc != 6) {
    std::fprintf(stderr, "usage: %s OUT.csv [ITERATIONS [RANK FACTOR ONSET]]\n", argv[0]);
    return 2;
  }
  core::ParallelPlan contract;  // the contract's healthy and detection job
  contract.pp = 4;
  contract.dp = 4;
  contract.global_batch = 32;
  const long iterations = argc >= 3 ? integer_arg(argv, 2, "ITERATIONS", 1, 1'000'000) : 1000L;
  const int rank =
      argc == 6 ? static_cast<int>(integer_arg(argv, 3, "RANK", 0, contract.gpus() - 1)) : -1;
  const double factor = argc == 6 ? number_arg(argv, 4, "FACTOR", 1, 100) : 1.0;
  const long onset = argc == 6 ? integer_arg(argv, 5, "ONSET", 0, 1'000'000) : 0L;
  std::FILE* out = std::fopen(argv[1], "w");
  if (out == nullptr) {
    std::fprintf(stderr, "%s: cannot write '%s'\n", argv[0], argv[1]);
    return 2;
  }
  test::HwHarness h(test::ContractCase{contract, 32});
  const core::ParallelPlan plan = h.job(iterations).plan;  // as the executor runs it
  const std::time_t now = std::time(nullptr);
  char when[32];
  std::strftime(when, sizeof when, "%Y-%m-%d %H:%M UTC", std::gmtime(&now));
  std::fprintf(out,
               "# hw executor, threaded harness (tests/hw/contract_harness.hpp), pp 4 x dp 4, "
               "32 layers, 8 micro-batches per replica; %ld iterations, %s\n",
               iterations, when);
  if (rank >= 0) {
    std::fprintf(out, "# rank %d's compute stretched %gx from iteration %ld on\n", rank, factor,
                 onset);
  } else {
    std::fprintf(out, "# healthy\n");
  }
  std::fprintf(out, "# iteration_ns, compute_ns x %d ranks\n", plan.gpus());
  for (long i = 0; i < iterations; ++i) {
    if (rank >= 0 && i == onset) h.slow_down(rank, factor);
    const core::StepReport r = h.backend().step(plan);
    std::fprintf(out, "%lld", static_cast<long long>(r.iteration_ns));
    for (const auto v : r.rank_compute_ns) std::fprintf(out, ",%lld", static_cast<long long>(v));
    std::fprintf(out, "\n");
  }
  return std::fclose(out) == 0 ? 0 : 1;
}
