// Rollouts against independent oracles: a zero-torque (and a constant-torque) RK4 rollout equals the
// Simulator's fixed-step RK4 bit for bit; the semi-implicit Euler states equal a hand-written loop over
// forwardDynamics; every step's linearization A, B against central finite differences of the step map and
// against automatic differentiation (dual scalar) of an RK4 / Euler step written here on forwardDynamics;
// batches equal single rollouts bit for bit on pools of 1 to 3 threads; argument errors, non-finite states,
// the stop condition (counted in rollouts and steps, not seconds) and the heap-allocation counter.
#include <gtest/gtest.h>

#include <atomic>
#include <cmath>
#include <random>
#include <string>
#include <vector>

#include "denoc/denoc.hpp"
#include "support/compare.hpp"
#include "support/count_allocations.hpp"  // first: replaces malloc in this binary
#include "support/differentiate.hpp"
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
using RowMajor = Eigen::Matrix<double, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor>;

/// A random initial state [q; qd].
Eigen::VectorXd randomState(const Model& model, std::mt19937& rng) {
  Eigen::VectorXd x(2 * model.n);
  x << randomConfiguration(model, rng), randomVectorX(rng, model.n, 1.0);
  return x;
}

/// One step of the scheme on the dual scalar, from forwardDynamics<Dual>: the AD oracle of A and B.
DualVec dualStep(const ModelTpl<Dual>& m, DataTpl<Dual>& d, StepScheme scheme, double h, const DualVec& x,
                 const DualVec& u) {
  const int n = m.n;
  const auto f = [&](const DualVec& y) {
    DualVec dy(2 * n);
    dy << y.tail(n), forwardDynamics(m, d, y.head(n), y.tail(n), u);
    return dy;
  };
  if (scheme == StepScheme::SemiImplicitEuler) {
    DualVec xn(2 * n);
    xn.tail(n) = x.tail(n) + Dual(h) * forwardDynamics(m, d, x.head(n), x.tail(n), u);
    xn.head(n) = x.head(n) + Dual(h) * xn.tail(n);
    return xn;
  }
  const DualVec k1 = f(x);
  const DualVec k2 = f(x + Dual(0.5 * h) * k1);
  const DualVec k3 = f(x + Dual(0.5 * h) * k2);
  const DualVec k4 = f(x + Dual(h) * k3);
  return x + Dual(h / 6.0) * (k1 + Dual(2.0) * k2 + Dual(2.0) * k3 + k4);
}

/// T steps of one rollout with A and B.
struct Result {
  RowMajor states, A, B;
};

Result run(const Model& model, const RolloutOptions& o, const Eigen::VectorXd& x0, const RowMajor& u,
           bool linearize = true) {
  RolloutWorkspace ws(model);
  const auto T = static_cast<Eigen::Index>(o.steps);
  const int N = 2 * model.n;
  Result r{RowMajor(T + 1, N), RowMajor(T, N * N), RowMajor(T, N * model.n)};
  rollout(model, ws, o, x0.data(), u.data(), r.states.data(), linearize ? r.A.data() : nullptr,
          linearize ? r.B.data() : nullptr);
  return r;
}

class Rollout : public ::testing::TestWithParam<int> {};

std::vector<Robot>& robots() {
  static std::vector<Robot> r = [] {
    std::vector<Robot> v = testing::randomRobots({1, 2, 6, 12, 30});
    for (Robot& x : testing::namedRobots()) v.push_back(std::move(x));
    return v;
  }();
  return r;
}

TEST_P(Rollout, LinearizationAgainstFiniteDifferencesAndAutomaticDifferentiation) {
  const Robot& robot = robots()[static_cast<std::size_t>(GetParam())];
  const Model& model = robot.model;
  const int n = model.n, N = 2 * n;
  const ModelTpl<Dual> dmodel = model.cast<Dual>();
  DataTpl<Dual> ddata(dmodel);
  std::mt19937 rng(81u + static_cast<std::uint32_t>(GetParam()));
  for (StepScheme scheme : {StepScheme::RK4, StepScheme::SemiImplicitEuler}) {
    RolloutOptions o;
    o.scheme = scheme;
    o.step = 2e-3;
    o.steps = 3;
    const Eigen::VectorXd x0 = randomState(model, rng);
    RowMajor u(3, n);
    for (int t = 0; t < 3; ++t) u.row(t) = randomVectorX(rng, n, 3.0).transpose();
    const Result r = run(model, o, x0, u);
    for (int t = 0; t < 3; ++t) {
      const std::string what =
          robot.name + (scheme == StepScheme::RK4 ? " RK4" : " Euler") + " step " + std::to_string(t);
      const Eigen::VectorXd xt = r.states.row(t).transpose();
      const Eigen::VectorXd ut = u.row(t).transpose();
      const Eigen::MatrixXd A = Eigen::Map<const RowMajor>(r.A.row(t).data(), N, N);
      const Eigen::MatrixXd B = Eigen::Map<const RowMajor>(r.B.row(t).data(), N, n);
      // the step map by the rollout itself (one step), differenced
      RolloutOptions one = o;
      one.steps = 1;
      const auto step = [&](const Eigen::VectorXd& x, const Eigen::VectorXd& uu) -> Eigen::VectorXd {
        RowMajor uu_row = uu.transpose();
        return run(model, one, x, uu_row, false).states.row(1).transpose();
      };
      const Eigen::MatrixXd fdA = fdJacobian(
          xt, [&](const Eigen::VectorXd& x) { return step(x, ut); }, 1e-6);
      const Eigen::MatrixXd fdB = fdJacobian(
          ut, [&](const Eigen::VectorXd& v) { return step(xt, v); }, 1e-4);
      const double scale = std::hypot(A.norm(), B.norm());
      EXPECT_TRUE(near(A, fdA, 1e-6, what + ": A vs finite differences", scale));
      EXPECT_TRUE(near(B, fdB, 1e-6, what + ": B vs finite differences", scale));
      // and by AD of a step written here on forwardDynamics<Dual>
      const DualVec U = ut.cast<Dual>(), X = xt.cast<Dual>();
      const Eigen::MatrixXd adA =
          adJacobian(xt, [&](const DualVec& x) { return dualStep(dmodel, ddata, scheme, o.step, x, U); });
      const Eigen::MatrixXd adB =
          adJacobian(ut, [&](const DualVec& v) { return dualStep(dmodel, ddata, scheme, o.step, X, v); });
      EXPECT_TRUE(near(A, adA, 1e-10, what + ": A vs AD", scale));
      EXPECT_TRUE(near(B, adB, 1e-10, what + ": B vs AD", scale));
      // the states with and without linearization are the same
      EXPECT_EQ(r.states, run(model, o, x0, u, false).states) << what;
    }
  }
}

INSTANTIATE_TEST_SUITE_P(Robots, Rollout, ::testing::Range(0, 9),
                         [](const ::testing::TestParamInfo<int>& info) {
                           return testing::parameterName(robots()[static_cast<std::size_t>(info.param)].name);
                         });

TEST(RolloutSimulator, ZeroAndConstantTorqueRK4EqualTheSimulatorBitForBit) {
  for (const Robot& robot :
       {testing::namedRobots()[0], testing::namedRobots()[1], testing::randomRobots({9})[0]}) {
    const Model& model = robot.model;
    const int n = model.n;
    std::mt19937 rng(5u);
    const Eigen::VectorXd x0 = randomState(model, rng);
    for (bool constant : {false, true}) {
      const Eigen::VectorXd tau = constant ? randomVectorX(rng, n, 2.0) : Eigen::VectorXd::Zero(n);
      RolloutOptions o;
      o.scheme = StepScheme::RK4;
      o.step = 1.0 / 1024.0;  // k * step is exact: the Simulator's steps are exactly `step` long
      o.steps = 200;
      RowMajor u(200, n);
      u.rowwise() = tau.transpose();
      for (bool linearize : {false, true}) {
        const Result r = run(model, o, x0, u, linearize);
        SimulationOptions so;
        so.integrator = Integrator::RK4;
        so.step = o.step;
        so.dt_out = o.step;
        so.t_end = 200 * o.step;
        if (constant) so.torque = TorqueInput::constant(tau);
        const SimulationResult sim = simulate(model, x0.head(n), x0.tail(n), so);
        ASSERT_EQ(sim.q.rows(), 201);
        RowMajor expected(201, 2 * n);
        expected << sim.q, sim.qd;
        EXPECT_EQ(r.states, expected) << robot.name << (constant ? " constant torque" : " zero torque")
                                      << (linearize ? " with A, B" : "");
      }
    }
  }
}

TEST(RolloutSimulator, SemiImplicitEulerEqualsAHandWrittenLoop) {
  const Model model = testing::namedRobots()[1].model;
  const int n = model.n;
  std::mt19937 rng(9u);
  const Eigen::VectorXd x0 = randomState(model, rng);
  RowMajor u(50, n);
  for (int t = 0; t < 50; ++t) u.row(t) = randomVectorX(rng, n, 5.0).transpose();
  RolloutOptions o;
  o.scheme = StepScheme::SemiImplicitEuler;
  o.step = 1e-3;
  o.steps = 50;
  const Result r = run(model, o, x0, u);
  Data data(model);
  Eigen::VectorXd q = x0.head(n), qd = x0.tail(n);
  for (int t = 0; t < 50; ++t) {
    const Eigen::VectorXd qdd = forwardDynamics(model, data, q, qd, Eigen::VectorXd(u.row(t).transpose()));
    qd = qd + o.step * qdd;
    q = q + o.step * qd;
    Eigen::VectorXd x(2 * n);
    x << q, qd;
    EXPECT_EQ(Eigen::VectorXd(r.states.row(t + 1).transpose()), x) << "step " << t;
  }
}

TEST(RolloutBatch, EqualsSingleRolloutsOnPoolsOfOneToThreeThreads) {
  const auto model = std::make_shared<const Model>(testing::namedRobots()[1].model);
  const int n = model->n, N = 2 * n;
  const std::size_t K = 13, T = 20;
  std::mt19937 rng(11u);
  RowMajor x0(K, N), u(K * T, n);
  for (std::size_t k = 0; k < K; ++k)
    x0.row(static_cast<Eigen::Index>(k)) = randomState(*model, rng).transpose();
  for (Eigen::Index r = 0; r < u.rows(); ++r) u.row(r) = randomVectorX(rng, n, 3.0).transpose();
  RolloutOptions o;
  o.steps = T;
  o.step = 2e-3;
  for (bool shared : {false, true}) {
    // the single-rollout results
    std::vector<Result> single;
    for (std::size_t k = 0; k < K; ++k) {
      const RowMajor uk =
          shared ? RowMajor(u.topRows(T)) : RowMajor(u.middleRows(static_cast<Eigen::Index>(k * T), T));
      single.push_back(run(*model, o, x0.row(static_cast<Eigen::Index>(k)).transpose(), uk));
    }
    for (unsigned threads : {1u, 2u, 3u}) {
      BatchPool pool(threads);
      RowMajor states(K, (T + 1) * N), A(K, T * N * N), B(K, T * N * n);
      RolloutArrays arrays;
      arrays.count = K;
      arrays.x0 = x0.data();
      arrays.u = u.data();
      arrays.shared_controls = shared;
      arrays.states = states.data();
      arrays.A = A.data();
      arrays.B = B.data();
      BatchOptions grain2;
      grain2.grain = 2;
      rolloutBatch(pool, model, o, arrays, grain2);
      for (std::size_t k = 0; k < K; ++k) {
        const auto row = static_cast<Eigen::Index>(k);
        EXPECT_EQ(states.row(row), single[k].states.reshaped<Eigen::RowMajor>().transpose()) << k;
        EXPECT_EQ(A.row(row), single[k].A.reshaped<Eigen::RowMajor>().transpose()) << k;
        EXPECT_EQ(B.row(row), single[k].B.reshaped<Eigen::RowMajor>().transpose()) << k;
      }
    }
  }
}

TEST(RolloutErrors, ArgumentsNonFiniteStatesAndStops) {
  const auto model = std::make_shared<const Model>(buildModelFromDH(stanfordArmDH()));
  const int n = model->n, N = 2 * n;
  RolloutWorkspace data(*model);
  RolloutOptions o;
  o.steps = 4;
  Eigen::VectorXd x0 = Eigen::VectorXd::Zero(N);
  RowMajor u = RowMajor::Zero(4, n);
  RowMajor states(5, N);
  const auto message = [&](auto&& f) -> std::string {
    try {
      f();
    } catch (const std::exception& e) {
      return e.what();
    }
    return "no exception";
  };
  x0[8] = NAN;
  EXPECT_EQ(message([&] { rollout(*model, data, o, x0.data(), u.data(), states.data()); }),
            "rollout: rollout 0: x0[8] (qd[2]) is nan, expected a finite number");
  x0[8] = 0.0;
  u(2, 5) = INFINITY;
  EXPECT_EQ(message([&] { rollout(*model, data, o, x0.data(), u.data(), states.data()); }),
            "rollout: rollout 0: u at step 2, joint 5 is inf, expected a finite number");
  u(2, 5) = 0.0;
  o.step = 0.0;
  EXPECT_EQ(message([&] { rollout(*model, data, o, x0.data(), u.data(), states.data()); }),
            "rollout: step is 0, expected a positive finite number");
  o.step = 1e-3;
  EXPECT_EQ(message([&] { rollout(*model, data, o, x0.data(), nullptr, states.data()); }),
            "rollout: x0, u and states must not be null");

  // a batch whose rollouts 2 and 4 leave double precision: DivergenceError naming the lower
  const std::size_t K = 6;
  RowMajor X0 = RowMajor::Zero(K, N), S(K, 5 * N);
  X0(2, n + 1) = 1e160;  // qd[1]: the Coriolis forces overflow
  X0(4, n + 1) = 1e160;
  RowMajor U = RowMajor::Zero(K * 4, n);
  RolloutArrays arrays;
  arrays.count = K;
  arrays.x0 = X0.data();
  arrays.u = U.data();
  arrays.states = S.data();
  BatchPool pool(2);
  try {
    rolloutBatch(pool, model, o, arrays);
    FAIL() << "no exception";
  } catch (const DivergenceError& e) {
    EXPECT_EQ(std::string(e.what()).find("rollout 2, step 0: "), 0u) << e.what();
    EXPECT_NE(std::string(e.what()).find(" is "), std::string::npos) << e.what();
  }
  // non-finite controls of a batch name the rollout, the step and the joint
  X0.setZero();
  U(4 * 3 + 1, 0) = NAN;
  EXPECT_EQ(message([&] { rolloutBatch(pool, model, o, arrays); }),
            "rolloutBatch: rollout 3: u at step 1, joint 0 is nan, expected a finite number");
  U.setZero();

  // a stop condition: cancelled after the 3rd poll (one rollout: polls before each step)
  std::atomic<int> polls{0};
  const StopCondition cancel([&] { return ++polls > 3; }, StopCondition::Clock::time_point::max(),
                             std::chrono::nanoseconds(0));
  try {
    rollout(*model, data, o, x0.data(), u.data(), states.data(), nullptr, nullptr, &cancel);
    FAIL() << "no exception";
  } catch (const Stopped& e) {
    EXPECT_EQ(e.reason(), StopReason::Cancelled);
    EXPECT_EQ(e.done(), 3u) << e.what();
  }
  // a deadline in the past stops a batch before any rollout completes
  const StopCondition late(nullptr, StopCondition::Clock::now() - std::chrono::seconds(1));
  try {
    BatchOptions stopped;
    stopped.stop = &late;
    rolloutBatch(pool, model, o, arrays, stopped);
    FAIL() << "no exception";
  } catch (const Stopped& e) {
    EXPECT_EQ(e.reason(), StopReason::Deadline);
    EXPECT_EQ(e.done(), 0u);
    EXPECT_NE(std::string(e.what()).find("rolloutBatch: stopped after 0 of 6 rollouts"), std::string::npos)
        << e.what();
  }
}

TEST(RolloutAllocation, NoHeapAllocation) {
#ifdef DENOC_COUNT_ALLOCATIONS
  for (const Robot& robot : testing::randomRobots({7, 30})) {
    const Model& model = robot.model;
    const int n = model.n, N = 2 * n;
    RolloutWorkspace data(model);
    std::mt19937 rng(3u);
    const Eigen::VectorXd x0 = randomState(model, rng);
    RowMajor u(10, n);
    for (int t = 0; t < 10; ++t) u.row(t) = randomVectorX(rng, n, 1.0).transpose();
    RowMajor states(11, N), A(10, N * N), B(10, N * n);
    const StopCondition never;
    for (StepScheme scheme : {StepScheme::RK4, StepScheme::SemiImplicitEuler}) {
      RolloutOptions o;
      o.scheme = scheme;
      o.steps = 10;
      const long count = testing::allocationsIn([&] {
        rollout(model, data, o, x0.data(), u.data(), states.data(), A.data(), B.data(), &never);
        rollout(model, data, o, x0.data(), u.data(), states.data());
      });
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
