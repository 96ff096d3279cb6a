// Kinematics for planners against independent oracles: link and tip poses against KDL's
// ChainFkSolverPos_recursive (on chains built from the ModelSpec, and on the Stanford arm built in KDL from
// its DH parameters); Jacobians against KDL's ChainJntToJacSolver, central finite differences of the pose and
// automatic differentiation of the pose with the dual scalar; (dJ/dt) qd against finite differences and AD of
// J(q + t qd) qd; the tip-wrench identity ID(.., w) - ID(..) = -J^T w; the operational-space inertia against
// the dense (J I^-1 J^T)^-1 (Eigen's inverses of computeInertiaMatrix and of the product), NumericalError at
// singular configurations; argument errors; the heap-allocation counter.
#include <gtest/gtest.h>

#include <Eigen/LU>
#include <chrono>
#include <cmath>
#include <kdl/chain.hpp>
#include <kdl/chainfksolverpos_recursive.hpp>
#include <kdl/chainjnttojacsolver.hpp>
#include <kdl/frames.hpp>
#include <kdl/jacobian.hpp>
#include <numbers>
#include <random>
#include <string>

#include "denoc/algorithm/operational_space.hpp"
#include "denoc/denoc.hpp"
#include "support/compare.hpp"
#include "support/count_allocations.hpp"  // first: replaces malloc in this binary
#include "support/differentiate.hpp"
#include "support/kdl_chain.hpp"
#include "support/robots.hpp"

namespace denoc {
namespace {

using testing::adJacobian;
using testing::Dual;
using testing::DualVec;
using testing::fdJacobian;
using testing::near;
using testing::randomConfiguration;
using testing::randomVectorX;
using testing::Robot;
using Mat6X = Eigen::Matrix<double, 6, Eigen::Dynamic>;
using Vec6 = Eigen::Matrix<double, 6, 1>;

std::vector<Robot>& robots() {
  static std::vector<Robot> r = testing::allRobots();
  return r;
}

Eigen::Matrix3d fromKdl(const KDL::Rotation& R) {
  Eigen::Matrix3d m;
  for (int i = 0; i < 3; ++i) {
    for (int j = 0; j < 3; ++j) m(i, j) = R(i, j);
  }
  return m;
}

Eigen::Vector3d fromKdl(const KDL::Vector& v) { return {v.x(), v.y(), v.z()}; }

/// Segments of toKdlChain up to and including frame f: 2 per joint, then the tip segment.
int kdlSegments(const Model& model, int f) { return f == model.n ? 2 * model.n + 1 : 2 * f + 2; }

/// vee of a skew-symmetric matrix.
Eigen::Vector3d vee(const Eigen::Matrix3d& W) {
  return 0.5 * Eigen::Vector3d(W(2, 1) - W(1, 2), W(0, 2) - W(2, 0), W(1, 0) - W(0, 1));
}

/// A point near the frame's origin, different for every frame.
Eigen::Vector3d pointOn(int frame) { return Eigen::Vector3d(0.05 * frame - 0.1, 0.02, -0.03 * (frame % 3)); }

class Kinematics : public ::testing::TestWithParam<int> {};

TEST_P(Kinematics, PosesAndJacobiansAgainstKdl) {
  const Robot& robot = robots()[static_cast<std::size_t>(GetParam())];
  const Model& model = robot.model;
  const KDL::Chain chain = testing::toKdlChain(model.spec);
  KDL::ChainFkSolverPos_recursive fk(chain);
  KDL::ChainJntToJacSolver jacobian(chain);
  Data data(model);
  std::mt19937 rng(31u + static_cast<std::uint32_t>(GetParam()));
  for (int s = 0; s < 5; ++s) {
    const Eigen::VectorXd q = randomConfiguration(model, rng);
    forwardKinematics(model, data, q);
    for (int f = 0; f <= model.n; ++f) {
      const std::string what = robot.name + " state " + std::to_string(s) + " frame " + std::to_string(f);
      KDL::Frame pose;
      ASSERT_GE(fk.JntToCart(testing::toKdl(q), pose, kdlSegments(model, f)), 0);
      EXPECT_TRUE(
          near(data.kin_R[static_cast<std::size_t>(f)], fromKdl(pose.M), 1e-12, what + ": rotation", 1.0));
      EXPECT_TRUE(
          near(data.kin_p[static_cast<std::size_t>(f)], fromKdl(pose.p), 1e-12, what + ": origin", 1.0));
      Eigen::Matrix3d R;
      Eigen::Vector3d p;
      Data single(model);
      framePlacement(model, single, q, f, R, p);
      EXPECT_EQ(R, data.kin_R[static_cast<std::size_t>(f)]) << what;
      EXPECT_EQ(p, data.kin_p[static_cast<std::size_t>(f)]) << what;

      // KDL: reference point at the frame's origin, base axes, rows [linear; angular]; moved to the point
      KDL::Jacobian kj(static_cast<unsigned int>(model.n));
      ASSERT_GE(jacobian.JntToJac(testing::toKdl(q), kj, kdlSegments(model, f)), 0);
      const Eigen::Vector3d point = pointOn(f);
      kj.changeRefPoint(pose.M * testing::toKdl(point));
      Mat6X expected(6, model.n);
      expected << kj.data.bottomRows(3), kj.data.topRows(3);
      const Mat6X J = computeFrameJacobian(model, data, q, f, point);
      EXPECT_TRUE(near(J, expected, 1e-12, what + ": Jacobian (base axes)", 1.0));
      const Mat6X JL = computeFrameJacobian(model, data, q, f, point, ReferenceFrame::Local);
      Mat6X expected_local(6, model.n);
      const Eigen::Matrix3d Rt = fromKdl(pose.M).transpose();
      expected_local << Rt * expected.topRows(3), Rt * expected.bottomRows(3);
      EXPECT_TRUE(near(JL, expected_local, 1e-12, what + ": Jacobian (local axes)", 1.0));
    }
  }
}

TEST_P(Kinematics, JacobianAgainstDifferencesOfThePose) {
  const Robot& robot = robots()[static_cast<std::size_t>(GetParam())];
  const Model& model = robot.model;
  const ModelTpl<Dual> dmodel = model.cast<Dual>();
  Data data(model), other(model);
  DataTpl<Dual> ddata(dmodel);
  std::mt19937 rng(41u + static_cast<std::uint32_t>(GetParam()));
  for (int s = 0; s < 3; ++s) {
    const Eigen::VectorXd q = randomConfiguration(model, rng);
    for (int f = 0; f <= model.n; ++f) {
      const std::string what = robot.name + " state " + std::to_string(s) + " frame " + std::to_string(f);
      const Eigen::Vector3d point = pointOn(f);
      const Mat6X J = computeFrameJacobian(model, data, q, f, point);
      const Eigen::Matrix3d R = data.kin_R[static_cast<std::size_t>(f)];
      // the point's position and the frame's rotation (9 entries, column-major) as functions of q
      const auto pose = [&](const Eigen::VectorXd& x) {
        Eigen::Matrix3d Rx;
        Eigen::Vector3d px;
        framePlacement(model, other, x, f, Rx, px);
        Eigen::Matrix<double, 12, 1> out;
        out << px + Rx * point, Rx.reshaped();
        return out;
      };
      const Eigen::MatrixXd D = fdJacobian(q, pose, 1e-6);
      Mat6X fd(6, model.n);
      for (int j = 0; j < model.n; ++j) {
        const Eigen::Matrix3d dR = D.col(j).tail<9>().reshaped(3, 3);
        fd.col(j) << vee(dR * R.transpose()), D.col(j).head<3>();
      }
      EXPECT_TRUE(near(J, fd, 1e-8, what + ": Jacobian vs finite differences", 1.0));

      const Eigen::MatrixXd A = adJacobian(q, [&](const DualVec& x) {
        Eigen::Matrix<Dual, 3, 3> Rx;
        Eigen::Matrix<Dual, 3, 1> px;
        framePlacement(dmodel, ddata, x, f, Rx, px);
        Eigen::Matrix<Dual, 12, 1> out;
        out << px + Rx * point.cast<Dual>(), Rx.reshaped();
        return out;
      });
      Mat6X ad(6, model.n);
      for (int j = 0; j < model.n; ++j) {
        const Eigen::Matrix3d dR = A.col(j).tail<9>().reshaped(3, 3);
        ad.col(j) << vee(dR * R.transpose()), A.col(j).head<3>();
      }
      EXPECT_TRUE(near(J, ad, 1e-12, what + ": Jacobian vs AD", 1.0));
    }
  }
}

TEST_P(Kinematics, JdotQdAgainstDifferencesOfJQd) {
  const Robot& robot = robots()[static_cast<std::size_t>(GetParam())];
  const Model& model = robot.model;
  const ModelTpl<Dual> dmodel = model.cast<Dual>();
  Data data(model), other(model);
  DataTpl<Dual> ddata(dmodel);
  std::mt19937 rng(51u + static_cast<std::uint32_t>(GetParam()));
  for (int s = 0; s < 3; ++s) {
    const Eigen::VectorXd q = randomConfiguration(model, rng), qd = randomVectorX(rng, model.n, 2.0);
    for (int f = 0; f <= model.n; ++f) {
      for (ReferenceFrame ref : {ReferenceFrame::Base, ReferenceFrame::Local}) {
        const std::string what = robot.name + " state " + std::to_string(s) + " frame " + std::to_string(f) +
                                 (ref == ReferenceFrame::Base ? " base" : " local");
        const Eigen::Vector3d point = pointOn(f);
        const Vec6 jdqd = computeFrameJdotQd(model, data, q, qd, f, point, ref);
        EXPECT_TRUE(near(data.J, computeFrameJacobian(model, other, q, f, point, ref), 0.0, what + ": J"));
        // d/dt (J(q + t qd) qd) at t = 0
        const double eps = 1e-6;
        const Vec6 plus =
            computeFrameJacobian(model, other, Eigen::VectorXd(q + eps * qd), f, point, ref) * qd;
        const Vec6 minus =
            computeFrameJacobian(model, other, Eigen::VectorXd(q - eps * qd), f, point, ref) * qd;
        const Vec6 fd = (plus - minus) / (2.0 * eps);
        EXPECT_TRUE(near(jdqd, fd, 1e-7, what + ": dJ/dt qd vs finite differences", 1.0));
        const auto& Jd =
            computeFrameJacobian(dmodel, ddata, testing::seed(q, qd), f, point.cast<Dual>(), ref);
        const Vec6 ad = testing::derivs(Jd) * qd;
        EXPECT_TRUE(near(jdqd, ad, 1e-12, what + ": dJ/dt qd vs AD", 1.0));
      }
    }
  }
}

TEST_P(Kinematics, TipWrenchTorquesAreMinusJacobianTransposeTimesWrench) {
  // the environment's wrench [moment; force] on the tip frame, about its origin, in its axes: its joint
  // torques in the inverse dynamics are -J^T w with J the tip frame's local Jacobian at its origin
  const Robot& robot = robots()[static_cast<std::size_t>(GetParam())];
  const Model& model = robot.model;
  Data data(model);
  std::mt19937 rng(61u + static_cast<std::uint32_t>(GetParam()));
  for (int s = 0; s < 3; ++s) {
    const Eigen::VectorXd q = randomConfiguration(model, rng), qd = randomVectorX(rng, model.n, 1.0),
                          qdd = randomVectorX(rng, model.n, 1.0);
    Vec6 w;
    w << randomVectorX(rng, 3, 2.0), randomVectorX(rng, 3, 10.0);
    const Eigen::VectorXd with = inverseDynamics(model, data, q, qd, qdd, w);
    const Eigen::VectorXd without = inverseDynamics(model, data, q, qd, qdd);
    const Mat6X J =
        computeFrameJacobian(model, data, q, model.n, Eigen::Vector3d::Zero(), ReferenceFrame::Local);
    EXPECT_TRUE(near(Eigen::VectorXd(with - without), Eigen::VectorXd(-J.transpose() * w), 1e-11,
                     robot.name + " state " + std::to_string(s), 1.0));
  }
}

TEST_P(Kinematics, OperationalSpaceInertiaAgainstDenseInverses) {
  const Robot& robot = robots()[static_cast<std::size_t>(GetParam())];
  const Model& model = robot.model;
  Data data(model), ref(model);
  std::mt19937 rng(71u + static_cast<std::uint32_t>(GetParam()));
  int checked = 0, refused = 0;
  for (int s = 0; s < 4; ++s) {
    const Eigen::VectorXd q = randomConfiguration(model, rng);
    const Eigen::MatrixXd Minv = computeInertiaMatrix(model, ref, q).inverse();
    for (int f : {model.n, model.n - 1, model.n / 2}) {
      for (ReferenceFrame frame : {ReferenceFrame::Base, ReferenceFrame::Local}) {
        for (TaskRows rows : {TaskRows::Full, TaskRows::Linear, TaskRows::Angular}) {
          const int r = rows == TaskRows::Full ? 6 : 3;
          const std::string what = robot.name + " state " + std::to_string(s) + " frame " +
                                   std::to_string(f) + " rows " + std::to_string(static_cast<int>(rows)) +
                                   (frame == ReferenceFrame::Base ? " base" : " local");
          const Eigen::Vector3d point = pointOn(f);
          const Mat6X J6 = computeFrameJacobian(model, ref, q, f, point, frame);
          const Eigen::MatrixXd J = rows == TaskRows::Angular  ? Eigen::MatrixXd(J6.topRows(3))
                                    : rows == TaskRows::Linear ? Eigen::MatrixXd(J6.bottomRows(3))
                                                               : Eigen::MatrixXd(J6);
          const Eigen::MatrixXd G = J * Minv * J.transpose();
          const Eigen::JacobiSVD<Eigen::MatrixXd> svd(J);
          const Eigen::VectorXd sv = svd.singularValues();
          const double cond_J = sv[sv.size() - 1] > 0.0 ? sv[0] / sv[sv.size() - 1] : INFINITY;
          if (!(cond_J < 1e3) || model.n < r) {
            // singular or nearly so: it may refuse; when it answers, it must agree with the dense inverse
            try {
              computeOperationalSpaceInertia(model, data, q, f, point, frame, rows);
            } catch (const NumericalError&) {
              ++refused;
              continue;
            }
          } else {
            computeOperationalSpaceInertia(model, data, q, f, point, frame, rows);
          }
          const Eigen::MatrixXd Lambda = data.Lambda.topLeftCorner(r, r),
                                Ginv = data.Lambda_inv.topLeftCorner(r, r);
          const double cond_G = G.norm() * G.inverse().norm();
          const Eigen::MatrixXd Lambda_dense = G.inverse();
          EXPECT_TRUE(near(Ginv, G, 1e-10 * std::max(1.0, cond_G / 1e4), what + ": J I^-1 J^T"));
          EXPECT_TRUE(near(Lambda, Lambda_dense, 1e-9 * std::max(1.0, cond_G / 1e4), what + ": Lambda"));
          EXPECT_TRUE(data.Lambda.bottomRows(6 - r).isZero() && data.Lambda.rightCols(6 - r).isZero())
              << what;
          ++checked;
        }
      }
    }
  }
  if (robot.name == "planar_3r.json") {
    // in 3-D, every 3-row task of a planar arm is singular
    EXPECT_EQ(checked, 0);
    EXPECT_EQ(refused, 4 * 3 * 2 * 3);
  } else if (model.n >= 3) {
    EXPECT_GT(checked, 0) << robot.name;
  }
}

INSTANTIATE_TEST_SUITE_P(Robots, Kinematics,
                         ::testing::Range(0, static_cast<int>(testing::allRobots().size())),
                         [](const ::testing::TestParamInfo<int>& info) {
                           return testing::parameterName(robots()[static_cast<std::size_t>(info.param)].name);
                         });

TEST(KinematicsDH, StanfordArmTipAgainstKdlFromDHParameters) {
  // frame n+1 of the Stanford arm (Saha 1999 Table 3), KDL built from the DH rows with Frame::DH
  const Model model = buildModelFromDH(stanfordArmDH());
  const DHSpec dh = stanfordArmDH();
  KDL::Chain chain;
  for (const DHLink& l : dh.links) {
    chain.addSegment(
        KDL::Segment(KDL::Joint(l.type == JointType::Revolute ? KDL::Joint::RotZ : KDL::Joint::TransZ),
                     KDL::Frame::DH(l.a, l.alpha, l.b, l.theta)));
  }
  KDL::ChainFkSolverPos_recursive fk(chain);
  KDL::ChainJntToJacSolver jac(chain);
  Data data(model);
  std::mt19937 rng(3u);
  for (int s = 0; s < 20; ++s) {
    const Eigen::VectorXd q = randomConfiguration(model, rng);
    KDL::Frame pose;
    ASSERT_GE(fk.JntToCart(testing::toKdl(q), pose), 0);
    Eigen::Matrix3d R;
    Eigen::Vector3d p;
    framePlacement(model, data, q, model.n, R, p);
    EXPECT_TRUE(near(R, fromKdl(pose.M), 1e-12, "rotation", 1.0));
    EXPECT_TRUE(near(p, fromKdl(pose.p), 1e-12, "origin", 1.0));
    KDL::Jacobian kj(6);
    ASSERT_GE(jac.JntToJac(testing::toKdl(q), kj), 0);
    Mat6X expected(6, 6);
    expected << kj.data.bottomRows(3), kj.data.topRows(3);
    EXPECT_TRUE(near(computeFrameJacobian(model, data, q, model.n, Eigen::Vector3d::Zero()), expected, 1e-12,
                     "Jacobian", 1.0));
  }
}

TEST(OperationalSpace, SingularConfigurationsThrowNumericalError) {
  const Model stanford = buildModelFromDH(stanfordArmDH());
  Data data(stanford);
  // the Stanford arm's wrist: q5 = 0 aligns the axes of joints 4 and 6
  Eigen::VectorXd q(6);
  q << 0.3, 1.0, 0.2, 0.4, 0.0, 0.7;
  try {
    computeOperationalSpaceInertia(stanford, data, q, stanford.n, Eigen::Vector3d::Zero());
    FAIL() << "no exception at the wrist singularity";
  } catch (const NumericalError& e) {
    EXPECT_NE(std::string(e.what()).find("computeOperationalSpaceInertia: the configuration is singular"),
              std::string::npos)
        << e.what();
    EXPECT_NE(std::string(e.what()).find("the tip frame, 6 rows"), std::string::npos) << e.what();
  }
  // its position task is still regular there
  EXPECT_NO_THROW(computeOperationalSpaceInertia(stanford, data, q, stanford.n, Eigen::Vector3d::Zero(),
                                                 ReferenceFrame::Base, TaskRows::Linear));
  // away from it, the full task is regular
  q[4] = 0.8;
  EXPECT_NO_THROW(computeOperationalSpaceInertia(stanford, data, q, stanford.n, Eigen::Vector3d::Zero()));
  // a planar arm cannot move its tip out of its plane, nor a 3-joint chain in 6 directions
  const Model planar = buildModelFromDH(planarArmDH());
  Data pd(planar);
  const Eigen::VectorXd qp = Eigen::VectorXd::Constant(3, 0.4);
  EXPECT_THROW(computeOperationalSpaceInertia(planar, pd, qp, planar.n, Eigen::Vector3d::Zero()),
               NumericalError);
  EXPECT_THROW(computeOperationalSpaceInertia(planar, pd, qp, planar.n, Eigen::Vector3d::Zero(),
                                              ReferenceFrame::Base, TaskRows::Linear),
               NumericalError);
  // the angular velocity of the planar arm's first link has one direction only
  EXPECT_THROW(computeOperationalSpaceInertia(planar, pd, qp, 0, Eigen::Vector3d::Zero(),
                                              ReferenceFrame::Base, TaskRows::Angular),
               NumericalError);
}

TEST(KinematicsArguments, FrameNamesAndBadArguments) {
  const Model model = testing::namedRobots()[1].model;  // the Panda URDF
  EXPECT_EQ(frameIndex(model, ""), model.n);
  EXPECT_EQ(frameIndex(model, model.spec.joints[3].link), 3);
  try {
    frameIndex(model, "no_such_link");
    FAIL() << "no exception";
  } catch (const std::invalid_argument& e) {
    EXPECT_NE(std::string(e.what()).find("frameIndex: link 'no_such_link'"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find(model.spec.joints[0].link), std::string::npos) << e.what();
  }
  Data data(model);
  const Eigen::VectorXd q = Eigen::VectorXd::Zero(model.n);
  try {
    computeFrameJacobian(model, data, q, model.n + 2, Eigen::Vector3d::Zero());
    FAIL() << "no exception";
  } catch (const std::invalid_argument& e) {
    // frames 0..n: the links and the tip; n + 1: the root link (the base of a chain)
    EXPECT_EQ(std::string(e.what()).find("computeFrameJacobian: frame is 9, expected 0..8"), 0u) << e.what();
  }
  EXPECT_EQ(computeFrameJacobian(model, data, q, model.n + 1, Eigen::Vector3d::Zero()).norm(), 0.0);
  EXPECT_THROW(computeFrameJacobian(model, data, q, -1, Eigen::Vector3d::Zero()), std::invalid_argument);
  EXPECT_THROW(computeFrameJacobian(model, data, q, 2, Eigen::Vector3d(0, NAN, 0)), std::invalid_argument);
  EXPECT_THROW(computeFrameJdotQd(model, data, q, Eigen::VectorXd::Zero(3), 2, Eigen::Vector3d::Zero()),
               std::invalid_argument);
  Eigen::VectorXd bad = q;
  bad[6] = INFINITY;
  try {
    forwardKinematics(model, data, bad);
    FAIL() << "no exception";
  } catch (const std::invalid_argument& e) {
    EXPECT_EQ(std::string(e.what()).find("forwardKinematics: q[6]"), 0u) << e.what();
  }
  EXPECT_THROW(computeOperationalSpaceInertia(model, data, bad, 2, Eigen::Vector3d::Zero()),
               std::invalid_argument);
}

TEST(KinematicsBatch, FrameBatchEqualsSingleStateCallsBitForBit) {
  using RowMajor = Eigen::Matrix<double, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor>;
  const auto model = std::make_shared<const Model>(testing::namedRobots()[0].model);  // the Stanford arm
  const int n = model->n;
  const std::size_t K = 41;
  std::mt19937 rng(23u);
  RowMajor q(K, n), qd(K, n);
  for (std::size_t k = 0; k < K; ++k) {
    q.row(static_cast<Eigen::Index>(k)) = randomConfiguration(*model, rng).transpose();
    qd.row(static_cast<Eigen::Index>(k)) = randomVectorX(rng, n, 1.0).transpose();
  }
  q(7, 4) = 0.0;  // the wrist singularity: the full task's Lambda does not exist there
  FrameQuery query;
  query.frame = 4;
  query.point = Eigen::Vector3d(0.01, 0.02, 0.03);
  query.reference = ReferenceFrame::Local;
  query.rows = TaskRows::Linear;
  Data data(*model);
  BatchOptions grain4;
  grain4.grain = 4;
  for (unsigned threads : {1u, 2u, 3u}) {
    BatchPool pool(threads);
    RowMajor R(K, 9), p(K, 3), J(K, 6 * n), jd(K, 6), L(K, 9);
    FrameBatchOutput out{R.data(), p.data(), J.data(), jd.data(), L.data()};
    frameBatch(pool, model, K, q.data(), qd.data(), query, out, grain4);
    for (std::size_t k = 0; k < K; ++k) {
      const auto r = static_cast<Eigen::Index>(k);
      const Eigen::VectorXd qk = q.row(r).transpose(), qdk = qd.row(r).transpose();
      const Vec6 jdk = computeFrameJdotQd(*model, data, qk, qdk, 4, query.point, query.reference);
      EXPECT_EQ(jd.row(r), jdk.transpose()) << k;
      EXPECT_EQ(J.row(r), RowMajor(data.J).reshaped<Eigen::RowMajor>().transpose()) << k;
      EXPECT_EQ(R.row(r), RowMajor(data.kin_R[4]).reshaped<Eigen::RowMajor>().transpose()) << k;
      EXPECT_EQ(p.row(r), data.kin_p[4].transpose()) << k;
      const Eigen::Matrix3d Lk =
          computeOperationalSpaceInertia(*model, data, qk, 4, query.point, query.reference, query.rows)
              .topLeftCorner<3, 3>();
      EXPECT_EQ(L.row(r), RowMajor(Lk).reshaped<Eigen::RowMajor>().transpose()) << k;
    }
    // the full task is singular at state 7: BatchError naming the state, caused by a NumericalError
    query.rows = TaskRows::Full;
    RowMajor L6(K, 36);
    FrameBatchOutput full;
    full.lambda = L6.data();
    query.frame = model->n;
    try {
      frameBatch(pool, model, K, q.data(), nullptr, query, full, grain4);
      FAIL() << "no exception";
    } catch (const BatchError& e) {
      EXPECT_EQ(std::string(e.what()).find("frameBatch: state 7: computeOperationalSpaceInertia"), 0u)
          << e.what();
      EXPECT_EQ(e.state(), 7u);
      EXPECT_THROW(std::rethrow_exception(e.cause()), NumericalError);
    }
    query.rows = TaskRows::Linear;
    query.frame = 4;
  }
}

TEST(FrameBatch, EveryFramesPoseEqualsForwardKinematicsAndAStopIsHonoured) {
  using RowMajor = Eigen::Matrix<double, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor>;
  const auto model = std::make_shared<const Model>(testing::namedRobots()[1].model);
  const Eigen::Index n = model->n;
  const std::size_t K = 29;
  std::mt19937 rng(31u);
  RowMajor q(K, n);
  for (std::size_t k = 0; k < K; ++k)
    q.row(static_cast<Eigen::Index>(k)) = randomConfiguration(*model, rng).transpose();
  Data data(*model);
  BatchPool pool(2);
  BatchOptions grain4;
  grain4.grain = 4;
  RowMajor R(K, 9 * (n + 1)), p(K, 3 * (n + 1));
  FrameBatchOutput out;
  out.frame_rotations = R.data();
  out.frame_origins = p.data();
  frameBatch(pool, model, K, q.data(), nullptr, FrameQuery{}, out, grain4);
  for (std::size_t k = 0; k < K; ++k) {
    const auto r = static_cast<Eigen::Index>(k);
    forwardKinematics(*model, data, q.row(r).transpose());
    for (Eigen::Index i = 0; i <= n; ++i) {
      const RowMajor Ri = data.kin_R[static_cast<std::size_t>(i)];
      for (Eigen::Index e = 0; e < 9; ++e) EXPECT_EQ(R(r, 9 * i + e), Ri.data()[e]) << k << " frame " << i;
      for (Eigen::Index e = 0; e < 3; ++e)
        EXPECT_EQ(p(r, 3 * i + e), data.kin_p[static_cast<std::size_t>(i)][e]) << k << " frame " << i;
    }
  }
  // rotations need the origins' array beside them
  FrameBatchOutput half;
  half.frame_rotations = R.data();
  EXPECT_THROW(frameBatch(pool, model, K, q.data(), nullptr, FrameQuery{}, half), std::invalid_argument);
  // a deadline already passed stops the batch before its first state
  const StopCondition late({}, StopCondition::Clock::now() - std::chrono::seconds(1));
  BatchOptions o;
  o.stop = &late;
  try {
    frameBatch(pool, model, K, q.data(), nullptr, FrameQuery{}, out, o);
    FAIL() << "not stopped";
  } catch (const Stopped& e) {
    EXPECT_EQ(e.done(), 0u);
    EXPECT_STREQ(e.what(), "frameBatch: stopped after 0 of 29 states: the deadline passed");
  }
}

TEST(KinematicsAllocation, NoHeapAllocation) {
#ifdef DENOC_COUNT_ALLOCATIONS
  for (const Robot& robot : testing::namedRobots()) {
    const Model& model = robot.model;
    Data data(model);
    std::mt19937 rng(3u);
    const Eigen::VectorXd q = randomConfiguration(model, rng), qd = randomVectorX(rng, model.n, 1.0);
    Eigen::Matrix3d R;
    Eigen::Vector3d p;
    const Eigen::Vector3d point(0.01, 0.02, 0.03);
    const long count = testing::allocationsIn([&] {
      forwardKinematics(model, data, q);
      framePlacement(model, data, q, 1, R, p);
      computeFrameJacobian(model, data, q, model.n, point);
      computeFrameJacobian(model, data, q, 0, point, ReferenceFrame::Local);
      computeFrameJdotQd(model, data, q, qd, model.n, point, ReferenceFrame::Local);
      try {
        computeOperationalSpaceInertia(model, data, q, model.n, point, ReferenceFrame::Base,
                                       TaskRows::Linear);
      } catch (const NumericalError&) {  // the planar arm's linear task: the throw allocates, no check
        return;
      }
    });
    if (robot.name != "planar_3r.json") {
      EXPECT_EQ(count, 0) << robot.name;
    }
  }
  EXPECT_TRUE(testing::counterCounts()) << "the allocation counter counts nothing";
#else
  GTEST_SKIP() << testing::kNoAllocationCounting;
#endif
}

}  // namespace
}  // namespace denoc
