// Timings of the core algorithms beside Orocos KDL 1.5.1 on the same models, in the same binary.
//
// Benchmarks are named ALGO/LIB/MODEL so that a script can pair ours with KDL's:
//   ID          inverse dynamics               denoc::inverseDynamics        KDL ChainIdSolver_RNE::CartToJnt
//   M           inertia matrix                 denoc::computeInertiaMatrix   KDL ChainDynParam::JntToMass
//   FullFactor  I, U, D and log det            denoc::computeFullFactor      JntToMass + Eigen LDLT of it
//   UDU         U D U^T factors, U not formed  denoc::computeUDU(.., false)  -
//   FD          O(n) forward dynamics          denoc::forwardDynamics (Saha) KDL ChainHdSolver_Vereshchagin
//   FDChol      I(q) + Cholesky forward dyn.   denoc::forwardDynamicsCholesky KDL ChainFdSolver_RNE
//   Minv        I(q)^-1                        denoc::computeInverseInertia  JntToMass + Eigen LLT, solved
//   for 1 FDFixman    O(n) forward dynamics (Fixman) denoc::forwardDynamicsFixman  -
// KDL has no factorization or inverse of its own: its equivalents are JntToMass followed by Eigen's dense
// LDL^T (pivoted, the usual way to factor I(q)) and by Eigen's Cholesky solved for the identity, with the
// decompositions and the result allocated once outside the timing loop.
// MODEL is panda, stanford or chain<n> (the chains of docs/design.md). FD and FDChol are also timed on the
// extra chain sizes of bench::crossoverSizes() to locate their crossover.
//
// Every iteration uses the next of 64 pre-generated random states (KDL caches joint poses when q does not
// change), the same states for both libraries. Before timing, every KDL result is checked against ours on
// one state (the run aborts if they disagree).
#include <benchmark/benchmark.h>

#include <Eigen/Cholesky>
#include <cmath>
#include <cstdio>
#include <kdl/chain.hpp>
#include <kdl/chaindynparam.hpp>
#include <kdl/chainfdsolver_recursive_newton_euler.hpp>
#include <kdl/chainhdsolver_vereshchagin.hpp>
#include <kdl/chainidsolver_recursive_newton_euler.hpp>
#include <kdl/jacobian.hpp>
#include <kdl/jntspaceinertiamatrix.hpp>
#include <memory>
#include <string>
#include <vector>

#include "cases.hpp"
#include "denoc/algorithm/fixman.hpp"
#include "denoc/denoc.hpp"
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
using Eigen::VectorXd;

// ---- ours

void bmM(benchmark::State& state, const Case* c) {
  Data d(c->model);
  unsigned k = 0;
  for (auto _ : state) {
    const unsigned s = k++ & (kStates - 1);
    benchmark::DoNotOptimize(denoc::computeInertiaMatrix(c->model, d, c->q[s]).data());
    benchmark::ClobberMemory();
  }
  state.counters["dof"] = c->n;
}

void bmFullFactor(benchmark::State& state, const Case* c) {
  Data d(c->model);
  unsigned k = 0;
  for (auto _ : state) {
    const unsigned s = k++ & (kStates - 1);
    denoc::computeFullFactor(c->model, d, c->q[s]);
    benchmark::DoNotOptimize(d.U.data());
    benchmark::DoNotOptimize(d.D.data());
    benchmark::ClobberMemory();
  }
  state.counters["dof"] = c->n;
}

void bmUdu(benchmark::State& state, const Case* c) {
  Data d(c->model);
  unsigned k = 0;
  for (auto _ : state) {
    const unsigned s = k++ & (kStates - 1);
    denoc::computeUDU(c->model, d, c->q[s], false);
    benchmark::DoNotOptimize(d.D.data());
    benchmark::ClobberMemory();
  }
  state.counters["dof"] = c->n;
}

void bmFdChol(benchmark::State& state, const Case* c) {
  Data d(c->model);
  unsigned k = 0;
  for (auto _ : state) {
    const unsigned s = k++ & (kStates - 1);
    benchmark::DoNotOptimize(
        denoc::forwardDynamicsCholesky(c->model, d, c->q[s], c->qd[s], c->tau[s]).data());
    benchmark::ClobberMemory();
  }
  state.counters["dof"] = c->n;
}

void bmMinv(benchmark::State& state, const Case* c) {
  Data d(c->model);
  unsigned k = 0;
  for (auto _ : state) {
    const unsigned s = k++ & (kStates - 1);
    benchmark::DoNotOptimize(denoc::computeInverseInertia(c->model, d, c->q[s]).data());
    benchmark::ClobberMemory();
  }
  state.counters["dof"] = c->n;
}

void bmFdFixman(benchmark::State& state, const Case* c) {
  Data d(c->model);
  unsigned k = 0;
  for (auto _ : state) {
    const unsigned s = k++ & (kStates - 1);
    benchmark::DoNotOptimize(denoc::forwardDynamicsFixman(c->model, d, c->q[s], c->qd[s], c->tau[s]).data());
    benchmark::ClobberMemory();
  }
  state.counters["dof"] = c->n;
}

// ---- KDL

void bmKdlId(benchmark::State& state, const Case* c) {
  KDL::ChainIdSolver_RNE solver(c->chain, c->gravity);
  const KDL::Wrenches f_ext(c->chain.getNrOfSegments(), KDL::Wrench::Zero());
  KDL::JntArray tau(c->n);
  unsigned k = 0;
  for (auto _ : state) {
    const unsigned s = k++ & (kStates - 1);
    benchmark::DoNotOptimize(solver.CartToJnt(c->kq[s], c->kqd[s], c->kqdd[s], f_ext, tau));
    benchmark::DoNotOptimize(tau.data.data());
    benchmark::ClobberMemory();
  }
  state.counters["dof"] = c->n;
}

void bmKdlM(benchmark::State& state, const Case* c) {
  KDL::ChainDynParam solver(c->chain, c->gravity);
  KDL::JntSpaceInertiaMatrix H(c->n);
  unsigned k = 0;
  for (auto _ : state) {
    const unsigned s = k++ & (kStates - 1);
    benchmark::DoNotOptimize(solver.JntToMass(c->kq[s], H));
    benchmark::DoNotOptimize(H.data.data());
    benchmark::ClobberMemory();
  }
  state.counters["dof"] = c->n;
}

void bmKdlFullFactor(benchmark::State& state, const Case* c) {
  KDL::ChainDynParam solver(c->chain, c->gravity);
  KDL::JntSpaceInertiaMatrix H(c->n);
  Eigen::LDLT<Eigen::MatrixXd> ldlt(c->n);
  unsigned k = 0;
  for (auto _ : state) {
    const unsigned s = k++ & (kStates - 1);
    benchmark::DoNotOptimize(solver.JntToMass(c->kq[s], H));
    ldlt.compute(H.data);
    benchmark::DoNotOptimize(ldlt.matrixLDLT().data());
    benchmark::ClobberMemory();
  }
  state.counters["dof"] = c->n;
}

void bmKdlMinv(benchmark::State& state, const Case* c) {
  KDL::ChainDynParam solver(c->chain, c->gravity);
  KDL::JntSpaceInertiaMatrix H(c->n);
  Eigen::LLT<Eigen::MatrixXd> llt(c->n);
  Eigen::MatrixXd inv(c->n, c->n);
  unsigned k = 0;
  for (auto _ : state) {
    const unsigned s = k++ & (kStates - 1);
    benchmark::DoNotOptimize(solver.JntToMass(c->kq[s], H));
    llt.compute(H.data);
    inv.setIdentity();
    llt.solveInPlace(inv);
    benchmark::DoNotOptimize(inv.data());
    benchmark::ClobberMemory();
  }
  state.counters["dof"] = c->n;
}

/// Vereshchagin's solver as plain forward dynamics: no end-effector constraints (nc = 0, zero-size alpha
/// and beta), gravity as a root acceleration of the opposite sign.
struct KdlVereshchagin {
  KDL::ChainHdSolver_Vereshchagin solver;
  KDL::Jacobian alpha{0};
  KDL::JntArray beta{0};
  KDL::Wrenches f_ext;
  KDL::JntArray constraint_tau;
  explicit KdlVereshchagin(const Case& c)
      : solver(c.chain, KDL::Twist(-c.gravity, KDL::Vector::Zero()), 0),
        f_ext(c.chain.getNrOfSegments(), KDL::Wrench::Zero()),
        constraint_tau(c.n) {}
  int run(const KDL::JntArray& q, const KDL::JntArray& qd, const KDL::JntArray& tau, KDL::JntArray& qdd) {
    return solver.CartToJnt(q, qd, qdd, alpha, beta, f_ext, tau, constraint_tau);
  }
};

void bmKdlFd(benchmark::State& state, const Case* c) {
  KdlVereshchagin solver(*c);
  KDL::JntArray qdd(c->n);
  unsigned k = 0;
  for (auto _ : state) {
    const unsigned s = k++ & (kStates - 1);
    benchmark::DoNotOptimize(solver.run(c->kq[s], c->kqd[s], c->ktau[s], qdd));
    benchmark::DoNotOptimize(qdd.data.data());
    benchmark::ClobberMemory();
  }
  state.counters["dof"] = c->n;
}

void bmKdlFdChol(benchmark::State& state, const Case* c) {
  KDL::ChainFdSolver_RNE solver(c->chain, c->gravity);
  const KDL::Wrenches f_ext(c->chain.getNrOfSegments(), KDL::Wrench::Zero());
  KDL::JntArray qdd(c->n);
  unsigned k = 0;
  for (auto _ : state) {
    const unsigned s = k++ & (kStates - 1);
    benchmark::DoNotOptimize(solver.CartToJnt(c->kq[s], c->kqd[s], c->ktau[s], f_ext, qdd));
    benchmark::DoNotOptimize(qdd.data.data());
    benchmark::ClobberMemory();
  }
  state.counters["dof"] = c->n;
}

// ---- agreement of the two libraries on state 0

double relDiff(const Eigen::MatrixXd& a, const Eigen::MatrixXd& b) {
  return (a - b).cwiseAbs().maxCoeff() / std::max(1.0, b.cwiseAbs().maxCoeff());
}

/// Largest relative difference between ours and KDL over ID, M, FD and FDChol.
double checkAgainstKdl(const Case& c) {
  Data d(c.model);
  const KDL::Wrenches f_ext(c.chain.getNrOfSegments(), KDL::Wrench::Zero());
  KDL::JntArray out(c.n);
  double worst = 0.0;
  const auto check = [&](int rc, const Eigen::MatrixXd& ours, const Eigen::MatrixXd& theirs,
                         const char* what) {
    const double e = rc < 0 ? INFINITY : relDiff(theirs, ours);
    if (!(e < 1e-5))
      std::fprintf(stderr, "%s: %s differs from KDL by %.3g (rc %d)\n", c.name.c_str(), what, e, rc);
    worst = std::max(worst, e);
  };
  KDL::ChainIdSolver_RNE id(c.chain, c.gravity);
  int rc = id.CartToJnt(c.kq[0], c.kqd[0], c.kqdd[0], f_ext, out);
  check(rc, denoc::inverseDynamics(c.model, d, c.q[0], c.qd[0], c.qdd[0]), out.data, "inverse dynamics");
  KDL::ChainDynParam dp(c.chain, c.gravity);
  KDL::JntSpaceInertiaMatrix H(c.n);
  rc = dp.JntToMass(c.kq[0], H);
  check(rc, denoc::computeInertiaMatrix(c.model, d, c.q[0]), H.data, "inertia matrix");
  denoc::computeFullFactor(c.model, d, c.q[0]);
  check(rc, d.U * d.D.asDiagonal() * d.U.transpose(), H.data, "U D U^T");
  if (c.n <= 50) {
    // long chains are ill-conditioned: the inverse only where it is meaningful
    const Eigen::MatrixXd inv = H.data.llt().solve(Eigen::MatrixXd::Identity(c.n, c.n));
    check(rc, denoc::computeInverseInertia(c.model, d, c.q[0]), inv, "I^-1");
  }
  KdlVereshchagin hd(c);
  rc = hd.run(c.kq[0], c.kqd[0], c.ktau[0], out);
  // long chains are ill-conditioned: compare accelerations through the torques they imply
  const VectorXd qdd_kdl = out.data;
  check(rc, denoc::inverseDynamics(c.model, d, c.q[0], c.qd[0], qdd_kdl), c.tau[0],
        "Vereshchagin (as ID residual)");
  KDL::ChainFdSolver_RNE fd(c.chain, c.gravity);
  rc = fd.CartToJnt(c.kq[0], c.kqd[0], c.ktau[0], f_ext, out);
  const VectorXd qdd_fd = out.data;
  check(rc, denoc::inverseDynamics(c.model, d, c.q[0], c.qd[0], qdd_fd), c.tau[0],
        "ChainFdSolver_RNE (as ID residual)");
  if (c.n <= 50) {
    check(0, denoc::forwardDynamics(c.model, d, c.q[0], c.qd[0], c.tau[0]), qdd_kdl, "forward dynamics");
  }
  return worst;
}

void add(const std::string& name, void (*fn)(benchmark::State&, const Case*), const Case* c) {
  benchmark::RegisterBenchmark(name.c_str(), fn, c);
}

}  // namespace

int main(int argc, char** argv) {
  benchmark::Initialize(&argc, argv);
  if (benchmark::ReportUnrecognizedArguments(argc, argv)) return 1;

  std::vector<ModelSpec> full = {denoc::bench::pandaSpec(), denoc::bench::stanfordArmSpec()};
  for (int n : denoc::bench::chainSizes()) full.push_back(denoc::bench::chainSpec(n));
  std::vector<ModelSpec> extra;
  for (int n : denoc::bench::crossoverSizes()) extra.push_back(denoc::bench::chainSpec(n));

  bool ok = true;
  double worst = 0.0;
  const auto make = [&](ModelSpec spec) -> const Case* {
    cases().push_back(std::make_unique<Case>(std::move(spec), 12345u, false));
    const Case* c = cases().back().get();
    const double e = checkAgainstKdl(*c);
    if (!(e < 1e-5)) ok = false;
    worst = std::max(worst, e);
    return c;
  };
  for (ModelSpec& spec : full) {
    const Case* c = make(std::move(spec));
    const std::string m = "/" + c->name;
    // ours and KDL's side by side, so that drift of a shared machine hits both alike
    add("ID/denoc" + m, bmId, c);
    add("ID/kdl" + m, bmKdlId, c);
    add("M/denoc" + m, bmM, c);
    add("M/kdl" + m, bmKdlM, c);
    add("FullFactor/denoc" + m, bmFullFactor, c);
    add("FullFactor/kdl" + m, bmKdlFullFactor, c);
    add("UDU/denoc" + m, bmUdu, c);
    add("FD/denoc" + m, bmFd, c);
    add("FD/kdl" + m, bmKdlFd, c);
    add("FDChol/denoc" + m, bmFdChol, c);
    add("FDChol/kdl" + m, bmKdlFdChol, c);
    add("Minv/denoc" + m, bmMinv, c);
    add("Minv/kdl" + m, bmKdlMinv, c);
    add("FDFixman/denoc" + m, bmFdFixman, c);
  }
  for (ModelSpec& spec : extra) {
    const Case* c = make(std::move(spec));
    const std::string m = "/" + c->name;
    add("FD/denoc" + m, bmFd, c);
    add("FDChol/denoc" + m, bmFdChol, c);
    add("FD/kdl" + m, bmKdlFd, c);
    add("FDChol/kdl" + m, bmKdlFdChol, c);
  }
  if (!ok) {
    std::fprintf(stderr, "denoc and KDL disagree: not timing\n");
    return 1;
  }
  std::fprintf(stderr, "denoc and KDL agree on every model (largest relative difference %.2g)\n", worst);
  benchmark::RunSpecifiedBenchmarks();
  benchmark::Shutdown();
  return 0;
}
