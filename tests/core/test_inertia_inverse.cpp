// I(q)^-1 by the three sweeps on all unit vectors at once, and the blocked Cholesky factor of the
// I(q) + Cholesky forward dynamics, against independent oracles: Eigen's LDL^T and LLT of the composite-body
// inertia matrix, the residual I I^-1 - 1 scaled by the condition number, the dense route where both
// apply, Saha's O(n) forward dynamics and inverse dynamics; the blocked factor is the same bit for bit at
// every SIMD width this CPU runs. A tree's I^-1 on its sparse factor against Eigen's LDL^T, for trees in
// any order of parents before children and whatever its work space holds.
#include <gtest/gtest.h>

#include <Eigen/Cholesky>
#include <Eigen/Eigenvalues>
#include <limits>
#include <random>

#include "denoc/batch.hpp"
#include "denoc/denoc.hpp"
#include "support/compare.hpp"
#include "support/random_chain.hpp"
#include "support/random_tree.hpp"

namespace denoc {
namespace {

using testing::relErr;
using testing::sameBits;

using testing::randomChainSpec;
using testing::randomTreeSpec;
using testing::randomVectorX;

double conditionNumber(const Eigen::MatrixXd& m) {
  const Eigen::SelfAdjointEigenSolver<Eigen::MatrixXd> es(m);
  return es.eigenvalues().maxCoeff() / es.eigenvalues().minCoeff();
}

Model chain(int n, std::uint32_t seed, double armature = 0.0) {
  ModelSpec spec = randomChainSpec(n, seed, 0.3);
  for (std::size_t i = 0; i < spec.joints.size(); i += 2) spec.joints[i].armature = armature;
  return buildModel(spec);
}

TEST(InverseInertia, AgainstEigensLdlt) {
  for (int n : {1, 2, 5, 6, 7, 12, 23, 24, 25, 26, 31, 48, 64, 100, 160}) {
    for (double armature : {0.0, 0.3}) {
      const Model model = chain(n, 1000u + static_cast<std::uint32_t>(n), armature);
      Data data(model);
      std::mt19937 rng(static_cast<std::uint32_t>(n));
      const Eigen::VectorXd q = randomVectorX(rng, n, 3.0);
      const Eigen::MatrixXd M = computeInertiaMatrix(model, data, q);
      const Eigen::MatrixXd Minv = computeInverseInertia(model, data, q);
      const Eigen::MatrixXd oracle = M.ldlt().solve(Eigen::MatrixXd::Identity(n, n));
      const double kappa = conditionNumber(M);
      EXPECT_LT(relErr(Minv, oracle), 1e-14 * kappa + 1e-13) << "n=" << n << " cond " << kappa;
      EXPECT_LT(relErr(Minv * M, Eigen::MatrixXd::Identity(n, n)), 1e-14 * kappa + 1e-13) << "n=" << n;
      EXPECT_TRUE(Minv == Minv.transpose()) << "exactly symmetric, n=" << n;
    }
  }
}

TEST(InverseInertia, TreesInAnyOrderAndWhateverTheWorkspaceHolds) {
  // a tree's I^-1 (the sparse factor's route) on trees whose parents are random earlier joints, so that a
  // subtree need not be a contiguous range, with U^-1's work space filled with NaN or a huge number before
  // each call: against Eigen's LDL^T of the same I(q), exactly symmetric
  for (RootJoint root : {RootJoint::Fixed, RootJoint::Floating, RootJoint::Planar}) {
    for (int n : {2, 5, 9, 17, 30}) {
      const Model model = buildModel(randomTreeSpec(n, 77u + static_cast<std::uint32_t>(n), root));
      Data data(model);
      std::mt19937_64 rng(static_cast<std::uint64_t>(n));
      const Eigen::VectorXd q = randomConfiguration(model, rng);
      const int nv = model.nv;
      for (double fill : {std::numeric_limits<double>::quiet_NaN(), 1e300}) {
        data.minv_Uinv.setConstant(fill);
        const Eigen::MatrixXd M = computeInertiaMatrix(model, data, q);
        const Eigen::MatrixXd Minv = computeInverseInertia(model, data, q);
        const Eigen::MatrixXd oracle = M.ldlt().solve(Eigen::MatrixXd::Identity(nv, nv));
        const double kappa = conditionNumber(M);
        EXPECT_LT(relErr(Minv, oracle), 1e-14 * kappa + 1e-13) << "n=" << n << " fill " << fill;
        EXPECT_TRUE(Minv == Minv.transpose()) << "n=" << n;
      }
    }
  }
}

TEST(InverseInertia, SweepsAgreeWithTheDenseRoute) {
  // both routes apply at every n (the sweeps keep their six rows in data.sweep_eta_mu): the dense
  // U^-T D^-1 U^-1 of reverse Gaussian elimination on I(q), and the sweeps with the articulated-body factors
  for (int n = 1; n <= 40; ++n) {
    const Model model = chain(n, 2000u + static_cast<std::uint32_t>(n), 0.1);
    Data dense(model), sweeps(model);
    std::mt19937 rng(static_cast<std::uint32_t>(n) + 7u);
    const Eigen::VectorXd q = randomVectorX(rng, n, 3.0);
    detail::commonPlacementsAndInertias(model, dense, q);
    detail::crba(model, dense);
    detail::denseUDU(model, dense);
    detail::inverseFromUDU(model, dense);
    detail::commonPlacementsAndInertias(model, sweeps, q);
    detail::articulated(model, sweeps, false);
    detail::inverseBySweeps(model, sweeps);
    EXPECT_LT(relErr(sweeps.Minv, dense.Minv), 1e-14 * conditionNumber(dense.M) + 1e-13) << "n=" << n;
  }
}

/// A random symmetric positive definite matrix (with a condition number of about 1e4).
Eigen::MatrixXd randomSpd(int n, std::uint32_t seed) {
  std::mt19937 rng(seed);
  std::uniform_real_distribution<double> u(-1.0, 1.0);
  Eigen::MatrixXd a(n, n);
  for (Eigen::Index i = 0; i < a.size(); ++i) a.data()[i] = u(rng);
  return a * a.transpose() + 1e-2 * n * Eigen::MatrixXd::Identity(n, n);
}

std::vector<int> supportedLanes() {
  std::vector<int> lanes;
  for (SimdWidth w : {SimdWidth::W2, SimdWidth::W4, SimdWidth::W8}) {
    if (simdWidthSupported(w)) lanes.push_back(static_cast<int>(w));
  }
  return lanes;
}

TEST(CholeskyBlocked, SameBitsAtEveryWidthAndEigensFactor) {
  for (int n : {1, 2, 5, 17, 31, 32, 33, 40, 64, 65, 100, 257}) {
    const Eigen::MatrixXd A = randomSpd(n, static_cast<std::uint32_t>(n));
    Eigen::MatrixXd first;
    for (int lanes : supportedLanes()) {
      Eigen::MatrixXd L = A;
      ASSERT_TRUE(detail::choleskyBlocked(L.data(), n, lanes)) << "n=" << n << " lanes " << lanes;
      const Eigen::MatrixXd lower = L.triangularView<Eigen::Lower>();
      if (first.size() == 0) {
        first = lower;
        EXPECT_LT(relErr(lower * lower.transpose(), A), 1e-14) << "n=" << n;
        EXPECT_LT(relErr(lower, Eigen::MatrixXd(A.llt().matrixL())), 1e-12) << "n=" << n;
      } else {
        EXPECT_TRUE(sameBits(first.data(), lower.data(), static_cast<std::size_t>(n * n), "L"))
            << "n=" << n << " lanes " << lanes << " differs from lanes 2";
      }
    }
  }
}

TEST(CholeskyBlocked, RefusesMatricesThatAreNotPositiveDefinite) {
  for (int n : {3, 40, 90}) {
    for (int bad : {0, n / 2, n - 1}) {
      Eigen::MatrixXd A = randomSpd(n, 5u);
      A(bad, bad) = -1.0;
      for (int lanes : supportedLanes()) {
        Eigen::MatrixXd L = A;
        EXPECT_FALSE(detail::choleskyBlocked(L.data(), n, lanes)) << "n=" << n << " bad " << bad;
      }
      Eigen::MatrixXd L = A;
      EXPECT_FALSE(detail::choleskyInPlace<double>(L));
    }
  }
}

TEST(CholeskyRoute, LargeModelsAgreeWithTheOnRoute) {
  for (int n : {kCholeskyBlockedMinDof - 1, kCholeskyBlockedMinDof, 64, 150}) {
    const Model model = chain(n, 3000u + static_cast<std::uint32_t>(n), 0.2);
    Data data(model);
    std::mt19937 rng(static_cast<std::uint32_t>(n) + 3u);
    const Eigen::VectorXd q = randomVectorX(rng, n, 3.0);
    const Eigen::VectorXd qd = randomVectorX(rng, n, 1.0);
    const Eigen::VectorXd qdd = randomVectorX(rng, n, 1.0);
    const Eigen::VectorXd tau = inverseDynamics(model, data, q, qd, qdd);
    const Eigen::VectorXd chol = forwardDynamicsCholesky(model, data, q, qd, tau);
    const Eigen::VectorXd saha = forwardDynamics(model, data, q, qd, tau);
    const double kappa = conditionNumber(computeInertiaMatrix(model, data, q));
    EXPECT_LT(relErr(chol, qdd), 1e-14 * kappa + 1e-12) << "n=" << n << " cond " << kappa;
    EXPECT_LT(relErr(chol, saha), 1e-14 * kappa + 1e-12) << "n=" << n;
  }
}

}  // namespace
}  // namespace denoc
