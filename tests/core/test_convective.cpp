// The convective inertia matrix C(q, qd) of Saha 1999 (eq. 25-29) and the bias terms, against oracles
// computed independently of it:
//  - C qd against the velocity part of the bias from the Newton-Euler recursion (gravity off, qdd = 0);
//  - dI/dt = C + C^T (so dI/dt - 2C is skew-symmetric), dI/dt by central differences of I(q) along qd;
//  - the Christoffel-symbol matrix from finite differences of I(q): C is not unique as a matrix, so only
//    what is implied is tested: Saha's C and the Christoffel C both give C qd, both satisfy
//    dI/dt = C + C^T, hence their difference D is skew-symmetric with D qd = 0, and D is linear in qd
//    with the tensor D_ij(e_k) antisymmetric in every pair of indices (D_ij(e_k) = -D_ik(e_j)).
#include <gtest/gtest.h>

#include <cmath>
#include <filesystem>
#include <stdexcept>

#include "denoc/algorithm/convective.hpp"
#include "denoc/algorithm/inertia_matrix.hpp"
#include "denoc/algorithm/inverse_dynamics.hpp"
#include "denoc/data.hpp"
#include "denoc/model.hpp"
#include "denoc/urdf.hpp"
#include "support/compare.hpp"
#include "support/random_chain.hpp"

namespace denoc {
namespace {

using testing::relErr;

using testing::randomChainSpec;
using testing::randomVectorX;

// dI/dq_k by central differences (step h), all k
std::vector<Eigen::MatrixXd> inertiaGradient(const Model& model, const Eigen::VectorXd& q, double h) {
  Data data(model);
  std::vector<Eigen::MatrixXd> dI;
  for (int k = 0; k < model.n; ++k) {
    Eigen::VectorXd qp = q, qm = q;
    qp[k] += h;
    qm[k] -= h;
    const Eigen::MatrixXd Ip = computeInertiaMatrix(model, data, qp);
    const Eigen::MatrixXd Im = computeInertiaMatrix(model, data, qm);
    dI.push_back((Ip - Im) / (2.0 * h));
  }
  return dI;
}

// C_ij = sum_k 1/2 (dI_ij/dq_k + dI_ik/dq_j - dI_jk/dq_i) qd_k
Eigen::MatrixXd christoffel(const std::vector<Eigen::MatrixXd>& dI, const Eigen::VectorXd& qd) {
  const int n = static_cast<int>(qd.size());
  Eigen::MatrixXd C = Eigen::MatrixXd::Zero(n, n);
  for (int i = 0; i < n; ++i)
    for (int j = 0; j < n; ++j)
      for (int k = 0; k < n; ++k) C(i, j) += 0.5 * (dI[k](i, j) + dI[j](i, k) - dI[i](j, k)) * qd[k];
  return C;
}

struct Case {
  int n;
  double prismatic_fraction;
};

class Convective : public ::testing::TestWithParam<Case> {};

// C qd equals the velocity part of the bias (Newton-Euler, gravity off, qdd = 0) to 1e-12
TEST_P(Convective, TimesQdEqualsVelocityBias) {
  const auto [n, pf] = GetParam();
  for (std::uint32_t seed = 1; seed <= 5; ++seed) {
    const Model model = buildModel(randomChainSpec(n, 1000u * seed + static_cast<std::uint32_t>(n), pf));
    Data data(model);
    std::mt19937 rng(seed + 17);
    const Eigen::VectorXd q = randomVectorX(rng, n, 3.0);
    const Eigen::VectorXd qd = randomVectorX(rng, n, 2.0);
    const Eigen::MatrixXd C = computeConvectiveMatrix(model, data, q, qd);
    const Eigen::VectorXd cqd = computeVelocityBias(model, data, q, qd);
    EXPECT_LT(relErr(C * qd, cqd), 1e-12) << "n=" << n << " seed=" << seed;
    // the same from the public inverse dynamics: ID(q, qd, 0) - ID(q, 0, 0)
    const Eigen::VectorXd zero = Eigen::VectorXd::Zero(n);
    const Eigen::VectorXd id_v = inverseDynamics(model, data, q, qd, zero);
    const Eigen::VectorXd id_0 = inverseDynamics(model, data, q, zero, zero);
    EXPECT_LT(relErr(C * qd, id_v - id_0), 1e-12) << "n=" << n << " seed=" << seed;
    // bias = C qd + g, g = ID(q, 0, 0), bias = ID(q, qd, 0)
    const Eigen::VectorXd g = computeGravity(model, data, q);
    EXPECT_LT(relErr(g, id_0), 1e-14);
    const Eigen::VectorXd bias = computeBias(model, data, q, qd);
    EXPECT_LT(relErr(bias, id_v), 1e-14);
    EXPECT_LT(relErr(bias, C * qd + g), 1e-12);
    // the velocity part must not be trivially zero (it is for one joint, or two prismatic ones)
    if (n >= 3) {
      EXPECT_GT(cqd.norm(), 1e-3);
    }
  }
}

// dI/dt = C + C^T (finite differences of I along qd), hence dI/dt - 2C is skew-symmetric
TEST_P(Convective, InertiaRateMinusTwoCIsSkew) {
  const auto [n, pf] = GetParam();
  for (std::uint32_t seed = 1; seed <= 3; ++seed) {
    const Model model = buildModel(randomChainSpec(n, 2000u * seed + static_cast<std::uint32_t>(n), pf));
    Data data(model);
    std::mt19937 rng(seed + 29);
    const Eigen::VectorXd q = randomVectorX(rng, n, 3.0);
    const Eigen::VectorXd qd = randomVectorX(rng, n, 2.0);
    const double h = 1e-5;
    const Eigen::MatrixXd Ip = computeInertiaMatrix(model, data, Eigen::VectorXd(q + h * qd));
    const Eigen::MatrixXd Im = computeInertiaMatrix(model, data, Eigen::VectorXd(q - h * qd));
    const Eigen::MatrixXd Idot = (Ip - Im) / (2.0 * h);
    const Eigen::MatrixXd C = computeConvectiveMatrix(model, data, q, qd);
    const Eigen::MatrixXd N = Idot - 2.0 * C;
    const double scale = std::max(1.0, Idot.norm());
    EXPECT_LT((N + N.transpose()).norm(), 1e-6 * scale) << "n=" << n << " seed=" << seed;
    EXPECT_LT((Idot - C - C.transpose()).norm(), 1e-6 * scale) << "n=" << n << " seed=" << seed;
    // and the property is not trivial: N itself is not small
    if (n >= 3) {
      EXPECT_GT(N.norm(), 1e-3 * scale);
    }
  }
}

// against the Christoffel-symbol matrix: the properties both matrices share
TEST_P(Convective, AgreesWithChristoffelWhereImplied) {
  const auto [n, pf] = GetParam();
  const Model model = buildModel(randomChainSpec(n, 3000u + static_cast<std::uint32_t>(n), pf));
  Data data(model);
  std::mt19937 rng(41);
  const Eigen::VectorXd q = randomVectorX(rng, n, 3.0);
  const Eigen::VectorXd qd = randomVectorX(rng, n, 2.0);
  const std::vector<Eigen::MatrixXd> dI = inertiaGradient(model, q, 1e-5);
  const Eigen::MatrixXd Cc = christoffel(dI, qd);
  const Eigen::MatrixXd Cs = computeConvectiveMatrix(model, data, q, qd);
  const Eigen::VectorXd cqd = computeVelocityBias(model, data, q, qd);
  const double scale = std::max(1.0, Cs.norm());
  // the oracle itself: the Christoffel C gives the velocity bias
  EXPECT_LT((Cc * qd - cqd).norm(), 1e-6 * std::max(1.0, cqd.norm())) << "n=" << n;
  // the difference is skew-symmetric and annihilates qd
  const Eigen::MatrixXd D = Cs - Cc;
  EXPECT_LT((D + D.transpose()).norm(), 1e-6 * scale) << "n=" << n;
  EXPECT_LT((D * qd).norm(), 1e-6 * scale * qd.norm()) << "n=" << n;
  // linear in qd, with a totally antisymmetric difference tensor: D(e_k)_ij = -D(e_j)_ik
  std::vector<Eigen::MatrixXd> Dk;
  for (int k = 0; k < n; ++k) {
    const Eigen::VectorXd ek = Eigen::VectorXd::Unit(n, k);
    Dk.push_back(Eigen::MatrixXd(computeConvectiveMatrix(model, data, q, ek)) - christoffel(dI, ek));
  }
  Eigen::MatrixXd Dsum = Eigen::MatrixXd::Zero(n, n);
  for (int k = 0; k < n; ++k) Dsum += Dk[k] * qd[k];
  EXPECT_LT((Dsum - D).norm(), 1e-6 * scale) << "n=" << n;
  double worst = 0.0;
  for (int i = 0; i < n; ++i)
    for (int j = 0; j < n; ++j)
      for (int k = 0; k < n; ++k) worst = std::max(worst, std::abs(Dk[k](i, j) + Dk[j](i, k)));
  EXPECT_LT(worst, 1e-6 * scale) << "n=" << n;
  RecordProperty("max_abs_saha_minus_christoffel", std::to_string(D.cwiseAbs().maxCoeff()));
}

// C is linear in qd (exactly, up to rounding)
TEST_P(Convective, LinearInJointRates) {
  const auto [n, pf] = GetParam();
  const Model model = buildModel(randomChainSpec(n, 4000u + static_cast<std::uint32_t>(n), pf));
  Data data(model);
  std::mt19937 rng(43);
  const Eigen::VectorXd q = randomVectorX(rng, n, 3.0);
  const Eigen::VectorXd x = randomVectorX(rng, n, 2.0);
  const Eigen::VectorXd y = randomVectorX(rng, n, 2.0);
  const Eigen::MatrixXd Cx = computeConvectiveMatrix(model, data, q, x);
  const Eigen::MatrixXd Cy = computeConvectiveMatrix(model, data, q, y);
  const Eigen::MatrixXd Cxy = computeConvectiveMatrix(model, data, q, Eigen::VectorXd(0.7 * x - 1.3 * y));
  EXPECT_LT(relErr(Cxy, 0.7 * Cx - 1.3 * Cy), 1e-12);
  const Eigen::MatrixXd C0 = computeConvectiveMatrix(model, data, q, Eigen::VectorXd::Zero(n));
  EXPECT_EQ(C0.norm(), 0.0);
}

INSTANTIATE_TEST_SUITE_P(Chains, Convective,
                         ::testing::Values(Case{1, 0.0}, Case{1, 1.0}, Case{2, 0.3}, Case{3, 0.5},
                                           Case{6, 0.3}, Case{7, 0.5}, Case{12, 0.3}, Case{20, 0.5},
                                           Case{30, 0.3}),
                         [](const ::testing::TestParamInfo<Case>& info) {
                           return "n" + std::to_string(info.param.n) + "_prismatic" +
                                  std::to_string(static_cast<int>(info.param.prismatic_fraction * 100));
                         });

// the planar 2R arm in closed form: bias h = m2 l1 lc2 sin(q2) [-(2 qd1 qd2 + qd2^2); qd1^2]
TEST(ConvectiveClosedForm, Planar2R) {
  const double m1 = 1.3, m2 = 0.9, l1 = 0.7, lc1 = 0.3, lc2 = 0.25;
  ModelSpec spec;
  spec.gravity = Eigen::Vector3d(0, -9.81, 0);
  JointSpec j1;
  j1.name = "j1";
  j1.link = "l1";
  j1.mass = m1;
  j1.com = Eigen::Vector3d(lc1, 0, 0);
  j1.inertia = Eigen::Vector3d(0.01, 0.02, 0.025).asDiagonal();
  JointSpec j2 = j1;
  j2.name = "j2";
  j2.link = "l2";
  j2.origin = Eigen::Vector3d(l1, 0, 0);
  j2.mass = m2;
  j2.com = Eigen::Vector3d(lc2, 0, 0);
  j2.inertia = Eigen::Vector3d(0.012, 0.018, 0.021).asDiagonal();
  spec.joints = {j1, j2};
  const Model model = buildModel(spec);
  Data data(model);
  const Eigen::Vector2d q(0.4, -1.1), qd(0.8, -1.7);
  const double h = m2 * l1 * lc2 * std::sin(q[1]);
  const Eigen::Vector2d expected(-h * (2 * qd[0] * qd[1] + qd[1] * qd[1]), h * qd[0] * qd[0]);
  const Eigen::MatrixXd C = computeConvectiveMatrix(model, data, q, qd);
  EXPECT_LT((C * qd - expected).norm(), 1e-13);
  // gravity: g = [(m1 lc1 + m2 l1) g c1 + m2 lc2 g c12; m2 lc2 g c12]
  const double gr = 9.81;
  const Eigen::Vector2d g_expected(
      (m1 * lc1 + m2 * l1) * gr * std::cos(q[0]) + m2 * lc2 * gr * std::cos(q[0] + q[1]),
      m2 * lc2 * gr * std::cos(q[0] + q[1]));
  EXPECT_LT((computeGravity(model, data, q) - g_expected).norm(), 1e-12);
}

// the robots of examples/models: C qd and dI/dt = C + C^T
TEST(ConvectiveUrdf, ExampleModels) {
  const std::filesystem::path dir = std::filesystem::path(DENOC_MODELS_DIR);
  ASSERT_TRUE(std::filesystem::is_directory(dir)) << dir;
  int built = 0;
  for (const auto& entry : std::filesystem::directory_iterator(dir)) {
    if (entry.path().extension() != ".urdf") continue;
    const std::string name = entry.path().filename().string();
    Model model = buildModelFromUrdfFile(entry.path().string());
    if (!model.serial) {
      UrdfOptions options;  // a tree (a hand with fingers): the arm up to the hand
      options.tip_link = "panda_hand";
      model = buildModelFromUrdfFile(entry.path().string(), options);
    }
    ++built;
    const int n = model.n;
    Data data(model);
    std::mt19937 rng(13);
    const Eigen::VectorXd q = randomVectorX(rng, n, 2.0);
    const Eigen::VectorXd qd = randomVectorX(rng, n, 2.0);
    const Eigen::MatrixXd C = computeConvectiveMatrix(model, data, q, qd);
    const Eigen::VectorXd cqd = computeVelocityBias(model, data, q, qd);
    EXPECT_LT(relErr(C * qd, cqd), 1e-12) << name;
    const double h = 1e-5;
    // (copies: both calls return a reference to data.M)
    const Eigen::MatrixXd Ip = computeInertiaMatrix(model, data, Eigen::VectorXd(q + h * qd));
    const Eigen::MatrixXd Im = computeInertiaMatrix(model, data, Eigen::VectorXd(q - h * qd));
    const Eigen::MatrixXd Idot = (Ip - Im) / (2.0 * h);
    EXPECT_LT((Idot - C - C.transpose()).norm(), 1e-6 * std::max(1.0, Idot.norm())) << name;
  }
  EXPECT_GE(built, 8);
}

TEST(ConvectiveArguments, RejectBadInput) {
  const Model model = buildModel(randomChainSpec(4, 5));
  Data data(model);
  const Eigen::VectorXd ok = Eigen::VectorXd::Zero(4);
  const Eigen::VectorXd short_v = Eigen::VectorXd::Zero(3);
  Eigen::VectorXd nan = ok;
  nan[2] = std::nan("");
  EXPECT_THROW(computeConvectiveMatrix(model, data, short_v, ok), std::invalid_argument);
  EXPECT_THROW(computeConvectiveMatrix(model, data, ok, nan), std::invalid_argument);
  EXPECT_THROW(computeBias(model, data, ok, short_v), std::invalid_argument);
  EXPECT_THROW(computeVelocityBias(model, data, nan, ok), std::invalid_argument);
  EXPECT_THROW(computeGravity(model, data, short_v), std::invalid_argument);
  EXPECT_NO_THROW(computeConvectiveMatrix(model, data, ok, ok));
}

}  // namespace
}  // namespace denoc
