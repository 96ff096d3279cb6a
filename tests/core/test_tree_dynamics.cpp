// denoc's kinematic trees against MuJoCo 2.2.2 (an independent implementation: its own MJCF compiler,
// composite-rigid-body inertia matrix, recursive Newton-Euler, sparse L^T D L factor and kinematics), through
// tests/support/mujoco_oracle.hpp, on random trees of 1..64 joints under fixed, floating and planar roots
// (tests/support/random_tree.hpp), at random states:
//  - inverse dynamics (mj_inverse's qfrc_inverse), with external wrenches (mj_applyFT of xfrc_applied);
//  - the inertia matrix (mj_fullM of qM), its tree-sparse U D U^T and log det (MuJoCo's qLDiagInv), its
//    inverse (mj_solveM);
//  - forward dynamics (mj_forward's qacc) by the O(n) articulated route and the U D U^T route, with and
//    without external wrenches (xfrc_applied);
//  - the bias C v + g and the gravity vector (qfrc_bias);
//  - every frame's pose (xpos, xmat; the tip frame a site), point Jacobians (mj_jac) in world and local axes,
//    (dJ/dt) v (mj_objectAcceleration after mj_rnePostConstraint), the centre of mass (subtree_com of the
//    world body), kinetic and potential energy (mj_energyVel, mj_energyPos);
//  - the configuration manifold: integrateConfiguration and differenceConfiguration against mj_integratePos
//    and mj_differentiatePos.
// Every comparison is to 1e-9 relative to the norm of the quantity (norms below 1: 1e-9 absolute; forward
// dynamics: scaled by cond(M) / 1e6 when larger) by one comparator (support/compare.hpp); the worst relative
// error per quantity is printed and recorded (RecordProperty). A serial chain goes through MuJoCo too, and
// the same chain built on the tree recursions (force_tree) matches the serial recursions to 1e-12 (forward
// dynamics: scaled by cond(M) / 1e4 when larger).
#include <gtest/gtest.h>

#include <Eigen/Eigenvalues>
#include <algorithm>
#include <cmath>
#include <iomanip>
#include <iostream>
#include <map>
#include <random>
#include <sstream>
#include <string>
#include <vector>

#include "denoc/denoc.hpp"
#include "support/compare.hpp"
#include "support/mujoco_oracle.hpp"
#include "support/random_tree.hpp"

namespace denoc {
namespace {

using testing::MujocoOptions;
using testing::MujocoOracle;
using testing::MujocoSite;
using testing::RandomTreeOptions;
using testing::randomTreeSpec;

using VecX = Eigen::VectorXd;
using MatX = Eigen::MatrixXd;
using Vec3 = Eigen::Vector3d;
using Mat3 = Eigen::Matrix3d;

constexpr double kTol = 1e-9;        // relative to the quantity's norm ...
constexpr double kFloor = 1.0;       // ... or to 1 when smaller: 1e-9 absolute for near-zero quantities
constexpr double kRouteTol = 1e-12;  // serial recursions against the tree recursions on one chain

/// The tolerance of a forward dynamics comparison: tol, scaled by cond(M) / free_cond when the inertia
/// matrix's condition number is larger (rounding errors of a solve grow with it; as in
/// test_chain_dynamics.cpp).
double forwardTolerance(const MatX& M, double tol, double free_cond) {
  const Eigen::SelfAdjointEigenSolver<MatX> es(M, Eigen::EigenvaluesOnly);
  const double cond = es.eigenvalues().maxCoeff() / es.eigenvalues().minCoeff();
  return tol * std::max(1.0, cond / free_cond);
}

/// The one comparator of this file: support/compare.hpp's relative error and assertion, keeping the worst
/// relative error per quantity for the report.
class Checker {
 public:
  template <typename A, typename B>
  void operator()(const Eigen::MatrixBase<A>& actual, const Eigen::MatrixBase<B>& expected,
                  const std::string& quantity, const std::string& where, double tol = kTol) {
    const double err = testing::relativeError(actual, expected, kFloor);
    double& worst = worst_[quantity];
    worst = std::max(worst, err);
    EXPECT_TRUE(testing::near(actual, expected, tol, quantity + " (" + where + ")", kFloor));
  }
  void operator()(double actual, double expected, const std::string& quantity, const std::string& where,
                  double tol = kTol) {
    (*this)(Eigen::Matrix<double, 1, 1>(actual), Eigen::Matrix<double, 1, 1>(expected), quantity, where, tol);
  }

  /// Prints the table and records each worst error as a test property.
  void report(const std::string& title) const {
    std::cout << "[ worst relative errors: " << title << " ]\n";
    for (const auto& [quantity, err] : worst_) {
      std::cout << "  " << std::left << std::setw(50) << quantity << std::scientific << std::setprecision(2)
                << err << std::defaultfloat << "\n";
      std::ostringstream os;
      os << std::scientific << std::setprecision(3) << err;
      std::string key = quantity;
      std::replace_if(
          key.begin(), key.end(), [](char c) { return !std::isalnum(static_cast<unsigned char>(c)); }, '_');
      ::testing::Test::RecordProperty("worst_" + key, os.str());
    }
  }

 private:
  std::map<std::string, double> worst_;
};

VecX randomVec(std::mt19937_64& rng, int n, double scale) {
  std::uniform_real_distribution<double> u(-scale, scale);
  VecX x(n);
  for (int i = 0; i < n; ++i) x[i] = u(rng);
  return x;
}

std::string describe(const Model& model, std::uint32_t seed, int state) {
  return "seed " + std::to_string(seed) + ", " + std::to_string(model.n) + " joints, " +
         testing::rootName(model.root) + " root, state " + std::to_string(state);
}

/// The points the Jacobians are taken at: a few links' frames, the tip frame and the root link, each with a
/// random point (sites of the MuJoCo model, for mj_objectAcceleration).
std::vector<MujocoSite> testSites(const Model& model, std::mt19937_64& rng, bool root_frame) {
  std::vector<MujocoSite> sites;
  std::uniform_int_distribution<int> link(0, model.n - 1);
  for (int k = 0; k < std::min(model.n, 6); ++k) sites.push_back({link(rng), randomVec(rng, 3, 0.5)});
  sites.push_back({model.n, randomVec(rng, 3, 0.5)});
  if (root_frame) sites.push_back({model.n + 1, randomVec(rng, 3, 0.5)});
  return sites;
}

/// The centre of mass from denoc's placements (after a tree function): the links' mass centres data.C0 and
/// the root link's, weighted by their masses.
Vec3 treeCenterOfMass(const Model& model, const Data& data) {
  double m = 0.0;
  Vec3 h = Vec3::Zero();
  for (int i = 0; i < model.n; ++i) {
    m += model.mass[static_cast<std::size_t>(i)];
    h += model.mass[static_cast<std::size_t>(i)] * data.C0[static_cast<std::size_t>(i)];
  }
  if (model.root != RootJoint::Fixed) {
    m += model.root_mass;
    h += model.root_mass * (data.root_p + data.root_R * model.root_com);
  }
  return h / m;
}

/// Every comparison at one state (q, v, a, tau) of a model.
void compareState(const Model& model, Data& data, const MujocoOracle& mj,
                  const std::vector<MujocoSite>& sites, const VecX& q, const VecX& v, const VecX& a,
                  const VecX& tau, const std::string& where, Checker& check) {
  const int n = model.n;
  // dynamics
  check(inverseDynamics(model, data, q, v, a), mj.inverseDynamics(q, v, a), "inverse dynamics", where);
  const MatX M = mj.inertiaMatrix(q);
  check(computeInertiaMatrix(model, data, q), M, "inertia matrix", where);
  const VecX qdd = mj.forwardDynamics(q, v, tau);
  const double fd_tol = forwardTolerance(M, kTol, 1e6);
  check(forwardDynamics(model, data, q, v, tau), qdd, "forward dynamics (O(n))", where, fd_tol);
  check(forwardDynamicsCholesky(model, data, q, v, tau), qdd, "forward dynamics (factor)", where, fd_tol);
  check(computeBias(model, data, q, v), mj.bias(q, v), "bias C v + g", where);
  check(computeGravity(model, data, q), mj.bias(q, VecX::Zero(model.nv)), "gravity g", where);
  computeFullFactor(model, data, q);
  check(MatX(data.U * data.D.asDiagonal() * data.U.transpose()), M, "U D U^T", where);
  check(data.log_det, mj.logDetInertia(q), "log det M", where);
  check(computeInverseInertia(model, data, q), mj.inverseInertia(q), "inverse inertia", where);
  // kinematics
  forwardKinematics(model, data, q);
  const int frames = model.serial ? n + 1 : n + 2;  // a serial chain has no root link frame
  for (int f = 0; f < frames; ++f) {
    Mat3 R;
    Vec3 p;
    mj.framePose(q, f, R, p);
    Eigen::Matrix<double, 3, 4> expected, actual;
    expected << R, p;
    actual << data.kin_R[static_cast<std::size_t>(f)], data.kin_p[static_cast<std::size_t>(f)];
    check(actual, expected, "frame pose [R p]", where + ", frame " + std::to_string(f));
  }
  if (!model.serial) {
    forwardKinematics(model, data, q);  // the placements data.C0, root_R, root_p
    check(treeCenterOfMass(model, data), mj.centerOfMass(q), "centre of mass", where);
  }
  for (std::size_t k = 0; k < sites.size(); ++k) {
    const MujocoSite& s = sites[k];
    const std::string at = where + ", frame " + std::to_string(s.frame);
    for (ReferenceFrame ref : {ReferenceFrame::Base, ReferenceFrame::Local}) {
      check(computeFrameJacobian(model, data, q, s.frame, s.point, ref),
            mj.jacobian(q, s.frame, s.point, ref),
            ref == ReferenceFrame::Base ? "Jacobian (world axes)" : "Jacobian (local axes)", at);
    }
    for (ReferenceFrame ref : {ReferenceFrame::Base, ReferenceFrame::Local}) {
      check(computeFrameJdotQd(model, data, q, v, s.frame, s.point, ref),
            mj.jdotQd(q, v, static_cast<int>(k), ref),
            ref == ReferenceFrame::Base ? "dJ/dt v (world axes)" : "dJ/dt v (local axes)", at);
    }
  }
  check(kineticEnergy(model, data, q, v), mj.kineticEnergy(q, v), "kinetic energy", where);
  check(potentialEnergy(model, data, q), mj.potentialEnergy(q), "potential energy", where);
}

/// The configuration manifold against MuJoCo's: q (+) v dt (mj_integratePos with qvel = T v) and its inverse
/// (mj_differentiatePos, mapped back by T^-1 = T^T).
void compareManifold(const Model& model, const MujocoOracle& mj, const VecX& q, const VecX& v,
                     const std::string& where, Checker& check) {
  const double dt = 0.7;
  const mjModel* m = mj.m();
  VecX qpos = mj.qpos(q);
  const VecX qvel = mj.qvel(q, v);
  mj_integratePos(m, qpos.data(), qvel.data(), dt);
  const VecX q1 = integrateConfiguration(model, q, v, dt);
  check(mj.qpos(q1), qpos, "integrateConfiguration", where);
  VecX diff(model.nv);
  const VecX qpos0 = mj.qpos(q);
  mj_differentiatePos(m, diff.data(), 1.0, qpos0.data(), qpos.data());
  check(differenceConfiguration(model, q, q1), mj.velocityMap(q).transpose() * diff,
        "differenceConfiguration", where);
}

// The conventions of the oracle's file comment, checked against MuJoCo itself on a floating body with one
// joint: the free body's xpos is denoc's root origin q[0..3), its xmat the rotation of q's quaternion; the
// Jacobian of that origin with respect to qvel is [1 0] (the first three qvel are the world velocity of the
// body origin) and the angular Jacobian is [0 R] (the last three are the angular velocity in body axes), so
// T = [0 R; 1 0].
TEST(MujocoOracle, FreeJointConvention) {
  ModelSpec spec = randomTreeSpec(7, {.joints = 1, .root = RootJoint::Floating});
  const Model model = buildModel(spec);
  const MujocoOracle mj(model);
  std::mt19937_64 rng(11);
  for (int s = 0; s < 5; ++s) {
    const VecX q = randomConfiguration(model, rng);
    mj.setState(q, VecX::Zero(model.nv));
    const int root = mj.bodyOf(model.n + 1);
    const Vec3 xpos = Eigen::Map<const Vec3>(mj.d()->xpos + 3 * root);
    const Mat3 xmat = Eigen::Map<const Eigen::Matrix<double, 3, 3, Eigen::RowMajor>>(mj.d()->xmat + 9 * root);
    const Mat3 R = Eigen::Quaterniond(q[6], q[3], q[4], q[5]).toRotationMatrix();
    EXPECT_TRUE(testing::near(xpos, Vec3(q.head<3>()), 1e-15, "free body origin = q[0..3)", 1.0));
    EXPECT_TRUE(testing::near(xmat, R, 1e-15, "free body rotation = q's quaternion", 1.0));
    Eigen::Matrix<double, 3, Eigen::Dynamic, Eigen::RowMajor> jacp(3, model.nv), jacr(3, model.nv);
    mj_jac(mj.m(), mj.d(), jacp.data(), jacr.data(), xpos.data(), root);
    EXPECT_TRUE(testing::near(jacp.leftCols<3>(), Mat3::Identity(), 1e-15, "d(origin)/d(qvel[0..3))", 1.0));
    EXPECT_TRUE(testing::near(jacp.middleCols<3>(3), Mat3::Zero(), 1e-15, "d(origin)/d(qvel[3..6))", 1.0));
    EXPECT_TRUE(testing::near(jacr.leftCols<3>(), Mat3::Zero(), 1e-15, "d(omega)/d(qvel[0..3))", 1.0));
    EXPECT_TRUE(testing::near(jacr.middleCols<3>(3), R, 1e-15, "d(omega_world)/d(qvel[3..6))", 1.0));
    const MatX T = mj.velocityMap(q);
    EXPECT_TRUE(
        testing::near(MatX(T.transpose() * T), MatX::Identity(model.nv, model.nv), 1e-15, "T^T T", 1.0));
  }
}

// Random trees of 1..64 joints under all three roots.
TEST(TreeMujoco, RandomTrees) {
  Checker check;
  int roots[3] = {0, 0, 0};
  for (std::uint32_t seed = 1; seed <= 90; ++seed) {
    const Model model = buildModel(randomTreeSpec(seed));
    ASSERT_FALSE(model.serial && model.root != RootJoint::Fixed);
    ++roots[static_cast<int>(model.root)];
    std::mt19937_64 rng(1000 + seed);
    MujocoOptions options;
    options.sites = testSites(model, rng, true);
    const MujocoOracle mj(model, options);
    Data data(model);
    for (int state = 0; state < 3; ++state) {
      const VecX q = randomConfiguration(model, rng);
      const VecX v = randomVec(rng, model.nv, 1.0);
      const VecX a = randomVec(rng, model.nv, 1.0);
      const VecX tau = randomVec(rng, model.nv, 10.0);
      const std::string where = describe(model, seed, state);
      compareState(model, data, mj, options.sites, q, v, a, tau, where, check);
      compareManifold(model, mj, q, v, where, check);
    }
  }
  EXPECT_GT(roots[0], 10);
  EXPECT_GT(roots[1], 10);
  EXPECT_GT(roots[2], 10);
  check.report("random trees");
}

// Inverse and forward dynamics with external wrenches on links, the tip frame and the root link, in local and
// world axes: MuJoCo's xfrc_applied ([force; torque about the body's mass centre], world axes).
TEST(TreeMujoco, ExternalWrenches) {
  Checker check;
  for (std::uint32_t seed = 200; seed < 240; ++seed) {
    const Model model = buildModel(randomTreeSpec(seed));
    const MujocoOracle mj(model);
    Data data(model);
    std::mt19937_64 rng(seed);
    const int frames = model.root == RootJoint::Fixed ? model.n + 1 : model.n + 2;
    std::uniform_int_distribution<int> frame(0, frames - 1), count(1, 4);
    for (int state = 0; state < 3; ++state) {
      const VecX q = randomConfiguration(model, rng);
      const VecX v = randomVec(rng, model.nv, 1.0);
      const VecX a = randomVec(rng, model.nv, 1.0);
      const VecX tau = randomVec(rng, model.nv, 10.0);
      std::vector<ExternalWrench> wrenches;
      for (int k = count(rng); k > 0; --k) {
        ExternalWrench w;
        w.frame = frame(rng);
        w.wrench = randomVec(rng, 6, 20.0);
        w.reference = rng() % 2 ? ReferenceFrame::Local : ReferenceFrame::Base;
        wrenches.push_back(w);
      }
      const std::string where = describe(model, seed, state);
      check(inverseDynamics(model, data, q, v, a, wrenches), mj.inverseDynamics(q, v, a, wrenches),
            "inverse dynamics with wrenches", where);
      // the tip wrench overload: a wrench on the tip frame in its own axes
      const ExternalWrench tip{model.n, randomVec(rng, 6, 20.0), ReferenceFrame::Local};
      check(inverseDynamics(model, data, q, v, a, tip.wrench), mj.inverseDynamics(q, v, a, {tip}),
            "inverse dynamics with a tip wrench", where);
      check(forwardDynamics(model, data, q, v, tau, wrenches), mj.forwardDynamics(q, v, tau, wrenches),
            "forward dynamics with wrenches", where, forwardTolerance(mj.inertiaMatrix(q), kTol, 1e6));
    }
  }
  check.report("external wrenches");
}

// Massless links (a URDF's virtual links between the joints of a universal or spherical joint): denoc builds
// them on the tree recursions; MuJoCo 2.2.2 needs a mass and moments above 1e-15, so the oracle gives them
// 1e-12 (MujocoOptions::floor), a perturbation far below the tolerance.
TEST(TreeMujoco, MasslessLinks) {
  Checker check;
  int massless = 0;
  for (std::uint32_t seed = 300; seed < 330; ++seed) {
    RandomTreeOptions shape;
    shape.massless_fraction = 0.3;
    const Model model = buildModel(randomTreeSpec(seed, shape));
    for (const double m : model.mass) massless += m == 0.0;
    std::mt19937_64 rng(seed);
    MujocoOptions options;
    options.floor = 1e-12;
    options.sites = testSites(model, rng, model.root != RootJoint::Fixed);
    const MujocoOracle mj(model, options);
    Data data(model);
    for (int state = 0; state < 2; ++state) {
      const VecX q = randomConfiguration(model, rng);
      const VecX v = randomVec(rng, model.nv, 1.0);
      const VecX a = randomVec(rng, model.nv, 1.0);
      const VecX tau = randomVec(rng, model.nv, 10.0);
      compareState(model, data, mj, options.sites, q, v, a, tau, describe(model, seed, state), check);
    }
  }
  EXPECT_GT(massless, 20);
  check.report("massless links");
}

// The serial special case: random chains (fixed root, every joint on the previous one) are built on the
// serial recursions and go through MuJoCo too; the same chains built on the tree recursions (force_tree)
// give the serial recursions' inverse dynamics, inertia matrix and forward dynamics (both routes) to 1e-12.
TEST(TreeMujoco, SerialChains) {
  Checker check;
  for (const int n : {1, 2, 3, 7, 12, 20, 33, 48}) {
    for (std::uint32_t seed = 400; seed < 403; ++seed) {
      const ModelSpec spec = randomTreeSpec(seed + 17 * static_cast<std::uint32_t>(n),
                                            {.joints = n, .root = RootJoint::Fixed, .chain = true});
      const Model serial = buildModel(spec);
      ASSERT_TRUE(serial.serial) << "a chain on a fixed root with positive definite links is serial";
      ModelSpec tree_spec = spec;
      tree_spec.force_tree = true;
      const Model tree = buildModel(tree_spec);
      ASSERT_FALSE(tree.serial);
      std::mt19937_64 rng(seed * 31 + static_cast<std::uint32_t>(n));
      MujocoOptions options;
      options.sites = testSites(serial, rng, false);
      const MujocoOracle mj(serial, options);
      Data sd(serial), td(tree);
      for (int state = 0; state < 3; ++state) {
        const VecX q = randomConfiguration(serial, rng);
        const VecX v = randomVec(rng, n, 1.0);
        const VecX a = randomVec(rng, n, 1.0);
        const VecX tau = randomVec(rng, n, 10.0);
        const std::string where = describe(serial, seed, state);
        compareState(serial, sd, mj, options.sites, q, v, a, tau, where + " (serial)", check);
        const std::string route = "serial vs tree route: ";
        check(VecX(inverseDynamics(tree, td, q, v, a)), VecX(inverseDynamics(serial, sd, q, v, a)),
              route + "inverse dynamics", where, kRouteTol);
        const MatX M = computeInertiaMatrix(serial, sd, q);
        check(MatX(computeInertiaMatrix(tree, td, q)), M, route + "inertia matrix", where, kRouteTol);
        const double fd_tol = forwardTolerance(M, kRouteTol, 1e4);
        check(VecX(forwardDynamics(tree, td, q, v, tau)), VecX(forwardDynamics(serial, sd, q, v, tau)),
              route + "forward dynamics (O(n))", where, fd_tol);
        check(VecX(forwardDynamicsCholesky(tree, td, q, v, tau)),
              VecX(forwardDynamicsCholesky(serial, sd, q, v, tau)), route + "forward dynamics (factor)",
              where, fd_tol);
      }
    }
  }
  check.report("serial chains");
}

// The repository's example robots (URDF, serial chains) through MuJoCo as they are, and the same arms on a
// floating and on a planar root link (a mobile manipulator's base: mass 20 kg, a random mass centre and
// inertia): real link geometry and inertias, where the random trees have random ones.
/// Three random states of `model` against MuJoCo (massless links raised to `floor` in MuJoCo's copy).
void compareRandomStates(const Model& model, std::uint32_t seed, double floor, const std::string& name,
                         Checker& check) {
  std::mt19937_64 rng(seed);
  MujocoOptions options;
  options.floor = floor;
  options.sites = testSites(model, rng, !model.serial);
  const MujocoOracle mj(model, options);
  Data data(model);
  for (int state = 0; state < 3; ++state) {
    const VecX q = randomConfiguration(model, rng);
    const VecX v = randomVec(rng, model.nv, 1.0);
    const VecX a = randomVec(rng, model.nv, 1.0);
    const VecX tau = randomVec(rng, model.nv, 10.0);
    compareState(model, data, mj, options.sites, q, v, a, tau, name + ", state " + std::to_string(state),
                 check);
  }
}

TEST(TreeMujoco, ExampleRobots) {
  Checker check;
  const std::string dir = std::string(DENOC_MODELS_DIR) + "/";
  std::uint32_t seed = 500;
  for (const char* file : {"panda.urdf", "ur5.urdf", "ur10.urdf", "iiwa14.urdf", "gen3.urdf", "acrobot.urdf",
                           "double_pendulum.urdf"}) {
    const Model arm = buildModelFromUrdfFile(dir + file);
    for (const RootJoint root : {RootJoint::Fixed, RootJoint::Floating, RootJoint::Planar}) {
      ModelSpec spec = arm.spec;
      std::mt19937 shape(++seed);
      spec.root = root;
      spec.root_mass = 20.0;
      spec.root_com = testing::randomTreeVector(shape, 0.2);
      spec.root_inertia = testing::randomTreeInertia(shape, spec.root_mass);
      const Model model = buildModel(spec);
      compareRandomStates(model, seed, 0.0, std::string(file) + ", " + testing::rootName(root) + " root",
                          check);
    }
  }
  check.report("example robots");
}

// The branched robots of examples/models/trees (Solo-12, ANYmal C, the simple humanoid, Baxter), imported
// whole under every root. Their massless links (root links, sensor frames merged away leave some) are
// raised to MuJoCo's floor in MuJoCo's copy only (1e-12 kg, 1e-12 kg m^2).
TEST(TreeMujoco, BranchedRobots) {
  const std::string dir = std::string(DENOC_MODELS_DIR) + "/trees/";
  std::uint32_t seed = 700;
  int loaded = 0;
  for (const char* file : {"solo12.urdf", "anymal_c.urdf", "simple_humanoid.urdf", "baxter.urdf"}) {
    Checker check;  // the worst errors of each robot, under its three roots
    for (const RootJoint root : {RootJoint::Fixed, RootJoint::Floating, RootJoint::Planar}) {
      UrdfOptions urdf;
      urdf.root = root;
      const Model model = loadModelFile(dir + file, urdf);
      ++loaded;
      compareRandomStates(model, ++seed, 1e-12, std::string(file) + ", " + testing::rootName(root) + " root",
                          check);
    }
    check.report(file);
  }
  EXPECT_EQ(loaded, 12);
}

}  // namespace
}  // namespace denoc
