// Timings of Fixman's O(n) route (Wang and Chirikjian) against Saha's three-sweep forward dynamics and the
// inertia-matrix-plus-Cholesky route, and of the convective inertia matrix C(q, qd), on the chains of
// docs/design.md (n revolute joints, axes cycling z, y, x; links 0.1 m; 1 kg; mass center mid-link;
// I = diag(0.01, 0.01, 0.005)).
//
// Benchmarks are named ALGO/ROUTE/chain<n>:
//   FD/saha, FD/fixman, FD/cholesky   forward dynamics: forwardDynamics, forwardDynamicsFixman,
//                                     forwardDynamicsCholesky (each includes the bias by inverse dynamics)
//   Solve/fixman                      fixmanSolve: I(q) x = b (factor and solve, no bias)
//   LogDet/fixman, LogDet/udu         fixmanLogDet; computeUDU(.., false) (sum log mh)
//   C/saha                            computeConvectiveMatrix (O(n^2))
//   M/crba                            computeInertiaMatrix, for scale (O(n^2))
// Every iteration uses the next of 64 pre-generated random states.
#include <benchmark/benchmark.h>

#include <random>
#include <string>
#include <vector>

#include "denoc/algorithm/convective.hpp"
#include "denoc/algorithm/fixman.hpp"
#include "denoc/algorithm/forward_dynamics.hpp"
#include "denoc/algorithm/inertia_matrix.hpp"
#include "denoc/algorithm/udu.hpp"
#include "denoc/data.hpp"
#include "denoc/model.hpp"
#include "models.hpp"

namespace {

using denoc::Data;
using denoc::Model;

struct States {
  std::vector<Eigen::VectorXd> q, qd, tau;
  explicit States(int n) {
    std::mt19937 rng(12345u + static_cast<unsigned>(n));
    std::uniform_real_distribution<double> u(-1.0, 1.0);
    for (int k = 0; k < 64; ++k) {
      Eigen::VectorXd a(n), b(n), c(n);
      for (int i = 0; i < n; ++i) {
        a[i] = 3.0 * u(rng);
        b[i] = 2.0 * u(rng);
        c[i] = 5.0 * u(rng);
      }
      q.push_back(a);
      qd.push_back(b);
      tau.push_back(c);
    }
  }
};

template <typename F>
void registerRoute(const std::string& name, int n, F body) {
  benchmark::RegisterBenchmark((name + "/chain" + std::to_string(n)).c_str(),
                               [n, body](benchmark::State& st) {
                                 const Model model = denoc::buildModel(denoc::bench::chainSpec(n));
                                 Data data(model);
                                 const States s(n);
                                 Eigen::VectorXd x(n);
                                 std::size_t k = 0;
                                 for (auto _ : st) {
                                   body(model, data, s.q[k], s.qd[k], s.tau[k], x);
                                   k = (k + 1) & 63u;
                                 }
                                 st.counters["dof"] = n;
                               });
}

}  // namespace

int main(int argc, char** argv) {
  using V = Eigen::VectorXd;
  for (int n : {3, 6, 12, 24, 48, 96, 192, 500}) {
    registerRoute("FD/saha", n, [](const Model& m, Data& d, const V& q, const V& qd, const V& tau, V&) {
      benchmark::DoNotOptimize(denoc::forwardDynamics(m, d, q, qd, tau).data());
    });
    registerRoute("FD/fixman", n, [](const Model& m, Data& d, const V& q, const V& qd, const V& tau, V&) {
      benchmark::DoNotOptimize(denoc::forwardDynamicsFixman(m, d, q, qd, tau).data());
    });
    registerRoute("FD/cholesky", n, [](const Model& m, Data& d, const V& q, const V& qd, const V& tau, V&) {
      benchmark::DoNotOptimize(denoc::forwardDynamicsCholesky(m, d, q, qd, tau).data());
    });
    registerRoute("Solve/fixman", n, [](const Model& m, Data& d, const V& q, const V&, const V& tau, V& x) {
      denoc::fixmanSolve(m, d, q, tau, x);
      benchmark::DoNotOptimize(x.data());
    });
    registerRoute("LogDet/fixman", n, [](const Model& m, Data& d, const V& q, const V&, const V&, V&) {
      benchmark::DoNotOptimize(denoc::fixmanLogDet(m, d, q));
    });
    registerRoute("LogDet/udu", n, [](const Model& m, Data& d, const V& q, const V&, const V&, V&) {
      denoc::computeUDU(m, d, q, false);
      benchmark::DoNotOptimize(d.log_det);
    });
    registerRoute("C/saha", n, [](const Model& m, Data& d, const V& q, const V& qd, const V&, V&) {
      benchmark::DoNotOptimize(denoc::computeConvectiveMatrix(m, d, q, qd).data());
    });
    registerRoute("M/crba", n, [](const Model& m, Data& d, const V& q, const V&, const V&, V&) {
      benchmark::DoNotOptimize(denoc::computeInertiaMatrix(m, d, q).data());
    });
  }
  benchmark::Initialize(&argc, argv);
  if (benchmark::ReportUnrecognizedArguments(argc, argv)) return 1;
  benchmark::RunSpecifiedBenchmarks();
  benchmark::Shutdown();
  return 0;
}
