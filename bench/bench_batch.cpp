// Batches across threads (denoc/batch.hpp): wall-clock time per state of inverseDynamicsBatch,
// forwardDynamicsBatch (Saha) and fullFactorBatch on the Panda and a 48-joint chain, with pools of 1 and 2
// threads (all of this machine's cores) and batch sizes 1 to 4096, beside a plain loop of single-state calls
// on one Data (no pool). bench/report.py derives the speed-up and an Amdahl/Gustafson model from it.
//
// Benchmarks are named Batch/OP/MODEL/threads:T/count:C (T = 0: the plain loop).
#include <benchmark/benchmark.h>

#include <memory>
#include <random>
#include <string>
#include <vector>

#include "denoc/batch.hpp"
#include "denoc/denoc.hpp"
#include "models.hpp"

namespace {

using denoc::BatchPool;
using denoc::Data;
using denoc::Model;

struct Input {
  std::shared_ptr<const Model> model;
  std::size_t count = 0;
  std::vector<double> q, qd, u, out, uu;  // uu: count x n x n
};

Input makeInput(const denoc::ModelSpec& spec, std::size_t count) {
  Input in;
  in.model = std::make_shared<const Model>(denoc::buildModel(spec));
  in.count = count;
  const std::size_t total = count * static_cast<std::size_t>(in.model->n);
  std::mt19937 rng(7u);
  std::uniform_real_distribution<double> u(-1.0, 1.0);
  in.q.resize(total);
  in.qd.resize(total);
  in.u.resize(total);
  in.out.resize(total);
  in.uu.resize(4 * total * static_cast<std::size_t>(in.model->n));
  for (double& x : in.q) x = 3.0 * u(rng);
  for (double& x : in.qd) x = u(rng);
  for (double& x : in.u) x = u(rng);
  return in;
}

enum class Op { Id, Fd, FullFactor };

void run(Op op, BatchPool* pool, Input& in, Data& data) {
  const Model& m = *in.model;
  const std::size_t n = static_cast<std::size_t>(m.n);
  const std::size_t nn = n * n * in.count;
  if (pool) {
    switch (op) {
      case Op::Id:
        denoc::inverseDynamicsBatch(*pool, in.model, in.count, in.q.data(), in.qd.data(), in.u.data(),
                                    in.out.data());
        break;
      case Op::Fd:
        denoc::forwardDynamicsBatch(*pool, in.model, denoc::ForwardRoute::Saha, in.count, in.q.data(),
                                    in.qd.data(), in.u.data(), in.out.data());
        break;
      case Op::FullFactor: {
        denoc::FullFactorBatchOutput o;
        o.inertia = in.uu.data();
        o.u = in.uu.data() + nn;
        o.d = in.out.data();
        o.log_det = in.uu.data() + 2 * nn;
        denoc::fullFactorBatch(*pool, in.model, in.count, in.q.data(), nullptr, o);
        break;
      }
    }
    return;
  }
  // the plain loop: single-state calls on one Data, copying out as the batch functions do
  using CMap = Eigen::Map<const Eigen::VectorXd>;
  for (std::size_t k = 0; k < in.count; ++k) {
    const std::size_t o = k * n;
    const CMap q(in.q.data() + o, m.n), qd(in.qd.data() + o, m.n), u(in.u.data() + o, m.n);
    switch (op) {
      case Op::Id:
        Eigen::Map<Eigen::VectorXd>(in.out.data() + o, m.n) = denoc::inverseDynamics(m, data, q, qd, u);
        break;
      case Op::Fd:
        Eigen::Map<Eigen::VectorXd>(in.out.data() + o, m.n) = denoc::forwardDynamics(m, data, q, qd, u);
        break;
      case Op::FullFactor: {
        denoc::computeFullFactor(m, data, q);
        double* I = in.uu.data() + o * n;
        double* U = in.uu.data() + nn + o * n;
        for (std::size_t i = 0; i < n; ++i) {
          for (std::size_t j = 0; j < n; ++j) {
            I[i * n + j] = data.M(static_cast<Eigen::Index>(i), static_cast<Eigen::Index>(j));
            U[i * n + j] = data.U(static_cast<Eigen::Index>(i), static_cast<Eigen::Index>(j));
          }
        }
        Eigen::Map<Eigen::VectorXd>(in.out.data() + o, m.n) = data.D;
        in.uu[2 * nn + k] = data.log_det;
        break;
      }
    }
  }
}

void bmBatch(benchmark::State& state, Op op, const denoc::ModelSpec* spec, unsigned threads,
             std::size_t count) {
  Input in = makeInput(*spec, count);
  Data data(*in.model);
  std::unique_ptr<BatchPool> pool = threads == 0 ? nullptr : std::make_unique<BatchPool>(threads);
  for (auto _ : state) {
    run(op, pool.get(), in, data);
    benchmark::DoNotOptimize(in.out.data());
    benchmark::ClobberMemory();
  }
  state.counters["states"] = static_cast<double>(count);
  state.counters["dof"] = in.model->n;
  state.counters["ns_per_state"] =
      benchmark::Counter(static_cast<double>(count),
                         benchmark::Counter::kIsIterationInvariantRate | benchmark::Counter::kInvert);
}

}  // namespace

int main(int argc, char** argv) {
  benchmark::Initialize(&argc, argv);
  if (benchmark::ReportUnrecognizedArguments(argc, argv)) return 1;
  static const denoc::ModelSpec panda = denoc::bench::pandaSpec();
  static const denoc::ModelSpec chain48 = denoc::bench::chainSpec(48);
  const struct {
    const char* name;
    Op op;
  } ops[] = {{"ID", Op::Id}, {"FD", Op::Fd}, {"FullFactor", Op::FullFactor}};
  for (const auto& o : ops) {
    for (const denoc::ModelSpec* spec : {&panda, &chain48}) {
      for (std::size_t count : {std::size_t{1}, std::size_t{16}, std::size_t{64}, std::size_t{256},
                                std::size_t{1024}, std::size_t{4096}}) {
        if (spec == &chain48 && count < 64) continue;
        for (unsigned threads : {0u, 1u, 2u}) {
          const std::string name = std::string("Batch/") + o.name + "/" + spec->name +
                                   "/threads:" + std::to_string(threads) + "/count:" + std::to_string(count);
          benchmark::RegisterBenchmark(name.c_str(), bmBatch, o.op, spec, threads, count)->UseRealTime();
        }
      }
    }
  }
  benchmark::RunSpecifiedBenchmarks();
  benchmark::Shutdown();
  return 0;
}
