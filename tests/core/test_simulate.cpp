// Simulation (RFDSIM), energy and the eq. 38/39 trajectories, checked against independent oracles:
// conservation of energy in free fall, the power balance dE/dt = qd . (tau - damping qd), the convergence
// order of RK4, the exact period of a pendulum (elliptic integral by quadrature), static equilibria,
// 1/2 qd^T I(q) qd from the inertia matrix, dV/dq = g(q) from inverse dynamics, and finite differences.
#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <functional>
#include <numbers>
#include <random>
#include <stdexcept>
#include <string>
#include <vector>

#include "denoc/algorithm/energy.hpp"
#include "denoc/denoc.hpp"
#include "denoc/simulate.hpp"
#include "denoc/trajectory.hpp"
#include "support/count_allocations.hpp"  // replaces malloc in this binary
#include "support/random_chain.hpp"

namespace denoc {
namespace {

constexpr double kPi = std::numbers::pi;
constexpr double kDeg = kPi / 180.0;

Eigen::VectorXd vec(std::initializer_list<double> v) {
  Eigen::VectorXd x(static_cast<Eigen::Index>(v.size()));
  Eigen::Index i = 0;
  for (double a : v) x[i++] = a;
  return x;
}

/// The Stanford arm's initial state for the free-fall tests: from rest, away from singular poses.
Eigen::VectorXd stanfordStart() {
  return vec({10 * kDeg, 60 * kDeg, 0.05, 30 * kDeg, 45 * kDeg, -20 * kDeg});
}

/// Energy drift as reported by the tests: max_t |E(t) - E(0)| / max_t T(t), i.e. relative to the largest
/// kinetic energy reached (E(0) can be zero: the planar arm starts at rest at the level of its base).
double energyDrift(const SimulationResult& r) {
  const double scale = r.kinetic.maxCoeff();
  return (r.energy.array() - r.energy[0]).abs().maxCoeff() / scale;
}

/// A 1-DOF pendulum: one revolute joint about z, gravity along -y, mass center at distance l below the
/// pivot at q = 0. Returns the model; I_pivot, m, l through the out parameters.
Model pendulum(double& inertia_pivot, double& m, double& l) {
  m = 2.0;
  l = 0.5;
  ModelSpec spec;
  spec.name = "pendulum";
  spec.gravity = Eigen::Vector3d(0.0, -9.81, 0.0);
  JointSpec j;
  j.name = "pivot";
  j.link = "bob";
  j.mass = m;
  j.com = Eigen::Vector3d(0.0, -l, 0.0);
  j.inertia = Eigen::Vector3d(0.02, 0.001, 0.02).asDiagonal();
  spec.joints.push_back(j);
  inertia_pivot = 0.02 + m * l * l;
  return buildModel(spec);
}

/// Complete elliptic integral of the first kind K(k) = int_0^{pi/2} dphi / sqrt(1 - k^2 sin^2 phi) by the
/// trapezoidal rule over a full period of the (smooth, periodic) integrand: spectrally accurate.
double ellipticKQuadrature(double k, int points) {
  double sum = 0.0;
  const double h = 2.0 * kPi / points;
  for (int i = 0; i < points; ++i) {
    const double s = std::sin(i * h);
    sum += 1.0 / std::sqrt(1.0 - k * k * s * s);
  }
  return sum * h / 4.0;
}

/// K(k) by the arithmetic-geometric mean, K = pi / (2 AGM(1, sqrt(1 - k^2))): a second, independent route.
double ellipticKAgm(double k) {
  double a = 1.0, b = std::sqrt(1.0 - k * k);
  for (int i = 0; i < 40; ++i) {
    const double an = 0.5 * (a + b);
    b = std::sqrt(a * b);
    a = an;
  }
  return kPi / (2.0 * a);
}

/// Times at which q crosses zero upwards, located by cubic Hermite interpolation of (q, qd) between samples.
std::vector<double> upwardZeroCrossings(const SimulationResult& r) {
  std::vector<double> out;
  for (Eigen::Index k = 0; k + 1 < r.t.size(); ++k) {
    const double q0 = r.q(k, 0), q1 = r.q(k + 1, 0);
    if (!(q0 < 0.0 && q1 >= 0.0)) continue;
    const double t0 = r.t[k], h = r.t[k + 1] - r.t[k];
    const double m0 = r.qd(k, 0) * h, m1 = r.qd(k + 1, 0) * h;
    const auto p = [&](double s) {
      const double s2 = s * s, s3 = s2 * s;
      return (2 * s3 - 3 * s2 + 1) * q0 + (s3 - 2 * s2 + s) * m0 + (-2 * s3 + 3 * s2) * q1 + (s3 - s2) * m1;
    };
    double lo = 0.0, hi = 1.0;
    for (int it = 0; it < 100; ++it) {
      const double mid = 0.5 * (lo + hi);
      (p(mid) < 0.0 ? lo : hi) = mid;
    }
    out.push_back(t0 + 0.5 * (lo + hi) * h);
  }
  return out;
}

/// int_0^T f dt over the samples by the trapezoidal rule.
double trapezoid(const Eigen::VectorXd& t, const Eigen::VectorXd& f) {
  double s = 0.0;
  for (Eigen::Index k = 0; k + 1 < t.size(); ++k) s += 0.5 * (t[k + 1] - t[k]) * (f[k] + f[k + 1]);
  return s;
}

std::string fmt(double x) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.3g", x);
  return buf;
}

void expectInvalid(const std::function<void()>& f, const std::string& field) {
  try {
    f();
    ADD_FAILURE() << "no exception for " << field;
  } catch (const std::invalid_argument& e) {
    EXPECT_NE(std::string(e.what()).find(field), std::string::npos) << "message: " << e.what();
  }
}

// ------------------------------------------------------------------------------------------------ energy

TEST(Energy, KineticIsHalfQdTransposeInertiaQd) {
  for (std::uint32_t seed = 1; seed <= 6; ++seed) {
    const int n = 2 + static_cast<int>(seed);
    ModelSpec spec = testing::randomChainSpec(n, seed * 131u);
    spec.joints[0].armature = 0.3;  // the armature term 1/2 J qd^2
    const Model model = buildModel(spec);
    Data data(model);
    std::mt19937 rng(seed);
    const Eigen::VectorXd q = testing::randomVectorX(rng, n, 2.0);
    const Eigen::VectorXd qd = testing::randomVectorX(rng, n, 2.0);
    const double kinetic = kineticEnergy(model, data, q, qd);
    const Eigen::MatrixXd M = computeInertiaMatrix(model, data, q);
    const double oracle = 0.5 * qd.dot(M * qd);
    EXPECT_NEAR(kinetic, oracle, 1e-12 * oracle) << "n=" << n;
    EXPECT_GT(kinetic, 0.0);
  }
}

TEST(Energy, PotentialGradientIsGravityTorque) {
  // dV/dq = g(q) = ID(q, 0, 0): central differences, O(h^2)
  for (std::uint32_t seed = 1; seed <= 6; ++seed) {
    const int n = 2 + static_cast<int>(seed);
    const Model model = buildModel(testing::randomChainSpec(n, seed * 977u));
    Data data(model);
    std::mt19937 rng(seed + 100);
    const Eigen::VectorXd q = testing::randomVectorX(rng, n, 2.0);
    const Eigen::VectorXd zero = Eigen::VectorXd::Zero(n);
    const Eigen::VectorXd g = inverseDynamics(model, data, q, zero, zero);
    const double h = 1e-5;
    for (int j = 0; j < n; ++j) {
      Eigen::VectorXd qp = q, qm = q;
      qp[j] += h;
      qm[j] -= h;
      const double dv = (potentialEnergy(model, data, qp) - potentialEnergy(model, data, qm)) / (2 * h);
      EXPECT_NEAR(dv, g[j], 1e-7 * std::max(1.0, g.norm())) << "n=" << n << " joint " << j;
    }
    double kin = 0.0, pot = 0.0;
    const Eigen::VectorXd qd = testing::randomVectorX(rng, n, 1.0);
    const double total = mechanicalEnergy(model, data, q, qd, kin, pot);
    EXPECT_DOUBLE_EQ(total, kin + pot);
    EXPECT_DOUBLE_EQ(pot, potentialEnergy(model, data, q));
    EXPECT_DOUBLE_EQ(kin, kineticEnergy(model, data, q, qd));
  }
}

TEST(Energy, RejectsBadArguments) {
  const Model model = buildModelFromDH(planarArmDH());
  Data data(model);
  expectInvalid([&] { kineticEnergy(model, data, Eigen::VectorXd::Zero(2), Eigen::VectorXd::Zero(3)); }, "q");
  expectInvalid([&] { potentialEnergy(model, data, vec({0.0, NAN, 0.0})); }, "q[1]");
}

// ------------------------------------------------------------------------------------------- free fall

TEST(Simulate, FreeFallConservesEnergyPlanarArm) {
  // the paper's section 6.1: from rest at theta = 0, no torque, 10 s
  const Model model = buildModelFromDH(planarArmDH());
  SimulationOptions o;
  o.t_end = 10.0;
  o.dt_out = 0.01;
  o.rtol = 1e-12;
  o.atol = 1e-12;
  const SimulationResult r = simulate(model, Eigen::VectorXd::Zero(3), Eigen::VectorXd::Zero(3), o);
  ASSERT_EQ(r.t.size(), 1001);
  EXPECT_EQ(r.energy[0], 0.0);  // every mass center starts at the base's level
  const double drift = energyDrift(r);
  EXPECT_LT(drift, 1e-8) << "steps " << r.stats.steps;
  RecordProperty("energy_drift", fmt(drift));
  // the paper's Fig. 6: theta_1 first goes negative (the arm falls), and the arm swings as a pendulum
  EXPECT_LT(r.q(10, 0), 0.0);
  EXPECT_LT(r.q.col(0).minCoeff(), -1.0);
  EXPECT_GT(r.kinetic.maxCoeff(), 1.0);
}

TEST(Simulate, FreeFallConservesEnergyStanfordArm) {
  const Model model = buildModelFromDH(stanfordArmDH());
  SimulationOptions o;
  o.t_end = 10.0;
  o.dt_out = 0.01;
  o.rtol = 1e-12;
  o.atol = 1e-12;
  const SimulationResult r = simulate(model, stanfordStart(), Eigen::VectorXd::Zero(6), o);
  const double drift = energyDrift(r);
  EXPECT_LT(drift, 1e-8) << "steps " << r.stats.steps;
  RecordProperty("energy_drift", fmt(drift));
  // and also relative to |E(0)|
  EXPECT_LT((r.energy.array() - r.energy[0]).abs().maxCoeff(), 1e-8 * std::abs(r.energy[0]));
  EXPECT_GT(r.kinetic.maxCoeff(), 1.0);  // it really moves
}

TEST(Simulate, SahaCholeskyAndFixmanRoutesAgree) {
  const Model model = buildModelFromDH(stanfordArmDH());
  SimulationOptions o;
  o.t_end = 1.0;
  o.dt_out = 0.1;
  o.integrator = Integrator::RK4;
  o.step = 1e-3;
  const SimulationResult a = simulate(model, stanfordStart(), Eigen::VectorXd::Zero(6), o);
  o.route = ForwardRoute::Cholesky;
  const SimulationResult b = simulate(model, stanfordStart(), Eigen::VectorXd::Zero(6), o);
  EXPECT_LT((a.q - b.q).cwiseAbs().maxCoeff(), 1e-10);
  EXPECT_LT((a.qd - b.qd).cwiseAbs().maxCoeff(), 1e-9);
  o.route = ForwardRoute::Fixman;
  const SimulationResult c = simulate(model, stanfordStart(), Eigen::VectorXd::Zero(6), o);
  EXPECT_LT((a.q - c.q).cwiseAbs().maxCoeff(), 1e-10);
  EXPECT_LT((a.qd - c.qd).cwiseAbs().maxCoeff(), 1e-9);
}

// ------------------------------------------------------------------------------------------ RK4 order

TEST(Simulate, RK4ConvergesAtFourthOrder) {
  // the Stanford arm falling from rest for 1 s; the reference is Dormand-Prince at rtol = atol = 1e-13.
  // (The planar arm whips too fast for these steps to be in the asymptotic range over 1 s.)
  const Model model = buildModelFromDH(stanfordArmDH());
  const Eigen::VectorXd q0 = stanfordStart();
  const Eigen::VectorXd qd0 = Eigen::VectorXd::Zero(6);
  SimulationOptions o;
  o.t_end = 1.0;
  o.sample_times = {1.0};
  o.rtol = 1e-13;
  o.atol = 1e-13;
  const SimulationResult ref = simulate(model, q0, qd0, o);
  Eigen::VectorXd y_ref(12);
  y_ref << ref.q.row(0).transpose(), ref.qd.row(0).transpose();

  o.integrator = Integrator::RK4;
  double errors[3];
  const double steps[3] = {0.02, 0.01, 0.005};
  for (int i = 0; i < 3; ++i) {
    o.step = steps[i];
    const SimulationResult r = simulate(model, q0, qd0, o);
    Eigen::VectorXd y(12);
    y << r.q.row(0).transpose(), r.qd.row(0).transpose();
    errors[i] = (y - y_ref).norm();
    EXPECT_EQ(r.stats.steps, std::llround(1.0 / steps[i]));
    EXPECT_EQ(r.stats.evaluations, 4 * r.stats.steps);
  }
  ASSERT_GT(errors[2], 1e3 * 1e-12) << "the reference is not accurate enough to measure the order";
  for (int i = 0; i < 2; ++i) {
    const double order = std::log2(errors[i] / errors[i + 1]);
    EXPECT_GE(order, 3.7) << "h=" << steps[i];
    EXPECT_LE(order, 4.3) << "h=" << steps[i];
    RecordProperty("rk4_order_" + std::to_string(i), fmt(order));
  }
}

TEST(Simulate, DormandPrinceErrorShrinksWithTolerance) {
  // the global error at t = 1 follows the tolerance (roughly proportional), and the step count grows
  // like tol^(-1/5)
  const Model model = buildModelFromDH(planarArmDH());
  const Eigen::VectorXd q0 = vec({0.3, -0.5, 0.8});
  const Eigen::VectorXd qd0 = vec({0.5, 0.0, -1.0});
  SimulationOptions o;
  o.sample_times = {1.0};
  o.rtol = o.atol = 1e-13;
  const SimulationResult ref = simulate(model, q0, qd0, o);
  double previous_error = 1e300;
  for (double tol : {1e-5, 1e-7, 1e-9}) {
    o.rtol = o.atol = tol;
    const SimulationResult r = simulate(model, q0, qd0, o);
    const double err = (r.q.row(0) - ref.q.row(0)).norm() + (r.qd.row(0) - ref.qd.row(0)).norm();
    EXPECT_LT(err, 1e3 * tol) << "tol=" << tol;
    EXPECT_LT(err, previous_error) << "tol=" << tol;
    EXPECT_EQ(r.stats.evaluations, 6 * (r.stats.steps + r.stats.rejected) + 2);  // FSAL: 6 per step
    previous_error = err;
  }
}

// ------------------------------------------------------------------------------------------- pendulum

TEST(Simulate, PendulumPeriodSmallAndLargeAmplitude) {
  double I = 0.0, m = 0.0, l = 0.0;
  const Model model = pendulum(I, m, l);
  const double w0 = std::sqrt(m * 9.81 * l / I);
  const double T0 = 2.0 * kPi / w0;  // small-angle period 2 pi sqrt(I_pivot / (m g l))

  // the two routes to K(k) agree
  EXPECT_NEAR(ellipticKQuadrature(0.5, 256), ellipticKAgm(0.5), 1e-14);
  EXPECT_NEAR(ellipticKQuadrature(std::sin(1.25), 4096), ellipticKAgm(std::sin(1.25)), 1e-12);

  SimulationOptions o;
  o.rtol = 1e-12;
  o.atol = 1e-12;
  o.dt_out = 1e-3;
  for (double amplitude : {1e-4, 1.0, 2.5}) {
    const double k = std::sin(amplitude / 2.0);
    const double T_exact = 4.0 / w0 * ellipticKQuadrature(k, 8192);  // 4 sqrt(I / (m g l)) K(sin(a / 2))
    o.t_end = 2.6 * T_exact;
    const SimulationResult r = simulate(model, vec({amplitude}), vec({0.0}), o);
    const std::vector<double> up = upwardZeroCrossings(r);
    ASSERT_GE(up.size(), 2u) << "amplitude " << amplitude;
    const double T = up[1] - up[0];
    EXPECT_NEAR(T / T_exact, 1.0, 1e-9) << "amplitude " << amplitude;
    EXPECT_NEAR(up[0], 0.75 * T_exact, 1e-9 * T_exact);
    if (amplitude < 1e-3) {
      EXPECT_NEAR(T / T0, 1.0, 1e-8);  // T = T0 (1 + a^2 / 16 + ...)
    } else {
      EXPECT_GT(T / T0, 1.0 + amplitude * amplitude / 16.0 * 0.9);  // large amplitude: clearly longer
    }
    // the amplitude is kept: max |q| equals the initial angle
    EXPECT_NEAR(r.q.col(0).cwiseAbs().maxCoeff(), amplitude, 1e-6 * amplitude);
  }
}

// -------------------------------------------------------------------------------- damping and torques

TEST(Simulate, DampingDissipatesEnergyMonotonically) {
  const Model model = buildModelFromDH(planarArmDH());
  SimulationOptions o;
  o.t_end = 5.0;
  o.dt_out = 1e-3;
  o.rtol = 1e-11;
  o.atol = 1e-11;
  o.damping = vec({0.2, 0.1, 0.05});
  const SimulationResult r = simulate(model, Eigen::VectorXd::Zero(3), Eigen::VectorXd::Zero(3), o);
  const double scale = r.kinetic.maxCoeff();
  for (Eigen::Index k = 1; k < r.t.size(); ++k) {
    ASSERT_LE(r.energy[k], r.energy[k - 1] + 1e-11 * scale) << "t=" << r.t[k];
  }
  EXPECT_LT(r.energy[r.t.size() - 1], r.energy[0] - 0.1 * scale);  // it does lose energy
  // power balance: E(T) - E(0) = -int qd^T diag(c) qd dt
  Eigen::VectorXd power(r.t.size());
  for (Eigen::Index k = 0; k < r.t.size(); ++k) {
    power[k] = -(r.qd.row(k).transpose().cwiseProduct(o.damping)).dot(r.qd.row(k).transpose());
  }
  const double dissipated = trapezoid(r.t, power);
  EXPECT_NEAR(r.energy[r.t.size() - 1] - r.energy[0], dissipated, 1e-5 * std::abs(dissipated));
}

TEST(Simulate, GravityTorqueHoldsStaticEquilibrium) {
  for (const DHSpec& dh : {planarArmDH(), stanfordArmDH()}) {
    const Model model = buildModelFromDH(dh);
    Data data(model);
    const Eigen::VectorXd q0 = model.n == 3 ? vec({-0.4, 0.7, 0.3}) : stanfordStart();
    const Eigen::VectorXd zero = Eigen::VectorXd::Zero(model.n);
    const Eigen::VectorXd g = inverseDynamics(model, data, q0, zero, zero);
    ASSERT_GT(g.norm(), 1.0);
    SimulationOptions o;
    o.t_end = 2.0;
    o.dt_out = 0.1;
    o.torque = TorqueInput::constant(g);
    for (Integrator integrator : {Integrator::DormandPrince45, Integrator::RK4}) {
      o.integrator = integrator;
      const SimulationResult r = simulate(model, q0, zero, o);
      for (Eigen::Index k = 0; k < r.t.size(); ++k) {
        EXPECT_LT((r.q.row(k).transpose() - q0).cwiseAbs().maxCoeff(), 1e-9) << dh.name << " t=" << r.t[k];
        EXPECT_LT(r.qd.row(k).cwiseAbs().maxCoeff(), 1e-9) << dh.name << " t=" << r.t[k];
      }
    }
    // without it the arm falls
    o.torque = TorqueInput::zero();
    const SimulationResult fall = simulate(model, q0, zero, o);
    EXPECT_GT((fall.q.bottomRows(1).transpose() - q0).norm(), 0.1) << dh.name;
  }
}

TEST(Simulate, WorkOfAppliedTorquesEqualsEnergyChange) {
  // dE/dt = tau(t) . qd: checks that the constant and the piecewise-linear inputs are applied as given
  const Model model = buildModelFromDH(stanfordArmDH());
  const Eigen::VectorXd q0 = stanfordStart();
  const Eigen::VectorXd qd0 = vec({0.2, -0.1, 0.05, 0.3, 0.0, -0.2});
  std::vector<TorqueInput> inputs;
  inputs.push_back(TorqueInput::constant(vec({1.0, -2.0, 3.0, 0.1, -0.2, 0.05})));
  inputs.push_back(TorqueInput::piecewiseLinear(
      {0.25, 0.5, 1.2},
      {vec({2, 10, 5, 0.5, 0.1, 0}), vec({-3, 40, 40, -0.5, 0.3, 0.2}), vec({0, 0, 0, 0, 0, 0})}));
  for (const TorqueInput& input : inputs) {
    SimulationOptions o;
    o.t_end = 1.5;
    o.dt_out = 5e-4;  // the knots are on the output grid, so the trapezoid sees the kinks
    o.rtol = o.atol = 1e-11;
    o.torque = input;
    const SimulationResult r = simulate(model, q0, qd0, o);
    Eigen::VectorXd power(r.t.size()), tau(6);
    for (Eigen::Index k = 0; k < r.t.size(); ++k) {
      input.evaluate(r.t[k], tau);
      power[k] = tau.dot(r.qd.row(k).transpose());
    }
    const double work = trapezoid(r.t, power);
    const double change = r.energy[r.t.size() - 1] - r.energy[0];
    EXPECT_GT(std::abs(work), 0.1);
    EXPECT_NEAR(change, work, 1e-5 * std::abs(work));
  }
}

TEST(TorqueInputTest, PiecewiseLinearAtAndBetweenKnots) {
  const TorqueInput in =
      TorqueInput::piecewiseLinear({1.0, 2.0, 4.0}, {vec({0, 10}), vec({2, -10}), vec({6, 0})});
  EXPECT_EQ(in.kind(), TorqueInput::Kind::PiecewiseLinear);
  EXPECT_EQ(in.size(), 2);
  Eigen::VectorXd tau(2);
  const auto at = [&](double t) {
    in.evaluate(t, tau);
    return tau;
  };
  EXPECT_EQ(at(1.0), vec({0, 10}));
  EXPECT_EQ(at(2.0), vec({2, -10}));
  EXPECT_EQ(at(4.0), vec({6, 0}));
  EXPECT_TRUE(at(1.5).isApprox(vec({1, 0}), 1e-15));
  EXPECT_TRUE(at(1.25).isApprox(vec({0.5, 5}), 1e-15));
  EXPECT_TRUE(at(3.0).isApprox(vec({4, -5}), 1e-15));
  EXPECT_TRUE(at(3.5).isApprox(vec({5, -2.5}), 1e-15));
  EXPECT_EQ(at(0.0), vec({0, 10}));  // before the first knot: its value
  EXPECT_EQ(at(-5.0), vec({0, 10}));
  EXPECT_EQ(at(7.0), vec({6, 0}));  // after the last knot: held
  const TorqueInput single = TorqueInput::piecewiseLinear({0.5}, {vec({3, 4})});
  single.evaluate(0.1, tau);
  EXPECT_EQ(tau, vec({3, 4}));
  single.evaluate(9.0, tau);
  EXPECT_EQ(tau, vec({3, 4}));
  TorqueInput::constant(vec({1, 2})).evaluate(3.0, tau);
  EXPECT_EQ(tau, vec({1, 2}));
  TorqueInput::zero().evaluate(3.0, tau);
  EXPECT_EQ(tau, vec({0, 0}));
  // continuity just around a knot
  in.evaluate(std::nextafter(2.0, 0.0), tau);
  EXPECT_NEAR(tau[0], 2.0, 1e-12);

  expectInvalid([] { TorqueInput::piecewiseLinear({}, {}); }, "torque.times");
  expectInvalid([] { TorqueInput::piecewiseLinear({1.0, 1.0}, {vec({1}), vec({2})}); }, "torque.times[1]");
  expectInvalid([] { TorqueInput::piecewiseLinear({1.0, 2.0}, {vec({1})}); }, "torque.values");
  expectInvalid(
      [] {
        TorqueInput::piecewiseLinear({1.0, 2.0}, {vec({1}), vec({1, 2})});
      },
      "torque.values[1]");
  expectInvalid([] { TorqueInput::piecewiseLinear({1.0, NAN}, {vec({1}), vec({2})}); }, "torque.times[1]");
  expectInvalid([] { TorqueInput::constant(vec({1, INFINITY})); }, "torque[1]");
}

// --------------------------------------------------------------------------------- samples and streams

TEST(Simulate, SamplesLandExactlyOnRequestedTimes) {
  const Model model = buildModelFromDH(planarArmDH());
  const Eigen::VectorXd q0 = vec({0.3, -0.5, 0.8});
  const Eigen::VectorXd qd0 = Eigen::VectorXd::Zero(3);
  SimulationOptions o;
  o.t_end = 1.0;
  o.sample_times = {0.1, 0.1234567, 1.0 / 3.0, 0.5, 0.5 + 1e-9, 0.99};
  o.rtol = o.atol = 1e-11;
  for (Integrator integrator : {Integrator::DormandPrince45, Integrator::RK4}) {
    o.integrator = integrator;
    o.step = 2e-4;
    const SimulationResult r = simulate(model, q0, qd0, o);
    ASSERT_EQ(r.t.size(), 6);
    for (std::size_t k = 0; k < 6; ++k) EXPECT_EQ(r.t[static_cast<Eigen::Index>(k)], o.sample_times[k]);
    // the state at 1/3 equals a run that ends there
    SimulationOptions single = o;
    single.sample_times = {1.0 / 3.0};
    const SimulationResult s = simulate(model, q0, qd0, single);
    EXPECT_LT((s.q.row(0) - r.q.row(2)).cwiseAbs().maxCoeff(), 1e-8);
    EXPECT_LT((s.qd.row(0) - r.qd.row(2)).cwiseAbs().maxCoeff(), 1e-7);
  }
  // the uniform grid: k * dt_out and t_end exactly
  o.sample_times.clear();
  o.integrator = Integrator::DormandPrince45;
  o.t_end = 0.3;
  o.dt_out = 0.1;
  EXPECT_EQ(sampleCount(o), 4u);
  SimulationResult r = simulate(model, q0, qd0, o);
  EXPECT_EQ(r.t, vec({0.0, 0.1, 0.2, 0.3}));
  EXPECT_EQ(r.q.row(0).transpose(), q0);  // the first sample is the initial state
  o.t_end = 0.25;
  EXPECT_EQ(sampleCount(o), 4u);
  r = simulate(model, q0, qd0, o);
  EXPECT_EQ(r.t, vec({0.0, 0.1, 0.2, 0.25}));
  o.t_end = 10.0;
  o.dt_out = 0.1;
  EXPECT_EQ(sampleCount(o), 101u);
  // 0.7 / 0.1 < 7 in floating point: still 8 samples ending exactly at 0.7, the same as uniformTimes
  o.t_end = 0.7;
  EXPECT_EQ(sampleCount(o), 8u);
  r = simulate(model, q0, qd0, o);
  const std::vector<double> grid = uniformTimes(0.7, 0.1);
  ASSERT_EQ(grid.size(), 8u);
  for (std::size_t k = 0; k < 8; ++k) EXPECT_EQ(r.t[static_cast<Eigen::Index>(k)], grid[k]);
  EXPECT_EQ(grid.back(), 0.7);
  for (std::size_t k = 1; k < 8; ++k) EXPECT_GT(grid[k], grid[k - 1]);
}

TEST(Simulate, StreamingCallbackCanStopEarly) {
  const Model model = buildModelFromDH(planarArmDH());
  Simulator sim(model);
  SimulationOptions o;
  o.t_end = 10.0;
  o.dt_out = 0.1;
  std::vector<double> seen;
  const SimulationStats stats =
      sim.run(Eigen::VectorXd::Zero(3), Eigen::VectorXd::Zero(3), o, [&](const Sample& s) {
        EXPECT_EQ(s.index, seen.size());
        EXPECT_DOUBLE_EQ(s.energy, s.kinetic + s.potential);
        EXPECT_EQ(s.q.size(), 3);
        seen.push_back(s.t);
        return seen.size() < 5;
      });
  EXPECT_TRUE(stats.stopped_early);
  EXPECT_EQ(stats.samples, 5u);
  EXPECT_EQ(seen.size(), 5u);
  EXPECT_DOUBLE_EQ(stats.t_final, 0.4);
  // the simulator is reusable: a second run from the same state gives the same samples
  const SimulationResult a = sim.simulate(Eigen::VectorXd::Zero(3), Eigen::VectorXd::Zero(3), o);
  const SimulationResult b = sim.simulate(Eigen::VectorXd::Zero(3), Eigen::VectorXd::Zero(3), o);
  EXPECT_EQ(a.q, b.q);
  EXPECT_FALSE(a.stats.stopped_early);
  EXPECT_EQ(a.stats.samples, 101u);
}

TEST(Simulate, AStopConditionStopsBetweenSamples) {
  // one sample after t = 0, 10,000 RK4 steps away; the stop condition's callable, asked at every poll, says
  // stop at its 4th poll (steps 0, 64, 128, 192)
  const Model model = buildModelFromDH(planarArmDH());
  Simulator sim(model);
  SimulationOptions o;
  o.integrator = Integrator::RK4;
  o.step = 1e-3;
  o.t_end = 10.0;
  o.dt_out = 10.0;
  int polls = 0;
  const auto cancelAtFourthPoll = [&polls] { return ++polls >= 4; };
  const StopCondition cancel(cancelAtFourthPoll, StopCondition::Clock::time_point::max(),
                             std::chrono::nanoseconds(0));
  o.stop = &cancel;
  int samples = 0;
  try {
    sim.run(Eigen::VectorXd::Zero(3), Eigen::VectorXd::Zero(3), o, [&](const Sample&) {
      ++samples;
      return true;
    });
    FAIL() << "not stopped";
  } catch (const Stopped& e) {
    EXPECT_EQ(e.reason(), StopReason::Cancelled);
    EXPECT_EQ(e.done(), 1u) << e.what();  // samples delivered
    EXPECT_NE(std::string(e.what()).find("simulate: stopped after 1 of 2 samples (192 steps): cancelled"),
              std::string::npos)
        << e.what();
  }
  EXPECT_TRUE(sim.stats().stopped_early);
  EXPECT_EQ(polls, 4);
  EXPECT_EQ(sim.stats().steps, 3 * 64);
  EXPECT_EQ(samples, 1);  // t = 0 only
  // Dormand-Prince too (a stop condition stays set once set: a new one)
  o.integrator = Integrator::DormandPrince45;
  o.rtol = o.atol = 1e-12;  // thousands of steps to t = 10
  polls = 0;
  const StopCondition cancel_again(cancelAtFourthPoll, StopCondition::Clock::time_point::max(),
                                   std::chrono::nanoseconds(0));
  o.stop = &cancel_again;
  EXPECT_THROW(sim.run(Eigen::VectorXd::Zero(3), Eigen::VectorXd::Zero(3), o, nullptr), Stopped);
  EXPECT_TRUE(sim.stats().stopped_early);
  EXPECT_EQ(polls, 4);
  // a deadline that passed stops the run at its first step, after the sample at t = 0
  const StopCondition late(nullptr, StopCondition::Clock::now() - std::chrono::seconds(1));
  o.stop = &late;
  try {
    sim.run(Eigen::VectorXd::Zero(3), Eigen::VectorXd::Zero(3), o, nullptr);
    FAIL() << "not stopped";
  } catch (const Stopped& e) {
    EXPECT_EQ(e.reason(), StopReason::Deadline);
    EXPECT_EQ(e.done(), 1u) << e.what();
  }
  EXPECT_EQ(sim.stats().steps, 0);
  // and a stop condition that never stops changes nothing
  const StopCondition never([] { return false; }, StopCondition::Clock::time_point::max(),
                            std::chrono::nanoseconds(0));
  o.stop = &never;
  o.dt_out = 1.0;
  const SimulationResult with = sim.simulate(Eigen::VectorXd::Zero(3), Eigen::VectorXd::Zero(3), o);
  o.stop = nullptr;
  const SimulationResult without = sim.simulate(Eigen::VectorXd::Zero(3), Eigen::VectorXd::Zero(3), o);
  EXPECT_FALSE(with.stats.stopped_early);
  EXPECT_EQ(with.q, without.q);
  EXPECT_EQ(with.stats.steps, without.stats.steps);
}

TEST(Simulate, RK4AndDormandPrinceAgree) {
  const Model model = buildModelFromDH(stanfordArmDH());
  SimulationOptions o;
  o.t_end = 2.0;
  o.dt_out = 0.5;
  o.damping = Eigen::VectorXd::Constant(6, 0.1);
  const Eigen::VectorXd peak = vec({5.0, 5.0, 5.0, 0.2, 0.05, 0.02});  // N m, N: about the gravity torques
  o.torque = TorqueInput::piecewiseLinear({0.0, 1.0, 2.0},
                                          {Eigen::VectorXd::Zero(6), peak, Eigen::VectorXd::Zero(6)});
  o.rtol = o.atol = 1e-12;
  const SimulationResult a = simulate(model, stanfordStart(), Eigen::VectorXd::Zero(6), o);
  o.integrator = Integrator::RK4;
  o.step = 1e-3;
  const SimulationResult b = simulate(model, stanfordStart(), Eigen::VectorXd::Zero(6), o);
  EXPECT_LT((a.q - b.q).cwiseAbs().maxCoeff(), 1e-8);
  EXPECT_LT((a.qd - b.qd).cwiseAbs().maxCoeff(), 1e-7);
}

/// A sample as it was delivered: t, then q and qd (hexadecimal floating point: every bit).
struct StoredSample {
  double t;
  std::vector<double> x;
};

/// A run and its stored samples and counts.
void expectStoredRun(const Model& model, const Eigen::VectorXd& q0, const Eigen::VectorXd& qd0,
                     const SimulationOptions& o, const std::vector<StoredSample>& stored, std::int64_t steps,
                     std::int64_t rejected, std::int64_t evaluations, const char* what) {
  const SimulationResult r = simulate(model, q0, qd0, o);
  EXPECT_EQ(r.stats.steps, steps) << what;
  EXPECT_EQ(r.stats.rejected, rejected) << what;
  EXPECT_EQ(r.stats.evaluations, evaluations) << what;
  const Eigen::Index first = r.t.size() - static_cast<Eigen::Index>(stored.size());
  ASSERT_GE(first, 0) << what;
  for (std::size_t s = 0; s < stored.size(); ++s) {
    const Eigen::Index k = first + static_cast<Eigen::Index>(s);
    const int n = model.n;
    EXPECT_EQ(r.t[k], stored[s].t) << what << ", sample " << k;
    for (int j = 0; j < n; ++j) {
      EXPECT_EQ(r.q(k, j), stored[s].x[static_cast<std::size_t>(j)])
          << what << ", sample " << k << ", q" << j;
      EXPECT_EQ(r.qd(k, j), stored[s].x[static_cast<std::size_t>(n + j)])
          << what << ", sample " << k << ", qd" << j;
    }
  }
}

TEST(Simulate, DormandPrinceSamplesOfASerialChainAreTheStoredOnes) {
  // The samples and counts of three Dormand-Prince runs of serial chains, stored as the Simulator gave them
  // before tree models took Dormand-Prince on their manifold (the chart's coordinates): a serial chain's
  // run must not have changed by a bit. Rounding differs with fused multiply-add, so such builds skip.
#if defined(__FMA__)
  GTEST_SKIP() << "the stored samples are those of a build without fused multiply-add";
#else
  const Model planar = buildModelFromDH(planarArmDH());
  const Model stanford = buildModelFromDH(stanfordArmDH());
  {
    // the defaults (rtol 1e-8, atol 1e-10, the automatic first step): a free fall into chaotic motion
    SimulationOptions o;
    o.t_end = 2.0;
    o.dt_out = 0.5;
    const std::vector<StoredSample> stored = {
        {0x0p+0, {0x1.3333333333333p-2, -0x1.999999999999ap-3, 0x1.999999999999ap-4, 0x0p+0, 0x1p-1, 0x0p+0}},
        {0x1p-1,
         {-0x1.be66b2e0779d8p+0, -0x1.2e9a62564c7ap-1, -0x1.223bc35738eddp-1, -0x1.8676e3d477eap+2,
          -0x1.1393810b6981dp+2, 0x1.5dbd949ce5b4dp+3}},
        {0x1p+0,
         {-0x1.5543069ce433ap+1, -0x1.7d084e6352824p+0, 0x1.ad4d08e58d2b3p+0, 0x1.a825e53dea3c6p+2,
          -0x1.ac2ba4e32d61ap+2, -0x1.8de92b51bce3ep+2}},
        {0x1.8p+0,
         {-0x1.482a7826720d3p-2, -0x1.82ba8d4b47ba4p-2, 0x1.3f1dcfa811b46p+3, 0x1.8a92ead7f38f5p+2,
          -0x1.9b88526ecffecp+0, 0x1.1ed63fe1299a6p+5}},
        {0x1p+1,
         {-0x1.56c3a0409a829p+0, -0x1.4dece97712222p+0, 0x1.ee1c4af655709p+4, 0x1.07bbdd8ff985fp+0,
          -0x1.847120da382c5p+4, 0x1.16e20334632adp+6}},
    };
    expectStoredRun(planar, vec({0.3, -0.2, 0.1}), vec({0.0, 0.5, 0.0}), o, stored, 637, 70, 4244,
                    "planar arm");
  }
  {
    // a torque schedule, damping, the Cholesky route, sample times, tight tolerances. Stored again on
    // 2026-11-28, when the composite-body products of I(q) were summed in pairs (dot6, spatial.hpp): the
    // same counts, every entry within 7e-13 relative of the samples stored before
    SimulationOptions o;
    o.t_end = 0.6;
    o.sample_times = {0.1, 0.35, 0.6};
    o.rtol = 1e-10;
    o.atol = 1e-12;
    o.route = ForwardRoute::Cholesky;
    o.torque = TorqueInput::piecewiseLinear(
        {0.0, 0.5}, {vec({1, -2, 5, 0.1, 0.2, -0.1}), vec({-1, 3, -4, 0.0, -0.2, 0.3})});
    o.damping = Eigen::VectorXd::Constant(6, 0.1);
    const std::vector<StoredSample> stored = {
        {0x1.999999999999ap-4,
         {0x1.8760df44b9b71p-3, 0x1.14b93af8a9f9cp+0, 0x1.1727f8b306bep-5, 0x1.2eac30534add1p-1,
          0x1.db475977f080bp-1, -0x1.9f0453dfac7c4p-2, 0x1.e9f975eca6dafp-4, 0x1.966a37aa8eddcp-1,
          -0x1.781daf212b581p-2, 0x1.88a8384abcd16p-1, 0x1.6f18f94f741d5p+0, -0x1.fec6947041d22p-3}},
        {0x1.6666666666666p-2,
         {0x1.62875f638fd9ep-3, 0x1.9b89e9dff0563p+0, -0x1.30c8039ea0dd8p-3, 0x1.78ed08700a38p-1,
          0x1.0839ab68a5c9dp+0, -0x1.957af194c2d04p-3, -0x1.f04a30152fa13p-3, 0x1.a62f724fc49ap+1,
          -0x1.ca5f5d89580e5p-1, 0x1.c4090434734d3p-3, -0x1.55523c717bbc7p-1, 0x1.cdd87dafc7a03p+0}},
        {0x1.3333333333333p-1,
         {0x1.5507aee33c8c5p-3, 0x1.38de3e13e971ep+1, -0x1.2e26e6a0c8b51p-2, 0x1.6c7d6262e44dap-1,
          0x1.4a8e24fd1c0f8p-1, 0x1.d5d9533dd0d82p-2, 0x1.bd223719a53d5p-2, 0x1.8b839ef3cce01p+1,
          -0x1.3f4d2e4c0af7p-5, -0x1.ab7ed08e067cfp-5, -0x1.e397f9df3dcbbp+0, 0x1.91574ab2ed5acp+1}},
    };
    expectStoredRun(stanford, vec({10 * kDeg, 60 * kDeg, 0.05, 30 * kDeg, 45 * kDeg, -20 * kDeg}),
                    vec({0.2, -0.1, 0.05, 0.3, 0.0, -0.2}), o, stored, 338, 11, 2096, "Stanford arm");
  }
  {
    // a given first step, max_step, a dense output grid (steps shortened onto it); the last two samples
    SimulationOptions o;
    o.t_end = 1.0;
    o.dt_out = 0.1;
    o.initial_step = 1e-3;
    o.max_step = 0.05;
    const std::vector<StoredSample> stored = {
        {0x1.ccccccccccccdp-1,
         {-0x1.5714e4c63d995p+1, -0x1.eb7bbe94df3cp-1, 0x1.db880bbe428c2p+0, 0x1.08e3fe9747384p+2,
          -0x1.dfdbc7427e4d9p+2, -0x1.79b945faea83bp+1}},
        {0x1p+0,
         {-0x1.15322b4488249p+1, -0x1.749e1b83562a1p+0, 0x1.13f0e8d43e436p+0, 0x1.7f3a092470b1bp+2,
          -0x1.2aa8a78373bc8p+0, -0x1.c2812b6e09696p+3}},
    };
    expectStoredRun(planar, vec({-0.5, 1.0, 0.4}), vec({1.0, 0.0, -2.0}), o, stored, 189, 16, 1231,
                    "planar arm, dense output");
  }
#endif
}

TEST(Simulate, RunsWithoutHeapAllocation) {
#ifdef DENOC_COUNT_ALLOCATIONS
  const Model model = buildModelFromDH(stanfordArmDH());
  Simulator sim(model);
  SimulationOptions o;
  o.t_end = 0.5;
  o.dt_out = 0.01;
  o.damping = Eigen::VectorXd::Constant(6, 0.1);
  o.torque = TorqueInput::piecewiseLinear(
      {0.0, 0.2, 0.4},
      {Eigen::VectorXd::Zero(6), Eigen::VectorXd::Constant(6, 0.1), Eigen::VectorXd::Zero(6)});
  const Eigen::VectorXd q0 = stanfordStart();
  const Eigen::VectorXd qd0 = Eigen::VectorXd::Zero(6);
  double sum = 0.0;
  const SampleCallback callback = [&sum](const Sample& s) {
    sum += s.energy + s.q[0];
    return true;
  };
  for (Integrator integrator : {Integrator::DormandPrince45, Integrator::RK4}) {
    o.integrator = integrator;
    SimulationStats stats;
    EXPECT_EQ(testing::allocationsIn([&] { stats = sim.run(q0, qd0, o, callback); }), 0)
        << "steps " << stats.steps;
    EXPECT_EQ(stats.samples, 51u);
  }
  // the counter works: a vector allocates
  Eigen::VectorXd v;
  EXPECT_GT(testing::allocationsIn([&] { v = Eigen::VectorXd::Ones(100); }), 0);
  EXPECT_GT(sum + v.sum(), 0.0);
#else
  GTEST_SKIP() << testing::kNoAllocationCounting;
#endif
}

// ------------------------------------------------------------------------------------------ validation

TEST(Simulate, ValidationNamesTheField) {
  const Model model = buildModelFromDH(planarArmDH());
  const Eigen::VectorXd z = Eigen::VectorXd::Zero(3);
  const auto run = [&](const SimulationOptions& o, const Eigen::VectorXd& q0 = Eigen::VectorXd::Zero(3),
                       const Eigen::VectorXd& qd0 = Eigen::VectorXd::Zero(3)) {
    simulate(model, q0, qd0, o);
  };
  const SimulationOptions ok;
  expectInvalid([&] { run(ok, Eigen::VectorXd::Zero(2)); }, "q0");
  expectInvalid([&] { run(ok, z, vec({0, NAN, 0})); }, "qd0[1]");
  const auto with = [&](const std::function<void(SimulationOptions&)>& change, const std::string& field) {
    SimulationOptions o;
    change(o);
    expectInvalid([&] { run(o); }, field);
  };
  with([](SimulationOptions& o) { o.t_end = 0.0; }, "t_end");
  with([](SimulationOptions& o) { o.t_end = NAN; }, "t_end");
  with([](SimulationOptions& o) { o.dt_out = -1.0; }, "dt_out");
  with([](SimulationOptions& o) { o.sample_times = {0.5, 0.2}; }, "sample_times[1]");
  with([](SimulationOptions& o) { o.sample_times = {0.5, 2.0}; }, "sample_times[1]");
  with([](SimulationOptions& o) { o.sample_times = {-0.1}; }, "sample_times[0]");
  with([](SimulationOptions& o) { o.rtol = 0.0; }, "rtol");
  with([](SimulationOptions& o) { o.atol = -1e-9; }, "atol");
  with([](SimulationOptions& o) { o.min_step = 0.0; }, "min_step");
  with([](SimulationOptions& o) { o.max_step = -1.0; }, "max_step");
  with([](SimulationOptions& o) { o.safety = 1.5; }, "safety");
  with([](SimulationOptions& o) { o.initial_step = NAN; }, "initial_step");
  with([](SimulationOptions& o) { o.max_factor = 1.0; }, "max_factor");
  with([](SimulationOptions& o) { o.min_factor = 0.0; }, "min_factor");
  with([](SimulationOptions& o) { o.max_steps = 0; }, "max_steps");
  with([](SimulationOptions& o) { o.integrator = Integrator::RK4, o.step = 0.0; }, "step");
  with([](SimulationOptions& o) { o.damping = vec({1, 1}); }, "damping");
  with([](SimulationOptions& o) { o.damping = vec({1, -1, 1}); }, "damping[1]");
  with([](SimulationOptions& o) { o.torque = TorqueInput::constant(vec({1, 2})); }, "torque");
  with(
      [](SimulationOptions& o) {
        o.torque = TorqueInput::piecewiseLinear({0.0}, {vec({1, 2, 3, 4})});
      },
      "torque");
  EXPECT_NO_THROW(run(ok));
}

TEST(Simulate, StepLimitIsAnError) {
  const Model model = buildModelFromDH(planarArmDH());
  SimulationOptions o;
  o.t_end = 10.0;
  o.max_steps = 50;
  o.rtol = o.atol = 1e-12;
  EXPECT_THROW(simulate(model, Eigen::VectorXd::Zero(3), Eigen::VectorXd::Zero(3), o), std::runtime_error);
  o.integrator = Integrator::RK4;
  o.step = 1e-3;
  EXPECT_THROW(simulate(model, Eigen::VectorXd::Zero(3), Eigen::VectorXd::Zero(3), o), std::runtime_error);
  o.max_steps = 10000;
  EXPECT_NO_THROW(simulate(model, Eigen::VectorXd::Zero(3), Eigen::VectorXd::Zero(3), o));
}

// -------------------------------------------------------------------------------------- trajectories

TEST(Trajectory, Eq39DerivativesMatchFiniteDifferences) {
  const CycloidalTrajectory traj = stanfordEq39Trajectory();
  ASSERT_EQ(traj.size(), 6);
  EXPECT_EQ(traj.duration(), 10.0);
  Eigen::VectorXd q(6), qd(6), qdd(6), qp(6), qdp(6), qddp(6), qm(6), qdm(6), qddm(6);
  // end points: the docs/design.md values, at rest
  traj.evaluate(0.0, q, qd, qdd);
  EXPECT_TRUE(q.isApprox(vec({0, 90 * kDeg, 0, 0, 0, 0})));
  EXPECT_EQ(qd.norm() + qdd.norm(), 0.0);
  traj.evaluate(10.0, q, qd, qdd);
  EXPECT_TRUE(q.isApprox(vec({60 * kDeg, 60 * kDeg, 0.1, 60 * kDeg, 60 * kDeg, 60 * kDeg})));
  EXPECT_EQ(qd.norm() + qdd.norm(), 0.0);
  // halfway: the mean of the end points, at the peak velocity 2 (thetaT - theta0) / T, zero acceleration
  traj.evaluate(5.0, q, qd, qdd);
  EXPECT_TRUE(q.isApprox(0.5 * (traj.start() + traj.end()), 1e-14));
  EXPECT_TRUE(qd.isApprox(2.0 * (traj.end() - traj.start()) / 10.0, 1e-14));
  EXPECT_LT(qdd.norm(), 1e-15);
  const double h = 1e-4;
  for (double t : {0.3, 1.7, 2.5, 4.9, 6.1, 8.8, 9.95}) {
    traj.evaluate(t, q, qd, qdd);
    traj.evaluate(t + h, qp, qdp, qddp);
    traj.evaluate(t - h, qm, qdm, qddm);
    EXPECT_LT(((qp - qm) / (2 * h) - qd).cwiseAbs().maxCoeff(), 1e-8) << "t=" << t;
    EXPECT_LT(((qdp - qdm) / (2 * h) - qdd).cwiseAbs().maxCoeff(), 1e-8) << "t=" << t;
    EXPECT_LT(((qp - 2 * q + qm) / (h * h) - qdd).cwiseAbs().maxCoeff(), 1e-5) << "t=" << t;
  }
  // the planar arm's eq. 38: 0 to pi
  const CycloidalTrajectory planar = planarEq38Trajectory();
  Eigen::VectorXd p(3), pd(3), pdd(3);
  planar.evaluate(10.0, p, pd, pdd);
  EXPECT_TRUE(p.isApprox(Eigen::VectorXd::Constant(3, kPi)));
  expectInvalid([] { CycloidalTrajectory(vec({0, 1}), vec({1}), 1.0); }, "thetaT");
  expectInvalid([] { CycloidalTrajectory(vec({0}), vec({1}), 0.0); }, "T");
}

TEST(Trajectory, Eq39TorquesAreConsistent) {
  // the torque history along eq. 39: forward dynamics recovers qdd, and the work of the torques equals the
  // change of mechanical energy (dE/dt = tau . qd)
  const Model model = buildModelFromDH(stanfordArmDH());
  Data data(model);
  const CycloidalTrajectory traj = stanfordEq39Trajectory();
  const std::vector<double> times = uniformTimes(10.0, 1e-3);
  ASSERT_EQ(times.size(), 10001u);
  EXPECT_EQ(times.back(), 10.0);
  const TorqueHistory h = computeTorqueHistory(model, traj, times);
  ASSERT_EQ(h.tau.rows(), 10001);
  Eigen::VectorXd power(h.t.size()), energy(h.t.size());
  for (Eigen::Index k = 0; k < h.t.size(); ++k) {
    const Eigen::VectorXd q = h.q.row(k).transpose(), qd = h.qd.row(k).transpose();
    const Eigen::VectorXd tau = h.tau.row(k).transpose();
    if (k % 500 == 0) {
      EXPECT_LT((forwardDynamics(model, data, q, qd, tau) - h.qdd.row(k).transpose()).norm(), 1e-9);
    }
    power[k] = tau.dot(qd);
    double kin = 0.0, pot = 0.0;
    energy[k] = mechanicalEnergy(model, data, q, qd, kin, pot);
  }
  const double work = trapezoid(h.t, power);
  EXPECT_GT(std::abs(work), 1.0);
  EXPECT_NEAR(work, energy[energy.size() - 1] - energy[0], 1e-6 * std::abs(work));
  // at rest at both ends the torques are the gravity torques
  const Eigen::VectorXd zero = Eigen::VectorXd::Zero(6);
  EXPECT_LT((h.tau.row(0).transpose() - inverseDynamics(model, data, traj.start(), zero, zero)).norm(),
            1e-12);
  expectInvalid([&] { computeTorqueHistory(buildModelFromDH(planarArmDH()), traj, times); }, "trajectory");
}

// Found by fuzzing denocd's Simulate (tests/fuzz/regressions/request): an RK4 step so small that the number
// of steps per output interval exceeded every integer was converted to one (undefined behaviour; on x86 it
// became INT64_MIN, so the interval was crossed in ONE step and the run "succeeded" with wrong states).
// The run must stop at max_steps instead, whatever the step.
TEST(Simulate, TinyRk4StepHitsTheStepLimit) {
  const Model model = buildModelFromDH(planarArmDH());
  SimulationOptions o;
  o.integrator = Integrator::RK4;
  o.t_end = 0.1;
  o.max_steps = 300;
  for (double step : {1e-130, 1e-300, 4.9e-324}) {
    SCOPED_TRACE(step);
    o.step = step;
    try {
      simulate(model, Eigen::VectorXd::Constant(3, 0.1), Eigen::VectorXd::Zero(3), o);
      ADD_FAILURE() << "the run finished";
    } catch (const std::runtime_error& e) {
      EXPECT_NE(std::string(e.what()).find("max_steps (300) exceeded"), std::string::npos) << e.what();
    }
  }
}

}  // namespace
}  // namespace denoc
