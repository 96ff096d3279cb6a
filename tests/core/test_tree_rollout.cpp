// Rollouts and the Simulator (RK4 and Dormand-Prince 5(4)) on tree models (fixed, floating and planar
// roots), integrating on the configuration manifold (core/src/manifold_step.hpp):
//  - every step's A, B (tangent space) against central finite differences of the step map on the manifold
//    (perturbed by integrateConfiguration, measured by differenceConfiguration), both schemes;
//  - a serial chain built on the tree recursions gives the serial rollout's states, A and B;
//  - a free body's rotation and position, and a floating robot's whole state, converge at 4th order (RK4);
//    the free body's at 5th order with Dormand-Prince at a fixed step;
//  - zero gravity: a floating robot's momentum and energy are conserved (rollout and Simulator, both
//    integrators); a branched tree under gravity conserves energy under every root; the quaternion stays
//    unit;
//  - Dormand-Prince agrees with RK4 at a small step under every root, and on a serial chain built on the tree
//    recursions with the serial run; it allocates nothing while it runs;
//  - the zero-torque RK4 rollout is the Simulator's RK4 run bit for bit; Fixman's route refuses a tree;
//  - external wrenches held over a rollout (a serial chain and trees under each root): the states against
//    the wrench-aware forward dynamics stepped by hand, A and B against central differences of the step,
//    batches (a wrench shared by all rollouts and one per rollout) against single rollouts bit for bit.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdio>
#include <limits>
#include <memory>
#include <random>
#include <string>
#include <vector>

#include "denoc/denoc.hpp"
#include "support/compare.hpp"
#include "support/count_allocations.hpp"  // first: replaces malloc in this binary
#include "support/random_chain.hpp"
#include "support/random_tree.hpp"

namespace denoc {
namespace {

using testing::near;
using testing::randomTreeSpec;
using RowMajor = Eigen::Matrix<double, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor>;

/// x+ of one step (a rollout of T = 1).
Eigen::VectorXd stepOnce(const Model& model, RolloutWorkspace& ws, const RolloutOptions& o1,
                         const Eigen::VectorXd& x, const Eigen::VectorXd& u) {
  const int N = model.nq + model.nv;
  Eigen::VectorXd states(2 * N);
  const double none = 0.0;  // no joint: u has no entry, but must not be null
  rollout(model, ws, o1, x.data(), u.size() > 0 ? u.data() : &none, states.data());
  return states.tail(N);
}

/// The tangent difference [difference(q0, q1); v1 - v0] of two states.
Eigen::VectorXd stateDifference(const Model& model, const Eigen::VectorXd& x0, const Eigen::VectorXd& x1) {
  Eigen::VectorXd d(2 * model.nv);
  d << differenceConfiguration(model, x0.head(model.nq), x1.head(model.nq)),
      x1.tail(model.nv) - x0.tail(model.nv);
  return d;
}

/// x (+) dx on the manifold.
Eigen::VectorXd stateIntegrate(const Model& model, const Eigen::VectorXd& x, const Eigen::VectorXd& dx) {
  Eigen::VectorXd y(model.nq + model.nv);
  y << integrateConfiguration(model, x.head(model.nq), dx.head(model.nv)),
      x.tail(model.nv) + dx.tail(model.nv);
  return y;
}

TEST(TreeRollout, LinearizationMatchesFiniteDifferencesOnTheManifold) {
  std::mt19937_64 rng(11);
  double worstA = 0.0, worstB = 0.0;
  for (const testing::TreeCase& c : testing::treeCases({1, 3, 7})) {
    ModelSpec spec = randomTreeSpec(c.n, 300 + static_cast<std::uint32_t>(c.n), c.root);
    spec.force_tree = true;  // a fixed-root tree that came out a chain still takes the tree route
    const Model model = buildModel(spec);
    ASSERT_FALSE(model.serial);
    RolloutWorkspace ws(model);
    const int nv = model.nv, nu = model.nu, N = model.nq + nv;
    for (StepScheme scheme : {StepScheme::SemiImplicitEuler, StepScheme::RK4}) {
      const RolloutOptions o{scheme, 0.02, 1};
      Eigen::VectorXd x(N);
      x << randomConfiguration(model, rng), testing::randomStateVector(nv, rng, 1.5);
      const Eigen::VectorXd u = testing::randomStateVector(std::max(nu, 1), rng, 2.0).head(nu);
      Eigen::VectorXd states(2 * N);
      RowMajor A(2 * nv, 2 * nv), B(2 * nv, nu);
      const double none = 0.0;
      rollout(model, ws, o, x.data(), nu > 0 ? u.data() : &none, states.data(), A.data(),
              nu > 0 ? B.data() : nullptr);
      const Eigen::VectorXd xn = states.tail(N);
      Eigen::MatrixXd Afd(2 * nv, 2 * nv), Bfd(2 * nv, nu);
      const double eps = 1e-6;
      for (int j = 0; j < 2 * nv; ++j) {
        Eigen::VectorXd dx = Eigen::VectorXd::Zero(2 * nv);
        dx[j] = eps;
        const Eigen::VectorXd fp = stepOnce(model, ws, o, stateIntegrate(model, x, dx), u);
        const Eigen::VectorXd fm = stepOnce(model, ws, o, stateIntegrate(model, x, -dx), u);
        Afd.col(j) = (stateDifference(model, xn, fp) - stateDifference(model, xn, fm)) / (2.0 * eps);
      }
      for (int j = 0; j < nu; ++j) {
        Eigen::VectorXd up = u, um = u;
        up[j] += eps;
        um[j] -= eps;
        const Eigen::VectorXd fp = stepOnce(model, ws, o, x, up), fm = stepOnce(model, ws, o, x, um);
        Bfd.col(j) = (stateDifference(model, xn, fp) - stateDifference(model, xn, fm)) / (2.0 * eps);
      }
      const std::string what = std::string(testing::rootName(c.root)) + " n = " + std::to_string(c.n) +
                               (scheme == StepScheme::RK4 ? " RK4" : " Euler");
      worstA = std::max(worstA, testing::relativeError(Eigen::MatrixXd(A), Afd));
      EXPECT_TRUE(near(Eigen::MatrixXd(A), Afd, 1e-6, what + ": A"));
      if (nu > 0) {
        worstB = std::max(worstB, testing::relativeError(Eigen::MatrixXd(B), Bfd));
        EXPECT_TRUE(near(Eigen::MatrixXd(B), Bfd, 1e-6, what + ": B"));
      }
    }
  }
  std::printf("worst relative error against central differences: A %.3g, B %.3g\n", worstA, worstB);
}

TEST(TreeRollout, ASerialChainOnTheTreeRecursionsGivesTheSerialRollout) {
  std::mt19937_64 rng(5);
  for (int n : {1, 4, 9}) {
    ModelSpec spec = testing::randomChainSpec(n, 70 + static_cast<std::uint32_t>(n));
    const auto [serial, tree] = testing::serialAndTree(spec);
    RolloutWorkspace wss(serial), wst(tree);
    for (StepScheme scheme : {StepScheme::SemiImplicitEuler, StepScheme::RK4}) {
      const std::size_t T = 20;
      const RolloutOptions o{scheme, 1e-3, T};
      Eigen::VectorXd x0(2 * n);
      x0 << randomConfiguration(serial, rng), testing::randomStateVector(n, rng);
      const Eigen::VectorXd u = testing::randomStateVector(static_cast<int>(T) * n, rng, 3.0);
      Eigen::VectorXd ss((T + 1) * 2 * n), st((T + 1) * 2 * n), As(T * 4 * n * n), At(T * 4 * n * n),
          Bs(T * 2 * n * n), Bt(T * 2 * n * n);
      rollout(serial, wss, o, x0.data(), u.data(), ss.data(), As.data(), Bs.data());
      rollout(tree, wst, o, x0.data(), u.data(), st.data(), At.data(), Bt.data());
      const std::string what = "n = " + std::to_string(n) + (scheme == StepScheme::RK4 ? " RK4" : " Euler");
      EXPECT_TRUE(near(st, ss, 1e-10, what + ": states"));
      EXPECT_TRUE(near(At, As, 1e-10, what + ": A"));
      EXPECT_TRUE(near(Bt, Bs, 1e-10, what + ": B"));
    }
  }
}

/// A free body (no joints) under a floating root without gravity, turning about all three axes and moving.
Model freeBody() {
  ModelSpec spec;
  spec.name = "free_body";
  spec.root = RootJoint::Floating;
  spec.root_link = "body";
  spec.root_mass = 2.0;
  spec.root_com = Eigen::Vector3d(0.1, -0.05, 0.02);
  spec.root_inertia = Eigen::Vector3d(0.03, 0.05, 0.07).asDiagonal();
  spec.gravity.setZero();
  return buildModel(spec);
}

/// The state after t_end from x0 with zero torque, RK4 of step h.
Eigen::VectorXd finalState(const Model& model, const Eigen::VectorXd& x0, double h, double t_end) {
  RolloutWorkspace ws(model);
  const auto T = static_cast<std::size_t>(std::llround(t_end / h));
  const int N = model.nq + model.nv;
  const Eigen::VectorXd u = Eigen::VectorXd::Zero(static_cast<Eigen::Index>(T) * model.nu + 1);
  Eigen::VectorXd states((T + 1) * static_cast<std::size_t>(N));
  rollout(model, ws, RolloutOptions{StepScheme::RK4, h, T}, x0.data(), u.data(), states.data());
  return states.tail(N);
}

/// log2 of the error ratios of successive halvings of h against a reference of h_min / 8, for the rotation
/// (tangent rows 0..3), the position (3..6) and the whole state.
void convergence(const Model& model, const Eigen::VectorXd& x0, double h0, int halvings, double t_end,
                 std::vector<double>& rot, std::vector<double>& pos, std::vector<double>& all) {
  const Eigen::VectorXd ref = finalState(model, x0, h0 / std::pow(2.0, halvings + 3), t_end);
  std::vector<Eigen::VectorXd> err;
  for (int k = 0; k <= halvings; ++k) {
    err.push_back(stateDifference(model, ref, finalState(model, x0, h0 / std::pow(2.0, k), t_end)));
  }
  for (int k = 0; k < halvings; ++k) {
    rot.push_back(std::log2(err[k].head<3>().norm() / err[k + 1].head<3>().norm()));
    pos.push_back(std::log2(err[k].segment<3>(3).norm() / err[k + 1].segment<3>(3).norm()));
    all.push_back(std::log2(err[k].norm() / err[k + 1].norm()));
    std::printf("  h = %.4g: |rotation error| %.3g, |position error| %.3g, |state error| %.3g\n",
                h0 / std::pow(2.0, k), err[k].head<3>().norm(), err[k].segment<3>(3).norm(), err[k].norm());
  }
}

TEST(TreeRollout, RK4IsFourthOrderOnTheManifold) {
  {
    // a free body's rotation (Euler's equations with an asymmetric inertia: w turns) and its position (v in
    // the turning body's axes)
    const Model model = freeBody();
    Eigen::VectorXd x0(13);
    x0 << 0.1, 0.2, 0.3, 0.0, 0.0, 0.0, 1.0, 1.0, -2.0, 3.0, 0.5, 0.2, -0.4;
    x0.segment<4>(3) = Eigen::Vector4d(0.2, -0.3, 0.1, 0.9).normalized();
    std::vector<double> rot, pos, all;
    convergence(model, x0, 0.1, 3, 1.0, rot, pos, all);
    for (std::size_t k = 0; k < rot.size(); ++k) {
      std::printf("free body: slopes rotation %.3f, position %.3f\n", rot[k], pos[k]);
      EXPECT_GT(rot[k], 3.7);
      EXPECT_GT(pos[k], 3.7);
    }
  }
  {
    // a floating robot with joints, gravity and no torque
    const Model model = buildModel(randomTreeSpec(5, 41, RootJoint::Floating));
    std::mt19937_64 rng(2);
    Eigen::VectorXd x0(model.nq + model.nv);
    x0 << randomConfiguration(model, rng), testing::randomStateVector(model.nv, rng, 1.0);
    std::vector<double> rot, pos, all;
    convergence(model, x0, 0.02, 3, 0.5, rot, pos, all);
    for (std::size_t k = 0; k < all.size(); ++k) {
      std::printf("floating robot: slopes rotation %.3f, position %.3f, state %.3f\n", rot[k], pos[k],
                  all[k]);
      EXPECT_GT(all[k], 3.6);
    }
  }
}

/// Kinetic energy and the momentum about the world origin (sum of tr_M[i] tr_t[i], kineticEnergy fills them).
double momentumAndEnergy(const Model& model, Data& data, const Eigen::VectorXd& x,
                         Eigen::Matrix<double, 6, 1>& h) {
  const double e = kineticEnergy(model, data, x.head(model.nq), x.tail(model.nv));
  h.setZero();
  for (std::size_t i = 0; i < data.tr_M.size(); ++i) h += data.tr_M[i] * data.tr_t[i];
  return e;
}

ModelSpec weightlessFloatingSpec(int n, std::uint32_t seed) {
  ModelSpec spec = randomTreeSpec(n, seed, RootJoint::Floating);
  spec.gravity.setZero();
  for (JointSpec& j : spec.joints) j.armature = 0.0;  // a rotor's inertia is not part of the links' momentum
  return spec;
}

TEST(TreeRollout, AWeightlessFloatingRobotConservesMomentumAndKeepsAUnitQuaternion) {
  for (int n : {3, 10}) {
    const Model model = buildModel(weightlessFloatingSpec(n, 600 + static_cast<std::uint32_t>(n)));
    Data data(model);
    std::mt19937_64 rng(4);
    const int N = model.nq + model.nv;
    Eigen::VectorXd x0(N);
    x0 << randomConfiguration(model, rng), testing::randomStateVector(model.nv, rng, 1.0);
    const std::size_t T = 500;
    RolloutWorkspace ws(model);
    const Eigen::VectorXd u = Eigen::VectorXd::Zero(static_cast<Eigen::Index>(T) * n);
    Eigen::VectorXd states((T + 1) * static_cast<std::size_t>(N));
    rollout(model, ws, RolloutOptions{StepScheme::RK4, 1e-3, T}, x0.data(), u.data(), states.data());
    Eigen::Matrix<double, 6, 1> h0, h1;
    const double e0 = momentumAndEnergy(model, data, x0, h0);
    double worst_norm = 0.0;
    for (std::size_t t = 0; t <= T; ++t) {
      worst_norm = std::max(worst_norm, std::abs(states.segment(t * N + 3, 4).norm() - 1.0));
    }
    const double e1 = momentumAndEnergy(model, data, states.tail(N), h1);
    EXPECT_LT(worst_norm, 1e-14);
    EXPECT_NEAR(e1, e0, 1e-9 * e0) << "n = " << n;
    EXPECT_TRUE(near(h1, h0, 1e-9, "momentum, n = " + std::to_string(n)));
    EXPECT_GT(h0.norm(), 0.1);
    // semi-implicit Euler: first order, the momentum drifts with h but stays near
    rollout(model, ws, RolloutOptions{StepScheme::SemiImplicitEuler, 1e-4, T}, x0.data(), u.data(),
            states.data());
    momentumAndEnergy(model, data, states.tail(N), h1);
    EXPECT_TRUE(near(h1, h0, 1e-3, "Euler momentum, n = " + std::to_string(n)));
  }
}

/// A random start on a model's manifold: q0 by randomConfiguration, v0 uniform in [-1, 1].
struct Start {
  Eigen::VectorXd q0, v0;
};

Start randomStart(const Model& model, std::mt19937_64& rng) {
  Start s;
  s.q0 = randomConfiguration(model, rng);
  s.v0 = testing::randomStateVector(model.nv, rng, 1.0);
  return s;
}

/// RK4 at the step h, or Dormand-Prince at rtol = atol = tol.
SimulationOptions integratorOptions(Integrator integrator, double h, double tol) {
  SimulationOptions o;
  o.integrator = integrator;
  o.step = h;
  o.rtol = o.atol = tol;
  return o;
}

const char* integratorName(Integrator integrator) {
  return integrator == Integrator::RK4 ? "RK4" : "Dormand-Prince";
}

/// The integrators of the conservation tests and the relative error each must keep: RK4 at the step h
/// to 1e-8, Dormand-Prince at rtol = atol = 1e-12 to 1e-9.
struct Scheme {
  SimulationOptions options;
  double bound;
};

std::vector<Scheme> conservationSchemes(double h) {
  return {{integratorOptions(Integrator::RK4, h, 0.0), 1e-8},
          {integratorOptions(Integrator::DormandPrince45, 0.0, 1e-12), 1e-9}};
}

/// A run of 1 s from a random start (drawn with `seed`, kept in `start`), sampled every dt_out.
SimulationResult runFromRandomStart(const Model& model, std::uint64_t seed, SimulationOptions o,
                                    double dt_out, Start& start) {
  std::mt19937_64 rng(seed);
  start = randomStart(model, rng);
  o.t_end = 1.0;
  o.dt_out = dt_out;
  return simulate(model, start.q0, start.v0, o);
}

/// The largest distance of a sampled floating root's quaternion from unit norm.
double worstQuaternionNorm(const SimulationResult& r) {
  double worst = 0.0;
  for (Eigen::Index k = 0; k < r.t.size(); ++k)
    worst = std::max(worst, std::abs(r.q.row(k).segment<4>(3).norm() - 1.0));
  return worst;
}

TEST(TreeSimulator, AWeightlessFloatingRobotConservesEnergyAndMomentum) {
  // RK4 at 0.5 ms, and Dormand-Prince at tight tolerances: the energy, the angular momentum about the world
  // origin and the linear momentum, each relative to its own size
  for (const Scheme& scheme : conservationSchemes(5e-4)) {
    const Integrator integrator = scheme.options.integrator;
    for (int n : {4, 12}) {
      const Model model = buildModel(weightlessFloatingSpec(n, 700 + static_cast<std::uint32_t>(n)));
      Data data(model);
      Start start;
      const SimulationResult r = runFromRandomStart(model, 6, scheme.options, 0.1, start);
      ASSERT_EQ(r.q.cols(), model.nq);
      ASSERT_EQ(r.qd.cols(), model.nv);
      Eigen::VectorXd x0(model.nq + model.nv);
      x0 << start.q0, start.v0;
      Eigen::Matrix<double, 6, 1> h0, h;
      const double e0 = momentumAndEnergy(model, data, x0, h0);
      ASSERT_GT(h0.head<3>().norm(), 0.1);
      ASSERT_GT(h0.tail<3>().norm(), 0.1);
      double worst_e = 0.0, worst_angular = 0.0, worst_linear = 0.0;
      for (Eigen::Index k = 0; k < r.t.size(); ++k) {
        Eigen::VectorXd x(model.nq + model.nv);
        x << r.q.row(k).transpose(), r.qd.row(k).transpose();
        const double e = momentumAndEnergy(model, data, x, h);
        worst_e = std::max(worst_e, std::abs(e - e0) / e0);
        worst_angular = std::max(worst_angular, (h - h0).head<3>().norm() / h0.head<3>().norm());
        worst_linear = std::max(worst_linear, (h - h0).tail<3>().norm() / h0.tail<3>().norm());
        EXPECT_NEAR(r.energy[k], e, 1e-12 * e0);
      }
      const double worst_norm = worstQuaternionNorm(r);
      std::printf(
          "%s, n = %d: worst relative errors over 1 s: energy %.3g, angular momentum %.3g, linear "
          "momentum %.3g; quaternion norm %.3g (%lld steps, %lld rejected)\n",
          integratorName(integrator), n, worst_e, worst_angular, worst_linear, worst_norm,
          static_cast<long long>(r.stats.steps), static_cast<long long>(r.stats.rejected));
      const std::string what = std::string(integratorName(integrator)) + ", n = " + std::to_string(n);
      EXPECT_LT(worst_e, scheme.bound) << what;
      EXPECT_LT(worst_angular, scheme.bound) << what;
      EXPECT_LT(worst_linear, scheme.bound) << what;
      EXPECT_LT(worst_norm, 1e-15) << what;
    }
  }
}

TEST(TreeSimulator, ABranchedTreeUnderGravityConservesEnergyUnderEveryRoot) {
  for (const Scheme& scheme : conservationSchemes(2.5e-4)) {
    const Integrator integrator = scheme.options.integrator;
    for (RootJoint root : {RootJoint::Fixed, RootJoint::Floating, RootJoint::Planar}) {
      for (int n : {5, 12}) {
        const Model model = buildModel(randomTreeSpec(n, 800 + static_cast<std::uint32_t>(n), root));
        ASSERT_FALSE(model.serial);
        Start start;
        const SimulationResult r = runFromRandomStart(model, 7, scheme.options, 0.05, start);
        const double scale = std::abs(r.kinetic[0]) + std::abs(r.potential[0]) + 1.0;
        const double drift = (r.energy.array() - r.energy[0]).abs().maxCoeff() / scale;
        std::printf("%s, %s root, n = %d: worst energy drift %.3g (relative to |T| + |V| + 1 J)\n",
                    integratorName(integrator), testing::rootName(root), n, drift);
        EXPECT_LT(drift, scheme.bound)
            << integratorName(integrator) << ", " << testing::rootName(root) << ", n = " << n;
        if (root == RootJoint::Floating) {
          EXPECT_LT(worstQuaternionNorm(r), 1e-15);
        }
      }
    }
  }
}

TEST(TreeSimulator, TheZeroTorqueRK4RolloutIsTheSimulatorsRunBitForBit) {
  for (RootJoint root : {RootJoint::Fixed, RootJoint::Floating, RootJoint::Planar}) {
    const Model model = buildModel(randomTreeSpec(6, 90, root));
    std::mt19937_64 rng(9);
    const auto [q0, v0] = randomStart(model, rng);
    const double h = 1.0 / 1024.0;
    const std::size_t T = 64;
    SimulationOptions o;
    o.integrator = Integrator::RK4;
    o.step = h;
    o.t_end = static_cast<double>(T) * h;
    o.sample_times = {0.0, o.t_end};
    const SimulationResult r = simulate(model, q0, v0, o);
    const int N = model.nq + model.nv;
    Eigen::VectorXd x0(N);
    x0 << q0, v0;
    const Eigen::VectorXd u = Eigen::VectorXd::Zero(static_cast<Eigen::Index>(T) * model.nu);
    Eigen::VectorXd states((T + 1) * static_cast<std::size_t>(N));
    RolloutWorkspace ws(model);
    rollout(model, ws, RolloutOptions{StepScheme::RK4, h, T}, x0.data(), u.data(), states.data());
    Eigen::VectorXd xs(N);
    xs << r.q.row(1).transpose(), r.qd.row(1).transpose();
    EXPECT_EQ(states.tail(N), xs) << testing::rootName(root);
  }
}

/// The tangent differences [difference(q_a, q_b); v_b - v_a] of two runs' samples, the largest norm.
double worstSampleDifference(const Model& model, const SimulationResult& a, const SimulationResult& b) {
  double worst = 0.0;
  for (Eigen::Index k = 0; k < a.t.size(); ++k) {
    Eigen::VectorXd xa(model.nq + model.nv), xb(model.nq + model.nv);
    xa << a.q.row(k).transpose(), a.qd.row(k).transpose();
    xb << b.q.row(k).transpose(), b.qd.row(k).transpose();
    worst = std::max(worst, stateDifference(model, xa, xb).norm());
  }
  return worst;
}

/// A torque schedule of n joints and damping: a driven run.
void drive(SimulationOptions& o, int n, std::mt19937_64& rng) {
  o.torque = TorqueInput::piecewiseLinear(
      {0.0, 0.2, 0.5}, {testing::randomStateVector(n, rng, 2.0), testing::randomStateVector(n, rng, 2.0),
                        Eigen::VectorXd::Zero(n)});
  o.damping = testing::randomStateVector(n, rng, 0.3).cwiseAbs();
}

TEST(TreeDormandPrince, AgreesWithRK4AtASmallStepUnderEveryRoot) {
  // gravity, a torque schedule and damping; RK4 at 0.1 ms is 1e-13 from the exact motion here (4th order),
  // so the difference is Dormand-Prince's error
  for (RootJoint root : {RootJoint::Floating, RootJoint::Planar, RootJoint::Fixed}) {
    const Model model = buildModel(randomTreeSpec(6, 910, root));
    std::mt19937_64 rng(12);
    const auto [q0, v0] = randomStart(model, rng);
    SimulationOptions rk4 = integratorOptions(Integrator::RK4, 1e-4, 0.0);
    rk4.t_end = 0.6;
    rk4.dt_out = 0.1;
    drive(rk4, model.n, rng);
    const SimulationResult want = simulate(model, q0, v0, rk4);
    for (double tol : {1e-7, 1e-10}) {
      SimulationOptions o = rk4;
      o.integrator = Integrator::DormandPrince45;
      o.rtol = o.atol = tol;
      const SimulationResult got = simulate(model, q0, v0, o);
      ASSERT_EQ(got.t, want.t);
      const double diff = worstSampleDifference(model, want, got);
      std::printf("%s root, tol %.0e: |Dormand-Prince - RK4| <= %.3g (%lld steps, %lld rejected)\n",
                  testing::rootName(root), tol, diff, static_cast<long long>(got.stats.steps),
                  static_cast<long long>(got.stats.rejected));
      EXPECT_LT(diff, 100.0 * tol) << testing::rootName(root) << ", tol " << tol;
      if (root == RootJoint::Floating) {
        EXPECT_LT(worstQuaternionNorm(got), 1e-15);
      }
    }
  }
}

/// The state after t_end from x0 with zero torque, Dormand-Prince at the fixed step h (every step accepted:
/// the tolerances far above any error, the step held by initial_step = max_step = h).
Eigen::VectorXd dopriFinalState(const Model& model, const Eigen::VectorXd& x0, double h, double t_end) {
  SimulationOptions o = integratorOptions(Integrator::DormandPrince45, 0.0, 1e6);
  o.initial_step = o.max_step = h;
  o.t_end = t_end;
  o.sample_times = {t_end};
  const SimulationResult r = simulate(model, x0.head(model.nq), x0.tail(model.nv), o);
  EXPECT_EQ(r.stats.rejected, 0);
  Eigen::VectorXd x(model.nq + model.nv);
  x << r.q.row(0).transpose(), r.qd.row(0).transpose();
  return x;
}

TEST(TreeDormandPrince, IsFifthOrderOnTheManifold) {
  // the free body of RK4IsFourthOrderOnTheManifold: its rotation and position converge at 5th order in the
  // chart (the chart velocity's series through the second commutator suffices: the third term is zero)
  const Model model = freeBody();
  Eigen::VectorXd x0(13);
  x0 << 0.1, 0.2, 0.3, 0.0, 0.0, 0.0, 1.0, 1.0, -2.0, 3.0, 0.5, 0.2, -0.4;
  x0.segment<4>(3) = Eigen::Vector4d(0.2, -0.3, 0.1, 0.9).normalized();
  const double h0 = 0.1;
  const Eigen::VectorXd ref = dopriFinalState(model, x0, h0 / 64.0, 1.0);
  std::vector<Eigen::VectorXd> err;
  for (int k = 0; k <= 3; ++k)
    err.push_back(stateDifference(model, ref, dopriFinalState(model, x0, h0 / std::pow(2.0, k), 1.0)));
  for (int k = 0; k < 3; ++k) {
    const double rot = std::log2(err[k].head<3>().norm() / err[k + 1].head<3>().norm());
    const double pos = std::log2(err[k].segment<3>(3).norm() / err[k + 1].segment<3>(3).norm());
    std::printf("h = %.4g: |rotation error| %.3g, |position error| %.3g; slopes %.3f, %.3f\n",
                h0 / std::pow(2.0, k), err[k].head<3>().norm(), err[k].segment<3>(3).norm(), rot, pos);
    EXPECT_GT(rot, 4.7);
    EXPECT_GT(pos, 4.7);
  }
}

TEST(TreeDormandPrince, ASerialChainOnTheTreeRecursionsAgreesWithTheSerialRun) {
  // the same chain integrated in the chart (the tree route) and on (q, qd) (the serial route): the same
  // motion to the tolerance
  const auto [serial, tree] = testing::serialAndTree(testing::randomChainSpec(6, 77));
  std::mt19937_64 rng(13);
  const Eigen::VectorXd q0 = randomConfiguration(serial, rng), v0 = testing::randomStateVector(6, rng, 1.0);
  SimulationOptions o = integratorOptions(Integrator::DormandPrince45, 0.0, 1e-11);
  o.t_end = 1.0;
  o.dt_out = 0.25;
  drive(o, 6, rng);
  const SimulationResult a = simulate(serial, q0, v0, o), b = simulate(tree, q0, v0, o);
  const double diff = std::max((a.q - b.q).cwiseAbs().maxCoeff(), (a.qd - b.qd).cwiseAbs().maxCoeff());
  std::printf("serial route against the tree route: %.3g\n", diff);
  EXPECT_LT(diff, 1e-8);
}

TEST(TreeDormandPrince, RunsWithoutHeapAllocation) {
#ifdef DENOC_COUNT_ALLOCATIONS
  for (RootJoint root : {RootJoint::Floating, RootJoint::Planar, RootJoint::Fixed}) {
    const Model model = buildModel(randomTreeSpec(5, 920, root));
    std::mt19937_64 rng(14);
    const Start start = randomStart(model, rng);
    Simulator sim(model);
    SimulationOptions o = integratorOptions(Integrator::DormandPrince45, 0.0, 1e-9);
    o.t_end = 0.3;
    o.dt_out = 0.01;
    drive(o, model.n, rng);
    double sum = 0.0;
    const SampleCallback callback = [&sum](const Sample& s) {
      sum += s.energy + s.q[0];
      return true;
    };
    SimulationStats stats;
    EXPECT_EQ(testing::allocationsIn([&] { stats = sim.run(start.q0, start.v0, o, callback); }), 0)
        << testing::rootName(root);
    EXPECT_EQ(stats.samples, 31u);
    EXPECT_GT(stats.steps, 10);
    EXPECT_TRUE(std::isfinite(sum));
  }
  EXPECT_TRUE(testing::counterCounts()) << "the allocation counter counts nothing";
#else
  GTEST_SKIP() << testing::kNoAllocationCounting;
#endif
}

TEST(TreeSimulator, FixmanAndBadQuaternionsAreRefusedByName) {
  const Model model = buildModel(randomTreeSpec(3, 5, RootJoint::Floating));
  const Eigen::VectorXd q0 = neutralConfiguration(model), v0 = Eigen::VectorXd::Zero(model.nv);
  SimulationOptions o;
  o.route = ForwardRoute::Fixman;
  try {
    simulate(model, q0, v0, o);
    FAIL();
  } catch (const std::invalid_argument& e) {
    EXPECT_NE(std::string(e.what()).find("Fixman"), std::string::npos) << e.what();
  }
  o.route = ForwardRoute::Cholesky;
  Eigen::VectorXd bad = q0;
  bad[6] = 1.01;
  EXPECT_THROW(simulate(model, bad, v0, o), std::invalid_argument);
}

TEST(TreeRollout, BatchesEqualSingleRolloutsAndBadQuaternionsAreRefused) {
  auto model = std::make_shared<const Model>(buildModel(randomTreeSpec(4, 21, RootJoint::Floating)));
  const int N = model->nq + model->nv, L = 2 * model->nv, n = model->nu;
  const std::size_t K = 3, T = 5;
  std::mt19937_64 rng(12);
  Eigen::VectorXd x0(K * N), u(K * T * n);
  for (std::size_t k = 0; k < K; ++k)
    x0.segment(k * N, N) << randomConfiguration(*model, rng), testing::randomStateVector(model->nv, rng);
  u = testing::randomStateVector(static_cast<int>(u.size()), rng);
  const RolloutOptions o{StepScheme::RK4, 1e-2, T};
  Eigen::VectorXd states(K * (T + 1) * N), A(K * T * L * L), B(K * T * L * n);
  BatchPool pool(2);
  rolloutBatch(pool, model, o,
               RolloutArrays{K, x0.data(), u.data(), false, states.data(), A.data(), B.data()});
  RolloutWorkspace ws(*model);
  for (std::size_t k = 0; k < K; ++k) {
    Eigen::VectorXd s((T + 1) * N), a(T * L * L), b(T * L * n);
    rollout(*model, ws, o, x0.data() + k * N, u.data() + k * T * n, s.data(), a.data(), b.data());
    EXPECT_EQ(s, states.segment(k * (T + 1) * N, (T + 1) * N));
    EXPECT_EQ(a, A.segment(k * T * L * L, T * L * L));
    EXPECT_EQ(b, B.segment(k * T * L * n, T * L * n));
  }
  x0[3] += 0.1;
  try {
    rollout(*model, ws, o, x0.data(), u.data(), states.data());
    FAIL();
  } catch (const std::invalid_argument& e) {
    EXPECT_NE(std::string(e.what()).find("the root's quaternion, has norm"), std::string::npos) << e.what();
  }
}

/// A few external wrenches for a rollout: Base at a point off a link's origin, Local on another link, and on
/// a moving root's link.
std::vector<ExternalWrench> rolloutWrenches(const Model& model, std::mt19937_64& rng) {
  const auto wrench = [&] {
    Eigen::Matrix<double, 6, 1> w;
    w << testing::randomStateVector(3, rng, 1.0), testing::randomStateVector(3, rng, 5.0);
    return w;
  };
  const Eigen::Vector3d point(0.1, -0.2, 0.15);
  std::vector<ExternalWrench> out = {{model.n - 1, wrench(), ReferenceFrame::Base, point},
                                     {model.n / 2, wrench(), ReferenceFrame::Local, point},
                                     {model.n, wrench(), ReferenceFrame::Base, Eigen::Vector3d::Zero()}};
  if (model.root != RootJoint::Fixed) out.push_back({model.n + 1, wrench(), ReferenceFrame::Base, point});
  return out;
}

/// x+ of one step with external wrenches.
Eigen::VectorXd stepOnceWith(const Model& model, RolloutWorkspace& ws, const RolloutOptions& o1,
                             const Eigen::VectorXd& x, const Eigen::VectorXd& u,
                             const std::vector<ExternalWrench>& wrenches) {
  const int N = model.nq + model.nv;
  Eigen::VectorXd states(2 * N);
  rollout(model, ws, o1, x.data(), u.data(), states.data(), nullptr, nullptr, nullptr, wrenches.data(),
          static_cast<int>(wrenches.size()));
  return states.tail(N);
}

/// The models of the wrench tests: a serial chain, and trees under each root.
std::vector<std::pair<std::string, Model>> wrenchModels() {
  std::vector<std::pair<std::string, Model>> out;
  out.emplace_back("serial chain n = 4", buildModel(testing::randomChainSpec(4, 900)));
  for (RootJoint root : {RootJoint::Fixed, RootJoint::Floating, RootJoint::Planar}) {
    ModelSpec spec = randomTreeSpec(5, 910 + static_cast<std::uint32_t>(root), root);
    spec.force_tree = true;
    out.emplace_back(std::string(testing::rootName(root)) + " tree n = 5", buildModel(spec));
  }
  return out;
}

TEST(TreeRollout, ExternalWrenchesAreHeldOverTheRolloutAsSteppingForwardDynamicsByHand) {
  std::mt19937_64 rng(61);
  double worst = 0.0;
  for (const auto& [name, model] : wrenchModels()) {
    const int nq = model.nq, nv = model.nv, nu = model.nu, nr = model.nr, N = nq + nv;
    const std::vector<ExternalWrench> wrenches = rolloutWrenches(model, rng);
    RolloutWorkspace ws(model);
    Data data(model);
    const std::size_t T = 8;
    const double h = 5e-3;
    Eigen::VectorXd x0(N);
    x0 << randomConfiguration(model, rng), testing::randomStateVector(nv, rng, 1.0);
    const Eigen::VectorXd u = testing::randomStateVector(static_cast<int>(T) * nu, rng, 2.0);
    // the acceleration with the wrenches, the root unactuated
    const auto fd = [&](const Eigen::VectorXd& q, const Eigen::VectorXd& v, std::size_t t) {
      Eigen::VectorXd tau = Eigen::VectorXd::Zero(nv);
      tau.tail(nu) = u.segment(static_cast<Eigen::Index>(t) * nu, nu);
      return Eigen::VectorXd(forwardDynamics(model, data, q, v, tau, wrenches));
    };
    const bool flat = model.root == RootJoint::Fixed;  // q on a vector space: RK4 is the classical one
    for (StepScheme scheme : {StepScheme::SemiImplicitEuler, StepScheme::RK4}) {
      if (scheme == StepScheme::RK4 && !flat) continue;
      const RolloutOptions o{scheme, h, T};
      Eigen::VectorXd states((T + 1) * N), plain((T + 1) * N);
      rollout(model, ws, o, x0.data(), u.data(), states.data(), nullptr, nullptr, nullptr, wrenches.data(),
              static_cast<int>(wrenches.size()));
      rollout(model, ws, o, x0.data(), u.data(), plain.data());
      Eigen::VectorXd x = x0, byhand((T + 1) * N);
      byhand.head(N) = x0;
      for (std::size_t t = 0; t < T; ++t) {
        const Eigen::VectorXd q = x.head(nq), v = x.tail(nv);
        if (scheme == StepScheme::SemiImplicitEuler) {
          const Eigen::VectorXd vn = v + h * fd(q, v, t);
          x << integrateConfiguration(model, q, vn, h), vn;
        } else {
          const auto f = [&](const Eigen::VectorXd& s) {
            Eigen::VectorXd k(N);
            k << s.tail(nv), fd(s.head(nq), s.tail(nv), t);
            return k;
          };
          const Eigen::VectorXd k1 = f(x), k2 = f(x + 0.5 * h * k1), k3 = f(x + 0.5 * h * k2),
                                k4 = f(x + h * k3);
          x = x + (h / 6.0) * (k1 + 2.0 * k2 + 2.0 * k3 + k4);
        }
        byhand.segment(static_cast<Eigen::Index>(t + 1) * N, N) = x;
      }
      const std::string what = name + (scheme == StepScheme::RK4 ? " RK4" : " Euler");
      worst = std::max(worst, testing::relativeError(states, byhand));
      EXPECT_TRUE(near(states, byhand, 1e-11, what + ": states vs forward dynamics stepped by hand"));
      // the wrenches act: without them the rollout goes elsewhere
      EXPECT_GT((states - plain).norm(), 1e-4 * states.norm()) << what;
    }
    (void)nr;
  }
  std::printf("worst relative error against stepping by hand: %.3g\n", worst);
}

TEST(TreeRollout, LinearizationWithExternalWrenchesMatchesFiniteDifferences) {
  std::mt19937_64 rng(71);
  double worstA = 0.0, worstB = 0.0, weight = 0.0;
  for (const auto& [name, model] : wrenchModels()) {
    const int nv = model.nv, nu = model.nu, N = model.nq + nv;
    const std::vector<ExternalWrench> wrenches = rolloutWrenches(model, rng);
    RolloutWorkspace ws(model);
    for (StepScheme scheme : {StepScheme::SemiImplicitEuler, StepScheme::RK4}) {
      const RolloutOptions o{scheme, 0.02, 1};
      Eigen::VectorXd x(N);
      x << randomConfiguration(model, rng), testing::randomStateVector(nv, rng, 1.5);
      const Eigen::VectorXd u = testing::randomStateVector(nu, rng, 2.0);
      Eigen::VectorXd states(2 * N);
      RowMajor A(2 * nv, 2 * nv), B(2 * nv, nu), A0(2 * nv, 2 * nv), B0(2 * nv, nu);
      rollout(model, ws, o, x.data(), u.data(), states.data(), A.data(), B.data(), nullptr, wrenches.data(),
              static_cast<int>(wrenches.size()));
      const Eigen::VectorXd xn = states.tail(N);
      Eigen::MatrixXd Afd(2 * nv, 2 * nv), Bfd(2 * nv, nu);
      const double eps = 1e-6;
      for (int j = 0; j < 2 * nv; ++j) {
        Eigen::VectorXd dx = Eigen::VectorXd::Zero(2 * nv);
        dx[j] = eps;
        const Eigen::VectorXd fp = stepOnceWith(model, ws, o, stateIntegrate(model, x, dx), u, wrenches);
        const Eigen::VectorXd fm = stepOnceWith(model, ws, o, stateIntegrate(model, x, -dx), u, wrenches);
        Afd.col(j) = (stateDifference(model, xn, fp) - stateDifference(model, xn, fm)) / (2.0 * eps);
      }
      for (int j = 0; j < nu; ++j) {
        Eigen::VectorXd up = u, um = u;
        up[j] += eps;
        um[j] -= eps;
        const Eigen::VectorXd fp = stepOnceWith(model, ws, o, x, up, wrenches),
                              fm = stepOnceWith(model, ws, o, x, um, wrenches);
        Bfd.col(j) = (stateDifference(model, xn, fp) - stateDifference(model, xn, fm)) / (2.0 * eps);
      }
      const std::string what = name + (scheme == StepScheme::RK4 ? " RK4" : " Euler") + " with wrenches";
      worstA = std::max(worstA, testing::relativeError(Eigen::MatrixXd(A), Afd));
      worstB = std::max(worstB, testing::relativeError(Eigen::MatrixXd(B), Bfd));
      EXPECT_TRUE(near(Eigen::MatrixXd(A), Afd, 1e-6, what + ": A"));
      EXPECT_TRUE(near(Eigen::MatrixXd(B), Bfd, 1e-6, what + ": B"));
      // the wrenches' q-dependence is in A: without them A differs
      Eigen::VectorXd s0(2 * N);
      rollout(model, ws, o, x.data(), u.data(), s0.data(), A0.data(), B0.data());
      weight = std::max(weight, (A - A0).norm() / A.norm());
    }
  }
  EXPECT_GT(weight, 1e-6);
  std::printf("with external wrenches, worst relative error against central differences: A %.3g, B %.3g\n",
              worstA, worstB);
}

TEST(TreeRollout, BatchesWithExternalWrenchesEqualSingleRollouts) {
  auto model = std::make_shared<const Model>(buildModel(randomTreeSpec(4, 23, RootJoint::Floating)));
  const int N = model->nq + model->nv, L = 2 * model->nv, n = model->nu;
  const std::size_t K = 3, T = 4;
  std::mt19937_64 rng(14);
  Eigen::VectorXd x0(K * N), u(K * T * n);
  for (std::size_t k = 0; k < K; ++k)
    x0.segment(k * N, N) << randomConfiguration(*model, rng), testing::randomStateVector(model->nv, rng);
  u = testing::randomStateVector(static_cast<int>(u.size()), rng);
  const Eigen::VectorXd shared = testing::randomStateVector(6, rng, 5.0);    // every rollout's
  const Eigen::VectorXd each = testing::randomStateVector(6 * K, rng, 5.0);  // one per rollout
  const Eigen::Vector3d point(0.05, 0.1, -0.1);
  RolloutArrays arrays{K, x0.data(), u.data(), false, nullptr, nullptr, nullptr};
  arrays.wrenches = {{2, ReferenceFrame::Base, shared.data(), 0, point},
                     {model->n + 1, ReferenceFrame::Local, each.data(), 6, Eigen::Vector3d::Zero()}};
  const RolloutOptions o{StepScheme::RK4, 1e-2, T};
  Eigen::VectorXd states(K * (T + 1) * N), A(K * T * L * L), B(K * T * L * n);
  arrays.states = states.data();
  arrays.A = A.data();
  arrays.B = B.data();
  BatchPool pool(2);
  rolloutBatch(pool, model, o, arrays);
  RolloutWorkspace ws(*model);
  for (std::size_t k = 0; k < K; ++k) {
    const std::vector<ExternalWrench> wk = {
        {2, Eigen::Matrix<double, 6, 1>(shared), ReferenceFrame::Base, point},
        {model->n + 1, Eigen::Matrix<double, 6, 1>(each.segment(6 * k, 6)), ReferenceFrame::Local,
         Eigen::Vector3d::Zero()}};
    Eigen::VectorXd s((T + 1) * N), a(T * L * L), b(T * L * n);
    rollout(*model, ws, o, x0.data() + k * N, u.data() + k * T * n, s.data(), a.data(), b.data(), nullptr,
            wk.data(), 2);
    EXPECT_EQ(s, states.segment(k * (T + 1) * N, (T + 1) * N)) << k;
    EXPECT_EQ(a, A.segment(k * T * L * L, T * L * L)) << k;
    EXPECT_EQ(b, B.segment(k * T * L * n, T * L * n)) << k;
  }
  // a non-finite wrench value is refused naming the rollout, before any step
  Eigen::VectorXd bad = each;
  bad[6 * 2 + 4] = std::numeric_limits<double>::infinity();
  arrays.wrenches[1].values = bad.data();
  try {
    rolloutBatch(pool, model, o, arrays);
    FAIL();
  } catch (const std::invalid_argument& e) {
    EXPECT_NE(std::string(e.what()).find("rollout 2"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("external wrench 1"), std::string::npos) << e.what();
  }
  arrays.wrenches[1].frame = model->n + 2;
  EXPECT_THROW(rolloutBatch(pool, model, o, arrays), std::invalid_argument);
}

TEST(TreeRollout, ExternalWrenchesAllocateNothing) {
#ifdef DENOC_COUNT_ALLOCATIONS
  std::mt19937_64 rng(81);
  for (const auto& [name, model] : wrenchModels()) {
    const int nv = model.nv, nu = model.nu, N = model.nq + nv;
    const std::vector<ExternalWrench> wrenches = rolloutWrenches(model, rng);
    RolloutWorkspace ws(model);
    const std::size_t T = 5;
    Eigen::VectorXd x0(N);
    x0 << randomConfiguration(model, rng), testing::randomStateVector(nv, rng, 1.0);
    const Eigen::VectorXd u = testing::randomStateVector(static_cast<int>(T) * nu, rng, 1.0);
    Eigen::VectorXd states((T + 1) * N), A(T * 4 * nv * nv), B(T * 2 * nv * nu);
    for (StepScheme scheme : {StepScheme::RK4, StepScheme::SemiImplicitEuler}) {
      const RolloutOptions o{scheme, 1e-3, T};
      const long count = testing::allocationsIn([&] {
        rollout(model, ws, o, x0.data(), u.data(), states.data(), A.data(), B.data(), nullptr,
                wrenches.data(), static_cast<int>(wrenches.size()));
        rollout(model, ws, o, x0.data(), u.data(), states.data(), nullptr, nullptr, nullptr, wrenches.data(),
                static_cast<int>(wrenches.size()));
      });
      EXPECT_EQ(count, 0) << name;
    }
  }
#else
  GTEST_SKIP() << testing::kNoAllocationCounting;
#endif
}

}  // namespace
}  // namespace denoc
