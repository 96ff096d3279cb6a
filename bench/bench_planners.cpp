// Timings of what planners call, beside the calls they are measured against, in one run:
//
//   ID, FD                 one inverseDynamics / forwardDynamics call (the yardsticks)
//   IDDerivatives          computeInverseDynamicsDerivatives: dtau/dq, dtau/dqd (and tau)
//   FDDerivatives          computeForwardDynamicsDerivatives: dqdd/dq, dqdd/dqd, dqdd/dtau = I^-1 (and qdd)
//   Jacobian, KDLJacobian  computeFrameJacobian at the tip / KDL ChainJntToJacSolver::JntToJac (tip frame)
//   JdotQd                 computeFrameJdotQd at the tip
//   Lambda                 computeOperationalSpaceInertia at the tip (6 x 6)
//   Rollout                64 initial states x 100 RK4 steps of 1 ms with A and B per step (rolloutBatch),
//                          one thread and a pool of 2; states per second as a counter
//   Payload                attachPayload (a new Model with the payload merged) / a Model copy / buildModel
//
// MODEL is panda, stanford or chain<n> (bench/models.hpp). Every iteration uses the next of 64 pre-generated
// random states. bench/run_planners.sh runs this and writes the ratio table of docs/planning.md.
#include <benchmark/benchmark.h>

#include <kdl/chain.hpp>
#include <kdl/chainjnttojacsolver.hpp>
#include <kdl/jacobian.hpp>
#include <memory>
#include <numbers>
#include <random>
#include <string>
#include <vector>

#include "denoc/algorithm/forward_dynamics_derivatives.hpp"
#include "denoc/algorithm/inverse_dynamics_derivatives.hpp"
#include "denoc/denoc.hpp"
#include "kdl_compact.hpp"
#include "models.hpp"
#include "support/kdl_chain.hpp"

namespace {

using denoc::Data;
using denoc::Model;
using denoc::ModelSpec;
using Eigen::VectorXd;

constexpr int kStates = 64;  // a power of two

struct Case {
  std::string name;
  ModelSpec spec;
  Model model;
  KDL::Chain chain;  // compact, then the tip segment
  int n = 0;
  std::vector<VectorXd> q, qd, qdd, tau;
  std::vector<KDL::JntArray> kq;

  explicit Case(ModelSpec s) : name(s.name), spec(std::move(s)), model(denoc::buildModel(spec)) {
    const KDL::Chain full = denoc::testing::toKdlChain(spec);
    chain = denoc::bench::compactChain(full);
    chain.addSegment(full.getSegment(full.getNrOfSegments() - 1));  // the tip frame
    n = model.n;
    std::mt19937 rng(4242u + static_cast<unsigned>(n));
    std::uniform_real_distribution<double> u(-1.0, 1.0);
    for (int k = 0; k < kStates; ++k) {
      VectorXd a(n), b(n), c(n), d(n);
      for (int i = 0; i < n; ++i) {
        const bool prismatic = model.type[i] == denoc::JointType::Prismatic;
        a[i] = prismatic ? 0.2 * u(rng) : std::numbers::pi * u(rng);
        b[i] = u(rng);
        c[i] = u(rng);
        d[i] = 10.0 * u(rng);
      }
      q.push_back(a);
      qd.push_back(b);
      qdd.push_back(c);
      tau.push_back(d);
      kq.push_back(denoc::testing::toKdl(a));
    }
  }
};

std::vector<std::unique_ptr<Case>>& cases() {
  static std::vector<std::unique_ptr<Case>> c;
  return c;
}

void bmId(benchmark::State& state, const Case* c) {
  Data d(c->model);
  unsigned k = 0;
  for (auto _ : state) {
    const unsigned s = k++ & (kStates - 1);
    benchmark::DoNotOptimize(denoc::inverseDynamics(c->model, d, c->q[s], c->qd[s], c->qdd[s]).data());
    benchmark::ClobberMemory();
  }
  state.counters["dof"] = c->n;
}

void bmFd(benchmark::State& state, const Case* c) {
  Data d(c->model);
  unsigned k = 0;
  for (auto _ : state) {
    const unsigned s = k++ & (kStates - 1);
    benchmark::DoNotOptimize(denoc::forwardDynamics(c->model, d, c->q[s], c->qd[s], c->tau[s]).data());
    benchmark::ClobberMemory();
  }
  state.counters["dof"] = c->n;
}

void bmIdDerivatives(benchmark::State& state, const Case* c) {
  Data d(c->model);
  unsigned k = 0;
  for (auto _ : state) {
    const unsigned s = k++ & (kStates - 1);
    denoc::computeInverseDynamicsDerivatives(c->model, d, c->q[s], c->qd[s], c->qdd[s]);
    benchmark::DoNotOptimize(d.dtau_dq.data());
    benchmark::DoNotOptimize(d.dtau_dqd.data());
    benchmark::ClobberMemory();
  }
  state.counters["dof"] = c->n;
}

void bmFdDerivatives(benchmark::State& state, const Case* c) {
  Data d(c->model);
  unsigned k = 0;
  for (auto _ : state) {
    const unsigned s = k++ & (kStates - 1);
    denoc::computeForwardDynamicsDerivatives(c->model, d, c->q[s], c->qd[s], c->tau[s]);
    benchmark::DoNotOptimize(d.dqdd_dq.data());
    benchmark::DoNotOptimize(d.dqdd_dqd.data());
    benchmark::DoNotOptimize(d.Minv.data());
    benchmark::ClobberMemory();
  }
  state.counters["dof"] = c->n;
}

void bmJacobian(benchmark::State& state, const Case* c) {
  Data d(c->model);
  unsigned k = 0;
  const Eigen::Vector3d origin = Eigen::Vector3d::Zero();
  for (auto _ : state) {
    const unsigned s = k++ & (kStates - 1);
    benchmark::DoNotOptimize(denoc::computeFrameJacobian(c->model, d, c->q[s], c->n, origin).data());
    benchmark::ClobberMemory();
  }
  state.counters["dof"] = c->n;
}

void bmKdlJacobian(benchmark::State& state, const Case* c) {
  KDL::ChainJntToJacSolver solver(c->chain);
  KDL::Jacobian jac(c->chain.getNrOfJoints());
  unsigned k = 0;
  for (auto _ : state) {
    const unsigned s = k++ & (kStates - 1);
    solver.JntToJac(c->kq[s], jac);
    benchmark::DoNotOptimize(jac.data.data());
    benchmark::ClobberMemory();
  }
  state.counters["dof"] = c->n;
}

void bmJdotQd(benchmark::State& state, const Case* c) {
  Data d(c->model);
  unsigned k = 0;
  const Eigen::Vector3d origin = Eigen::Vector3d::Zero();
  for (auto _ : state) {
    const unsigned s = k++ & (kStates - 1);
    benchmark::DoNotOptimize(denoc::computeFrameJdotQd(c->model, d, c->q[s], c->qd[s], c->n, origin).data());
    benchmark::ClobberMemory();
  }
  state.counters["dof"] = c->n;
}

void registerAll() {
  std::vector<ModelSpec> specs = {denoc::bench::pandaSpec(), denoc::bench::stanfordArmSpec()};
  for (int n : {6, 12, 24, 48, 96}) specs.push_back(denoc::bench::chainSpec(n));
  for (ModelSpec& s : specs) cases().push_back(std::make_unique<Case>(std::move(s)));
  for (const auto& up : cases()) {
    const Case* c = up.get();
    benchmark::RegisterBenchmark(("ID/" + c->name).c_str(), bmId, c);
    benchmark::RegisterBenchmark(("IDDerivatives/" + c->name).c_str(), bmIdDerivatives, c);
    benchmark::RegisterBenchmark(("FD/" + c->name).c_str(), bmFd, c);
    benchmark::RegisterBenchmark(("FDDerivatives/" + c->name).c_str(), bmFdDerivatives, c);
    benchmark::RegisterBenchmark(("Jacobian/" + c->name).c_str(), bmJacobian, c);
    benchmark::RegisterBenchmark(("KDLJacobian/" + c->name).c_str(), bmKdlJacobian, c);
    benchmark::RegisterBenchmark(("JdotQd/" + c->name).c_str(), bmJdotQd, c);
  }
}

}  // namespace

int main(int argc, char** argv) {
  registerAll();
  benchmark::Initialize(&argc, argv);
  if (benchmark::ReportUnrecognizedArguments(argc, argv)) return 1;
  benchmark::RunSpecifiedBenchmarks();
  benchmark::Shutdown();
  return 0;
}
