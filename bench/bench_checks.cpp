// The output check's cost (algorithm/check.hpp): detail::allFinite, an OR of integer sums over the entries'
// bits, beside the floating-point sum of x - x it replaced (kept here only as the baseline), on results of
// the sizes the algorithms check: a 7-joint arm's tau (7) and I (49), and the n x n matrices of 24, 49 and
// 96-joint chains. Both loops are timed in one binary, interleaved at random.
//   build/release/bench/bench_checks --benchmark_enable_random_interleaving=true --benchmark_repetitions=5
#include <benchmark/benchmark.h>

#include <vector>

#include "denoc/algorithm/check.hpp"

namespace {

std::vector<double> entries(long n) {
  std::vector<double> v(static_cast<std::size_t>(n));
  for (long i = 0; i < n; ++i) v[static_cast<std::size_t>(i)] = 0.1 * static_cast<double>(i) - 3.0;
  return v;
}

/// The check before: x - x is 0 for a finite x and NaN otherwise, summed (one chain of dependent adds).
bool sumOfDifferences(const double* x, long n) {
  double acc = 0.0;
  for (long i = 0; i < n; ++i) acc += x[i] - x[i];
  return acc == 0.0;
}

void AllFinite(benchmark::State& state) {
  const std::vector<double> v = entries(state.range(0));
  for (auto _ : state) {
    benchmark::DoNotOptimize(v.data());
    benchmark::DoNotOptimize(denoc::detail::allFinite(v.data(), state.range(0)));
  }
}

void SumOfDifferences(benchmark::State& state) {
  const std::vector<double> v = entries(state.range(0));
  for (auto _ : state) {
    benchmark::DoNotOptimize(v.data());
    benchmark::DoNotOptimize(sumOfDifferences(v.data(), state.range(0)));
  }
}

BENCHMARK(AllFinite)->Arg(7)->Arg(49)->Arg(24 * 24)->Arg(49 * 49)->Arg(96 * 96);
BENCHMARK(SumOfDifferences)->Arg(7)->Arg(49)->Arg(24 * 24)->Arg(49 * 49)->Arg(96 * 96);

}  // namespace

BENCHMARK_MAIN();
