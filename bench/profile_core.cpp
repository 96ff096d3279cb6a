// A plain loop over one core algorithm, for instruction-level profiling (valgrind --tool=callgrind, perf):
// no benchmark framework around it, the same 64 random states as bench_core.
//
//   bench_profile MODEL ALGO [CALLS]
//     MODEL: panda | stanford | chain<n> | treechain<n> (the chain on the tree recursions: force_tree)
//     ALGO:  id | m | ff | udu | fd | chol | minv | fixman | did | dfd  (ours; did, dfd: the derivatives of
//            the inverse and forward dynamics)
//            kdl-id | kdl-m | kdl-ff | kdl-fd | kdl-chol | kdl-minv (KDL 1.5.1's equivalents, as bench_core)
//
//   valgrind --tool=callgrind --callgrind-out-file=cg.out build/release/bench/bench_profile panda id 10000
//   callgrind_annotate cg.out | head -40
// Prints the sum of the results (so that nothing is optimised away) and the instructions per call are
// callgrind's total divided by CALLS (set-up costs a few hundred thousand instructions).
#include <Eigen/Cholesky>
#include <cstdio>
#include <cstdlib>
#include <kdl/chaindynparam.hpp>
#include <kdl/chainfdsolver_recursive_newton_euler.hpp>
#include <kdl/chainhdsolver_vereshchagin.hpp>
#include <kdl/chainidsolver_recursive_newton_euler.hpp>
#include <kdl/jacobian.hpp>
#include <kdl/jntspaceinertiamatrix.hpp>
#include <random>
#include <string>
#include <vector>

#include "denoc/algorithm/fixman.hpp"
#include "denoc/denoc.hpp"
#include "kdl_compact.hpp"
#include "models.hpp"
#include "support/kdl_chain.hpp"

int main(int argc, char** argv) {
  if (argc < 3) {
    std::fprintf(stderr, "usage: %s MODEL ALGO [CALLS]\n", argv[0]);
    return 2;
  }
  const std::string model_name = argv[1], algo = argv[2];
  const long calls = argc > 3 ? std::atol(argv[3]) : 100000;
  denoc::ModelSpec spec;
  if (model_name == "panda") {
    spec = denoc::bench::pandaSpec();
  } else if (model_name == "stanford") {
    spec = denoc::bench::stanfordArmSpec();
  } else if (model_name.rfind("chain", 0) == 0) {
    spec = denoc::bench::chainSpec(std::atoi(model_name.c_str() + 5));
  } else if (model_name.rfind("treechain", 0) == 0) {
    spec = denoc::bench::chainSpec(std::atoi(model_name.c_str() + 9));
    spec.force_tree = true;
  } else {
    std::fprintf(stderr, "unknown model %s\n", model_name.c_str());
    return 2;
  }
  const denoc::Model model = denoc::buildModel(spec);
  denoc::Data data(model);
  const int n = model.n;
  std::mt19937 rng(12345u);
  std::uniform_real_distribution<double> u(-1.0, 1.0);
  constexpr int kStates = 64;
  std::vector<Eigen::VectorXd> q(kStates, Eigen::VectorXd(n)), qd = q, x = q;
  for (int k = 0; k < kStates; ++k) {
    for (int i = 0; i < n; ++i) {
      q[k][i] = 3.0 * u(rng);
      qd[k][i] = u(rng);
      x[k][i] = u(rng);
    }
  }
  const std::vector<std::string> names = {"id",       "m",        "ff",     "udu",   "fd",     "chol",
                                          "minv",     "fixman",   "kdl-id", "kdl-m", "kdl-ff", "kdl-fd",
                                          "kdl-chol", "kdl-minv", "did",    "dfd"};
  int a = 0;
  while (a < static_cast<int>(names.size()) && names[static_cast<std::size_t>(a)] != algo) ++a;
  if (a == static_cast<int>(names.size())) {
    std::fprintf(stderr, "unknown algorithm %s\n", algo.c_str());
    return 2;
  }
  // KDL's solvers on the compact chain (one segment per joint), with every state converted once
  const KDL::Chain chain = denoc::bench::compactChain(denoc::testing::toKdlChain(spec));
  const KDL::Vector gravity = denoc::testing::toKdl(spec.gravity);
  std::vector<KDL::JntArray> kq, kqd, kx;
  for (int k = 0; k < kStates; ++k) {
    kq.push_back(denoc::testing::toKdl(q[k]));
    kqd.push_back(denoc::testing::toKdl(qd[k]));
    kx.push_back(denoc::testing::toKdl(x[k]));
  }
  KDL::ChainIdSolver_RNE kdl_id(chain, gravity);
  KDL::ChainDynParam kdl_dyn(chain, gravity);
  KDL::ChainFdSolver_RNE kdl_chol(chain, gravity);
  KDL::ChainHdSolver_Vereshchagin kdl_fd(chain, KDL::Twist(-gravity, KDL::Vector::Zero()), 0);
  const KDL::Wrenches f_ext(chain.getNrOfSegments(), KDL::Wrench::Zero());
  KDL::Jacobian alpha(0);
  KDL::JntArray beta(0), out(static_cast<unsigned>(n)), ctau(static_cast<unsigned>(n));
  KDL::JntSpaceInertiaMatrix H(static_cast<unsigned>(n));
  Eigen::LDLT<Eigen::MatrixXd> ldlt(n);
  Eigen::LLT<Eigen::MatrixXd> llt(n);
  Eigen::MatrixXd inv(n, n);

  double sum = 0.0;
  for (long c = 0; c < calls; ++c) {
    const int s = static_cast<int>(c & (kStates - 1));
    switch (a) {
      case 0:
        sum += denoc::inverseDynamics(model, data, q[s], qd[s], x[s])[0];
        break;
      case 1:
        sum += denoc::computeInertiaMatrix(model, data, q[s])(0, 0);
        break;
      case 2:
        denoc::computeFullFactor(model, data, q[s]);
        sum += data.U(0, n - 1) + data.D[0];
        break;
      case 3:
        denoc::computeUDU(model, data, q[s], false);
        sum += data.D[0];
        break;
      case 4:
        sum += denoc::forwardDynamics(model, data, q[s], qd[s], x[s])[0];
        break;
      case 5:
        sum += denoc::forwardDynamicsCholesky(model, data, q[s], qd[s], x[s])[0];
        break;
      case 6:
        sum += denoc::computeInverseInertia(model, data, q[s])(0, 0);
        break;
      case 7:
        sum += denoc::forwardDynamicsFixman(model, data, q[s], qd[s], x[s])[0];
        break;
      case 8:
        kdl_id.CartToJnt(kq[s], kqd[s], kx[s], f_ext, out);
        sum += out(0);
        break;
      case 9:
        kdl_dyn.JntToMass(kq[s], H);
        sum += H(0, 0);
        break;
      case 10:
        kdl_dyn.JntToMass(kq[s], H);
        ldlt.compute(H.data);
        sum += ldlt.vectorD()[0];
        break;
      case 11:
        kdl_fd.CartToJnt(kq[s], kqd[s], out, alpha, beta, f_ext, kx[s], ctau);
        sum += out(0);
        break;
      case 12:
        kdl_chol.CartToJnt(kq[s], kqd[s], kx[s], f_ext, out);
        sum += out(0);
        break;
      case 14:
        denoc::computeInverseDynamicsDerivatives(model, data, q[s], qd[s], x[s]);
        sum += data.dtau_dq(0, n - 1);
        break;
      case 15:
        denoc::computeForwardDynamicsDerivatives(model, data, q[s], qd[s], x[s]);
        sum += data.dqdd_dq(0, n - 1);
        break;
      case 13:
        kdl_dyn.JntToMass(kq[s], H);
        llt.compute(H.data);
        inv.setIdentity();
        llt.solveInPlace(inv);
        sum += inv(0, 0);
        break;
    }
  }
  std::printf("%s %s: %ld calls, sum %.17g\n", model_name.c_str(), algo.c_str(), calls, sum);
  return 0;
}
