// I(q)^-1 and the I(q) + Cholesky forward dynamics on the chains of bench/models.hpp, n = 6..500, beside
// references timed in the same run (CPU time per call; bench/report.py writes the tables):
//
//   Minv/denoc/chainN       computeInverseInertia (dense route up to kDenseUDUMaxDof, else the sweeps on all
//                           unit vectors at once)
//   Minv/dense/chainN       the dense route at every n: I(q), U D U^T by elimination, U^-T D^-1 U^-1 (n <=
//   96) Minv/sweeps/chainN      the sweeps at every n (>= 6): reverse Gaussian elimination, then the sweeps
//   Minv/columns/chainN     the previous route: one three-sweep solve per column (kept here for the
//   comparison) Minv/trsv/chainN        the plain reference: the O(n) factors and U formed (computeUDU), then
//                           U^-T D^-1 U^-1 by Eigen's triangular solves, O(n^2) per column
//   FDChol/denoc/chainN     forwardDynamicsCholesky
//   Chol/plain/chainN       the factorization alone: choleskyInPlace (the small-n loop)
//   Chol/blocked/chainN/W:w the factorization alone: choleskyBlocked at width w
//   Chol/llt/chainN         the factorization alone: Eigen's LLT::compute into a preallocated LLT
#include <benchmark/benchmark.h>

#include <Eigen/Cholesky>
#include <memory>
#include <random>
#include <string>
#include <vector>

#include "denoc/batch.hpp"
#include "denoc/denoc.hpp"
#include "models.hpp"

namespace {

using denoc::Data;
using denoc::Model;
using Vec = Eigen::VectorXd;

constexpr int kStates = 16;

struct Fixture {
  Model model;
  Data data;
  std::vector<Vec> q, qd, tau;
  explicit Fixture(int n) : model(denoc::buildModel(denoc::bench::chainSpec(n))), data(model) {
    std::mt19937 rng(11u);
    std::uniform_real_distribution<double> u(-1.0, 1.0);
    for (int k = 0; k < kStates; ++k) {
      Vec a(n), b(n), c(n);
      for (int i = 0; i < n; ++i) {
        a[i] = 3.0 * u(rng);
        b[i] = u(rng);
        c[i] = u(rng);
      }
      q.push_back(a);
      qd.push_back(b);
      tau.push_back(c);
    }
  }
};

/// The previous I^-1 route for n > 24: one three-sweep solve per unit vector with the O(n) factors.
void inverseByColumns(const Model& model, Data& data) {
  using Vec6 = Eigen::Matrix<double, 6, 1>;
  const int n = model.n;
  for (int j = 0; j < n; ++j) {
    Vec6 eta = Vec6::Zero();
    for (int i = j; i >= 0; --i) {
      data.work[i].tau_hat = (i == j ? 1.0 : 0.0) - data.p0[i].dot(eta);
      eta += data.work[i].psi * data.work[i].tau_hat;
    }
    Vec6 mu = Vec6::Zero();
    double* col = data.Minv.data() + static_cast<Eigen::Index>(j) * n;
    for (int i = 0; i < n; ++i) {
      const double tau_hat = i <= j ? data.work[i].tau_hat : 0.0;
      col[i] = tau_hat * data.work[i].inv_mh - data.work[i].psi.dot(mu);
      mu += data.p0[i] * col[i];
    }
  }
}

enum class Minv { Denoc, Dense, Sweeps, Columns, Trsv };

void bmMinv(benchmark::State& state, int n, Minv route) {
  Fixture f(n);
  Eigen::MatrixXd X(n, n);
  int k = 0;
  for (auto _ : state) {
    const Vec& q = f.q[static_cast<std::size_t>(k++ % kStates)];
    switch (route) {
      case Minv::Denoc:
        benchmark::DoNotOptimize(denoc::computeInverseInertia(f.model, f.data, q).data());
        break;
      case Minv::Dense:
        denoc::detail::commonPlacementsAndInertias(f.model, f.data, q);
        denoc::detail::crba(f.model, f.data);
        denoc::detail::denseUDU(f.model, f.data);
        denoc::detail::inverseFromUDU(f.model, f.data);
        benchmark::DoNotOptimize(f.data.Minv.data());
        break;
      case Minv::Sweeps:
        denoc::detail::commonPlacementsAndInertias(f.model, f.data, q);
        denoc::detail::articulated(f.model, f.data, false);
        denoc::detail::inverseBySweeps(f.model, f.data);
        benchmark::DoNotOptimize(f.data.Minv.data());
        break;
      case Minv::Columns:
        denoc::detail::commonPlacementsAndInertias(f.model, f.data, q);
        denoc::detail::articulated(f.model, f.data, false);
        inverseByColumns(f.model, f.data);
        benchmark::DoNotOptimize(f.data.Minv.data());
        break;
      case Minv::Trsv:
        denoc::computeUDU(f.model, f.data, q, true);
        X.setIdentity();
        f.data.U.triangularView<Eigen::UnitUpper>().solveInPlace(X);              // U^-1
        X = f.data.D.cwiseInverse().asDiagonal() * X;                             // D^-1 U^-1
        f.data.U.transpose().triangularView<Eigen::UnitLower>().solveInPlace(X);  // U^-T D^-1 U^-1
        benchmark::DoNotOptimize(X.data());
        break;
    }
    benchmark::ClobberMemory();
  }
  state.counters["dof"] = n;
}

enum class Chol { Route, Plain, Blocked, Llt };

void bmChol(benchmark::State& state, int n, Chol kind, int lanes) {
  Fixture f(n);
  std::vector<Eigen::MatrixXd> M;
  for (int k = 0; k < kStates; ++k) M.push_back(denoc::computeInertiaMatrix(f.model, f.data, f.q[k]));
  Eigen::MatrixXd L(n, n);
  Eigen::LLT<Eigen::MatrixXd> llt(n);
  int k = 0;
  for (auto _ : state) {
    const std::size_t s = static_cast<std::size_t>(k++ % kStates);
    switch (kind) {
      case Chol::Route:
        benchmark::DoNotOptimize(
            denoc::forwardDynamicsCholesky(f.model, f.data, f.q[s], f.qd[s], f.tau[s]).data());
        break;
      case Chol::Plain:
        L = M[s];
        benchmark::DoNotOptimize(denoc::detail::choleskyInPlace<double>(L));
        break;
      case Chol::Blocked:
        L = M[s];
        benchmark::DoNotOptimize(denoc::detail::choleskyBlocked(L.data(), n, lanes));
        break;
      case Chol::Llt:
        llt.compute(M[s]);
        benchmark::DoNotOptimize(llt.matrixLLT().data());
        break;
    }
    benchmark::ClobberMemory();
  }
  state.counters["dof"] = n;
}

}  // namespace

int main(int argc, char** argv) {
  benchmark::Initialize(&argc, argv);
  if (benchmark::ReportUnrecognizedArguments(argc, argv)) return 1;
  const std::vector<int> sizes = {6, 7, 8, 10, 12, 16, 20, 24, 28, 32, 40, 48, 64, 96, 192, 500};
  const auto reg = [](const std::string& name, auto&&... args) {
    benchmark::RegisterBenchmark(name.c_str(), args...);
  };
  for (int n : sizes) {
    const std::string c = "/chain" + std::to_string(n);
    reg("Minv/denoc" + c, bmMinv, n, Minv::Denoc);
    if (n <= 96) reg("Minv/dense" + c, bmMinv, n, Minv::Dense);
    reg("Minv/sweeps" + c, bmMinv, n, Minv::Sweeps);
    reg("Minv/columns" + c, bmMinv, n, Minv::Columns);
    reg("Minv/trsv" + c, bmMinv, n, Minv::Trsv);
    reg("FDChol/denoc" + c, bmChol, n, Chol::Route, 0);
    reg("Chol/plain" + c, bmChol, n, Chol::Plain, 0);
    for (denoc::SimdWidth w : {denoc::SimdWidth::W2, denoc::SimdWidth::W4, denoc::SimdWidth::W8}) {
      if (denoc::simdWidthSupported(w))
        reg("Chol/blocked" + c + "/W:" + std::to_string(static_cast<int>(w)), bmChol, n, Chol::Blocked,
            static_cast<int>(w));
    }
    reg("Chol/llt" + c, bmChol, n, Chol::Llt, 0);
  }
  benchmark::RunSpecifiedBenchmarks();
  benchmark::Shutdown();
  return 0;
}
