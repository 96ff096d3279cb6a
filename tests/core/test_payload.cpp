// Payloads against independent oracles: the model of attachPayload equals, constant for constant and result
// for result, the model built by hand through the C++ API with the composite link computed here from 6 x 6
// spatial inertias; its inverse dynamics and inertia matrix equal KDL's on the chain with the payload as an
// extra fixed segment; a point payload's static torques are -J_v^T m g at its position; the registered model
// is untouched; every computation (dynamics, kinematics, derivatives, rollouts) runs on the new model; bad
// payloads are refused with messages naming the field. A payload on any frame (a link, the tip, the root link
// of a floating or planar root) of a tree or a serial chain: the model equals the one built by hand with the
// composite link (6 x 6 spatial inertias), and its inverse dynamics equal the model's without the payload
// plus the payload's own Newton-Euler wrench, computed here from the frame's twist and acceleration, applied
// as an external wrench on that frame.
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
#include "support/random_tree.hpp"
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
                           return testing::parameterName(robots()[static_cast<std::size_t>(info.param)].name);
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

// ---- a payload on any frame

/// Adds a payload given in a frame F (whose axes are R and origin o in the link frame) to a link's inertial
/// data, by summing 6 x 6 spatial inertias about the link frame's origin and reading the composite back.
void addByHand(double& mass, Eigen::Vector3d& com, Eigen::Matrix3d& inertia, const Payload& p,
               const Eigen::Matrix3d& R, const Eigen::Vector3d& o) {
  Eigen::Matrix3d ox;
  ox << 0, -o.z(), o.y(), o.z(), 0, -o.x(), -o.y(), o.x(), 0;
  Mat6 X = Mat6::Zero();  // link twist about the link origin -> F twist about F's origin, F's axes
  X.topLeftCorner<3, 3>() = R.transpose();
  X.bottomRightCorner<3, 3>() = R.transpose();
  X.bottomLeftCorner<3, 3>() = -R.transpose() * ox;
  const Mat6 M = spatial(mass, com, inertia) + X.transpose() * spatial(p.mass, p.com, p.inertia) * X;
  const double m = M(3, 3);
  const Eigen::Matrix3d mcx = M.topRightCorner<3, 3>();
  const Eigen::Vector3d c(mcx(2, 1) / m, mcx(0, 2) / m, mcx(1, 0) / m);
  Eigen::Matrix3d cx;
  cx << 0, -c.z(), c.y(), c.z(), 0, -c.x(), -c.y(), c.x(), 0;
  mass = m;
  com = c;
  inertia = M.topLeftCorner<3, 3>() + m * cx * cx;
  inertia = (0.5 * (inertia + inertia.transpose())).eval();
}

/// The spec with the payload on frame `frame` (frameIndex), by hand.
ModelSpec byHandOnFrame(const ModelSpec& spec, const Payload& p, int frame) {
  ModelSpec out = spec;
  const int n = static_cast<int>(spec.joints.size());
  const Eigen::Matrix3d I3 = Eigen::Matrix3d::Identity();
  const Eigen::Vector3d z = Eigen::Vector3d::Zero();
  if (frame < n) {
    JointSpec& j = out.joints[static_cast<std::size_t>(frame)];
    addByHand(j.mass, j.com, j.inertia, p, I3, z);
  } else if (frame == n) {
    JointSpec& j = out.joints.back();
    addByHand(j.mass, j.com, j.inertia, p, spec.tip_rotation, spec.tip_origin);
  } else {
    addByHand(out.root_mass, out.root_com, out.root_inertia, p, I3, z);
  }
  return out;
}

struct FrameCase {
  std::string name;
  Model model;
};

std::vector<FrameCase> frameCases() {
  std::vector<FrameCase> cases;
  std::uint32_t seed = 40;
  for (RootJoint root : {RootJoint::Fixed, RootJoint::Floating, RootJoint::Planar}) {
    for (int n : {1, 5, 9}) {
      cases.push_back({std::string("tree, root ") + std::to_string(static_cast<int>(root)) + ", " +
                           std::to_string(n) + " joints",
                       buildModel(testing::randomTreeSpec(n, seed++, root))});
    }
  }
  cases.push_back({"serial chain of 6", buildModel(testing::randomChainSpec(6, 3))});
  cases.push_back({"serial chain of 1", buildModel(testing::randomChainSpec(1, 4))});
  // a tree with a massless link (a point mass payload must not upset it)
  testing::RandomTreeOptions o;
  o.joints = 8;
  o.root = RootJoint::Floating;
  o.massless_fraction = 0.3;
  cases.push_back({"tree with massless links", buildModel(testing::randomTreeSpec(77, o))});
  return cases;
}

/// A random state of a model: q on its manifold, v and a in [-1, 1].
void randomState(const Model& m, std::mt19937_64& rng, Eigen::VectorXd& q, Eigen::VectorXd& v,
                 Eigen::VectorXd& a) {
  std::uniform_real_distribution<double> u(-1.0, 1.0);
  q = denoc::randomConfiguration(m, rng);
  v.resize(m.nv);
  a.resize(m.nv);
  for (int i = 0; i < m.nv; ++i) {
    v[i] = u(rng);
    a[i] = u(rng);
  }
}

/// The frames a payload may go on: every link, the tip, and the root link of a moving root.
int lastPayloadFrame(const Model& m) { return m.root == RootJoint::Fixed ? m.n : m.n + 1; }

TEST(PayloadOnAFrame, EqualsTheModelBuiltByHand) {
  for (const FrameCase& c : frameCases()) {
    const Model& model = c.model;
    std::mt19937 rng(5u);
    std::mt19937_64 rng64(6u);
    for (int frame = 0; frame <= lastPayloadFrame(model); ++frame) {
      const std::string what = c.name + ", frame " + std::to_string(frame);
      const Payload p = somePayload(rng);
      const Model with = attachPayload(model, p, frame);
      const ModelSpec spec = specWithPayload(model.spec, p, frame);
      const ModelSpec hand_spec = byHandOnFrame(model.spec, p, frame);
      const Model hand = buildModel(hand_spec);
      EXPECT_EQ(with.serial, model.serial) << what;
      // the spec's inertial data, link by link
      for (std::size_t i = 0; i < spec.joints.size(); ++i) {
        const JointSpec &a = spec.joints[i], &b = hand_spec.joints[i];
        EXPECT_NEAR(a.mass, b.mass, 1e-13 * b.mass) << what << " joint " << i;
        EXPECT_TRUE(near(a.com, b.com, 1e-13, what + " com", 1.0));
        EXPECT_TRUE(near(a.inertia, b.inertia, 1e-13, what + " inertia", 1.0));
      }
      EXPECT_NEAR(spec.root_mass, hand_spec.root_mass, 1e-13 * (1.0 + hand_spec.root_mass)) << what;
      EXPECT_TRUE(near(spec.root_com, hand_spec.root_com, 1e-13, what + " root com", 1.0));
      EXPECT_TRUE(near(spec.root_inertia, hand_spec.root_inertia, 1e-13, what + " root inertia", 1.0));
      // the payload's mass is added where it belongs
      const double before = model.spec.root_mass + [&] {
        double s = 0.0;
        for (const JointSpec& j : model.spec.joints) s += j.mass;
        return s;
      }();
      double after = spec.root_mass;
      for (const JointSpec& j : spec.joints) after += j.mass;
      EXPECT_NEAR(after, before + p.mass, 1e-12 * after) << what;
      // result for result
      Data a(with), b(hand);
      for (int s = 0; s < 3; ++s) {
        Eigen::VectorXd q, v, acc;
        randomState(model, rng64, q, v, acc);
        EXPECT_TRUE(near(inverseDynamics(with, a, q, v, acc), inverseDynamics(hand, b, q, v, acc), 1e-12,
                         what + " inverse dynamics", 1.0));
        EXPECT_TRUE(near(computeInertiaMatrix(with, a, q), computeInertiaMatrix(hand, b, q), 1e-12,
                         what + " inertia matrix", 1.0));
      }
    }
  }
}

TEST(PayloadOnAFrame, InverseDynamicsAddsThePayloadsNewtonEulerWrench) {
  for (const FrameCase& c : frameCases()) {
    const Model& model = c.model;
    std::mt19937 rng(8u);
    std::mt19937_64 rng64(9u);
    Data d(model);
    for (int frame = 0; frame <= lastPayloadFrame(model); ++frame) {
      const std::string what = c.name + ", frame " + std::to_string(frame);
      const Payload p = somePayload(rng);
      const Model with = attachPayload(model, p, frame);
      Data dw(with);
      for (int s = 0; s < 3; ++s) {
        Eigen::VectorXd q, v, acc;
        randomState(model, rng64, q, v, acc);
        // the frame's pose, twist and acceleration (world axes, its origin), from its Jacobian
        Eigen::Matrix3d R;
        Eigen::Vector3d o;
        framePlacement(model, d, q, frame, R, o);
        const Eigen::Matrix<double, 6, Eigen::Dynamic> J =
            computeFrameJacobian(model, d, q, frame, Eigen::Vector3d::Zero(), ReferenceFrame::Base);
        const Eigen::Matrix<double, 6, 1> twist = J * v;
        const Eigen::Matrix<double, 6, 1> accel =
            J * acc +
            computeFrameJdotQd(model, d, q, v, frame, Eigen::Vector3d::Zero(), ReferenceFrame::Base);
        const Eigen::Vector3d w = twist.head<3>(), wd = accel.head<3>(), a_o = accel.tail<3>();
        // the payload's mass centre (r from the frame's origin) and its Newton-Euler equations
        const Eigen::Vector3d r = R * p.com;
        const Eigen::Vector3d a_c = a_o + wd.cross(r) + w.cross(w.cross(r));
        const Eigen::Matrix3d Iw = R * p.inertia * R.transpose();
        const Eigen::Vector3d F = p.mass * (a_c - model.gravity);  // what the frame applies to the payload
        const Eigen::Vector3d N = Iw * wd + w.cross(Iw * w);       // about its mass centre
        // the payload's reaction on the robot, about the frame's origin, world axes
        ExternalWrench e;
        e.frame = frame;
        e.reference = ReferenceFrame::Base;
        e.wrench << -(N + r.cross(F)), -F;
        const Eigen::VectorXd expected = inverseDynamics(model, d, q, v, acc, std::vector<ExternalWrench>{e});
        EXPECT_TRUE(near(inverseDynamics(with, dw, q, v, acc), expected, 1e-11, what, 1.0));
      }
    }
  }
}

TEST(PayloadOnAFrame, TheTwoArgumentFormsAreTheTipFrameBitForBit) {
  for (const FrameCase& c : frameCases()) {
    const Model& model = c.model;
    std::mt19937 rng(10u);
    const Payload p = somePayload(rng);
    const ModelSpec a = specWithPayload(model.spec, p), b = specWithPayload(model.spec, p, model.n);
    EXPECT_EQ(a.joints.back().mass, b.joints.back().mass) << c.name;
    EXPECT_EQ(a.joints.back().com, b.joints.back().com) << c.name;
    EXPECT_EQ(a.joints.back().inertia, b.joints.back().inertia) << c.name;
    const Model wa = attachPayload(model, p), wb = attachPayload(model, p, model.n);
    Data da(wa), db(wb);
    std::mt19937_64 rng64(11u);
    Eigen::VectorXd q, v, acc;
    randomState(model, rng64, q, v, acc);
    EXPECT_EQ(inverseDynamics(wa, da, q, v, acc), inverseDynamics(wb, db, q, v, acc)) << c.name;
    EXPECT_EQ(computeInertiaMatrix(wa, da, q), computeInertiaMatrix(wb, db, q)) << c.name;
  }
}

TEST(PayloadOnAFrame, BadFramesAreRefused) {
  const Model chain = buildModel(testing::randomChainSpec(4, 1));
  const Model floating = buildModel(testing::randomTreeSpec(4, 2, RootJoint::Floating));
  std::mt19937 rng(1u);
  const Payload p = somePayload(rng);
  const auto message = [&](const Model& m, int frame) -> std::string {
    try {
      attachPayload(m, p, frame);
    } catch (const std::invalid_argument& e) {
      return e.what();
    }
    return "accepted";
  };
  EXPECT_EQ(message(chain, -1),
            "payload: frame is -1, expected 0..5 (a link, 4 for the tip frame, 5 for the root link)");
  EXPECT_EQ(message(floating, 6),
            "payload: frame is 6, expected 0..5 (a link, 4 for the tip frame, 5 for the root link)");
  EXPECT_NE(message(chain, 5).find("payload: frame 5 is the root link of a fixed root"), std::string::npos);
  EXPECT_EQ(message(floating, 5), "accepted");
  Payload bad = p;
  bad.mass = 0.0;
  EXPECT_THROW(attachPayload(floating, bad, 2), std::invalid_argument);
}

}  // namespace
}  // namespace denoc
