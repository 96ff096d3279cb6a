// Timings of the tree recursions (docs/trees.md) beside MuJoCo 2.2 (Debian libmujoco-dev) on the same models,
// in the same binary, and beside the serial recursions on chains.
//
// Benchmarks are named ALGO/LIB/MODEL so that bench/trees_report.py can pair them:
//   ID       inverse dynamics                       denoc::inverseDynamics       MuJoCo mj_inverse
//   FD       O(n) forward dynamics                  denoc::forwardDynamics       MuJoCo mj_forward
//   FDFactor forward dynamics by I(q) and its factor denoc::forwardDynamicsCholesky -
//   M        inertia matrix                         denoc::computeInertiaMatrix  MuJoCo mj_kinematics,
//                                                                                mj_comPos, mj_crb, mj_fullM
//   Minv     I(q)^-1                                denoc::computeInverseInertia -
//   DID      dtau/dq, dtau/dv                       denoc::computeInverseDynamicsDerivatives -
//   DFD      dqdd/dq, dqdd/dv, I^-1                 denoc::computeForwardDynamicsDerivatives -
//   Factor   U D U^T on the tree's sparsity (I(q) given): detail::treeFactor; "dense": Eigen's LLT of the
//            same I(q) (the dense Cholesky a tree-blind library would run)
//   Solve    a solve with the factor: detail::treeSolve; "dense": the LLT's solve
//   IDBatch, FDBatch, FFBatch  inverseDynamicsBatch, forwardDynamicsBatch (Saha), fullFactorBatch (I, U, D,
//            log det) of the 64 states on the calling thread: "lanes" at the default SIMD width, "loop" at
//            width 1 (the engine's state-by-state loop); time per batch of 64
// MODEL: chain<n> (serial recursions), treechain<n> (the same chain on the tree recursions: force_tree),
// legs<k>x<m> (k branches of m joints under a fixed root), legs<k>x<m>_floating, and the robots of
// examples/models/trees (solo12, anymal_c, simple_humanoid: floating; baxter: fixed; each also "_fixed" or
// "_floating" the other way), skipped when their files are missing. MuJoCo needs every link to have mass and
// inertia above its floor of 1e-15: the robots' massless links are raised to 1e-12 in MuJoCo's copy only.
//
// Every iteration uses the next of 64 random states, the same for both libraries. Before timing, MuJoCo's
// inverse dynamics is checked against ours on one state (the run aborts if they disagree by more than 1e-8).
#include <benchmark/benchmark.h>

#include <Eigen/Cholesky>
#include <cstdio>
#include <filesystem>
#include <memory>
#include <random>
#include <stdexcept>
#include <string>
#include <vector>

#include "denoc/batch.hpp"
#include "denoc/denoc.hpp"
#include "models.hpp"
#include "support/mujoco_oracle.hpp"

namespace {

using denoc::Data;
using denoc::Model;
using denoc::ModelSpec;
using denoc::RootJoint;
using Eigen::VectorXd;

constexpr int kStates = 64;

struct Case {
  std::string name;
  Model model;
  std::unique_ptr<denoc::testing::MujocoOracle> mujoco;  // null for the serial chains
  std::vector<VectorXd> q, v, a, tau;
  std::vector<double> q_rows, v_rows, a_rows, tau_rows;      // the same states row-major (strides nq, nv)
  std::vector<VectorXd> mj_qpos, mj_qvel, mj_qacc, mj_qfrc;  // the same states in MuJoCo's coordinates

  Case(std::string n, Model m, bool with_mujoco) : name(std::move(n)), model(std::move(m)) {
    std::mt19937_64 rng(777);
    std::uniform_real_distribution<double> u(-1.0, 1.0);
    Data data(model);
    for (int k = 0; k < kStates; ++k) {
      q.push_back(denoc::randomConfiguration(model, rng));
      VectorXd x(model.nv), y(model.nv);
      for (int i = 0; i < model.nv; ++i) {
        x[i] = u(rng);
        y[i] = u(rng);
      }
      v.push_back(x);
      a.push_back(y);
      tau.push_back(denoc::inverseDynamics(model, data, q.back(), x, y));
      const auto append = [](std::vector<double>& rows, const VectorXd& x) {
        rows.insert(rows.end(), x.data(), x.data() + x.size());
      };
      append(q_rows, q.back());
      append(v_rows, v.back());
      append(a_rows, a.back());
      append(tau_rows, tau.back());
    }
    if (!with_mujoco) return;
    denoc::testing::MujocoOptions options;
    options.floor = 1e-12;
    mujoco = std::make_unique<denoc::testing::MujocoOracle>(model, options);
    for (int k = 0; k < kStates; ++k) {
      mj_qpos.push_back(mujoco->qpos(q[static_cast<std::size_t>(k)]));
      mj_qvel.push_back(mujoco->velocityMap(q[static_cast<std::size_t>(k)]) * v[static_cast<std::size_t>(k)]);
      mj_qacc.push_back(mujoco->qacc(q[static_cast<std::size_t>(k)], v[static_cast<std::size_t>(k)],
                                     a[static_cast<std::size_t>(k)]));
      mj_qfrc.push_back(
          mujoco->mujocoForce(q[static_cast<std::size_t>(k)], tau[static_cast<std::size_t>(k)]));
    }
    const VectorXd ours = tau[0];
    const VectorXd theirs = mujoco->inverseDynamics(q[0], v[0], a[0]);
    if (!((ours - theirs).norm() <= 1e-8 * std::max(1.0, ours.norm())))
      throw std::runtime_error(name + ": MuJoCo's inverse dynamics differ from ours");
  }

  void setMujoco(std::size_t k) const {
    const mjModel* m = mujoco->m();
    mjData* d = mujoco->d();
    for (int i = 0; i < m->nq; ++i) d->qpos[i] = mj_qpos[k][i];
    for (int i = 0; i < m->nv; ++i) {
      d->qvel[i] = mj_qvel[k][i];
      d->qacc[i] = mj_qacc[k][i];
      d->qfrc_applied[i] = mj_qfrc[k][i];
    }
  }
};

std::vector<std::unique_ptr<Case>>& cases() {
  static std::vector<std::unique_ptr<Case>> all;
  return all;
}

/// k branches of m joints each under the root link (a quadruped's legs: 4 x 3).
ModelSpec legsSpec(int k, int m, RootJoint root) {
  ModelSpec chain = denoc::bench::chainSpec(m);
  ModelSpec spec;
  spec.name = "legs" + std::to_string(k) + "x" + std::to_string(m);
  for (int b = 0; b < k; ++b) {
    for (int i = 0; i < m; ++i) {
      denoc::JointSpec j = chain.joints[static_cast<std::size_t>(i)];
      j.name = "b" + std::to_string(b) + "_" + j.name;
      j.link = "b" + std::to_string(b) + "_" + j.link;
      j.parent = i == 0 ? denoc::kRootLink : static_cast<int>(spec.joints.size()) - 1;
      if (i == 0) j.origin += Eigen::Vector3d(0.2 * std::cos(b), 0.2 * std::sin(b), 0.0);
      spec.joints.push_back(j);
    }
  }
  spec.root = root;
  spec.root_mass = 10.0;
  spec.root_inertia = Eigen::Vector3d(0.2, 0.3, 0.4).asDiagonal();
  return spec;
}

void addCases() {
  for (int n : {12, 24}) {
    ModelSpec spec = denoc::bench::chainSpec(n);
    cases().push_back(std::make_unique<Case>("chain" + std::to_string(n), denoc::buildModel(spec), false));
    spec.force_tree = true;
    cases().push_back(std::make_unique<Case>("treechain" + std::to_string(n), denoc::buildModel(spec), true));
  }
  for (auto [k, m] : {std::pair{4, 3}, std::pair{4, 6}}) {
    for (RootJoint root : {RootJoint::Fixed, RootJoint::Floating}) {
      const ModelSpec spec = legsSpec(k, m, root);
      cases().push_back(std::make_unique<Case>(spec.name + (root == RootJoint::Floating ? "_floating" : ""),
                                               denoc::buildModel(spec), true));
    }
  }
  struct Robot {
    const char* file;
    RootJoint usual;
  };
  for (const Robot r : {Robot{"solo12", RootJoint::Floating}, Robot{"anymal_c", RootJoint::Floating},
                        Robot{"simple_humanoid", RootJoint::Floating}, Robot{"baxter", RootJoint::Fixed}}) {
    const std::string path = std::string(DENOC_MODELS_DIR) + "/trees/" + r.file + ".urdf";
    if (!std::filesystem::exists(path)) continue;
    for (RootJoint root : {RootJoint::Fixed, RootJoint::Floating}) {
      denoc::UrdfOptions options;
      options.root = root;
      const std::string suffix = root == r.usual ? "" : root == RootJoint::Floating ? "_floating" : "_fixed";
      cases().push_back(std::make_unique<Case>(r.file + suffix, denoc::loadModelFile(path, options), true));
    }
  }
}

template <typename Body>
void loop(benchmark::State& state, Body&& body) {
  std::size_t k = 0;
  for (auto _ : state) {
    body(k);
    k = (k + 1) & (kStates - 1);
  }
}

void registerAll() {
  for (const auto& owned : cases()) {
    Case* c = owned.get();
    const std::string& name = c->name;
    benchmark::RegisterBenchmark(("ID/denoc/" + name).c_str(), [c](benchmark::State& s) {
      Data data(c->model);
      loop(s, [&](std::size_t k) {
        benchmark::DoNotOptimize(denoc::inverseDynamics(c->model, data, c->q[k], c->v[k], c->a[k]).data());
      });
    });
    benchmark::RegisterBenchmark(("FD/denoc/" + name).c_str(), [c](benchmark::State& s) {
      Data data(c->model);
      loop(s, [&](std::size_t k) {
        benchmark::DoNotOptimize(denoc::forwardDynamics(c->model, data, c->q[k], c->v[k], c->tau[k]).data());
      });
    });
    benchmark::RegisterBenchmark(("FDFactor/denoc/" + name).c_str(), [c](benchmark::State& s) {
      Data data(c->model);
      loop(s, [&](std::size_t k) {
        benchmark::DoNotOptimize(
            denoc::forwardDynamicsCholesky(c->model, data, c->q[k], c->v[k], c->tau[k]).data());
      });
    });
    benchmark::RegisterBenchmark(("M/denoc/" + name).c_str(), [c](benchmark::State& s) {
      Data data(c->model);
      loop(s, [&](std::size_t k) {
        benchmark::DoNotOptimize(denoc::computeInertiaMatrix(c->model, data, c->q[k]).data());
      });
    });
    benchmark::RegisterBenchmark(("Minv/denoc/" + name).c_str(), [c](benchmark::State& s) {
      Data data(c->model);
      loop(s, [&](std::size_t k) {
        benchmark::DoNotOptimize(denoc::computeInverseInertia(c->model, data, c->q[k]).data());
      });
    });
    benchmark::RegisterBenchmark(("DID/denoc/" + name).c_str(), [c](benchmark::State& s) {
      Data data(c->model);
      loop(s, [&](std::size_t k) {
        denoc::computeInverseDynamicsDerivatives(c->model, data, c->q[k], c->v[k], c->a[k]);
        benchmark::DoNotOptimize(data.dtau_dq.data());
      });
    });
    benchmark::RegisterBenchmark(("DFD/denoc/" + name).c_str(), [c](benchmark::State& s) {
      Data data(c->model);
      loop(s, [&](std::size_t k) {
        denoc::computeForwardDynamicsDerivatives(c->model, data, c->q[k], c->v[k], c->tau[k]);
        benchmark::DoNotOptimize(data.dqdd_dq.data());
      });
    });
    if (!c->model.serial) {
      benchmark::RegisterBenchmark(("Factor/denoc/" + name).c_str(), [c](benchmark::State& s) {
        Data data(c->model);
        const Eigen::MatrixXd M = denoc::computeInertiaMatrix(c->model, data, c->q[0]);
        for (auto _ : s) {
          data.M = M;
          benchmark::DoNotOptimize(denoc::detail::treeFactor(c->model, data));
        }
      });
      benchmark::RegisterBenchmark(("Factor/dense/" + name).c_str(), [c](benchmark::State& s) {
        Data data(c->model);
        const Eigen::MatrixXd M = denoc::computeInertiaMatrix(c->model, data, c->q[0]);
        Eigen::LLT<Eigen::MatrixXd> llt(c->model.nv);
        for (auto _ : s) {
          llt.compute(M);
          benchmark::DoNotOptimize(llt.matrixLLT().data());
        }
      });
      benchmark::RegisterBenchmark(("Solve/denoc/" + name).c_str(), [c](benchmark::State& s) {
        Data data(c->model);
        denoc::computeFullFactor(c->model, data, c->q[0]);
        VectorXd x = c->tau[0];
        for (auto _ : s) {
          x = c->tau[0];
          denoc::detail::treeSolve(c->model, data, x);
          benchmark::DoNotOptimize(x.data());
        }
      });
      benchmark::RegisterBenchmark(("Solve/dense/" + name).c_str(), [c](benchmark::State& s) {
        Data data(c->model);
        const Eigen::LLT<Eigen::MatrixXd> llt(denoc::computeInertiaMatrix(c->model, data, c->q[0]));
        VectorXd x = c->tau[0];
        for (auto _ : s) {
          x = c->tau[0];
          llt.solveInPlace(x);
          benchmark::DoNotOptimize(x.data());
        }
      });
    }
    for (const bool lanes : {true, false}) {
      const std::string lib = lanes ? "/lanes/" : "/loop/";
      denoc::BatchOptions o;
      o.width = lanes ? denoc::SimdWidth::Auto : denoc::SimdWidth::Scalar;
      o.max_threads = 1;
      benchmark::RegisterBenchmark(("IDBatch" + lib + name).c_str(), [c, o](benchmark::State& s) {
        denoc::BatchPool pool(1);
        const auto model = std::make_shared<const Model>(c->model);
        std::vector<double> out(c->v_rows.size());
        for (auto _ : s) {
          denoc::inverseDynamicsBatch(pool, model, kStates, c->q_rows.data(), c->v_rows.data(),
                                      c->a_rows.data(), out.data(), nullptr, o);
          benchmark::DoNotOptimize(out.data());
        }
      });
      benchmark::RegisterBenchmark(("FDBatch" + lib + name).c_str(), [c, o](benchmark::State& s) {
        denoc::BatchPool pool(1);
        const auto model = std::make_shared<const Model>(c->model);
        std::vector<double> out(c->v_rows.size());
        for (auto _ : s) {
          denoc::forwardDynamicsBatch(pool, model, denoc::ForwardRoute::Saha, kStates, c->q_rows.data(),
                                      c->v_rows.data(), c->tau_rows.data(), out.data(), o);
          benchmark::DoNotOptimize(out.data());
        }
      });
      benchmark::RegisterBenchmark(("FFBatch" + lib + name).c_str(), [c, o](benchmark::State& s) {
        denoc::BatchPool pool(1);
        const auto model = std::make_shared<const Model>(c->model);
        const std::size_t nv = static_cast<std::size_t>(c->model.nv);
        std::vector<double> I(kStates * nv * nv), U(I.size()), D(kStates * nv), L(kStates);
        denoc::FullFactorBatchOutput ff;
        ff.inertia = I.data();
        ff.u = U.data();
        ff.d = D.data();
        ff.log_det = L.data();
        for (auto _ : s) {
          denoc::fullFactorBatch(pool, model, kStates, c->q_rows.data(), nullptr, ff, o);
          benchmark::DoNotOptimize(I.data());
        }
      });
    }
    if (!c->mujoco) continue;
    benchmark::RegisterBenchmark(("ID/mujoco/" + name).c_str(), [c](benchmark::State& s) {
      loop(s, [&](std::size_t k) {
        c->setMujoco(k);
        mj_inverse(c->mujoco->m(), c->mujoco->d());
        benchmark::DoNotOptimize(c->mujoco->d()->qfrc_inverse);
      });
    });
    benchmark::RegisterBenchmark(("FD/mujoco/" + name).c_str(), [c](benchmark::State& s) {
      loop(s, [&](std::size_t k) {
        c->setMujoco(k);
        mj_forward(c->mujoco->m(), c->mujoco->d());
        benchmark::DoNotOptimize(c->mujoco->d()->qacc);
      });
    });
    benchmark::RegisterBenchmark(("M/mujoco/" + name).c_str(), [c](benchmark::State& s) {
      std::vector<mjtNum> dense(static_cast<std::size_t>(c->model.nv * c->model.nv));
      loop(s, [&](std::size_t k) {
        c->setMujoco(k);
        const mjModel* m = c->mujoco->m();
        mjData* d = c->mujoco->d();
        mj_kinematics(m, d);
        mj_comPos(m, d);
        mj_crb(m, d);
        mj_fullM(m, dense.data(), d->qM);
        benchmark::DoNotOptimize(dense.data());
      });
    });
  }
}

}  // namespace

int main(int argc, char** argv) {
  addCases();
  registerAll();
  benchmark::Initialize(&argc, argv);
  benchmark::RunSpecifiedBenchmarks();
  benchmark::Shutdown();
  return 0;
}
