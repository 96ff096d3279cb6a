// I(q)^-1 by the three sweeps on all unit vectors at once, and the blocked Cholesky factor of the
// I(q) + Cholesky forward dynamics, against independent oracles: Eigen's LDL^T and LLT of the composite-body
// inertia matrix, the residual I I^-1 - 1 scaled by the condition number, the dense route where both
// apply, Saha's O(n) forward dynamics and inverse dynamics; the blocked factor is the same bit for bit at
// every SIMD width this CPU runs. A tree's I^-1 against Eigen's LDL^T whatever its work space holds: by the
// sweeps where the joints are numbered depth first (random trees renumbered, combs whose kept motions
// pile up, a chain on the tree code, which gives the serial sweeps' bits), else on its sparse factor (trees
// in any other order of parents before children); the model's subtree ranges against their definition.
#include <gtest/gtest.h>

#include <Eigen/Cholesky>
#include <Eigen/Eigenvalues>
#include <algorithm>
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

/// Whether b is a on or below a (velocity coordinates, by model.dof_parent).
bool inSubtree(const Model& model, int a, int b) {
  while (b > a) b = model.dof_parent[static_cast<std::size_t>(b)];
  return b == a;
}

/// Whether every coordinate's subtree is a contiguous range starting at it (depth-first numbering), by the
/// definition: the coordinates from k to its last descendant are all its descendants.
bool numberedDepthFirst(const Model& model) {
  for (int k = 0; k < model.nv; ++k) {
    int last = k;
    for (int j = k; j < model.nv; ++j) {
      if (inSubtree(model, k, j)) last = j;
    }
    for (int j = k; j <= last; ++j) {
      if (!inSubtree(model, k, j)) return false;
    }
  }
  return true;
}

/// I^-1 of a tree against Eigen's LDL^T of I(q), exactly symmetric, with the work spaces of both routes
/// filled with `fill` before the call.
void expectTreeInverse(const Model& model, const Eigen::VectorXd& q, const std::string& what) {
  Data data(model);
  const int nv = model.nv;
  for (double fill : {std::numeric_limits<double>::quiet_NaN(), 1e300}) {
    data.minv_Uinv.setConstant(fill);
    data.sweep_eta_mu.setConstant(fill);
    data.sweep_saved.setConstant(fill);
    data.Minv.setConstant(fill);
    const Eigen::MatrixXd M = computeInertiaMatrix(model, data, q);
    const Eigen::MatrixXd Minv = computeInverseInertia(model, data, q);
    const Eigen::MatrixXd oracle = M.ldlt().solve(Eigen::MatrixXd::Identity(nv, nv));
    const double kappa = conditionNumber(M);
    EXPECT_LT(relErr(Minv, oracle), 1e-14 * kappa + 1e-13) << what << ", fill " << fill << ", cond " << kappa;
    EXPECT_TRUE(Minv == Minv.transpose()) << what;
  }
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
  // a tree's I^-1 on trees whose parents are random earlier joints, so that a subtree need not be a
  // contiguous range (the sparse factor's route; the sweeps where the draw happens to be depth first), with
  // the work spaces filled with NaN or a huge number before each call
  int factor_route = 0;
  for (RootJoint root : {RootJoint::Fixed, RootJoint::Floating, RootJoint::Planar}) {
    for (int n : {2, 5, 9, 17, 30}) {
      const Model model = buildModel(randomTreeSpec(n, 77u + static_cast<std::uint32_t>(n), root));
      EXPECT_EQ(model.tree_sweeps, numberedDepthFirst(model)) << "n=" << n;
      factor_route += !model.tree_sweeps;
      std::mt19937_64 rng(static_cast<std::uint64_t>(n));
      expectTreeInverse(model, randomConfiguration(model, rng), "n=" + std::to_string(n));
    }
  }
  EXPECT_GE(factor_route, 6);
}

TEST(InverseInertia, TreesNumberedDepthFirstTakeTheSweeps) {
  // random trees renumbered depth first under the three roots; their subtree ranges (model.dof_end) against
  // the definition
  int swept = 0;
  for (RootJoint root : {RootJoint::Fixed, RootJoint::Floating, RootJoint::Planar}) {
    for (int n : {1, 2, 5, 9, 17, 30, 64}) {
      for (std::uint32_t seed : {1u, 2u, 3u}) {
        const Model model = buildModel(
            testing::depthFirst(randomTreeSpec(n, 90u * seed + static_cast<std::uint32_t>(n), root)));
        const std::string what = "n=" + std::to_string(n) + " seed " + std::to_string(seed);
        ASSERT_TRUE(numberedDepthFirst(model)) << what;
        ASSERT_TRUE(model.tree_sweeps) << what;
        // the route: the sweeps where a path holds more than kMaxFactorInverseDepth coordinates
        int longest = 0;
        for (int k = 0; k < model.nv; ++k) {
          int length = 0;
          for (int j = k; j >= 0; j = model.dof_parent[static_cast<std::size_t>(j)]) ++length;
          longest = std::max(longest, length);
        }
        EXPECT_EQ(model.inverse_by_sweeps, longest > kMaxFactorInverseDepth) << what;
        swept += model.inverse_by_sweeps;
        for (int k = 0; k < model.nv; ++k) {
          int end = k + 1;
          for (int j = k; j < model.nv; ++j) {
            if (inSubtree(model, k, j)) end = j + 1;
          }
          ASSERT_EQ(model.dof_end[static_cast<std::size_t>(k)], end) << what << " k " << k;
        }
        std::mt19937_64 rng(seed);
        expectTreeInverse(model, randomConfiguration(model, rng), what);
      }
    }
  }
  EXPECT_GE(swept, 45);
}

TEST(InverseInertia, CombsKeepManyMotions) {
  // a comb: a spine of n / 2 joints, each with a leaf, numbered depth first with the spine first, so that
  // every spine joint but the last keeps its motion until its leaf (n / 2 - 1 at once); under a floating
  // root; past kMaxSweepSaved the sparse factor's route
  for (int n : {8, 40, 400}) {
    ModelSpec spec = randomChainSpec(n, 17u + static_cast<std::uint32_t>(n));
    const int spine = n / 2;
    for (int i = 0; i < n; ++i)
      spec.joints[static_cast<std::size_t>(i)].parent = i < spine ? i - 1 : i - spine;
    spec.root = RootJoint::Floating;
    spec.root_link = "trunk";
    spec.root_mass = 3.0;
    spec.root_inertia = Eigen::Matrix3d::Identity() * 0.1;
    spec = testing::depthFirst(spec);  // the spine first, then the leaves from the last up
    const Model model = buildModel(spec);
    const std::string what = "comb of " + std::to_string(n);
    EXPECT_TRUE(numberedDepthFirst(model)) << what;
    const bool fits = static_cast<long long>(spine - 1) * 6 * model.nv <= kMaxSweepSaved;
    EXPECT_EQ(model.tree_sweeps, fits) << what;
    EXPECT_EQ(model.inverse_by_sweeps, fits) << what;
    if (fits) {
      EXPECT_EQ(model.sweep_slots, spine - 1) << what;
    }
    std::mt19937_64 rng(5u);
    expectTreeInverse(model, randomConfiguration(model, rng), what);
  }
}

TEST(InverseInertia, AChainOnTheTreeCodeIsTheSerialSweeps) {
  // above kDenseInverseMaxDof the serial route is the same sweeps on the same placements: the same bits
  for (int n : {kDenseInverseMaxDof + 1, 12, 24, 40, 96}) {
    const ModelSpec spec = randomChainSpec(n, 400u + static_cast<std::uint32_t>(n));
    ASSERT_TRUE(testing::chainOnBothRoutes(spec).tree.inverse_by_sweeps) << "n=" << n;
    EXPECT_TRUE(testing::sameBitsOnBothRoutes(
        spec,
        [](const Model& m, Data& d, const Eigen::VectorXd& q) { return computeInverseInertia(m, d, q); },
        "I^-1"))
        << "n=" << n;
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
