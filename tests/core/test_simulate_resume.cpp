// A simulation delivered piecewise (Simulator::start, then advance() a few samples at a time, the way the
// service streams a run as its client reads) against the same run in one piece: bit for bit the same
// samples and statistics whatever the piece size, on random chains and trees (floating and planar roots)
// with torque schedules and damping, with both integrators; the pieces of two runs interleaved on two
// simulators; a free fall delivered one sample at a time conserving energy (the physics, independently of
// any other run); stops and errors ending a run.
#include <gtest/gtest.h>

#include <chrono>
#include <cmath>
#include <random>
#include <vector>

#include "denoc/dh.hpp"
#include "denoc/simulate.hpp"
#include "support/random_chain.hpp"
#include "support/random_tree.hpp"

namespace denoc {
namespace {

struct Recorded {
  std::vector<double> t, q, qd, energy;
  std::vector<std::size_t> index;
};

SampleCallback recordInto(Recorded& r) {
  return [&r](const Sample& s) {
    r.index.push_back(s.index);
    r.t.push_back(s.t);
    r.q.insert(r.q.end(), s.q.data(), s.q.data() + s.q.size());
    r.qd.insert(r.qd.end(), s.qd.data(), s.qd.data() + s.qd.size());
    r.energy.push_back(s.energy);
    return true;
  };
}

/// The options of a run with a piecewise-linear torque and damping on a model of n joints.
SimulationOptions driven(int n, Integrator integrator, std::uint32_t seed) {
  std::mt19937 rng(seed);
  SimulationOptions o;
  o.integrator = integrator;
  o.t_end = 0.37;
  o.dt_out = 0.01;
  o.step = 2e-3;
  o.rtol = 1e-9;
  o.atol = 1e-11;
  std::vector<double> times = {0.0, 0.1, 0.25};
  std::vector<Eigen::VectorXd> values;
  for (std::size_t k = 0; k < times.size(); ++k) values.push_back(testing::randomVectorX(rng, n, 2.0));
  o.torque = TorqueInput::piecewiseLinear(times, values);
  o.damping = testing::randomVectorX(rng, n, 0.5).cwiseAbs();
  return o;
}

void expectSame(const Recorded& a, const Recorded& b, const std::string& what) {
  EXPECT_EQ(a.index, b.index) << what;
  EXPECT_EQ(a.t, b.t) << what;  // exact: the same operations in the same order
  EXPECT_EQ(a.q, b.q) << what;
  EXPECT_EQ(a.qd, b.qd) << what;
  EXPECT_EQ(a.energy, b.energy) << what;
}

TEST(SimulatePiecewise, AnyPieceSizeGivesTheRunBitForBit) {
  for (const Integrator integrator : {Integrator::RK4, Integrator::DormandPrince45}) {
    for (std::uint32_t seed = 1; seed <= 6; ++seed) {
      const int n = 2 + static_cast<int>(seed) * 2;
      // seeds 5 and 6: trees under a floating and a planar root (on the manifold; Dormand-Prince's chart
      // moves on with every step)
      const Model model =
          buildModel(seed <= 4 ? testing::randomChainSpec(n, seed * 7919u)
                               : testing::randomTreeSpec(
                                     n, seed * 7919u, seed == 5 ? RootJoint::Floating : RootJoint::Planar));
      std::mt19937 rng(seed);
      Eigen::VectorXd q0 = testing::randomVectorX(rng, model.nq, 1.0);
      if (model.root == RootJoint::Floating) q0.segment<4>(3).normalize();
      const Eigen::VectorXd qd0 = testing::randomVectorX(rng, model.nv, 0.5);
      const SimulationOptions o = driven(n, integrator, seed);
      Recorded whole;
      Simulator one(model);
      const SimulationStats whole_stats = one.run(q0, qd0, o, recordInto(whole));
      ASSERT_EQ(whole.t.size(), 38u);  // 0, 0.01, ..., 0.37
      for (const std::size_t piece : {std::size_t{1}, std::size_t{3}, std::size_t{37}, std::size_t{38}}) {
        Simulator sim(model);
        Recorded parts;
        sim.start(q0, qd0, o);
        std::size_t calls = 0;
        while (sim.advance(piece, recordInto(parts))) ++calls;
        const std::string what = "piece " + std::to_string(piece) + ", seed " + std::to_string(seed);
        EXPECT_EQ(calls + 1, (whole.t.size() + piece - 1) / piece) << what;
        expectSame(parts, whole, what);
        EXPECT_EQ(sim.stats().steps, whole_stats.steps) << what;
        EXPECT_EQ(sim.stats().rejected, whole_stats.rejected) << what;
        EXPECT_EQ(sim.stats().evaluations, whole_stats.evaluations) << what;
        EXPECT_EQ(sim.stats().samples, whole.t.size()) << what;
        EXPECT_FALSE(sim.stats().stopped_early) << what;
        // over: nothing more, and no sample
        Recorded after;
        EXPECT_FALSE(sim.advance(5, recordInto(after)));
        EXPECT_TRUE(after.t.empty());
      }
    }
  }
}

TEST(SimulatePiecewise, TwoRunsInterleavedOnTwoSimulators) {
  const Model a = buildModel(testing::randomChainSpec(5, 101u));
  const Model b = buildModel(testing::randomChainSpec(7, 202u));
  std::mt19937 rng(3);
  const Eigen::VectorXd qa = testing::randomVectorX(rng, 5, 1.0), qb = testing::randomVectorX(rng, 7, 1.0);
  const SimulationOptions oa = driven(5, Integrator::DormandPrince45, 11);
  const SimulationOptions ob = driven(7, Integrator::RK4, 12);
  Recorded wa, wb, pa, pb;
  Simulator(a).run(qa, Eigen::VectorXd::Zero(5), oa, recordInto(wa));
  Simulator(b).run(qb, Eigen::VectorXd::Zero(7), ob, recordInto(wb));
  Simulator sa(a), sb(b);
  sa.start(qa, Eigen::VectorXd::Zero(5), oa);
  sb.start(qb, Eigen::VectorXd::Zero(7), ob);
  bool more_a = true, more_b = true;
  while (more_a || more_b) {
    if (more_a) more_a = sa.advance(2, recordInto(pa));
    if (more_b) more_b = sb.advance(5, recordInto(pb));
  }
  expectSame(pa, wa, "run a");
  expectSame(pb, wb, "run b");
}

TEST(SimulatePiecewise, FreeFallOneSampleAtATimeConservesEnergy) {
  // no torque, no damping, tight tolerances: the total energy is a constant of the motion
  const Model model = buildModelFromDH(stanfordArmDH());
  Eigen::VectorXd q0(6);
  q0 << 0.3, 1.2, 0.05, -0.4, 0.8, 0.1;
  SimulationOptions o;
  o.t_end = 1.0;
  o.dt_out = 0.05;
  o.rtol = 1e-12;
  o.atol = 1e-14;
  Simulator sim(model);
  sim.start(q0, Eigen::VectorXd::Zero(6), o);
  Recorded r;
  while (sim.advance(1, recordInto(r))) {
  }
  ASSERT_EQ(r.energy.size(), 21u);
  for (std::size_t k = 0; k < r.energy.size(); ++k)
    EXPECT_NEAR(r.energy[k], r.energy[0], 1e-8 * std::max(1.0, std::abs(r.energy[0]))) << "sample " << k;
}

TEST(SimulatePiecewise, StopsAndErrorsEndTheRun) {
  const Model model = buildModelFromDH(planarArmDH());
  const Eigen::VectorXd q0 = Eigen::VectorXd::Constant(3, 0.4), qd0 = Eigen::VectorXd::Zero(3);
  // the callback stops it
  {
    SimulationOptions o;
    o.t_end = 1.0;
    o.dt_out = 0.1;
    Simulator sim(model);
    sim.start(q0, qd0, o);
    Recorded r;
    EXPECT_TRUE(sim.advance(4, recordInto(r)));
    EXPECT_FALSE(sim.advance(4, [](const Sample& s) { return s.index < 5; }));
    EXPECT_TRUE(sim.stats().stopped_early);
    EXPECT_EQ(sim.stats().samples, 6u);
    EXPECT_FALSE(sim.advance(4, recordInto(r)));
    EXPECT_EQ(r.t.size(), 4u);
  }
  // a stop condition stops it between two samples
  {
    SimulationOptions o;
    o.integrator = Integrator::RK4;
    o.step = 1e-4;
    o.t_end = 1.0;
    o.dt_out = 0.5;
    int asked = 0;
    const StopCondition cancel([&asked] { return ++asked >= 3; }, StopCondition::Clock::time_point::max(),
                               std::chrono::nanoseconds(0));
    o.stop = &cancel;
    Simulator sim(model);
    sim.start(q0, qd0, o);
    Recorded r;
    EXPECT_THROW(sim.advance(10, recordInto(r)), Stopped);
    EXPECT_TRUE(sim.stats().stopped_early);
    EXPECT_EQ(r.t.size(), 1u);                     // t = 0 only: stopped within the first interval
    EXPECT_FALSE(sim.advance(10, recordInto(r)));  // the run ended
    EXPECT_EQ(r.t.size(), 1u);
  }
  // the step limit throws and ends the run
  {
    SimulationOptions o;
    o.integrator = Integrator::RK4;
    o.step = 1e-3;
    o.t_end = 1.0;
    o.dt_out = 0.25;
    o.max_steps = 300;
    Simulator sim(model);
    sim.start(q0, qd0, o);
    Recorded r;
    EXPECT_TRUE(sim.advance(2, recordInto(r)));  // t = 0 and 0.25: 250 steps
    EXPECT_THROW(sim.advance(2, recordInto(r)), std::runtime_error);
    EXPECT_FALSE(sim.advance(2, recordInto(r)));
    EXPECT_EQ(r.t.size(), 2u);
  }
  // bad inputs throw at start, and nothing runs
  {
    SimulationOptions o;
    o.t_end = -1.0;
    Simulator sim(model);
    EXPECT_THROW(sim.start(q0, qd0, o), std::invalid_argument);
    Recorded r;
    EXPECT_FALSE(sim.advance(1, recordInto(r)));
    EXPECT_TRUE(r.t.empty());
  }
}

}  // namespace
}  // namespace denoc
