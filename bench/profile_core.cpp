// A plain loop over one core algorithm, for instruction-level profiling (valgrind --tool=callgrind, perf):
// no benchmark framework around it, the same 64 random states as bench_core.
//
//   bench_profile MODEL ALGO [CALLS]
//     MODEL: panda | stanford | chain<n>
//     ALGO:  id | m | ff | udu | fd | chol | minv | fixman
//
//   valgrind --tool=callgrind --callgrind-out-file=cg.out build/release/bench/bench_profile panda id 10000
//   callgrind_annotate cg.out | head -40
// Prints the sum of the results (so that nothing is optimised away) and the instructions per call are
// callgrind's total divided by CALLS (set-up costs a few hundred thousand instructions).
#include <cstdio>
#include <cstdlib>
#include <random>
#include <string>
#include <vector>

#include "denoc/algorithm/fixman.hpp"
#include "denoc/denoc.hpp"
#include "models.hpp"

int main(int argc, char** argv) {
  if (argc < 3) {
    std::fprintf(stderr, "usage: %s MODEL ALGO [CALLS]\n", argv[0]);
    return 2;
  }
  const std::string model_name = argv[1], algo = argv[2];
  const long calls = argc > 3 ? std::atol(argv[3]) : 100000;
  denoc::ModelSpec spec;
  if (model_name == "panda") {
    spec = denoc::bench::pandaSpec();
  } else if (model_name == "stanford") {
    spec = denoc::bench::stanfordArmSpec();
  } else if (model_name.rfind("chain", 0) == 0) {
    spec = denoc::bench::chainSpec(std::atoi(model_name.c_str() + 5));
  } else {
    std::fprintf(stderr, "unknown model %s\n", model_name.c_str());
    return 2;
  }
  const denoc::Model model = denoc::buildModel(spec);
  denoc::Data data(model);
  const int n = model.n;
  std::mt19937 rng(12345u);
  std::uniform_real_distribution<double> u(-1.0, 1.0);
  constexpr int kStates = 64;
  std::vector<Eigen::VectorXd> q(kStates, Eigen::VectorXd(n)), qd = q, x = q;
  for (int k = 0; k < kStates; ++k) {
    for (int i = 0; i < n; ++i) {
      q[k][i] = 3.0 * u(rng);
      qd[k][i] = u(rng);
      x[k][i] = u(rng);
    }
  }
  const std::vector<std::string> names = {"id", "m", "ff", "udu", "fd", "chol", "minv", "fixman"};
  int a = 0;
  while (a < static_cast<int>(names.size()) && names[static_cast<std::size_t>(a)] != algo) ++a;
  if (a == static_cast<int>(names.size())) {
    std::fprintf(stderr, "unknown algorithm %s\n", algo.c_str());
    return 2;
  }
  double sum = 0.0;
  for (long c = 0; c < calls; ++c) {
    const int s = static_cast<int>(c & (kStates - 1));
    switch (a) {
      case 0:
        sum += denoc::inverseDynamics(model, data, q[s], qd[s], x[s])[0];
        break;
      case 1:
        sum += denoc::computeInertiaMatrix(model, data, q[s])(0, 0);
        break;
      case 2:
        denoc::computeFullFactor(model, data, q[s]);
        sum += data.U(0, n - 1) + data.D[0];
        break;
      case 3:
        denoc::computeUDU(model, data, q[s], false);
        sum += data.D[0];
        break;
      case 4:
        sum += denoc::forwardDynamics(model, data, q[s], qd[s], x[s])[0];
        break;
      case 5:
        sum += denoc::forwardDynamicsCholesky(model, data, q[s], qd[s], x[s])[0];
        break;
      case 6:
        sum += denoc::computeInverseInertia(model, data, q[s])(0, 0);
        break;
      default:
        sum += denoc::forwardDynamicsFixman(model, data, q[s], qd[s], x[s])[0];
        break;
    }
  }
  std::printf("%s %s: %ld calls, sum %.17g\n", model_name.c_str(), algo.c_str(), calls, sum);
  return 0;
}
