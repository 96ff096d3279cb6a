// Cross-checks of the algorithms against each other and against definitions: columns of I(q) from
// inverse dynamics, U D U^T = I, ID(FD(tau)) = tau, Saha FD = Cholesky FD, I^-1 I = 1, log det.
// Oracle: the other routes (inverse dynamics, the Cholesky route, the inertia matrix) and the identities they
// obey.
#include <gtest/gtest.h>

#include "denoc/denoc.hpp"
#include "support/compare.hpp"
#include "support/random_chain.hpp"

namespace denoc {
namespace {

using testing::relErr;

using testing::randomChainSpec;
using testing::randomVectorX;

Eigen::VectorXd computeFullFactorD(const Model& model, const Eigen::VectorXd& q) {
  Data other(model);
  computeFullFactor(model, other, q);
  return other.D;
}

class ChainIdentities : public ::testing::TestWithParam<int> {};

TEST_P(ChainIdentities, AllRoutesAgree) {
  const int n = GetParam();
  for (std::uint32_t seed = 1; seed <= 5; ++seed) {
    const Model model = buildModel(randomChainSpec(n, seed * 7919u + static_cast<std::uint32_t>(n)));
    Data data(model);
    std::mt19937 rng(seed);
    const Eigen::VectorXd q = randomVectorX(rng, n, 3.0);
    const Eigen::VectorXd qd = randomVectorX(rng, n, 2.0);
    const Eigen::VectorXd qdd = randomVectorX(rng, n, 2.0);

    // columns of I(q) from inverse dynamics with zero velocity and gravity: ID(q, 0, e_j) - ID(q, 0, 0)
    const Eigen::MatrixXd M = computeInertiaMatrix(model, data, q);
    Eigen::MatrixXd M_id(n, n);
    const Eigen::VectorXd zero = Eigen::VectorXd::Zero(n);
    const Eigen::VectorXd g = inverseDynamics(model, data, q, zero, zero);
    for (int j = 0; j < n; ++j) {
      M_id.col(j) = inverseDynamics(model, data, q, zero, Eigen::VectorXd::Unit(n, j)) - g;
    }
    EXPECT_LT(relErr(M, M_id), 1e-12) << "n=" << n << " seed=" << seed;
    EXPECT_LT((M - M.transpose()).norm(), 1e-12 * M.norm());

    // U D U^T = I, U unit upper triangular, D > 0
    computeFullFactor(model, data, q);
    const Eigen::MatrixXd U = data.U;
    EXPECT_LT(relErr(U * data.D.asDiagonal() * U.transpose(), M), 1e-12);
    EXPECT_TRUE(U.isUpperTriangular(0.0));
    EXPECT_TRUE(U.diagonal().isOnes(0.0));
    EXPECT_GT(data.D.minCoeff(), 0.0);
    EXPECT_NEAR(data.log_det, std::log(M.determinant()), 1e-9 * std::max(1.0, std::abs(data.log_det)));

    // the O(n) recursion and the dense elimination give the same unique factors
    computeUDU(model, data, q, true);
    EXPECT_LT(relErr(data.U, U), 1e-10);
    EXPECT_LT((data.D - computeFullFactorD(model, q)).norm(), 1e-10 * data.D.norm());
    EXPECT_LT(relErr(data.U * data.D.asDiagonal() * data.U.transpose(), M), 1e-12);

    // forward dynamics inverts inverse dynamics, both routes
    const Eigen::VectorXd tau = inverseDynamics(model, data, q, qd, qdd);
    const Eigen::VectorXd qdd_saha = forwardDynamics(model, data, q, qd, tau);
    const Eigen::VectorXd qdd_chol = forwardDynamicsCholesky(model, data, q, qd, tau);
    EXPECT_LT(relErr(qdd_saha, qdd), 1e-9) << "n=" << n;
    EXPECT_LT(relErr(qdd_chol, qdd), 1e-9) << "n=" << n;

    // inverse inertia
    const Eigen::MatrixXd Minv = computeInverseInertia(model, data, q);
    EXPECT_LT(relErr(Minv * M, Eigen::MatrixXd::Identity(n, n)), 1e-9);
  }
}

// 6 and 7: the kernels unrolled for the arms' sizes (detail::withJointCount); 5 and 8 beside them run the
// same loops with run-time bounds
INSTANTIATE_TEST_SUITE_P(Sizes, ChainIdentities, ::testing::Values(1, 2, 3, 5, 6, 7, 8, 12, 30, 60));

}  // namespace
}  // namespace denoc
