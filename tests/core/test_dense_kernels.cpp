// The AVX2 twins of the dense steps for double (core/src/dense_kernels.cpp: the common-frame placements and
// link inertias, the composite-body I(q), the dense U D U^T, the O(n) route's explicit U, the sweeps of I^-1
// and -I^-1 B; a tree's I(q) and sparse factor) against the baseline functions they are compiled from, bit
// for bit, on random chains of 1..40 joints with revolute and prismatic joints and random trees under the
// three roots; and the public calls, which take the twins on a CPU with AVX2, against Eigen's LDL^T of the
// same I(q). Skipped on a CPU without AVX2 (the twins are never
// called there).
#include <gtest/gtest.h>

#include <Eigen/Cholesky>
#include <random>

#include "denoc/denoc.hpp"
#include "support/compare.hpp"
#include "support/random_chain.hpp"
#include "support/random_tree.hpp"

namespace denoc {
namespace {

using testing::inertiaEntries;
using testing::randomChainSpec;
using testing::randomTreeSpec;
using testing::randomVectorX;
using testing::sameBits;

TEST(DenseKernels, TheAvx2TwinsEqualTheBaseline) {
  if (!__builtin_cpu_supports("avx2")) GTEST_SKIP() << "no AVX2 on this CPU";
  int compared = 0;
  for (int n = 1; n <= 40; ++n) {
    const Model model = buildModel(randomChainSpec(n, 900u + static_cast<std::uint32_t>(n), 0.3));
    Data base(model), wide(model);
    std::mt19937 rng(static_cast<std::uint32_t>(n));
    const Eigen::VectorXd q = randomVectorX(rng, n, 3.0);
    detail::commonPlacementsAndInertias<double, false>(model, base, q);
    detail::commonPlacementsAndInertiasWide(model, wide, q, false, nullptr);
    ASSERT_TRUE(sameBits(base.cos_theta.data(), wide.cos_theta.data(), n, "cos theta")) << "n=" << n;
    ASSERT_TRUE(sameBits(base.sin_theta.data(), wide.sin_theta.data(), n, "sin theta")) << "n=" << n;
    for (int i = 0; i < n; ++i) {
      ASSERT_TRUE(sameBits(base.p0[i].data(), wide.p0[i].data(), 6, "p")) << "n=" << n << " joint " << i;
      ASSERT_TRUE(
          sameBits(inertiaEntries(base.work[i].M).data(), inertiaEntries(wide.work[i].M).data(), 10, "M"))
          << "n=" << n << " joint " << i;
    }
    // the kept link's placement (the operational-space inertia's), every link of a few sizes: twin and
    // baseline bit for bit, and its z axis and origin those in p_k
    if (n == 1 || n == 7 || n == 19) {
      for (int k = 0; k < n; ++k) {
        detail::KeptPlacement<double> kept_base, kept_wide;
        kept_base.link = kept_wide.link = k;
        Data b2(model), w2(model);
        detail::commonPlacementsAndInertias<double, false>(model, b2, q, false, &kept_base);
        detail::commonPlacementsAndInertiasWide(model, w2, q, false, &kept_wide);
        ASSERT_TRUE(sameBits(kept_base.R0.data(), kept_wide.R0.data(), 9, "kept R0"))
            << "n=" << n << " k " << k;
        ASSERT_TRUE(sameBits(kept_base.O.data(), kept_wide.O.data(), 3, "kept O")) << "n=" << n << " k " << k;
        ASSERT_TRUE(sameBits(b2.p0[k].data(), base.p0[k].data(), 6, "p with a kept link")) << "k " << k;
        const Eigen::Vector3d e = kept_base.R0.col(2);
        ASSERT_TRUE(sameBits(e.data(), base.p0[k].data() + (model.joint[k].revolute ? 0 : 3), 3, "axis"));
        if (model.joint[k].revolute) {
          EXPECT_LT((kept_base.O.cross(e) - base.p0[k].tail<3>()).norm(), 1e-15 * (1 + kept_base.O.norm()));
        }
      }
    }
    detail::crba<double, false>(model, base);
    detail::crbaWide(model, wide);
    ASSERT_TRUE(sameBits(base.M.data(), wide.M.data(), static_cast<std::size_t>(n) * n, "I(q)")) << "n=" << n;
    if (n <= 24) {  // the dense factors' sizes (denseFactors) and some beyond
      const bool base_ok = detail::denseUDU<double, false>(model, base);
      const bool wide_ok = detail::denseUDUWide(model, wide);
      ASSERT_EQ(base_ok, wide_ok) << "n=" << n;
      ASSERT_TRUE(sameBits(base.D.data(), wide.D.data(), n, "D")) << "n=" << n;
      ASSERT_TRUE(sameBits(base.U.data(), wide.U.data(), static_cast<std::size_t>(n) * n, "U")) << "n=" << n;
    }
    // the O(n) factors' explicit U, and U D U^T against I(q); the sweeps on them: I^-1 and -I^-1 B for a
    // random B
    detail::articulated(model, base, false);
    detail::articulated(model, wide, false);
    detail::explicitU<double, false>(model, base);
    detail::explicitUWide(model, wide);
    ASSERT_TRUE(sameBits(base.U.data(), wide.U.data(), static_cast<std::size_t>(n) * n, "explicit U"))
        << "n=" << n;
    const Eigen::MatrixXd UDUt = base.U * base.D.asDiagonal() * base.U.transpose();
    EXPECT_LT((UDUt - base.M).norm(), 1e-12 * base.M.norm()) << "n=" << n;
    detail::inverseBySweeps<double, false>(model, base);
    detail::inverseBySweepsWide(model, wide);
    ASSERT_TRUE(sameBits(base.Minv.data(), wide.Minv.data(), static_cast<std::size_t>(n) * n, "I^-1"))
        << "n=" << n;
    const Eigen::MatrixXd B = randomVectorX(rng, n * n, 2.0).reshaped(n, n);
    Eigen::MatrixXd x_base(n, n), x_wide(n, n);
    detail::negatedSolveUDU<double, false>(model, base, B, x_base);
    detail::negatedSolveUDUWide(model, wide, B, x_wide);
    ASSERT_TRUE(sameBits(x_base.data(), x_wide.data(), static_cast<std::size_t>(n) * n, "-I^-1 B"))
        << "n=" << n;
    ++compared;
  }
  EXPECT_EQ(compared, 40);
}

TEST(DenseKernels, TheTreeTwinsEqualTheBaseline) {
  // a tree's I(q), its sparse factor and the sweeps of I^-1 (treeLocalCrba, treeFactor, inverseBySweeps)
  // under the three roots, in a random order of parents first, depth first, and a chain on the tree
  // recursions; the factor against Eigen's LDL^T of the same I(q), I^-1 of both routes against I(q)
  if (!__builtin_cpu_supports("avx2")) GTEST_SKIP() << "no AVX2 on this CPU";
  int compared = 0, swept = 0;
  for (RootJoint root : {RootJoint::Fixed, RootJoint::Floating, RootJoint::Planar}) {
    for (int n = 1; n <= 30; n += 3) {
      for (int variant = 0; variant < 3; ++variant) {
        const bool chain = variant == 2;
        ModelSpec spec = randomTreeSpec(n, 1200u + static_cast<std::uint32_t>(n), root);
        if (variant == 1) spec = testing::depthFirst(spec);
        if (chain) {
          for (int i = 0; i < n; ++i) spec.joints[static_cast<std::size_t>(i)].parent = i - 1;
          spec.force_tree = true;
        }
        const Model model = buildModel(spec);
        Data base(model), wide(model);
        std::mt19937_64 rng(static_cast<std::uint64_t>(n));
        const Eigen::VectorXd q = randomConfiguration(model, rng);  // nq entries, a unit quaternion
        const int nv = model.nv;
        detail::treeLocalCrba<double, false>(model, base, q);
        detail::treeLocalCrbaWide(model, wide, q, false);
        ASSERT_TRUE(sameBits(base.M.data(), wide.M.data(), static_cast<std::size_t>(nv) * nv, "I(q)"))
            << "n=" << n << " chain " << chain;
        const int base_bad = detail::treeFactor<double, false>(model, base);
        const int wide_bad = detail::treeFactorWide(model, wide);
        ASSERT_EQ(base_bad, -1) << "n=" << n << " chain " << chain;
        ASSERT_EQ(wide_bad, -1);
        ASSERT_TRUE(sameBits(base.D.data(), wide.D.data(), static_cast<std::size_t>(nv), "D"));
        ASSERT_TRUE(sameBits(base.U.data(), wide.U.data(), static_cast<std::size_t>(nv) * nv, "U"));
        detail::treeInverseFromFactor(model, base);
        const Eigen::MatrixXd M = base.M;
        const Eigen::MatrixXd UDUt = base.U * base.D.asDiagonal() * base.U.transpose();
        EXPECT_LT((UDUt - M).norm(), 1e-12 * M.norm()) << "n=" << n << " chain " << chain;
        const Eigen::LDLT<Eigen::MatrixXd> ldlt(M);
        EXPECT_NEAR(base.log_det, ldlt.vectorD().array().log().sum(), 1e-11 * (1 + std::abs(base.log_det)));
        const Eigen::MatrixXd Minv = base.Minv;
        EXPECT_LT((Minv * M - Eigen::MatrixXd::Identity(nv, nv)).norm(), 1e-9)
            << "n=" << n << " chain " << chain;
        ++compared;
        if (!model.tree_sweeps) continue;
        ASSERT_EQ(detail::treeArticulated(model, base, q), -1) << "n=" << n;
        ASSERT_EQ(detail::treeArticulated(model, wide, q), -1) << "n=" << n;
        detail::inverseBySweeps<double, false>(model, base);
        detail::inverseBySweepsWide(model, wide);
        ASSERT_TRUE(sameBits(base.Minv.data(), wide.Minv.data(), static_cast<std::size_t>(nv) * nv, "I^-1"))
            << "n=" << n << " variant " << variant;
        EXPECT_LT((base.Minv * M - Eigen::MatrixXd::Identity(nv, nv)).norm(), 1e-9) << "n=" << n;
        ++swept;
      }
    }
  }
  EXPECT_EQ(compared, 3 * 10 * 3);
  EXPECT_GE(swept, 3 * 10 * 2);
}

TEST(DenseKernels, ThePublicCallsAgainstEigen) {
  // whatever route the dispatch takes on this CPU: U D U^T = I(q) with I(q) from the independent dense
  // LDL^T's point of view (the same matrix, factored by Eigen), and log det
  for (int n : {1, 2, 6, 7, 8, 12}) {
    const Model model = buildModel(randomChainSpec(n, 300u + static_cast<std::uint32_t>(n), 0.3));
    Data data(model);
    std::mt19937 rng(static_cast<std::uint32_t>(7 * n));
    const Eigen::VectorXd q = randomVectorX(rng, n, 3.0);
    computeFullFactor(model, data, q);
    const Eigen::MatrixXd U = data.U;
    const Eigen::MatrixXd M = data.M;
    const Eigen::MatrixXd UDUt = U * data.D.asDiagonal() * U.transpose();
    EXPECT_LT((UDUt - M).norm(), 1e-12 * M.norm()) << "n=" << n;
    const Eigen::LDLT<Eigen::MatrixXd> ldlt(M);
    EXPECT_NEAR(data.log_det, ldlt.vectorD().array().log().sum(), 1e-11 * (1 + std::abs(data.log_det)));
    // I(q) against its definition column by column: I e_j = ID(q, 0, e_j) - ID(q, 0, 0)
    Data id(model);
    const Eigen::VectorXd zero = Eigen::VectorXd::Zero(n);
    const Eigen::VectorXd bias = inverseDynamics(model, id, q, zero, zero);
    for (int j = 0; j < n; ++j) {
      const Eigen::VectorXd col = inverseDynamics(model, id, q, zero, Eigen::VectorXd::Unit(n, j)) - bias;
      EXPECT_LT((col - M.col(j)).norm(), 1e-11 * (1 + M.norm())) << "n=" << n << " column " << j;
    }
  }
}

}  // namespace
}  // namespace denoc
