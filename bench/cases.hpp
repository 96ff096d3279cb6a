// The benchmark case set of the serial-chain benchmarks (bench_core, bench_planners): one model with its
// random states, in the core's and KDL's types, the list that owns the cases of a program, and the timings
// both programs run (inverse and forward dynamics).
#pragma once

#include <benchmark/benchmark.h>

#include <Eigen/Core>
#include <kdl/chain.hpp>
#include <kdl/jntarray.hpp>
#include <memory>
#include <numbers>
#include <random>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#include "denoc/denoc.hpp"
#include "kdl_compact.hpp"
#include "support/kdl_chain.hpp"

namespace denoc::bench {

inline constexpr int kStates = 64;  // states per case, a power of two

/// One benchmark model with kStates random states drawn from seed + n (joint positions in [-pi, pi], 0.2 m
/// for a prismatic joint; rates and accelerations in [-1, 1]; torques in [-10, 10]), in both libraries'
/// types.
struct Case {
  std::string name;
  ModelSpec spec;
  Model model;
  KDL::Chain chain;  // compact (one segment per joint), then the tip segment when asked; KDL's solvers keep a
                     // reference to it
  KDL::Vector gravity;
  int n = 0;
  std::vector<Eigen::VectorXd> q, qd, qdd, tau;
  std::vector<KDL::JntArray> kq, kqd, kqdd, ktau;

  Case(ModelSpec s, unsigned seed, bool tip_segment)
      : name(s.name), spec(std::move(s)), model(buildModel(spec)) {
    const KDL::Chain full = testing::toKdlChain(spec);
    chain = compactChain(full);
    if (chain.getNrOfJoints() != static_cast<unsigned int>(model.n) ||
        chain.getNrOfSegments() != chain.getNrOfJoints()) {
      throw std::runtime_error(name + ": the KDL chain does not have one segment per joint");
    }
    if (tip_segment) chain.addSegment(full.getSegment(full.getNrOfSegments() - 1));
    gravity = testing::toKdl(spec.gravity);
    n = model.n;
    std::mt19937 rng(seed + static_cast<unsigned>(n));
    std::uniform_real_distribution<double> u(-1.0, 1.0);
    for (int k = 0; k < kStates; ++k) {
      Eigen::VectorXd a(n), b(n), c(n), d(n);
      for (int i = 0; i < n; ++i) {
        const bool prismatic = model.type[i] == JointType::Prismatic;
        a[i] = prismatic ? 0.2 * u(rng) : std::numbers::pi * u(rng);
        b[i] = u(rng);
        c[i] = u(rng);
        d[i] = 10.0 * u(rng);
      }
      q.push_back(a);
      qd.push_back(b);
      qdd.push_back(c);
      tau.push_back(d);
      kq.push_back(testing::toKdl(a));
      kqd.push_back(testing::toKdl(b));
      kqdd.push_back(testing::toKdl(c));
      ktau.push_back(testing::toKdl(d));
    }
  }
};

/// The cases of this program, kept for the benchmarks registered with pointers to them.
inline std::vector<std::unique_ptr<Case>>& cases() {
  static std::vector<std::unique_ptr<Case>> c;
  return c;
}

/// Inverse dynamics timed on the case's states in turn.
inline void bmId(benchmark::State& state, const Case* c) {
  Data d(c->model);
  unsigned k = 0;
  for (auto _ : state) {
    const unsigned s = k++ & (kStates - 1);
    benchmark::DoNotOptimize(denoc::inverseDynamics(c->model, d, c->q[s], c->qd[s], c->qdd[s]).data());
    benchmark::ClobberMemory();
  }
  state.counters["dof"] = c->n;
}

/// O(n) forward dynamics timed on the case's states in turn.
inline void bmFd(benchmark::State& state, const Case* c) {
  Data d(c->model);
  unsigned k = 0;
  for (auto _ : state) {
    const unsigned s = k++ & (kStates - 1);
    benchmark::DoNotOptimize(denoc::forwardDynamics(c->model, d, c->q[s], c->qd[s], c->tau[s]).data());
    benchmark::ClobberMemory();
  }
  state.counters["dof"] = c->n;
}

}  // namespace denoc::bench
