// Timings of what planners call, beside the calls they are measured against, in one run:
//
//   ID, FD                 one inverseDynamics / forwardDynamics call (the yardsticks)
//   IDDerivatives          computeInverseDynamicsDerivatives: dtau/dq, dtau/dqd (and tau)
//   FDDerivatives          computeForwardDynamicsDerivatives: dqdd/dq, dqdd/dqd, dqdd/dtau = I^-1 (and qdd)
//   Jacobian, KDLJacobian  computeFrameJacobian at the tip / KDL ChainJntToJacSolver::JntToJac (tip frame)
//   JdotQd                 computeFrameJdotQd at the tip
//   Lambda                 computeOperationalSpaceInertia at the tip (6 x 6)
//   RolloutAB, Rollout     64 initial states x 100 RK4 steps of 1 ms with / without A and B per step
//                          (rolloutBatch), one thread and a pool of 2 (Panda); states per second as a counter
//   AttachPayload          attachPayload (a new Model with the payload merged), beside ModelCopy (a Model
//                          copy) and BuildModel (buildModel of the payload's spec) (Panda)
//
// MODEL is panda, stanford or chain<n> (bench/models.hpp). Every iteration uses the next of 64 pre-generated
// random states. bench/run_planners.sh runs this and writes the ratio table of docs/planning.md.
#include <benchmark/benchmark.h>

#include <cstdio>
#include <cstdlib>
#include <kdl/chain.hpp>
#include <kdl/chainjnttojacsolver.hpp>
#include <kdl/jacobian.hpp>
#include <memory>
#include <random>
#include <string>
#include <vector>

#include "cases.hpp"
#include "denoc/algorithm/forward_dynamics_derivatives.hpp"
#include "denoc/algorithm/inverse_dynamics_derivatives.hpp"
#include "denoc/denoc.hpp"
#include "denoc/payload.hpp"
#include "denoc/rollout.hpp"
#include "models.hpp"

namespace {

using denoc::Data;
using denoc::Model;
using denoc::ModelSpec;
using denoc::bench::bmFd;
using denoc::bench::bmId;
using denoc::bench::Case;
using denoc::bench::cases;
using denoc::bench::kStates;

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

void bmLambda(benchmark::State& state, const Case* c) {
  Data d(c->model);
  unsigned k = 0;
  const Eigen::Vector3d origin = Eigen::Vector3d::Zero();
  for (auto _ : state) {
    const unsigned s = k++ & (kStates - 1);
    try {
      benchmark::DoNotOptimize(
          denoc::computeOperationalSpaceInertia(c->model, d, c->q[s], c->n, origin).data());
    } catch (const denoc::NumericalError&) {  // a singular state: counted like the others
    }
    benchmark::ClobberMemory();
  }
  state.counters["dof"] = c->n;
}

/// 64 initial states x 100 RK4 steps of 1 ms, random torques, on a pool of `threads` (1: inline).
void bmRollout(benchmark::State& state, const Case* c, unsigned threads, bool linearize) {
  constexpr std::size_t K = 64, T = 100;
  const int n = c->n;
  const std::size_t N = 2 * static_cast<std::size_t>(n);
  const auto model = std::make_shared<const Model>(c->model);
  denoc::BatchPool pool(threads);
  std::vector<double> x0(K * N), u(K * T * static_cast<std::size_t>(n)), states(K * (T + 1) * N);
  std::vector<double> A(linearize ? K * T * N * N : 0),
      B(linearize ? K * T * N * static_cast<std::size_t>(n) : 0);
  std::mt19937 rng(7u);
  std::uniform_real_distribution<double> uni(-1.0, 1.0);
  for (std::size_t k = 0; k < K; ++k) {
    for (int i = 0; i < n; ++i) {
      x0[k * N + static_cast<std::size_t>(i)] = c->q[k][i];
      x0[k * N + static_cast<std::size_t>(n + i)] = c->qd[k][i];
    }
  }
  for (double& v : u) v = 5.0 * uni(rng);
  denoc::RolloutOptions o;
  o.steps = T;
  o.step = 1e-3;
  denoc::RolloutArrays arrays;
  arrays.count = K;
  arrays.x0 = x0.data();
  arrays.u = u.data();
  arrays.states = states.data();
  arrays.A = linearize ? A.data() : nullptr;
  arrays.B = linearize ? B.data() : nullptr;
  for (auto _ : state) {
    denoc::rolloutBatch(pool, model, o, arrays);
    benchmark::DoNotOptimize(states.data());
    benchmark::ClobberMemory();
  }
  state.counters["dof"] = n;
  state.counters["threads"] = threads;
  state.counters["states_per_s"] =
      benchmark::Counter(static_cast<double>(K * T), benchmark::Counter::kIsIterationInvariantRate);
}

denoc::Payload benchPayload() {
  denoc::Payload p;
  p.mass = 1.5;
  p.com = Eigen::Vector3d(0.0, 0.0, 0.05);
  p.inertia = Eigen::Vector3d(0.004, 0.004, 0.002).asDiagonal();
  return p;
}

void bmAttachPayload(benchmark::State& state, const Case* c) {
  const denoc::Payload p = benchPayload();
  for (auto _ : state) {
    Model m = denoc::attachPayload(c->model, p);
    benchmark::DoNotOptimize(m.mass.data());
  }
  state.counters["dof"] = c->n;
}

void bmModelCopy(benchmark::State& state, const Case* c) {
  for (auto _ : state) {
    Model m = c->model;
    benchmark::DoNotOptimize(m.mass.data());
  }
  state.counters["dof"] = c->n;
}

void bmBuildModel(benchmark::State& state, const Case* c) {
  const ModelSpec spec = denoc::specWithPayload(c->model.spec, benchPayload());
  for (auto _ : state) {
    Model m = denoc::buildModel(spec);
    benchmark::DoNotOptimize(m.mass.data());
  }
  state.counters["dof"] = c->n;
}

void registerAll() {
  std::vector<ModelSpec> specs = {denoc::bench::pandaSpec(), denoc::bench::stanfordArmSpec()};
  for (int n : {6, 12, 24, 48, 96}) specs.push_back(denoc::bench::chainSpec(n));
  for (ModelSpec& s : specs) cases().push_back(std::make_unique<Case>(std::move(s), 4242u, true));
  for (const auto& up : cases()) {
    const Case* c = up.get();
    benchmark::RegisterBenchmark(("ID/" + c->name).c_str(), bmId, c);
    benchmark::RegisterBenchmark(("IDDerivatives/" + c->name).c_str(), bmIdDerivatives, c);
    benchmark::RegisterBenchmark(("FD/" + c->name).c_str(), bmFd, c);
    benchmark::RegisterBenchmark(("FDDerivatives/" + c->name).c_str(), bmFdDerivatives, c);
    benchmark::RegisterBenchmark(("Jacobian/" + c->name).c_str(), bmJacobian, c);
    benchmark::RegisterBenchmark(("KDLJacobian/" + c->name).c_str(), bmKdlJacobian, c);
    benchmark::RegisterBenchmark(("JdotQd/" + c->name).c_str(), bmJdotQd, c);
    benchmark::RegisterBenchmark(("Lambda/" + c->name).c_str(), bmLambda, c);
    if (c->name == "panda") {
      for (unsigned threads : {1u, 2u}) {
        const std::string t = "/threads:" + std::to_string(threads);
        benchmark::RegisterBenchmark(("RolloutAB/" + c->name + t).c_str(), bmRollout, c, threads, true)
            ->Unit(benchmark::kMillisecond)
            ->UseRealTime();
        benchmark::RegisterBenchmark(("Rollout/" + c->name + t).c_str(), bmRollout, c, threads, false)
            ->Unit(benchmark::kMillisecond)
            ->UseRealTime();
      }
      benchmark::RegisterBenchmark(("AttachPayload/" + c->name).c_str(), bmAttachPayload, c);
      benchmark::RegisterBenchmark(("ModelCopy/" + c->name).c_str(), bmModelCopy, c);
      benchmark::RegisterBenchmark(("BuildModel/" + c->name).c_str(), bmBuildModel, c);
    }
  }
}

}  // namespace

/// `bench_planners profile MODEL ALGO CALLS`: ALGO called CALLS times in a plain loop over the 64 states, for
/// callgrind's instruction counts (bench/run_planners.sh subtracts a run with 0 calls). ALGO: id, fd, idd,
/// fdd, jacobian, jdotqd, lambda.
int profile(const std::string& model, const std::string& algo, long calls) {
  const Case* c = nullptr;
  for (const auto& up : cases()) {
    if (up->name == model) c = up.get();
  }
  if (!c) return 2;
  Data d(c->model);
  const Eigen::Vector3d origin = Eigen::Vector3d::Zero();
  double sink = 0.0;
  for (long k = 0; k < calls; ++k) {
    const auto s = static_cast<unsigned>(k) & (kStates - 1);
    if (algo == "id") {
      sink += denoc::inverseDynamics(c->model, d, c->q[s], c->qd[s], c->qdd[s])[0];
    } else if (algo == "fd") {
      sink += denoc::forwardDynamics(c->model, d, c->q[s], c->qd[s], c->tau[s])[0];
    } else if (algo == "idd") {
      denoc::computeInverseDynamicsDerivatives(c->model, d, c->q[s], c->qd[s], c->qdd[s]);
      sink += d.dtau_dq(0, 0);
    } else if (algo == "fdd") {
      denoc::computeForwardDynamicsDerivatives(c->model, d, c->q[s], c->qd[s], c->tau[s]);
      sink += d.dqdd_dq(0, 0);
    } else if (algo == "jacobian") {
      sink += denoc::computeFrameJacobian(c->model, d, c->q[s], c->n, origin)(0, 0);
    } else if (algo == "jdotqd") {
      sink += denoc::computeFrameJdotQd(c->model, d, c->q[s], c->qd[s], c->n, origin)[0];
    } else if (algo == "lambda") {
      try {
        sink += denoc::computeOperationalSpaceInertia(c->model, d, c->q[s], c->n, origin)(0, 0);
      } catch (const denoc::NumericalError&) {
      }
    } else {
      return 2;
    }
  }
  std::printf("%g\n", sink);
  return 0;
}

int main(int argc, char** argv) {
  registerAll();
  if (argc == 5 && std::string(argv[1]) == "profile") return profile(argv[2], argv[3], std::atol(argv[4]));
  benchmark::Initialize(&argc, argv);
  if (benchmark::ReportUnrecognizedArguments(argc, argv)) return 1;
  benchmark::RunSpecifiedBenchmarks();
  benchmark::Shutdown();
  return 0;
}
