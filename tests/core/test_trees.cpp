// Trees and floating/planar roots against identities, definitions and conservation laws (the MuJoCo and KDL
// oracles are in test_tree_dynamics.cpp and test_urdf_trees.cpp):
//  - the configuration manifold: difference(q, integrate(q, v, 1)) = v, normalisation's tolerance;
//  - FD(ID(a)) = a on both forward routes, M's columns from ID, U D U^T = M with U on ancestor pairs only,
//    M^-1 M = 1, bias and gravity from ID;
//  - a serial chain built on the tree recursions gives the serial recursions' numbers;
//  - the Jacobian against the finite-difference velocity of the point along integrate;
//  - the centre of mass, its Jacobian and the centroidal momentum against their definitions and finite
//    differences;
//  - with zero gravity and no external force, a floating robot's momentum and energy are conserved along a
//    simulated motion.
#include <gtest/gtest.h>

#include <Eigen/Geometry>
#include <Eigen/SVD>
#include <random>
#include <vector>

#include "denoc/denoc.hpp"
#include "support/compare.hpp"
#include "support/random_chain.hpp"
#include "support/random_tree.hpp"

namespace denoc {
namespace {

using testing::near;
using testing::randomTreeSpec;

TEST(TreeConfiguration, SizesAndNeutral) {
  const Model fixed = buildModel(randomTreeSpec(5, 1, RootJoint::Fixed));
  const Model floating = buildModel(randomTreeSpec(5, 1, RootJoint::Floating));
  const Model planar = buildModel(randomTreeSpec(5, 1, RootJoint::Planar));
  EXPECT_EQ(fixed.nq, 5);
  EXPECT_EQ(fixed.nv, 5);
  EXPECT_EQ(floating.nq, 12);
  EXPECT_EQ(floating.nv, 11);
  EXPECT_EQ(floating.nu, 5);
  EXPECT_EQ(planar.nq, 8);
  EXPECT_EQ(planar.nv, 8);
  const Eigen::VectorXd q0 = neutralConfiguration(floating);
  EXPECT_EQ(q0.segment<4>(3), Eigen::Vector4d(0, 0, 0, 1));
  EXPECT_EQ(q0.head<3>(), Eigen::Vector3d::Zero());
}

TEST(TreeConfiguration, DifferenceInvertsIntegrate) {
  std::mt19937_64 rng(7);
  for (const testing::TreeCase& c : testing::treeCases({1, 2, 5, 12, 30})) {
    const Model model = buildModel(randomTreeSpec(c.n, 11, c.root));
    for (int trial = 0; trial < 20; ++trial) {
      const Eigen::VectorXd q = randomConfiguration(model, rng);
      Eigen::VectorXd v = testing::randomStateVector(model.nv, rng, 1.0);
      const Eigen::VectorXd q1 = integrateConfiguration(model, q, v, 1.0);
      EXPECT_TRUE(near(differenceConfiguration(model, q, q1), v, 1e-12, "difference(q, integrate(q, v, 1))"));
      // integrate by dt equals integrate of v dt by 1; and q (+) 0 = q
      EXPECT_TRUE(near(integrateConfiguration(model, q, v, 0.25),
                       integrateConfiguration(model, q, v * 0.25, 1.0), 1e-14, "integrate(q, v, dt)"));
      EXPECT_TRUE(
          near(integrateConfiguration(model, q, Eigen::VectorXd::Zero(model.nv), 1.0), q, 1e-15, "q + 0"));
      if (model.root == RootJoint::Floating) {
        EXPECT_NEAR(q1.segment<4>(3).norm(), 1.0, 1e-15);
      }
    }
  }
}

TEST(TreeConfiguration, RandomConfigurationsStayInTheLimits) {
  ModelSpec spec = randomTreeSpec(8, 3, RootJoint::Floating);
  spec.joints[2].lower = -0.1;
  spec.joints[2].upper = 0.2;
  const Model model = buildModel(spec);
  std::mt19937_64 rng(1);
  for (int k = 0; k < 200; ++k) {
    const Eigen::VectorXd q = randomConfiguration(model, rng);
    EXPECT_GE(q[7 + 2], -0.1);
    EXPECT_LE(q[7 + 2], 0.2);
    EXPECT_NEAR(q.segment<4>(3).norm(), 1.0, 1e-15);
    EXPECT_LE(q.head<3>().cwiseAbs().maxCoeff(), 1.0);
  }
}

TEST(TreeConfiguration, QuaternionsBeyondTheToleranceAreRefusedNamingTheNorm) {
  const Model model = buildModel(randomTreeSpec(3, 2, RootJoint::Floating));
  Data data(model);
  Eigen::VectorXd q = neutralConfiguration(model);
  q.segment<4>(3) *= 1.0 + 0.5 * kQuaternionTolerance;  // within: accepted, normalised
  const Eigen::VectorXd n = normalizeConfiguration(model, q);
  EXPECT_NEAR(n.segment<4>(3).norm(), 1.0, 1e-16);
  const Eigen::VectorXd v = Eigen::VectorXd::Zero(model.nv);
  EXPECT_NO_THROW(inverseDynamics(model, data, q, v, v));
  q.segment<4>(3) = Eigen::Vector4d(0, 0, 0, 1.001);
  try {
    inverseDynamics(model, data, q, v, v);
    FAIL() << "a quaternion of norm 1.001 was accepted";
  } catch (const std::invalid_argument& e) {
    EXPECT_NE(std::string(e.what()).find("has norm 1.001, expected 1 within 1e-06"), std::string::npos)
        << e.what();
  }
  EXPECT_THROW(normalizeConfiguration(model, q), std::invalid_argument);
  EXPECT_THROW(inverseDynamics(model, data, Eigen::VectorXd::Zero(model.nv), v, v), std::invalid_argument);
}

TEST(TreeDynamics, IdentitiesOnRandomTrees) {
  std::mt19937_64 rng(5);
  for (const testing::TreeCase& c : testing::treeCases({1, 2, 5, 12, 30})) {
    const Model model = buildModel(randomTreeSpec(c.n, 100 + static_cast<std::uint32_t>(c.n), c.root));
    Data data(model);
    const int nv = model.nv;
    const std::string what =
        "n = " + std::to_string(c.n) + ", root " + std::to_string(static_cast<int>(c.root));
    for (int trial = 0; trial < 3; ++trial) {
      const Eigen::VectorXd q = randomConfiguration(model, rng);
      const Eigen::VectorXd v = testing::randomStateVector(nv, rng, 2.0);
      const Eigen::VectorXd a = testing::randomStateVector(nv, rng, 3.0);
      const Eigen::VectorXd tau = inverseDynamics(model, data, q, v, a);
      EXPECT_TRUE(near(forwardDynamics(model, data, q, v, tau), a, 1e-9, what + ": FD(ID(a)) (articulated)"));
      EXPECT_TRUE(near(forwardDynamicsCholesky(model, data, q, v, tau), a, 1e-9,
                       what + ": FD(ID(a)) (inertia matrix)"));
      // M's columns from ID: ID(q, 0, e_k) - ID(q, 0, 0), gravity cancelling
      const Eigen::VectorXd zero = Eigen::VectorXd::Zero(nv);
      const Eigen::VectorXd g = inverseDynamics(model, data, q, zero, zero);
      Eigen::MatrixXd M_id(nv, nv);
      for (int k = 0; k < nv; ++k)
        M_id.col(k) = inverseDynamics(model, data, q, zero, Eigen::VectorXd::Unit(nv, k)) - g;
      const Eigen::MatrixXd M = computeInertiaMatrix(model, data, q);
      EXPECT_TRUE(near(M, M_id, 1e-12, what + ": M vs ID columns"));
      EXPECT_TRUE(near(computeGravity(model, data, q), g, 1e-12, what + ": g"));
      EXPECT_TRUE(near(computeBias(model, data, q, v), inverseDynamics(model, data, q, v, zero), 1e-12,
                       what + ": bias"));
      computeFullFactor(model, data, q);
      const Eigen::MatrixXd U = data.U;
      EXPECT_TRUE(
          near(Eigen::MatrixXd(U * data.D.asDiagonal() * U.transpose()), M, 1e-12, what + ": U D U^T"));
      // U is zero off the ancestor pairs
      for (int k = 0; k < nv; ++k) {
        std::vector<bool> ancestor(static_cast<std::size_t>(nv), false);
        for (int j = model.dof_parent[static_cast<std::size_t>(k)]; j >= 0;
             j = model.dof_parent[static_cast<std::size_t>(j)])
          ancestor[static_cast<std::size_t>(j)] = true;
        for (int j = 0; j < k; ++j)
          if (!ancestor[static_cast<std::size_t>(j)]) {
            EXPECT_EQ(U(j, k), 0.0) << what << " U(" << j << ", " << k << ")";
          }
      }
      EXPECT_TRUE(near(Eigen::MatrixXd(computeInverseInertia(model, data, q) * M),
                       Eigen::MatrixXd::Identity(nv, nv), 1e-10, what + ": M^-1 M"));
      EXPECT_NEAR(data.log_det, std::log(M.determinant()), 1e-9 * std::max(1.0, std::abs(data.log_det)))
          << what;
    }
  }
}

TEST(TreeDynamics, ExternalWrenchesAreJacobianTransposes) {
  std::mt19937_64 rng(9);
  for (const testing::TreeCase& c : testing::treeCases({1, 2, 5, 12, 30})) {
    if (c.n == 0) continue;
    const Model model = buildModel(randomTreeSpec(c.n, 200 + static_cast<std::uint32_t>(c.n), c.root));
    Data data(model);
    const int nv = model.nv;
    const Eigen::VectorXd q = randomConfiguration(model, rng);
    const Eigen::VectorXd v = testing::randomStateVector(nv, rng), a = testing::randomStateVector(nv, rng);
    std::vector<ExternalWrench> wrenches;
    Eigen::VectorXd expected = inverseDynamics(model, data, q, v, a);
    for (int k = 0; k < 3; ++k) {
      ExternalWrench w;
      w.frame = static_cast<int>(rng() % static_cast<std::uint64_t>(model.n + 2));
      w.wrench = testing::randomStateVector(6, rng, 10.0);
      w.reference = k % 2 ? ReferenceFrame::Local : ReferenceFrame::Base;
      wrenches.push_back(w);
      // a wrench [moment about the frame origin; force] does the power J^T w on the frame origin's Jacobian
      const Eigen::MatrixXd J =
          computeFrameJacobian(model, data, q, w.frame, Eigen::Vector3d::Zero(), w.reference);
      expected -= J.transpose() * w.wrench;
    }
    const std::string what =
        "n = " + std::to_string(c.n) + ", root " + std::to_string(static_cast<int>(c.root));
    EXPECT_TRUE(
        near(inverseDynamics(model, data, q, v, a, wrenches), expected, 1e-12, what + ": ID with wrenches"));
    const Eigen::VectorXd tau = data.tau;
    EXPECT_TRUE(
        near(forwardDynamics(model, data, q, v, tau, wrenches), a, 1e-9, what + ": FD with wrenches"));
  }
}

// The local recursions (tree_local.hpp: the serial steps over the parent index, each body in its own frame)
// against the world-axes recursions of tree.hpp (a different formulation: every quantity about the world
// origin; M by composite bodies too), on random trees with prismatic joints, massless links and every root,
// with and without external wrenches; the further children's turns gamma are exercised (checked).
TEST(TreeDynamics, TheLocalRecursionsAgreeWithTheWorldAxesRecursions) {
  std::mt19937_64 rng(21);
  int turned = 0;
  for (const testing::TreeCase& c : testing::treeCases({1, 2, 5, 12, 30, 64})) {
    const Model model = buildModel(randomTreeSpec(c.n, 900 + static_cast<std::uint32_t>(c.n), c.root));
    Data local(model), world(model);
    const int nv = model.nv;
    for (const JointConstants<double>& jc : model.joint) turned += jc.turned ? 1 : 0;
    const std::string what =
        "n = " + std::to_string(c.n) + ", root " + std::to_string(static_cast<int>(c.root));
    for (int trial = 0; trial < 3; ++trial) {
      const Eigen::VectorXd q = randomConfiguration(model, rng);
      const Eigen::VectorXd v = testing::randomStateVector(nv, rng, 2.0);
      const Eigen::VectorXd a = testing::randomStateVector(nv, rng, 3.0);
      for (bool gravity : {true, false}) {
        Eigen::VectorXd tau_local(nv), tau_world(nv);
        detail::treeLocalRnea<double>(model, local, q, v, a.data(), gravity, tau_local);
        detail::treePlacements<double>(model, world, q);
        detail::treeForwardSweep<double>(model, world, v, a.data(), gravity, nullptr, 0);
        detail::treeBackwardSweep<double>(model, world, a.data(), tau_world);
        EXPECT_TRUE(near(tau_local, tau_world, 1e-12, what + ": tau"));
        detail::treeLocalRnea<double>(model, local, q, v, nullptr, gravity, tau_local);
        detail::treeForwardSweep<double>(model, world, v, nullptr, gravity, nullptr, 0);
        detail::treeBackwardSweep<double>(model, world, nullptr, tau_world);
        // a floor of 1 N m: a joint with no velocity-product torque is 0 in one and 1e-18 in the other
        EXPECT_TRUE(near(tau_local, tau_world, 1e-12, what + ": bias", 1.0));
      }
      detail::treeLocalCrba<double>(model, local, q);
      detail::treePlacements<double>(model, world, q);
      detail::treeCrba<double>(model, world);
      EXPECT_TRUE(near(local.M, world.M, 1e-12, what + ": M"));
      const Eigen::VectorXd tau = testing::randomStateVector(nv, rng, 5.0);
      ASSERT_EQ(detail::treeLocalForward<double>(model, local, q, v, tau), -1) << what;
      detail::treePlacements<double>(model, world, q);
      ASSERT_EQ(detail::treeAba<double>(model, world, v, tau, nullptr, 0), -1) << what;
      EXPECT_TRUE(near(local.qdd, world.qdd, 1e-10, what + ": qdd"));
      EXPECT_TRUE(near(local.D, world.D, 1e-10, what + ": pivots"));
      // external wrenches (TL.7) on every kind of frame (links, the tip, the root's), in either reference,
      // about a point off the frame's origin
      std::vector<ExternalWrench> wrenches;
      std::vector<int> frames{model.n, model.n + 1};  // the tip and the root's frame
      if (model.n > 0) {
        frames.insert(frames.end(),
                      {0, model.n - 1, static_cast<int>(rng() % static_cast<std::uint64_t>(model.n))});
      }
      for (int f : frames) {
        for (ReferenceFrame reference : {ReferenceFrame::Local, ReferenceFrame::Base}) {
          ExternalWrench w;
          w.frame = f;
          w.reference = reference;
          w.wrench = testing::randomStateVector(6, rng, 10.0);
          w.point = testing::randomStateVector(3, rng, 0.5);
          wrenches.push_back(w);
        }
      }
      const int count = static_cast<int>(wrenches.size());
      Eigen::VectorXd tau_local(nv), tau_world(nv);
      detail::treeLocalRnea<double>(model, local, q, v, a.data(), true, tau_local, wrenches.data(), count);
      detail::treePlacements<double>(model, world, q);
      detail::treeForwardSweep<double>(model, world, v, a.data(), true, wrenches.data(), count);
      detail::treeBackwardSweep<double>(model, world, a.data(), tau_world);
      EXPECT_TRUE(near(tau_local, tau_world, 1e-12, what + ": tau with external wrenches"));
      ASSERT_EQ(detail::treeLocalForward<double>(model, local, q, v, tau, wrenches.data(), count), -1)
          << what;
      detail::treePlacements<double>(model, world, q);
      ASSERT_EQ(detail::treeAba<double>(model, world, v, tau, wrenches.data(), count), -1) << what;
      EXPECT_TRUE(near(local.qdd, world.qdd, 1e-10, what + ": qdd with external wrenches"));
    }
  }
  EXPECT_GT(turned, 20) << "the random trees should have further children, whose frames need a turn";
}

TEST(TreeModel, BodyFramesHaveTheTreeParameters) {
  // E_i = Rz(gamma_i) Rx(alpha_i) Rz(theta0_i), with gamma_i = 0 for a body's first child (and under a fixed
  // root for the root's first child); the frames keep the placements: the URDF link frames' poses are the
  // KDL-checked ones (test_urdf_trees.cpp), here the constants' consistency
  for (const testing::TreeCase& c : testing::treeCases({5, 12, 30})) {
    const Model model = buildModel(randomTreeSpec(c.n, 950 + static_cast<std::uint32_t>(c.n), c.root));
    std::vector<int> first(static_cast<std::size_t>(model.n) + 1, -1);
    for (int i = model.n - 1; i >= 0; --i)
      first[static_cast<std::size_t>(model.parent[static_cast<std::size_t>(i)] + 1)] = i;
    for (int i = 0; i < model.n; ++i) {
      const auto ui = static_cast<std::size_t>(i);
      const JointConstants<double>& jc = model.joint[ui];
      const Eigen::Matrix3d G =
          Eigen::AngleAxisd(std::atan2(jc.sin_gamma, jc.cos_gamma), Eigen::Vector3d::UnitZ())
              .toRotationMatrix();
      const Eigen::Matrix3d A =
          Eigen::AngleAxisd(std::atan2(jc.sin_alpha, jc.cos_alpha), Eigen::Vector3d::UnitX())
              .toRotationMatrix();
      const Eigen::Matrix3d T = Eigen::AngleAxisd(jc.theta0, Eigen::Vector3d::UnitZ()).toRotationMatrix();
      EXPECT_TRUE(near(model.E[ui], Eigen::Matrix3d(G * A * T), 1e-12, "E of joint " + std::to_string(i)));
      const int p = model.parent[ui];
      const bool first_child = first[static_cast<std::size_t>(p + 1)] == i;
      if (first_child && (p >= 0 || model.root == RootJoint::Fixed)) {
        EXPECT_FALSE(jc.turned) << "joint " << i << " is its parent's first child";
      }
      // a body is a branch point when a child other than the next joint hangs from it
      bool later = false;
      for (int k = i + 2; k < model.n; ++k) later = later || model.parent[static_cast<std::size_t>(k)] == i;
      EXPECT_EQ(model.branch_point[ui] != 0, later) << "joint " << i;
    }
  }
}

TEST(TreeDynamics, ASerialChainOnTheTreeRecursionsGivesTheSerialNumbers) {
  std::mt19937_64 rng(3);
  for (int n : {1, 3, 7, 20}) {
    ModelSpec spec = testing::randomChainSpec(n, 40 + static_cast<std::uint32_t>(n));
    const auto [serial, tree] = testing::serialAndTree(spec);
    Data ds(serial), dt(tree);
    for (int trial = 0; trial < 3; ++trial) {
      const Eigen::VectorXd q = randomConfiguration(serial, rng), v = testing::randomStateVector(n, rng),
                            a = testing::randomStateVector(n, rng);
      const std::string what = "n = " + std::to_string(n);
      EXPECT_TRUE(near(inverseDynamics(tree, dt, q, v, a), inverseDynamics(serial, ds, q, v, a), 1e-13,
                       what + ": tau"));
      const Eigen::VectorXd tau = ds.tau;
      EXPECT_TRUE(near(forwardDynamics(tree, dt, q, v, tau), forwardDynamics(serial, ds, q, v, tau), 1e-12,
                       what + ": qdd"));
      EXPECT_TRUE(
          near(computeInertiaMatrix(tree, dt, q), computeInertiaMatrix(serial, ds, q), 1e-13, what + ": M"));
      computeFullFactor(tree, dt, q);
      computeFullFactor(serial, ds, q);
      EXPECT_TRUE(near(dt.D, ds.D, 1e-12, what + ": D"));
      EXPECT_TRUE(near(dt.U, ds.U, 1e-12, what + ": U"));
      EXPECT_NEAR(kineticEnergy(tree, dt, q, v), kineticEnergy(serial, ds, q, v), 1e-12);
      EXPECT_NEAR(potentialEnergy(tree, dt, q), potentialEnergy(serial, ds, q), 1e-11);
      for (int f = 0; f <= n; ++f) {
        for (ReferenceFrame ref : {ReferenceFrame::Base, ReferenceFrame::Local}) {
          const Eigen::Vector3d P(0.1, -0.2, 0.3);
          EXPECT_TRUE(near(computeFrameJacobian(tree, dt, q, f, P, ref),
                           computeFrameJacobian(serial, ds, q, f, P, ref), 1e-13,
                           what + ": J of frame " + std::to_string(f)));
          EXPECT_TRUE(near(computeFrameJdotQd(tree, dt, q, v, f, P, ref),
                           computeFrameJdotQd(serial, ds, q, v, f, P, ref), 1e-12,
                           what + ": Jdot qd of frame " + std::to_string(f)));
        }
      }
      forwardKinematics(tree, dt, q);
      forwardKinematics(serial, ds, q);
      for (int f = 0; f <= n; ++f) {
        EXPECT_TRUE(near(dt.kin_R[static_cast<std::size_t>(f)], ds.kin_R[static_cast<std::size_t>(f)], 1e-14,
                         what + ": R"));
        EXPECT_TRUE(near(dt.kin_p[static_cast<std::size_t>(f)], ds.kin_p[static_cast<std::size_t>(f)], 1e-14,
                         what + ": p", 1e-12));
      }
    }
  }
}

TEST(TreeKinematics, JacobiansAreVelocitiesAlongIntegrate) {
  std::mt19937_64 rng(12);
  for (const testing::TreeCase& c : testing::treeCases({1, 2, 5, 12, 30})) {
    const Model model = buildModel(randomTreeSpec(c.n, 300 + static_cast<std::uint32_t>(c.n), c.root));
    Data data(model);
    const Eigen::VectorXd q = randomConfiguration(model, rng), v = testing::randomStateVector(model.nv, rng);
    const double h = 1e-6;
    const Eigen::VectorXd qp = integrateConfiguration(model, q, v, h),
                          qm = integrateConfiguration(model, q, v, -h);
    for (int f = 0; f < model.n + 2; ++f) {
      const Eigen::Vector3d P(0.05, 0.1, -0.07);
      const Eigen::MatrixXd J = computeFrameJacobian(model, data, q, f, P, ReferenceFrame::Base);
      Eigen::Matrix3d Rp, Rm;
      Eigen::Vector3d op, om;
      framePlacement(model, data, qp, f, Rp, op);
      framePlacement(model, data, qm, f, Rm, om);
      Eigen::Matrix<double, 6, 1> fd;
      const Eigen::Matrix3d dR = (Rp - Rm) / (2 * h);
      Eigen::Matrix3d R;
      Eigen::Vector3d o;
      framePlacement(model, data, q, f, R, o);
      const Eigen::Matrix3d W = dR * R.transpose();  // skew(w)
      fd << W(2, 1), W(0, 2), W(1, 0), ((op + Rp * P) - (om + Rm * P)) / (2 * h);
      EXPECT_TRUE(near(Eigen::VectorXd(J * v), Eigen::VectorXd(fd), 1e-7,
                       "frame " + std::to_string(f) + " of n = " + std::to_string(c.n)));
    }
  }
}

TEST(TreeCentroidal, ComJacobianAndMomentumMatchTheirDefinitions) {
  std::mt19937_64 rng(21);
  for (const testing::TreeCase& c : testing::treeCases({1, 2, 5, 12, 30})) {
    const Model model = buildModel(randomTreeSpec(c.n, 400 + static_cast<std::uint32_t>(c.n), c.root));
    Data data(model);
    const int nv = model.nv;
    const Eigen::VectorXd q = randomConfiguration(model, rng), v = testing::randomStateVector(nv, rng);
    const std::string what = "n = " + std::to_string(c.n);
    // the definition: the mass-weighted mass centres of the links (placements of forwardKinematics' sweep)
    computeCenterOfMass(model, data, q);
    double m = model.root == RootJoint::Fixed ? 0.0 : model.root_mass;
    Eigen::Vector3d mc =
        model.root == RootJoint::Fixed
            ? Eigen::Vector3d::Zero()
            : Eigen::Vector3d(model.root_mass * (data.root_p + data.root_R * model.root_com));
    for (int i = 0; i < model.n; ++i) {
      m += model.mass[static_cast<std::size_t>(i)];
      mc += model.mass[static_cast<std::size_t>(i)] * data.C0[static_cast<std::size_t>(i)];
    }
    EXPECT_NEAR(data.mass, m, 1e-12 * m);
    EXPECT_TRUE(near(data.com, Eigen::Vector3d(mc / m), 1e-13, what + ": com"));
    // Jcom v = d com / dt along integrate
    const double h = 1e-6;
    const Eigen::Vector3d cp = computeCenterOfMass(model, data, integrateConfiguration(model, q, v, h));
    const Eigen::Vector3d cm = computeCenterOfMass(model, data, integrateConfiguration(model, q, v, -h));
    const Eigen::MatrixXd Jcom = computeCenterOfMassJacobian(model, data, q);
    EXPECT_TRUE(
        near(Eigen::Vector3d(Jcom * v), Eigen::Vector3d((cp - cm) / (2 * h)), 1e-7, what + ": Jcom v"));
    // A_G v = the momentum of the links about the com: sum of M_i t_i moved to the com
    const Eigen::MatrixXd Ag = computeCentroidalMap(model, data, q);
    const Eigen::Vector3d com = data.com;
    // each link's momentum [I_i w_i; m_i v_ci] from the Jacobian at its mass centre, moved to the com
    Eigen::Matrix<double, 6, 1> h_g = Eigen::Matrix<double, 6, 1>::Zero();
    const auto addLink = [&](int frame, double mass, const Eigen::Vector3d& c, const Eigen::Matrix3d& I) {
      const Eigen::VectorXd t = computeFrameJacobian(model, data, q, frame, c, ReferenceFrame::Base) * v;
      const Eigen::Matrix3d R = data.kin_R[static_cast<std::size_t>(frame)];
      const Eigen::Vector3d ci = data.kin_p[static_cast<std::size_t>(frame)] + R * c;
      const Eigen::Vector3d l = mass * t.tail<3>();
      h_g.head<3>() += R * I * R.transpose() * t.head<3>() + (ci - com).cross(l);
      h_g.tail<3>() += l;
    };
    for (int i = 0; i < model.n; ++i) {
      const JointSpec& j = model.spec.joints[static_cast<std::size_t>(i)];
      addLink(i, j.mass, j.com, j.inertia);
    }
    if (model.root != RootJoint::Fixed)
      addLink(model.n + 1, model.root_mass, model.root_com, model.root_inertia);
    EXPECT_TRUE(near(Eigen::VectorXd(Ag * v), Eigen::VectorXd(h_g), 1e-12, what + ": A_G v"));
    // (dA_G/dt) v: the rate of h_G along the motion with zero acceleration, by central differences: the
    // motion q(t) = integrate(q, v, t) has body velocity v(t) = [w; R(t)^T R(0) v_lin] for a floating root
    const auto momentum = [&](double t) {
      const Eigen::VectorXd qt = integrateConfiguration(model, q, v, t);
      Eigen::VectorXd vt = v;
      if (model.root == RootJoint::Floating) {
        Data d2(model);
        Eigen::Matrix3d R0, Rt;
        Eigen::Vector3d origin;
        framePlacement(model, d2, qt, model.n + 1, Rt, origin);
        framePlacement(model, d2, q, model.n + 1, R0, origin);
        vt.segment<3>(3) = Rt.transpose() * R0 * v.segment<3>(3);
      }
      return Eigen::VectorXd(computeCentroidalMap(model, data, qt) * vt);
    };
    const Eigen::VectorXd dh = (momentum(h) - momentum(-h)) / (2 * h);
    const Eigen::VectorXd dAg_v = computeCentroidalMapTimeVariation(model, data, q, v);
    // along that motion the body acceleration is [0; -w x v_lin] (floating) or 0: dh = dAg v + A_G vdot
    Eigen::VectorXd vdot = Eigen::VectorXd::Zero(nv);
    if (model.root == RootJoint::Floating) vdot.segment<3>(3) = -v.head<3>().cross(v.segment<3>(3));
    EXPECT_TRUE(near(Eigen::VectorXd(dAg_v + data.Ag * vdot), dh, 1e-6, what + ": dA_G/dt v"));
  }
}

// y' = f(y) for y = [p, quaternion (x y z w, not renormalised), joints | v]: dp = R v_lin, dquat = quat (x)
// [w; 0] / 2
Eigen::VectorXd floatingRate(const Model& model, Data& data, const Eigen::VectorXd& y) {
  const int nq = model.nq, nv = model.nv;
  Eigen::VectorXd q = y.head(nq);
  q.segment<4>(3).normalize();
  const Eigen::VectorXd v = y.tail(nv);
  const Eigen::Quaterniond Q(q[6], q[3], q[4], q[5]);
  Eigen::VectorXd dy(nq + nv);
  dy.head<3>() = Q.toRotationMatrix() * v.segment<3>(3);
  const Eigen::Quaterniond w(0.0, v[0], v[1], v[2]);
  const Eigen::Quaterniond dQ = Q * w;
  dy.segment<4>(3) << 0.5 * dQ.x(), 0.5 * dQ.y(), 0.5 * dQ.z(), 0.5 * dQ.w();
  dy.segment(7, model.n) = v.tail(model.n);
  dy.tail(nv) = forwardDynamics(model, data, q, v, Eigen::VectorXd::Zero(nv));
  return dy;
}

TEST(TreePhysics, AFloatingRobotConservesMomentumAndEnergyWithoutGravity) {
  for (int n : {4, 12}) {
    ModelSpec spec = randomTreeSpec(n, 500 + static_cast<std::uint32_t>(n), RootJoint::Floating);
    spec.gravity.setZero();
    for (JointSpec& j : spec.joints)
      j.armature = 0.0;  // a rotor's inertia is not part of the links' momentum
    const Model model = buildModel(spec);
    Data data(model);
    std::mt19937_64 rng(8);
    Eigen::VectorXd y(model.nq + model.nv);
    y << randomConfiguration(model, rng), testing::randomStateVector(model.nv, rng, 1.0);
    const auto momentumAndEnergy = [&](const Eigen::VectorXd& state, Eigen::Matrix<double, 6, 1>& h) {
      Eigen::VectorXd q = state.head(model.nq);
      q.segment<4>(3).normalize();
      const double e = kineticEnergy(model, data, q, state.tail(model.nv));
      h.setZero();
      for (std::size_t i = 0; i < data.tr_M.size(); ++i) h += data.tr_M[i] * data.tr_t[i];
      return e;
    };
    Eigen::Matrix<double, 6, 1> h0, h1;
    const double e0 = momentumAndEnergy(y, h0);
    const double dt = 1e-3;
    for (int step = 0; step < 500; ++step) {  // classic RK4 on the embedded coordinates
      const Eigen::VectorXd k1 = floatingRate(model, data, y);
      const Eigen::VectorXd k2 = floatingRate(model, data, y + 0.5 * dt * k1);
      const Eigen::VectorXd k3 = floatingRate(model, data, y + 0.5 * dt * k2);
      const Eigen::VectorXd k4 = floatingRate(model, data, y + dt * k3);
      y += dt / 6.0 * (k1 + 2.0 * k2 + 2.0 * k3 + k4);
    }
    const double e1 = momentumAndEnergy(y, h1);
    EXPECT_NEAR(e1, e0, 1e-9 * e0) << "n = " << n;
    EXPECT_TRUE(near(h1, h0, 1e-9, "momentum about the world origin, n = " + std::to_string(n)));
    EXPECT_GT(h0.norm(), 0.1);  // the motion is not trivial
  }
}

TEST(TreeModel, MasslessLinksAreAcceptedWhileTheInertiaMatrixStaysDefinite) {
  ModelSpec spec = randomTreeSpec(4, 77, RootJoint::Floating);
  // a massless intermediate link carrying a massive one, and a point mass on a prismatic joint
  spec.joints[1].parent = 0;
  spec.joints[1].mass = 0.0;
  spec.joints[1].inertia.setZero();
  spec.joints[2].parent = 1;
  spec.joints[3].parent = -1;
  spec.joints[3].type = JointType::Prismatic;
  spec.joints[3].inertia.setZero();
  const Model model = buildModel(spec);
  EXPECT_FALSE(model.serial);
  // a massless leaf moves nothing: refused at build, naming the joint
  ModelSpec leaf = spec;
  leaf.joints[2].mass = 0.0;
  leaf.joints[2].inertia.setZero();
  try {
    buildModel(leaf);
    FAIL() << "a massless leaf was accepted";
  } catch (const ModelError& e) {
    EXPECT_NE(std::string(e.what()).find("joint 'joint3' (link 'link3') moves no mass"), std::string::npos)
        << e.what();
    EXPECT_NE(std::string(e.what()).find("singular at the neutral configuration"), std::string::npos)
        << e.what();
  }
  // a revolute joint whose point mass sits on its axis moves nothing either
  ModelSpec point = spec;
  point.joints[0].type = JointType::Revolute;
  point.joints[0].inertia.setZero();
  point.joints[0].com = point.joints[0].axis * 0.3;
  point.joints[1].mass = 0.0;
  point.joints[1].inertia.setZero();
  point.joints[2].parent = -1;
  EXPECT_THROW(buildModel(point), ModelError);
}

TEST(TreeModel, AFreeBodyWithoutJointsIsASixDofModel) {
  ModelSpec spec;
  spec.name = "drone";
  spec.root = RootJoint::Floating;
  spec.root_mass = 1.5;
  spec.root_inertia = Eigen::Vector3d(0.02, 0.03, 0.04).asDiagonal();
  const Model model = buildModel(spec);
  EXPECT_EQ(model.nv, 6);
  EXPECT_EQ(model.nq, 7);
  Data data(model);
  const Eigen::VectorXd q = neutralConfiguration(model);
  const Eigen::VectorXd tau =
      inverseDynamics(model, data, q, Eigen::VectorXd::Zero(6), Eigen::VectorXd::Zero(6));
  // hovering: the thrust that holds it is m g up, no moment
  Eigen::Matrix<double, 6, 1> expected;
  expected << 0, 0, 0, 0, 0, 1.5 * 9.81;
  EXPECT_TRUE(near(tau, expected, 1e-15, "hover"));
  spec.root = RootJoint::Fixed;
  EXPECT_THROW(buildModel(spec), ModelError);
}

TEST(TreeModel, ParentsMustComeFirst) {
  ModelSpec spec = randomTreeSpec(3, 5, RootJoint::Fixed);
  spec.joints[1].parent = 2;
  try {
    buildModel(spec);
    FAIL();
  } catch (const ModelError& e) {
    EXPECT_NE(std::string(e.what()).find("parent 2 is not an earlier joint"), std::string::npos) << e.what();
  }
  spec.joints[1].parent = -3;
  EXPECT_THROW(buildModel(spec), ModelError);
}

TEST(TreeModel, SerialOnlyRoutesRefuseATreeByName) {
  const Model model = buildModel(randomTreeSpec(4, 5, RootJoint::Floating));
  Data data(model);
  const Eigen::VectorXd q = neutralConfiguration(model), v = Eigen::VectorXd::Zero(model.nv);
  try {
    forwardDynamicsFixman(model, data, q, v, v);
    FAIL();
  } catch (const std::invalid_argument& e) {
    EXPECT_NE(std::string(e.what()).find("forwardDynamicsFixman: not available for a tree model"),
              std::string::npos)
        << e.what();
  }
}

TEST(TreeConvective, CTimesVIsTheVelocityBiasAndIdotMinusTwoCIsSkew) {
  std::mt19937_64 rng(17);
  for (const testing::TreeCase& c : testing::treeCases({1, 3, 8, 20})) {
    const Model model = buildModel(randomTreeSpec(c.n, 800 + static_cast<std::uint32_t>(c.n), c.root));
    Data data(model);
    const Eigen::VectorXd q = randomConfiguration(model, rng), v = testing::randomStateVector(model.nv, rng);
    const std::string what = "n = " + std::to_string(c.n) + ", " + testing::rootName(c.root);
    const Eigen::MatrixXd C = computeConvectiveMatrix(model, data, q, v);
    EXPECT_TRUE(
        near(Eigen::VectorXd(C * v), computeVelocityBias(model, data, q, v), 1e-12, what + ": C v", 1.0));
    // dI/dt along the motion by central differences
    const double h = 1e-6;
    const Eigen::MatrixXd Mp = computeInertiaMatrix(model, data, integrateConfiguration(model, q, v, h));
    const Eigen::MatrixXd Mm = computeInertiaMatrix(model, data, integrateConfiguration(model, q, v, -h));
    const Eigen::MatrixXd N = (Mp - Mm) / (2 * h) - 2 * C;
    EXPECT_TRUE(near(Eigen::MatrixXd(N + N.transpose()), Eigen::MatrixXd::Zero(model.nv, model.nv), 1e-6,
                     what + ": Idot - 2C skew", std::max(1.0, C.norm())));
  }
}

TEST(TreeModel, TheCanonicalFormHoldsTheTreeAndLeavesAChainsFormAsItWas) {
  const ModelSpec chain = testing::randomChainSpec(4, 9);
  const std::string before = canonicalForm(buildModel(chain).spec);
  EXPECT_EQ(before.find("tree"), std::string::npos);
  ModelSpec a = chain, b = chain;
  a.joints[2].parent = 0;
  b.joints[2].parent = -1;
  const std::string fa = canonicalForm(buildModel(a).spec), fb = canonicalForm(buildModel(b).spec);
  EXPECT_NE(fa, fb);
  EXPECT_NE(fa.find("parent 0"), std::string::npos);
  ModelSpec c = chain;
  c.root = RootJoint::Floating;
  c.root_mass = 1.0;
  c.root_inertia = Eigen::Matrix3d::Identity() * 0.1;
  EXPECT_NE(canonicalForm(buildModel(c).spec).find("root floating"), std::string::npos);
}

TEST(TreeOperationalSpace, LambdaIsTheInverseOfJMinvJt) {
  std::mt19937_64 rng(41);
  for (const testing::TreeCase& c : testing::treeCases({3, 8, 20})) {
    const Model model = buildModel(randomTreeSpec(c.n, 600 + static_cast<std::uint32_t>(c.n), c.root));
    Data data(model);
    const Eigen::VectorXd q = randomConfiguration(model, rng);
    const Eigen::MatrixXd Minv = computeInertiaMatrix(model, data, q).inverse();
    for (int f = 0; f < model.n + 2; ++f) {
      if (f == model.n + 1 && model.root == RootJoint::Fixed) continue;  // the world does not move
      for (ReferenceFrame ref : {ReferenceFrame::Base, ReferenceFrame::Local}) {
        const Eigen::Vector3d P(0.02, -0.05, 0.1);
        const Eigen::MatrixXd J = computeFrameJacobian(model, data, q, f, P, ref);
        const std::string what =
            "n = " + std::to_string(c.n) + ", " + testing::rootName(c.root) + ", frame " + std::to_string(f);
        struct Rows {
          TaskRows rows;
          int first, count;
        };
        for (const Rows r :
             {Rows{TaskRows::Full, 0, 6}, Rows{TaskRows::Linear, 3, 3}, Rows{TaskRows::Angular, 0, 3}}) {
          const Eigen::MatrixXd Jr = J.middleRows(r.first, r.count);
          const Eigen::MatrixXd G = Jr * Minv * Jr.transpose();
          const Eigen::VectorXd sv = Eigen::JacobiSVD<Eigen::MatrixXd>(G).singularValues();
          const double ratio = sv[0] > 0.0 ? sv[sv.size() - 1] / sv[0] : 0.0;  // 0: a zero G
          if (ratio < 1e-13) {  // rank-deficient for the task (fewer coordinates than rows on the path)
            EXPECT_THROW(computeOperationalSpaceInertia(model, data, q, f, P, ref, r.rows), NumericalError)
                << what;
            continue;
          }
          if (ratio < 1e-6) continue;  // ill-conditioned: no comparison at 1e-8
          const Eigen::MatrixXd L = computeOperationalSpaceInertia(model, data, q, f, P, ref, r.rows);
          EXPECT_TRUE(near(Eigen::MatrixXd(L.topLeftCorner(r.count, r.count)), Eigen::MatrixXd(G.inverse()),
                           1e-8, what + ": Lambda"));
        }
      }
    }
  }
}

}  // namespace
}  // namespace denoc
