// The common-frame placements of a chain, its joint vectors p_i and link inertias M_i, formed for double in
// pairs of lanes (detail::CommonPlacement<double>), against the entry-by-entry form (placeCommon,
// jointVector, linkInertiaCommon) bit for bit, on random chains with revolute and prismatic joints; and
// against the definitions: R0_i orthonormal, p_i's moment O_i x e_i, M_i the link's inertia moved to the
// base origin by the parallel-axis theorem.
#include <gtest/gtest.h>

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
using Vec6 = Types<double>::Vec6;

/// The same bits in every entry of two fixed-size Eigen objects.
template <typename A, typename B>
::testing::AssertionResult sameEntries(const A& a, const B& b, const std::string& what) {
  static_assert(A::SizeAtCompileTime == B::SizeAtCompileTime);
  return sameBits(a.data(), b.data(), A::SizeAtCompileTime, what);
}

TEST(CommonPlacement, PairsEqualTheEntryByEntryForm) {
  int compared = 0;
  for (int n : {1, 2, 3, 6, 7, 13, 30}) {
    for (std::uint32_t seed = 0; seed < 8; ++seed) {
      const Model model =
          buildModel(randomChainSpec(n, 500u + 17u * seed + static_cast<std::uint32_t>(n), 0.4));
      Data data(model);
      std::mt19937 rng(seed);
      const Eigen::VectorXd q = randomVectorX(rng, n, 4.0);
      detail::jointAngles(model, data, q);
      detail::CommonPlacement<double> pairs;
      ASSERT_TRUE(sameEntries(pairs.rotation(), Eigen::Matrix3d::Identity().eval(), "R0 of F_{-1}"));
      ASSERT_TRUE(sameEntries(pairs.origin(), Eigen::Vector3d::Zero().eval(), "O of F_{-1}"));
      Eigen::Matrix3d R0 = Eigen::Matrix3d::Identity();
      Eigen::Vector3d O = Eigen::Vector3d::Zero();
      for (int i = 0; i < n; ++i) {
        const JointConstants<double>& jc = model.joint[i];
        const JointRotation<double> R{jc.cos_alpha, jc.sin_alpha, data.cos_theta[i], data.sin_theta[i]};
        const Eigen::Vector3d s_q = detail::jointOffset(jc, R, q[i]);
        detail::placeCommon(R, s_q, i == 0, R0, O);
        pairs.next(R, s_q, i == 0);
        const Eigen::Matrix3d R0_pairs = pairs.rotation();
        const Eigen::Vector3d O_pairs = pairs.origin();
        ASSERT_TRUE(sameEntries(R0_pairs, R0, "R0")) << "n=" << n << " seed " << seed << " joint " << i;
        ASSERT_TRUE(sameEntries(O_pairs, O, "O")) << "n=" << n << " seed " << seed << " joint " << i;
        const Vec6 p = pairs.jointVector(jc.revolute);
        ASSERT_TRUE(sameEntries(p, detail::jointVector<double>(jc.revolute, R0, O), "p")) << "joint " << i;
        const RigidInertia<double> M = pairs.linkInertia(jc);
        ASSERT_TRUE(sameBits(inertiaEntries(M).data(),
                             inertiaEntries(detail::linkInertiaCommon(jc, R0, O)).data(), 10, "M"))
            << "joint " << i;

        // the definitions, independently of both forms
        EXPECT_LT((R0 * R0.transpose() - Eigen::Matrix3d::Identity()).norm(), 1e-14);
        const Eigen::Vector3d e = R0.col(2);
        const Vec6 p_def = jc.revolute ? (Vec6() << e, O.cross(e)).finished()
                                       : (Vec6() << Eigen::Vector3d::Zero(), e).finished();
        EXPECT_LT((p - p_def).norm(), 1e-15);
        const Eigen::Vector3d C = O + R0 * model.com[i];  // the mass center in base axes
        const Eigen::Matrix3d I_def =
            R0 * model.inertia[i] * R0.transpose() +
            jc.m * (C.squaredNorm() * Eigen::Matrix3d::Identity() - C * C.transpose());
        EXPECT_LT((M.h - jc.m * C).norm(), 1e-13 * (1 + jc.m * C.norm()));
        EXPECT_LT((M.I.matrix() - I_def).norm(), 1e-12 * (1 + I_def.norm())) << "joint " << i;
        ++compared;
      }
    }
  }
  EXPECT_EQ(compared, 8 * (1 + 2 + 3 + 6 + 7 + 13 + 30));
}

TEST(CommonPlacement, TreesRestartAtBranchPointsAndTurnFurtherChildren) {
  // a tree's placements as the tree code forms them (tree_local.hxx: restarted from the parent's stored
  // placement after a branch, a further child turned by gamma) in pairs of lanes, against placeCommon with
  // TreeJointRotation entry by entry, bit for bit; and against the product of the rotations up each path
  int turned = 0, restarted = 0;
  for (RootJoint root : {RootJoint::Fixed, RootJoint::Floating, RootJoint::Planar}) {
    for (std::uint32_t seed = 0; seed < 12; ++seed) {
      const int n = 3 + static_cast<int>(seed) * 2;
      const Model model = buildModel(randomTreeSpec(n, 40u + seed, root));
      Data data(model);
      std::mt19937_64 rng(seed);
      const Eigen::VectorXd q = randomConfiguration(model, rng);  // nq entries, a unit quaternion
      detail::jointAngles(model, data, q.segment(model.nqr, n));
      std::vector<Eigen::Matrix3d> R0(static_cast<std::size_t>(n));
      std::vector<Eigen::Vector3d> O(static_cast<std::size_t>(n));
      detail::CommonPlacement<double> pairs;
      for (int i = 0; i < n; ++i) {
        const int p = model.parent[static_cast<std::size_t>(i)];
        const JointConstants<double>& jc = model.joint[static_cast<std::size_t>(i)];
        const auto R = detail::treeRotation(jc, data.cos_theta[i], data.sin_theta[i]);
        const Eigen::Vector3d s_q = detail::jointOffset<double>(jc, R, q[model.nqr + i]);
        const auto ui = static_cast<std::size_t>(i);
        if (p >= 0) {
          detail::placeCommon<double>(R, s_q, false, R0[static_cast<std::size_t>(p)],
                                      O[static_cast<std::size_t>(p)], R0[ui], O[ui]);
        } else {
          detail::placeCommon<double>(R, s_q, true, Eigen::Matrix3d::Identity(), Eigen::Vector3d::Zero(),
                                      R0[ui], O[ui]);
        }
        if (p != i - 1 && p >= 0) {
          pairs = detail::CommonPlacement<double>(R0[static_cast<std::size_t>(p)],
                                                  O[static_cast<std::size_t>(p)]);
          ++restarted;
        }
        pairs.next(R, s_q, p < 0);
        turned += jc.turned ? 1 : 0;
        ASSERT_TRUE(sameEntries(pairs.rotation(), R0[ui], "R0")) << "seed " << seed << " joint " << i;
        ASSERT_TRUE(sameEntries(pairs.origin(), O[ui], "O")) << "seed " << seed << " joint " << i;
        ASSERT_TRUE(sameEntries(pairs.jointVector(jc.revolute),
                                detail::jointVector<double>(jc.revolute, R0[ui], O[ui]), "p"));
        ASSERT_TRUE(sameBits(inertiaEntries(pairs.linkInertia(jc)).data(),
                             inertiaEntries(detail::linkInertiaCommon(jc, R0[ui], O[ui])).data(), 10, "M"));
        // the definition: R0_i = R_{a_1} ... R_i over i's path, each R the dense rotation matrix
        Eigen::Matrix3d W = Eigen::Matrix3d::Identity();
        for (int j = i; j >= 0; j = model.parent[static_cast<std::size_t>(j)]) {
          const auto Rj = detail::treeRotation(model.joint[static_cast<std::size_t>(j)], data.cos_theta[j],
                                               data.sin_theta[j]);
          W = Rj.matrix() * W;
        }
        EXPECT_LT((W - R0[ui]).norm(), 1e-13) << "seed " << seed << " joint " << i;
      }
    }
  }
  EXPECT_GT(turned, 10);
  EXPECT_GT(restarted, 10);
}

TEST(CommonPlacement, AChainOnTheTreeStepsHasTheSerialInertiaMatrix) {
  // the same chain built for the serial recursions and for the tree's (force_tree): the tree's I(q) takes
  // the serial steps and sums (composite of the next body in registers, no turn), so the same bits
  for (int n : {1, 2, 6, 7, 12, 25}) {
    EXPECT_TRUE(testing::sameBitsOnBothRoutes(
        randomChainSpec(n, 640u + static_cast<std::uint32_t>(n), 0.3),
        [](const Model& m, Data& d, const Eigen::VectorXd& q) { return computeInertiaMatrix(m, d, q); },
        "I(q)"))
        << "n=" << n;
  }
}

TEST(CommonPlacement, TheInertiaMatrixUsesThePairs) {
  // I(q) from computeInertiaMatrix (the pairs) equals the composite-body sum over the entry-by-entry
  // placements
  const Model model = buildModel(randomChainSpec(9, 77u, 0.4));
  Data data(model), entries(model);
  std::mt19937 rng(3);
  const Eigen::VectorXd q = randomVectorX(rng, 9, 2.0);
  const Eigen::MatrixXd M = computeInertiaMatrix(model, data, q);
  detail::jointAngles(model, entries, q);
  Eigen::Matrix3d R0 = Eigen::Matrix3d::Identity();
  Eigen::Vector3d O = Eigen::Vector3d::Zero();
  for (int i = 0; i < model.n; ++i) {
    const JointConstants<double>& jc = model.joint[i];
    const JointRotation<double> R{jc.cos_alpha, jc.sin_alpha, entries.cos_theta[i], entries.sin_theta[i]};
    detail::placeCommon(R, detail::jointOffset(jc, R, q[i]), i == 0, R0, O);
    entries.p0[i] = detail::jointVector<double>(jc.revolute, R0, O);
    entries.work[i].M = detail::linkInertiaCommon(jc, R0, O);
  }
  detail::crba(model, entries);
  EXPECT_TRUE(M == entries.M);
}

}  // namespace
}  // namespace denoc
