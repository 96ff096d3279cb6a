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

namespace denoc {
namespace {

using testing::inertiaEntries;
using testing::randomChainSpec;
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
