// denoc against Orocos KDL (an independent implementation): inverse dynamics (ChainIdSolver_RNE, with and
// without a tip wrench), the joint-space inertia matrix (ChainDynParam::JntToMass) and forward dynamics
// (ChainFdSolver_RNE), to 1e-9 relative (forward dynamics: scaled by cond(I) / 1e6 when larger), on
// random chains built from ModelSpec and on DH chains built in KDL directly from the DH parameters with
// KDL::Frame::DH (the Stanford arm of Saha 1999 Table 3, the planar 3R arm, random DH chains).
#include <gtest/gtest.h>

#include <cmath>
#include <kdl/chaindynparam.hpp>
#include <kdl/chainfdsolver_recursive_newton_euler.hpp>
#include <kdl/chainidsolver_recursive_newton_euler.hpp>
#include <kdl/jntspaceinertiamatrix.hpp>
#include <numbers>
#include <string>
#include <vector>

#include "denoc/denoc.hpp"
#include "support/compare.hpp"
#include "support/kdl_chain.hpp"
#include "support/random_chain.hpp"

namespace denoc {
namespace {

using testing::relErr;

using testing::randomChainSpec;
using testing::randomVectorX;
using testing::toKdl;
using testing::toKdlChain;

constexpr double kTol = 1e-9;
constexpr double kDeg = std::numbers::pi / 180.0;

/// KDL inverse dynamics; `tip_wrench` ([moment; force] by the environment on the last link, in the chain's
/// end frame about its origin) goes to f_ext of the last segment as KDL::Wrench(force, moment).
Eigen::VectorXd kdlInverseDynamics(const KDL::Chain& chain, const Eigen::Vector3d& gravity,
                                   const Eigen::VectorXd& q, const Eigen::VectorXd& qd,
                                   const Eigen::VectorXd& qdd,
                                   const Eigen::Matrix<double, 6, 1>& tip_wrench) {
  KDL::ChainIdSolver_RNE solver(chain, toKdl(gravity));
  KDL::Wrenches f_ext(chain.getNrOfSegments(), KDL::Wrench::Zero());
  f_ext.back() =
      KDL::Wrench(toKdl(Eigen::Vector3d(tip_wrench.tail<3>())), toKdl(Eigen::Vector3d(tip_wrench.head<3>())));
  KDL::JntArray tau(chain.getNrOfJoints());
  const int rc = solver.CartToJnt(toKdl(q), toKdl(qd), toKdl(qdd), f_ext, tau);
  EXPECT_EQ(rc, 0) << "KDL ChainIdSolver_RNE failed";
  return tau.data;
}

Eigen::VectorXd kdlForwardDynamics(const KDL::Chain& chain, const Eigen::Vector3d& gravity,
                                   const Eigen::VectorXd& q, const Eigen::VectorXd& qd,
                                   const Eigen::VectorXd& tau) {
  KDL::ChainFdSolver_RNE solver(chain, toKdl(gravity));
  const KDL::Wrenches f_ext(chain.getNrOfSegments(), KDL::Wrench::Zero());
  KDL::JntArray qdd(chain.getNrOfJoints());
  const int rc = solver.CartToJnt(toKdl(q), toKdl(qd), toKdl(tau), f_ext, qdd);
  EXPECT_EQ(rc, 0) << "KDL ChainFdSolver_RNE failed";
  return qdd.data;
}

Eigen::MatrixXd kdlInertiaMatrix(const KDL::Chain& chain, const Eigen::Vector3d& gravity,
                                 const Eigen::VectorXd& q) {
  KDL::ChainDynParam dyn(chain, toKdl(gravity));
  KDL::JntSpaceInertiaMatrix H(chain.getNrOfJoints());
  const int rc = dyn.JntToMass(toKdl(q), H);
  EXPECT_EQ(rc, 0) << "KDL ChainDynParam::JntToMass failed";
  return H.data;
}

/// Compares inverse dynamics (without and with a random tip wrench), the inertia matrix and forward dynamics
/// (denoc's O(n) and Cholesky routes vs ChainFdSolver_RNE) at `states` random states. Returns the number of
/// comparison groups made (4 per state).
int compareWithKdl(const Model& model, const KDL::Chain& chain, std::uint32_t seed, int states,
                   double q_scale, const std::string& what) {
  const int n = model.n;
  EXPECT_EQ(static_cast<int>(chain.getNrOfJoints()), n) << what;
  Data data(model);
  std::mt19937 rng(seed);
  int checks = 0;
  for (int s = 0; s < states; ++s) {
    const Eigen::VectorXd q = randomVectorX(rng, n, q_scale);
    const Eigen::VectorXd qd = randomVectorX(rng, n, 2.0);
    const Eigen::VectorXd qdd = randomVectorX(rng, n, 2.0);
    const Eigen::Matrix<double, 6, 1> zero = Eigen::Matrix<double, 6, 1>::Zero();
    Eigen::Matrix<double, 6, 1> wrench;
    wrench << randomVectorX(rng, 3, 2.0), randomVectorX(rng, 3, 10.0);

    const Eigen::VectorXd tau_kdl = kdlInverseDynamics(chain, model.gravity, q, qd, qdd, zero);
    const Eigen::VectorXd tau = inverseDynamics(model, data, q, qd, qdd);
    EXPECT_LT(relErr(tau, tau_kdl), kTol)
        << what << " state " << s << "\ndenoc " << tau.transpose() << "\nKDL   " << tau_kdl.transpose();

    const Eigen::VectorXd tauw_kdl = kdlInverseDynamics(chain, model.gravity, q, qd, qdd, wrench);
    const Eigen::VectorXd tauw = inverseDynamics(model, data, q, qd, qdd, wrench);
    EXPECT_LT(relErr(tauw, tauw_kdl), kTol) << what << " state " << s << " with tip wrench\ndenoc "
                                            << tauw.transpose() << "\nKDL   " << tauw_kdl.transpose();
    // the wrench must matter, else the comparison above proves nothing about it
    EXPECT_GT((tauw_kdl - tau_kdl).norm(), 1e-6) << what;

    const Eigen::MatrixXd M_kdl = kdlInertiaMatrix(chain, model.gravity, q);
    const Eigen::MatrixXd M = computeInertiaMatrix(model, data, q);
    EXPECT_LT(relErr(M, M_kdl), kTol) << what << " state " << s << "\ndenoc\n" << M << "\nKDL\n" << M_kdl;

    // forward dynamics of a random torque, both denoc routes against KDL's; the tolerance scales with the
    // conditioning of I(q), which grows quickly with n for random chains
    const Eigen::VectorXd tau_in = randomVectorX(rng, n, 5.0);
    const Eigen::VectorXd qdd_kdl = kdlForwardDynamics(chain, model.gravity, q, qd, tau_in);
    const double cond = M_kdl.norm() * M_kdl.inverse().norm();
    const Eigen::VectorXd qdd_saha = forwardDynamics(model, data, q, qd, tau_in);
    const Eigen::VectorXd qdd_chol = forwardDynamicsCholesky(model, data, q, qd, tau_in);
    const double fd_tol = kTol * std::max(1.0, cond / 1e6);  // observed: <= 2e-11 at cond ~ 1e6 (n = 60)
    EXPECT_LT(relErr(qdd_saha, qdd_kdl), fd_tol) << what << " state " << s << " cond " << cond;
    EXPECT_LT(relErr(qdd_chol, qdd_kdl), fd_tol) << what << " state " << s << " cond " << cond;
    checks += 4;
  }
  return checks;
}

// ---------------------------------------------------------------------------------------------------------
// The oracle's own conventions, pinned down by hand-computed cases.

TEST(KdlConventions, FrameDHIsRzTzTxRx) {
  // KDL::Frame::DH(a, alpha, d, theta) must be Rz(theta) Tz(d) Tx(a) Rx(alpha), Saha's (distal) convention.
  std::mt19937 rng(3);
  for (int k = 0; k < 20; ++k) {
    const Eigen::VectorXd p = randomVectorX(rng, 4, 2.0);
    const double a = p[0], alpha = p[1], d = p[2], theta = p[3];
    const KDL::Frame dh = KDL::Frame::DH(a, alpha, d, theta);
    const KDL::Frame ref = KDL::Frame(KDL::Rotation::RotZ(theta)) * KDL::Frame(KDL::Vector(0, 0, d)) *
                           KDL::Frame(KDL::Vector(a, 0, 0)) * KDL::Frame(KDL::Rotation::RotX(alpha));
    EXPECT_TRUE(KDL::Equal(dh, ref, 1e-14))
        << "a=" << a << " alpha=" << alpha << " d=" << d << " theta=" << theta;
  }
}

TEST(KdlConventions, TipWrenchSignAndFrame) {
  // One revolute joint about z; the tip frame sits at (0.5, 0, 0) in the link frame, rotated 90 deg about z.
  // No gravity, at rest. The environment pushes on the tip with force F (tip frame) and moment N (tip frame).
  // Holding the arm still takes tau = -(z . (N_0 + r x F_0)) with r = (0.5, 0, 0) in base axes at q = 0.
  ModelSpec spec;
  JointSpec j;
  j.name = "j";
  j.link = "l";
  j.mass = 1.0;
  j.com = Eigen::Vector3d(0.2, 0.0, 0.0);
  j.inertia = Eigen::Vector3d(0.1, 0.1, 0.1).asDiagonal();
  spec.joints.push_back(j);
  spec.gravity.setZero();
  spec.tip_origin = Eigen::Vector3d(0.5, 0.0, 0.0);
  spec.tip_rotation = Eigen::AngleAxisd(std::numbers::pi / 2, Eigen::Vector3d::UnitZ()).toRotationMatrix();
  // in the tip frame: force (2, 0, 0) = (0, 2, 0) in base axes; moment (0, 0, 0.7) = (0, 0, 0.7)
  Eigen::Matrix<double, 6, 1> w;
  w << 0.0, 0.0, 0.7, 2.0, 0.0, 0.0;
  const double expected = -(0.7 + 0.5 * 2.0);
  const Eigen::VectorXd zero = Eigen::VectorXd::Zero(1);
  const Eigen::VectorXd tau_kdl = kdlInverseDynamics(toKdlChain(spec), spec.gravity, zero, zero, zero, w);
  EXPECT_NEAR(tau_kdl[0], expected, 1e-14);
  const Model model = buildModel(spec);
  Data data(model);
  EXPECT_NEAR(inverseDynamics(model, data, zero, zero, zero, w)[0], expected, 1e-14);

  // a prismatic joint along y (the force in base axes) pushed by the same wrench: only the force along the
  // axis is felt
  spec.joints[0].type = JointType::Prismatic;
  spec.joints[0].axis = Eigen::Vector3d::UnitY();
  const Eigen::VectorXd taup_kdl = kdlInverseDynamics(toKdlChain(spec), spec.gravity, zero, zero, zero, w);
  EXPECT_NEAR(taup_kdl[0], -2.0, 1e-14);
  const Model pmodel = buildModel(spec);
  Data pdata(pmodel);
  EXPECT_NEAR(inverseDynamics(pmodel, pdata, zero, zero, zero, w)[0], -2.0, 1e-14);
}

TEST(KdlConventions, GravityOnAHangingMass) {
  // A point-like mass m on a horizontal prismatic joint, then on a vertical one: tau = -m g . axis.
  ModelSpec spec;
  JointSpec j;
  j.mass = 2.5;
  j.inertia = Eigen::Vector3d(0.01, 0.01, 0.01).asDiagonal();
  j.type = JointType::Prismatic;
  j.axis = Eigen::Vector3d(0.0, 0.0, 1.0);
  spec.joints.push_back(j);
  spec.gravity = Eigen::Vector3d(0.0, 0.0, -9.81);
  const Eigen::VectorXd zero = Eigen::VectorXd::Zero(1);
  const Eigen::Matrix<double, 6, 1> nowrench = Eigen::Matrix<double, 6, 1>::Zero();
  EXPECT_NEAR(kdlInverseDynamics(toKdlChain(spec), spec.gravity, zero, zero, zero, nowrench)[0], 2.5 * 9.81,
              1e-12);
  const Model model = buildModel(spec);
  Data data(model);
  EXPECT_NEAR(inverseDynamics(model, data, zero, zero, zero)[0], 2.5 * 9.81, 1e-12);
}

// ---------------------------------------------------------------------------------------------------------
// Random chains from ModelSpec (revolute and prismatic, random placements, axes, inertias, tip frame).

class KdlRandomChains : public ::testing::TestWithParam<int> {};

TEST_P(KdlRandomChains, InverseDynamicsAndInertiaMatrix) {
  const int n = GetParam();
  int checks = 0;
  for (std::uint32_t seed = 1; seed <= 4; ++seed) {
    ModelSpec spec = randomChainSpec(n, 1000u * seed + static_cast<std::uint32_t>(n), seed == 4 ? 0.8 : 0.35);
    if (seed == 3) {  // armature: KDL's joint inertia
      std::mt19937 rng(seed);
      std::uniform_real_distribution<double> u(0.0, 0.5);
      for (JointSpec& j : spec.joints) j.armature = u(rng);
    }
    const Model model = buildModel(spec);
    const KDL::Chain chain = toKdlChain(spec);
    checks += compareWithKdl(model, chain, seed + 17u * static_cast<std::uint32_t>(n), 4, 3.0,
                             spec.name + (seed == 3 ? " (armature)" : ""));
  }
  EXPECT_EQ(checks, 4 * 4 * 4);
}

INSTANTIATE_TEST_SUITE_P(Sizes, KdlRandomChains,
                         ::testing::Values(1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 15, 18, 24, 31, 40, 47,
                                           60));

TEST(KdlRandomChains, AllPrismaticAndAllRevolute) {
  for (const double fraction : {0.0, 1.0}) {
    for (const int n : {1, 2, 5, 13}) {
      const ModelSpec spec = randomChainSpec(n, 77u + static_cast<std::uint32_t>(n), fraction);
      compareWithKdl(buildModel(spec), toKdlChain(spec), 5u, 3, 3.0, spec.name);
    }
  }
}

TEST(KdlRandomChains, AxisAlignedAndUnnormalisedAxes) {
  // axes along +-x, +-y, +-z (z and -z are the special cases of aligning F_i's z with the axis) and
  // unnormalised ones, which the builder must normalise
  const std::vector<Eigen::Vector3d> axes = {{0, 0, 1},  {0, 0, -1}, {1, 0, 0}, {-1, 0, 0}, {0, 1, 0},
                                             {0, -1, 0}, {0, 0, -3}, {2, 0, 0}, {1, -1, 0}, {0.1, 0.2, -7}};
  for (const double fraction : {0.0, 0.5, 1.0}) {
    ModelSpec spec = randomChainSpec(static_cast<int>(axes.size()), 99u, fraction);
    for (std::size_t i = 0; i < axes.size(); ++i) spec.joints[i].axis = axes[i];
    EXPECT_EQ(compareWithKdl(buildModel(spec), toKdlChain(spec), 9u, 5, 3.0, spec.name), 20);
  }
}

TEST(KdlRandomChains, ScaledGeometryAndMass) {
  // the same chains at other scales of length (0.01x, 10x) and mass (1e-3x, 1e3x)
  for (const double length : {0.01, 1.0, 10.0}) {
    for (const double mass : {1e-3, 1.0, 1e3}) {
      ModelSpec spec = randomChainSpec(8, 4242u, 0.4);
      for (JointSpec& j : spec.joints) {
        j.origin *= length;
        j.com *= length;
        j.mass *= mass;
        j.inertia *= mass * length * length;
      }
      spec.tip_origin *= length;
      compareWithKdl(buildModel(spec), toKdlChain(spec), 21u, 4, 3.0,
                     "length x" + std::to_string(length) + " mass x" + std::to_string(mass));
    }
  }
}

// ---------------------------------------------------------------------------------------------------------
// DH chains built in KDL straight from the DH parameters: checks the DH conversion independently.

struct DHRow {
  JointType type;
  double a, b, alpha, theta, m;
  Eigen::Vector3d com;      // mass center in frame i+1
  Eigen::Matrix3d inertia;  // about the mass center, frame i+1 axes
};

/// Segment i: joint RotZ/TransZ on frame i's z axis, then Frame::DH(a, alpha, b, theta): the segment's tip
/// frame is frame i+1, where the link's inertia is given. Revolute: Rz(q) Rz(theta) Tz(b) Tx(a) Rx(alpha);
/// prismatic: Tz(q) Rz(theta) Tz(b) ... = Rz(theta) Tz(q + b) ...
KDL::Chain kdlChainFromDH(const std::vector<DHRow>& rows) {
  KDL::Chain chain;
  for (const DHRow& r : rows) {
    const KDL::Joint joint(r.type == JointType::Revolute ? KDL::Joint::RotZ : KDL::Joint::TransZ);
    chain.addSegment(KDL::Segment(joint, KDL::Frame::DH(r.a, r.alpha, r.b, r.theta),
                                  testing::toKdlInertia(r.m, r.com, r.inertia)));
  }
  return chain;
}

DHSpec denocDH(const std::vector<DHRow>& rows, const Eigen::Vector3d& gravity) {
  DHSpec dh;
  dh.name = "dh";
  dh.gravity = gravity;
  for (const DHRow& r : rows) {
    DHLink l;
    l.type = r.type;
    l.a = r.a;
    l.b = r.b;
    l.alpha = r.alpha;
    l.theta = r.theta;
    l.mass = r.m;
    l.com = r.com;
    l.inertia = r.inertia;
    dh.links.push_back(l);
  }
  return dh;
}

TEST(KdlDH, StanfordArmFromTable3) {
  // docs/design.md's reading of Saha 1999 Table 3: r_i runs from C_i to O_{i+1}, so the mass center is at
  // -r_i.
  const JointType R = JointType::Revolute, P = JointType::Prismatic;
  auto row = [](JointType t, double b, double alpha_deg, double m, Eigen::Vector3d r, Eigen::Vector3d I) {
    return DHRow{t, 0.0, b, alpha_deg * kDeg, 0.0, m, -r, I.asDiagonal()};
  };
  const std::vector<DHRow> rows = {
      row(R, 0.2, -90, 9.0, {0, -0.1, 0}, {0.01, 0.02, 0.01}),
      row(R, 0.1, 90, 6.0, {0, 0, 0}, {0.05, 0.06, 0.01}),
      row(P, 0.0, 0, 4.0, {0, 0, 0}, {0.4, 0.4, 0.01}),
      row(R, 0.6, 90, 1.0, {0, 0.1, 0}, {0.001, 0.001, 0.0005}),
      row(R, 0.0, -90, 0.6, {0, 0, 0}, {0.0005, 0.0005, 0.0002}),
      row(R, 0.0, 0, 0.5, {0, 0, 0}, {0.003, 0.001, 0.002}),
  };
  const KDL::Chain chain = kdlChainFromDH(rows);
  const Model model = buildModelFromDH(stanfordArmDH());
  ASSERT_EQ(model.n, 6);
  EXPECT_TRUE(model.gravity.isApprox(Eigen::Vector3d(0, 0, -9.81)));
  EXPECT_EQ(compareWithKdl(model, chain, 11u, 40, 1.5, "stanford arm"), 160);

  // and along the trajectory of eq. 39 (T = 10 s), which stays within the arm's working range
  Data data(model);
  const Eigen::Matrix<double, 6, 1> nowrench = Eigen::Matrix<double, 6, 1>::Zero();
  for (int k = 0; k <= 20; ++k) {
    const double T = 10.0, t = 0.5 * k, w = 2 * std::numbers::pi / T;
    Eigen::VectorXd q0(6), qT(6);
    q0 << 0, 90 * kDeg, 0, 0, 0, 0;
    qT << 60 * kDeg, 60 * kDeg, 0.1, 60 * kDeg, 60 * kDeg, 60 * kDeg;
    const Eigen::VectorXd dq = (qT - q0) / (2 * std::numbers::pi);
    const Eigen::VectorXd q = q0 + dq * (w * t - std::sin(w * t));
    const Eigen::VectorXd qd = dq * (w - w * std::cos(w * t));
    const Eigen::VectorXd qdd = dq * (w * w * std::sin(w * t));
    const Eigen::VectorXd tau_kdl = kdlInverseDynamics(chain, model.gravity, q, qd, qdd, nowrench);
    EXPECT_LT(relErr(inverseDynamics(model, data, q, qd, qdd), tau_kdl), kTol) << "t=" << t;
  }
}

TEST(KdlDH, PlanarArm3R) {
  // planarArmDH(): lengths 0.3, 0.25, 0.2 m, masses 1.0, 0.8, 0.5 kg, uniform 0.04 m square bars, mass center
  // at mid-length (half a length back along X_{i+1}), gravity -9.81 along Y.
  const double L[3] = {0.3, 0.25, 0.2}, m[3] = {1.0, 0.8, 0.5}, wd = 0.04;
  std::vector<DHRow> rows;
  for (int i = 0; i < 3; ++i) {
    const double Ixx = m[i] * (wd * wd + wd * wd) / 12, Iyy = m[i] * (L[i] * L[i] + wd * wd) / 12;
    rows.push_back(DHRow{JointType::Revolute, L[i], 0.0, 0.0, 0.0, m[i], Eigen::Vector3d(-L[i] / 2, 0, 0),
                         Eigen::Vector3d(Ixx, Iyy, Iyy).asDiagonal()});
  }
  const Model model = buildModelFromDH(planarArmDH());
  EXPECT_TRUE(model.gravity.isApprox(Eigen::Vector3d(0, -9.81, 0)));
  EXPECT_EQ(compareWithKdl(model, kdlChainFromDH(rows), 12u, 30, 3.0, "planar 3R"), 120);
}

class KdlRandomDH : public ::testing::TestWithParam<int> {};

TEST_P(KdlRandomDH, RandomParameters) {
  const int n = GetParam();
  for (std::uint32_t seed = 1; seed <= 3; ++seed) {
    std::mt19937 rng(500u * seed + static_cast<std::uint32_t>(n));
    std::uniform_real_distribution<double> u01(0.0, 1.0);
    std::uniform_real_distribution<double> len(-0.5, 0.5);
    std::uniform_real_distribution<double> ang(-std::numbers::pi, std::numbers::pi);
    std::uniform_real_distribution<double> mass(0.2, 5.0);
    std::vector<DHRow> rows;
    for (int i = 0; i < n; ++i) {
      rows.push_back(DHRow{u01(rng) < 0.35 ? JointType::Prismatic : JointType::Revolute, len(rng), len(rng),
                           ang(rng), ang(rng), mass(rng), testing::randomVector(rng, 0.2),
                           testing::randomInertia(rng)});
    }
    const Eigen::Vector3d g = testing::randomVector(rng, 10.0);
    compareWithKdl(buildModelFromDH(denocDH(rows, g)), kdlChainFromDH(rows), seed, 4, 3.0,
                   "random DH n=" + std::to_string(n) + " seed=" + std::to_string(seed));
  }
}

INSTANTIATE_TEST_SUITE_P(Sizes, KdlRandomDH, ::testing::Values(1, 2, 3, 4, 6, 7, 9, 12, 20, 35, 60));

}  // namespace
}  // namespace denoc
