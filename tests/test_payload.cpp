// Payloads against independent oracles: the model of attachPayload equals, constant for constant and result
// for result, the model built by hand through the C++ API with the composite link computed here from 6 x 6
// spatial inertias; its inverse dynamics and inertia matrix equal KDL's on the chain with the payload as an
// extra fixed segment; a point payload's static torques are -J_v^T m g at its position; the registered model
// is untouched; every computation (dynamics, kinematics, derivatives, rollouts) runs on the new model; bad
// payloads are refused with messages naming the field.
#include <gtest/gtest.h>

#include <Eigen/Geometry>
#include <kdl/chaindynparam.hpp>
#include <kdl/chainidsolver_recursive_newton_euler.hpp>
#include <kdl/jntspaceinertiamatrix.hpp>
#include <random>
#include <string>

#include "denoc/denoc.hpp"
#include "support/compare.hpp"
#include "support/kdl_chain.hpp"
#include "support/robots.hpp"

namespace denoc {
namespace {

using testing::near;
using testing::randomConfiguration;
using testing::randomVectorX;
using testing::Robot;
using Mat6 = Eigen::Matrix<double, 6, 6>;

Payload somePayload(std::mt19937& rng) {
  Payload p;
  p.mass = 1.7;
  p.com = testing::randomVector(rng, 0.1);
  p.inertia = testing::randomInertia(rng);
  return p;
}

/// The spatial inertia [[I_O, m c x], [(m c x)^T, m 1]] about a frame's origin of a body with mass m, mass
/// centre c and inertia Ic about it, all in that frame.
Mat6 spatial(double m, const Eigen::Vector3d& c, const Eigen::Matrix3d& Ic) {
  Eigen::Matrix3d cx;
  cx << 0, -c.z(), c.y(), c.z(), 0, -c.x(), -c.y(), c.x(), 0;
  Mat6 M;
  M << Ic - m * cx * cx, m * cx, -m * cx, m * Eigen::Matrix3d::Identity();
  return M;
}

/// The last link's data with the payload added, by summing the two spatial inertias about the link frame's
/// origin (the payload's carried from the tip frame by X^T M X) and reading mass, mass centre and inertia
/// back.
ModelSpec byHand(const ModelSpec& spec, const Payload& p) {
  ModelSpec out = spec;
  JointSpec& last = out.joints.back();
  const Eigen::Matrix3d& R = spec.tip_rotation;  // link frame <- tip frame
  // a payload point r in the tip frame is at tip_origin + R r in the link frame
  const Mat6 Mp_tip = spatial(p.mass, p.com, p.inertia);
  Mat6 X = Mat6::Zero();  // link-frame twist about the link origin -> tip-frame twist about the tip origin
  Eigen::Matrix3d ox;
  const Eigen::Vector3d& o = spec.tip_origin;
  ox << 0, -o.z(), o.y(), o.z(), 0, -o.x(), -o.y(), o.x(), 0;
  X.topLeftCorner<3, 3>() = R.transpose();
  X.bottomRightCorner<3, 3>() = R.transpose();
  X.bottomLeftCorner<3, 3>() = -R.transpose() * ox;
  const Mat6 M = spatial(last.mass, last.com, last.inertia) + X.transpose() * Mp_tip * X;
  const double m = M(3, 3);
  const Eigen::Matrix3d mcx = M.topRightCorner<3, 3>();
  const Eigen::Vector3d c(mcx(2, 1) / m, mcx(0, 2) / m, mcx(1, 0) / m);
  Eigen::Matrix3d cx;
  cx << 0, -c.z(), c.y(), c.z(), 0, -c.x(), -c.y(), c.x(), 0;
  last.mass = m;
  last.com = c;
  last.inertia = M.topLeftCorner<3, 3>() + m * cx * cx;
  return out;
}

class PayloadModels : public ::testing::TestWithParam<int> {};

std::vector<Robot>& robots() {
  static std::vector<Robot> r = testing::allRobots();
  return r;
}

TEST_P(PayloadModels, EqualsTheModelBuiltByHandAndKdlWithAFixedSegment) {
  const Robot& robot = robots()[static_cast<std::size_t>(GetParam())];
  const Model& model = robot.model;
  std::mt19937 rng(91u + static_cast<std::uint32_t>(GetParam()));
  const Payload p = somePayload(rng);
  const Model before = model;
  const Model with = attachPayload(model, p);
  const Model hand = buildModel(byHand(model.spec, p));
  const Model direct = buildModel(specWithPayload(model.spec, p));

  // constant for constant, to rounding (rebuilding from the normalised spec moves the last bits: the axes are
  // normalised again)
  const auto k = static_cast<std::size_t>(model.n - 1);
  for (std::size_t i = 0; i < with.joint.size(); ++i) {
    const std::string what = robot.name + " joint " + std::to_string(i);
    const JointConstants<double>&a = with.joint[i], &b = direct.joint[i];
    EXPECT_NEAR(a.m, b.m, 1e-14 * b.m) << what;
    EXPECT_NEAR(a.lambda, b.lambda, 1e-13) << what;
    EXPECT_TRUE(near(a.h, b.h, 1e-13, what + ": h", 1.0));
    EXPECT_TRUE(near(a.I_o.matrix(), b.I_o.matrix(), 1e-13, what + ": I_o", 1.0));
    EXPECT_TRUE(near(a.dv.col(0), b.dv.col(0), 1e-13, what + ": d", 1.0));
    EXPECT_TRUE(near(with.inertia[i], direct.inertia[i], 1e-13, what + ": inertia", 1.0));
    EXPECT_TRUE(near(with.fx_Phi[i], direct.fx_Phi[i], 1e-12, what + ": Phi"));
  }
  EXPECT_NEAR(with.fx_log_det_links, direct.fx_log_det_links, 1e-12);
  // the hand-built composite (spatial inertias) to rounding
  EXPECT_NEAR(with.mass[k], model.mass[k] + p.mass, 1e-12);
  EXPECT_TRUE(
      near(with.spec.joints.back().com, hand.spec.joints.back().com, 1e-12, robot.name + ": com", 1.0));
  EXPECT_TRUE(near(with.spec.joints.back().inertia, hand.spec.joints.back().inertia, 1e-12,
                   robot.name + ": inertia", 1.0));

  // the registered model is untouched
  EXPECT_EQ(model.mass, before.mass);
  EXPECT_EQ(model.inertia, before.inertia);
  EXPECT_EQ(model.spec.joints.back().mass, before.spec.joints.back().mass);

  // KDL: the chain with the payload as one more fixed segment at the tip frame
  KDL::Chain chain = testing::toKdlChain(model.spec);
  chain.addSegment(KDL::Segment("payload", KDL::Joint("payload_fixed", KDL::Joint::Fixed),
                                KDL::Frame::Identity(), testing::toKdlInertia(p.mass, p.com, p.inertia)));
  KDL::ChainIdSolver_RNE id(chain, testing::toKdl(model.gravity));
  KDL::ChainDynParam dyn(chain, testing::toKdl(model.gravity));
  Data data(with), hd(hand);
  for (int s = 0; s < 3; ++s) {
    const Eigen::VectorXd q = randomConfiguration(model, rng), qd = randomVectorX(rng, model.n, 1.0),
                          qdd = randomVectorX(rng, model.n, 1.0);
    const KDL::Wrenches f_ext(chain.getNrOfSegments(), KDL::Wrench::Zero());
    KDL::JntArray tau(static_cast<unsigned int>(model.n));
    ASSERT_GE(id.CartToJnt(testing::toKdl(q), testing::toKdl(qd), testing::toKdl(qdd), f_ext, tau), 0);
    const std::string what = robot.name + " state " + std::to_string(s);
    EXPECT_TRUE(near(inverseDynamics(with, data, q, qd, qdd), tau.data, 1e-9, what + ": ID vs KDL", 1.0));
    EXPECT_TRUE(near(inverseDynamics(with, data, q, qd, qdd), inverseDynamics(hand, hd, q, qd, qdd), 1e-11,
                     what + ": ID vs the hand-built model", 1.0));
    KDL::JntSpaceInertiaMatrix H(static_cast<unsigned int>(model.n));
    ASSERT_GE(dyn.JntToMass(testing::toKdl(q), H), 0);
    EXPECT_TRUE(near(computeInertiaMatrix(with, data, q), H.data, 1e-9, what + ": I(q) vs KDL", 1.0));
  }
}

INSTANTIATE_TEST_SUITE_P(Robots, PayloadModels, ::testing::Range(0, 12),
                         [](const ::testing::TestParamInfo<int>& info) {
                           std::string name = robots()[static_cast<std::size_t>(info.param)].name;
                           for (char& c : name) {
                             if (!std::isalnum(static_cast<unsigned char>(c))) c = '_';
                           }
                           return name;
                         });

TEST(Payload, PointMassStaticTorquesAreMinusJacobianTransposeTimesItsWeight) {
  for (const Robot& robot : testing::namedRobots()) {
    const Model& model = robot.model;
    std::mt19937 rng(13u);
    Payload p;
    p.mass = 2.5;
    p.com = Eigen::Vector3d(0.02, -0.01, 0.08);  // a point mass: zero inertia
    const Model with = attachPayload(model, p);
    Data a(with), b(model);
    for (int s = 0; s < 5; ++s) {
      const Eigen::VectorXd q = randomConfiguration(model, rng), z = Eigen::VectorXd::Zero(model.n);
      const Eigen::VectorXd extra = inverseDynamics(with, a, q, z, z) - inverseDynamics(model, b, q, z, z);
      const Eigen::Matrix<double, 6, Eigen::Dynamic> J = computeFrameJacobian(model, b, q, model.n, p.com);
      const Eigen::VectorXd expected = -J.bottomRows(3).transpose() * (p.mass * model.gravity);
      EXPECT_TRUE(near(extra, expected, 1e-11, robot.name + " state " + std::to_string(s), 1.0));
    }
  }
}

TEST(Payload, EveryComputationRunsOnThePayloadModel) {
  const Model model = testing::namedRobots()[1].model;  // the Panda
  std::mt19937 rng(17u);
  const Payload p = somePayload(rng);
  const Model with = attachPayload(model, p);
  const Model hand = buildModel(specWithPayload(model.spec, p));
  Data a(with), b(hand), plain(model);
  const int n = model.n;
  const Eigen::VectorXd q = randomConfiguration(model, rng), qd = randomVectorX(rng, n, 1.0),
                        tau = randomVectorX(rng, n, 3.0);
  // the results of the model built from the payload's spec
  const double tol = 1e-12;
  EXPECT_TRUE(near(forwardDynamics(with, a, q, qd, tau), forwardDynamics(hand, b, q, qd, tau), tol, "FD"));
  EXPECT_TRUE(near(forwardDynamicsFixman(with, a, q, qd, tau), forwardDynamicsFixman(hand, b, q, qd, tau),
                   tol, "Fixman"));
  computeForwardDynamicsDerivatives(with, a, q, qd, tau);
  computeForwardDynamicsDerivatives(hand, b, q, qd, tau);
  EXPECT_TRUE(near(a.dqdd_dq, b.dqdd_dq, tol, "dqdd/dq"));
  EXPECT_TRUE(near(a.Minv, b.Minv, tol, "I^-1"));
  const Eigen::Matrix<double, 6, 6> La =
      computeOperationalSpaceInertia(with, a, q, n, Eigen::Vector3d::Zero());
  EXPECT_TRUE(
      near(La, computeOperationalSpaceInertia(hand, b, q, n, Eigen::Vector3d::Zero()), tol, "Lambda"));
  RolloutOptions o;
  o.steps = 5;
  Eigen::VectorXd x0(2 * n);
  x0 << q, qd;
  Eigen::MatrixXd u = Eigen::MatrixXd::Zero(n, 5), sa(2 * n, 6), sb(2 * n, 6);
  RolloutWorkspace ra(with), rb(hand);
  rollout(with, ra, o, x0.data(), u.data(), sa.data());
  rollout(hand, rb, o, x0.data(), u.data(), sb.data());
  EXPECT_TRUE(near(sa, sb, tol, "rollout"));
  // the payload changes the dynamics, not the kinematics
  EXPECT_GT((forwardDynamics(with, a, q, qd, tau) - forwardDynamics(model, plain, q, qd, tau)).norm(), 1e-3);
  const Eigen::Matrix<double, 6, Eigen::Dynamic> Ja =
      computeFrameJacobian(with, a, q, n, Eigen::Vector3d::Zero());
  EXPECT_EQ(Ja, computeFrameJacobian(model, plain, q, n, Eigen::Vector3d::Zero()));
}

TEST(Payload, BadPayloadsAreRefusedNamingTheField) {
  const Model model = buildModelFromDH(stanfordArmDH());
  const auto message = [&](const Payload& p) -> std::string {
    try {
      attachPayload(model, p);
    } catch (const std::invalid_argument& e) {
      return e.what();
    }
    return "accepted";
  };
  Payload p;
  p.mass = -1.0;
  EXPECT_EQ(message(p), "payload: mass is -1, expected a finite number > 0");
  p.mass = 0.0;
  EXPECT_EQ(message(p), "payload: mass is 0, expected a finite number > 0");
  p.mass = NAN;
  EXPECT_EQ(message(p), "payload: mass is nan, expected a finite number > 0");
  p.mass = 1.0;
  p.com.x() = INFINITY;
  EXPECT_EQ(message(p), "payload: mass centre has a non-finite entry");
  p.com.setZero();
  p.inertia = Eigen::Vector3d(1.0, 1.0, 3.0).asDiagonal();
  EXPECT_NE(message(p).find("payload: inertia violates the triangle inequality"), std::string::npos);
  p.inertia = Eigen::Vector3d(1.0, -1.0, 1.0).asDiagonal();
  EXPECT_NE(message(p).find("payload: inertia is not positive definite"), std::string::npos);
  p.inertia.setZero();
  EXPECT_EQ(message(p), "accepted");  // a point mass
}

}  // namespace
}  // namespace denoc
