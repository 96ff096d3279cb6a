// Fixman's theorem (Wang and Chirikjian): the O(n) solve of I(q) x = b and log det I(q), against
// independent routes: Saha's three-sweep forward dynamics (reverse Gaussian elimination), the dense
// Cholesky route, Eigen's LDLT / LLT of the composite-body inertia matrix, the residual I x - b, and
// sum log mh_k of the UDU^T factor. Random chains (revolute and prismatic) n = 1..12, 30, 100, 500, with
// and without armature, and the URDF robots of examples/models.
// Eigen's allocation guard, made to throw (asserts are off in release builds): any heap allocation by Eigen
// inside a section run with set_is_malloc_allowed(false) fails the test. Must precede every Eigen include.
#define EIGEN_RUNTIME_NO_MALLOC
#include <stdexcept>
#define eigen_assert(x)                                                \
  do {                                                                 \
    if (!(x)) throw std::runtime_error("Eigen assertion failed: " #x); \
  } while (false)

#include <gtest/gtest.h>

#include <Eigen/Cholesky>
#include <Eigen/Eigenvalues>
#include <cmath>
#include <filesystem>
#include <limits>
#include <stdexcept>

#include "denoc/algorithm/convective.hpp"
#include "denoc/algorithm/fixman.hpp"
#include "denoc/algorithm/forward_dynamics.hpp"
#include "denoc/algorithm/inertia_matrix.hpp"
#include "denoc/algorithm/inverse_dynamics.hpp"
#include "denoc/algorithm/udu.hpp"
#include "denoc/data.hpp"
#include "denoc/model.hpp"
#include "denoc/urdf.hpp"
#include "support/compare.hpp"
#include "support/random_chain.hpp"

namespace denoc {
namespace {

using testing::randomChainSpec;
using testing::randomVectorX;

// Tolerance for comparing two solvers of I x = b with small residuals (both are checked): each is within
// about eps * cond(I) (relative) of the exact x, so their difference is too. The random chains have
// cond(I) ~ 1e3-1e5 up to n = 30, where 1e-9 has a wide margin; cond grows quickly with n (~1e6 at
// n = 100, ~2e8 at n = 500), so the bound is 10 eps cond(I) when that is larger, with cond(I) from the
// dense eigenvalues. (Observed differences are 5-50 times below eps cond.)
double solveTolerance(const Eigen::MatrixXd& I) {
  const Eigen::SelfAdjointEigenSolver<Eigen::MatrixXd> es(I, Eigen::EigenvaluesOnly);
  const double cond = es.eigenvalues().maxCoeff() / es.eigenvalues().minCoeff();
  return std::max(1e-9, 10.0 * std::numeric_limits<double>::epsilon() * cond);
}

struct Checks {
  double solve_vs_saha = 0, solve_vs_chol = 0, solve_vs_ldlt = 0, residual = 0, logdet_vs_udu = 0,
         logdet_vs_llt = 0;
};

void checkModel(const Model& model, std::uint32_t seed, const std::string& what) {
  const int n = model.n;
  Data data(model);
  std::mt19937 rng(seed);
  const Eigen::VectorXd q = randomVectorX(rng, n, 3.0);
  const Eigen::VectorXd qd = randomVectorX(rng, n, 2.0);
  const Eigen::VectorXd tau = randomVectorX(rng, n, 5.0);
  const Eigen::VectorXd b = randomVectorX(rng, n, 1.0);

  const Eigen::MatrixXd I = computeInertiaMatrix(model, data, q);
  const double tol = solveTolerance(I);

  // solve: Fixman vs dense LDLT and the residual
  Eigen::VectorXd x(n);
  fixmanSolve(model, data, q, b, x);
  const Eigen::VectorXd x_ldlt = I.ldlt().solve(b);
  EXPECT_LT(testing::relativeError(x, x_ldlt, 1e-300), tol) << what;
  EXPECT_LT((I * x - b).norm(), 1e-11 * I.norm() * x.norm()) << what;

  // forward dynamics: Fixman vs Saha's three sweeps vs dense Cholesky
  const Eigen::VectorXd qdd_fixman = forwardDynamicsFixman(model, data, q, qd, tau);
  const Eigen::VectorXd qdd_saha = forwardDynamics(model, data, q, qd, tau);
  const Eigen::VectorXd qdd_chol = forwardDynamicsCholesky(model, data, q, qd, tau);
  EXPECT_LT(testing::relativeError(qdd_fixman, qdd_saha, 1e-300), tol) << what;
  EXPECT_LT(testing::relativeError(qdd_fixman, qdd_chol, 1e-300), tol) << what;
  // and it inverts inverse dynamics: a small residual I qdd - phi, as for x above
  const Eigen::VectorXd tau_back = inverseDynamics(model, data, q, qd, qdd_fixman);
  // (up to n = 30: on long chains the recursion's own rounding scales with the link wrenches it sums, far
  // above |I qdd|; the dense residual above covers those)
  if (n <= 30) {
    EXPECT_LT((tau_back - tau).norm(), 1e-11 * (I.norm() * qdd_fixman.norm() + tau.norm())) << what;
  }

  // log det: Fixman vs sum log mh (UDU^T) vs dense LLT; all are well conditioned as sums of logs
  const double ld_fixman = fixmanLogDet(model, data, q);
  computeUDU(model, data, q, false);
  const double ld_udu = data.log_det;
  const Eigen::LLT<Eigen::MatrixXd> llt(I);
  ASSERT_EQ(llt.info(), Eigen::Success) << what;
  const double ld_llt = 2.0 * llt.matrixLLT().diagonal().array().log().sum();
  const double ld_tol = 1e-9 * std::max(1.0, std::abs(ld_udu)) * std::max(1.0, n / 30.0);
  EXPECT_NEAR(ld_fixman, ld_udu, ld_tol) << what;
  EXPECT_NEAR(ld_fixman, ld_llt, ld_tol) << what;
  // fixmanSolve leaves the same log det
  fixmanSolve(model, data, q, b, x);
  EXPECT_EQ(data.fx_log_det, ld_fixman) << what;
}

class FixmanChains : public ::testing::TestWithParam<int> {};

// solves and log det equal the other routes on random chains, no armature
TEST_P(FixmanChains, AgreesWithSahaCholeskyAndDense) {
  const int n = GetParam();
  const int seeds = n >= 100 ? 2 : 5;
  for (int s = 1; s <= seeds; ++s) {
    const auto seed = static_cast<std::uint32_t>(7919 * s + n);
    const Model model = buildModel(randomChainSpec(n, seed, 0.3));
    checkModel(model, seed + 1u, "n=" + std::to_string(n) + " seed=" + std::to_string(seed));
  }
}

// the same with armature on some joints (the augmented rotor coordinates, 6x6 hard blocks)
TEST_P(FixmanChains, AgreesWithArmature) {
  const int n = GetParam();
  const int seeds = n >= 100 ? 1 : 3;
  for (int s = 1; s <= seeds; ++s) {
    const auto seed = static_cast<std::uint32_t>(104729 * s + n);
    ModelSpec spec = randomChainSpec(n, seed, 0.3);
    std::mt19937 rng(seed);
    std::uniform_real_distribution<double> u(0.0, 1.0);
    for (auto& j : spec.joints) j.armature = u(rng) < 0.6 ? 0.5 * u(rng) : 0.0;
    spec.joints.front().armature = 0.25;  // at least one
    const Model model = buildModel(spec);
    checkModel(model, seed + 3u, "armature n=" + std::to_string(n) + " seed=" + std::to_string(seed));
  }
}

INSTANTIATE_TEST_SUITE_P(Sizes, FixmanChains,
                         ::testing::Values(1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 30, 100, 500));

// all prismatic, all revolute, tiny and large armature
TEST(FixmanEdgeCases, JointMixesAndArmatureScales) {
  for (double pf : {0.0, 1.0}) {
    const Model model = buildModel(randomChainSpec(9, 77, pf));
    checkModel(model, 5, "prismatic fraction " + std::to_string(pf));
  }
  for (double a : {1e-9, 1e-3, 10.0, 1e3}) {
    ModelSpec spec = randomChainSpec(8, 91, 0.4);
    for (auto& j : spec.joints) j.armature = a;
    checkModel(buildModel(spec), 6, "armature " + std::to_string(a));
  }
}

// b and x may be the same vector
TEST(FixmanEdgeCases, InPlaceSolve) {
  const Model model = buildModel(randomChainSpec(10, 3));
  Data data(model);
  std::mt19937 rng(9);
  const Eigen::VectorXd q = randomVectorX(rng, 10, 3.0);
  Eigen::VectorXd b = randomVectorX(rng, 10, 1.0);
  const Eigen::VectorXd expected = computeInertiaMatrix(model, data, q).ldlt().solve(b);
  fixmanSolve(model, data, q, b, b);
  EXPECT_LT(testing::relativeError(b, expected, 1e-300), 1e-9);
}

TEST(FixmanEdgeCases, RejectBadInput) {
  const Model model = buildModel(randomChainSpec(4, 5));
  Data data(model);
  const Eigen::VectorXd ok = Eigen::VectorXd::Zero(4);
  Eigen::VectorXd out(4), out_short(3);
  Eigen::VectorXd inf = ok;
  inf[1] = std::numeric_limits<double>::infinity();
  EXPECT_THROW(fixmanSolve(model, data, ok, ok, out_short), std::invalid_argument);
  EXPECT_THROW(fixmanSolve(model, data, inf, ok, out), std::invalid_argument);
  EXPECT_THROW(fixmanSolve(model, data, ok, Eigen::VectorXd::Zero(5), out), std::invalid_argument);
  EXPECT_THROW(fixmanLogDet(model, data, Eigen::VectorXd::Zero(2)), std::invalid_argument);
  EXPECT_THROW(forwardDynamicsFixman(model, data, ok, inf, ok), std::invalid_argument);
  EXPECT_NO_THROW(fixmanSolve(model, data, ok, ok, out));
}

// the hot paths allocate nothing (all workspace is in Data): Eigen's allocation guard throws otherwise
TEST(FixmanEdgeCases, NoHeapAllocation) {
  for (double armature : {0.0, 0.2}) {
    ModelSpec spec = randomChainSpec(12, 21, 0.4);
    for (auto& j : spec.joints) j.armature = armature;
    const Model model = buildModel(spec);
    Data data(model);
    std::mt19937 rng(4);
    const Eigen::VectorXd q = randomVectorX(rng, 12, 3.0);
    const Eigen::VectorXd qd = randomVectorX(rng, 12, 2.0);
    const Eigen::VectorXd tau = randomVectorX(rng, 12, 2.0);
    Eigen::VectorXd x(12);
    Eigen::internal::set_is_malloc_allowed(false);
    try {
      forwardDynamicsFixman(model, data, q, qd, tau);
      fixmanSolve(model, data, q, tau, x);
      fixmanLogDet(model, data, q);
      computeConvectiveMatrix(model, data, q, qd);
      computeBias(model, data, q, qd);
      computeVelocityBias(model, data, q, qd);
      computeGravity(model, data, q);
    } catch (const std::exception& e) {
      ADD_FAILURE() << "armature " << armature << ": " << e.what();
    }
    Eigen::internal::set_is_malloc_allowed(true);
    // the guard works: an allocation in the guarded section throws
    Eigen::internal::set_is_malloc_allowed(false);
    EXPECT_THROW(Eigen::VectorXd(12).setZero(), std::runtime_error);
    Eigen::internal::set_is_malloc_allowed(true);
  }
}

// the robots of examples/models (default base and tip; files that need a tip link chosen
// are tried with the listed one)
TEST(FixmanUrdf, ExampleModels) {
  const std::filesystem::path dir = std::filesystem::path(DENOC_MODELS_DIR);
  ASSERT_TRUE(std::filesystem::is_directory(dir)) << dir;
  int built = 0;
  for (const auto& entry : std::filesystem::directory_iterator(dir)) {
    if (entry.path().extension() != ".urdf") continue;
    const std::string name = entry.path().filename().string();
    Model model;
    try {
      model = buildModelFromUrdfFile(entry.path().string());
      if (!model.serial) {
        // a tree (a hand with fingers): take the arm up to the hand
        UrdfOptions options;
        options.tip_link = "panda_hand";
        model = buildModelFromUrdfFile(entry.path().string(), options);
      }
    } catch (const ModelError& e) {
      ADD_FAILURE() << name << ": " << e.what();
      continue;
    }
    ++built;
    checkModel(model, 11, name);
    // and with armature on every joint
    ModelSpec spec = model.spec;
    for (auto& j : spec.joints) j.armature = 0.1;
    checkModel(buildModel(spec), 12, name + " with armature");
  }
  EXPECT_GE(built, 8);
}

}  // namespace
}  // namespace denoc
