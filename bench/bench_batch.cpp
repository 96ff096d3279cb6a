// The batch engine (denoc/batch.hpp): wall-clock time per state of inverseDynamicsBatch,
// forwardDynamicsBatch (Saha) and fullFactorBatch (I, U, D, log det). bench/report.py derives the tables of
// docs/benchmarks.md from it: speed-up of the SIMD widths, threads x lanes and a model for 16 cores.
//
// Benchmark names:
//   Lanes/OP/MODEL/W:w       one thread, 1024 states, SIMD width w (1: the engine's state-by-state loop)
//   Loop/OP/MODEL            one thread, 1024 states, a plain loop of single-state calls on one Data
//   Cores/OP/MODEL/threads:T/W:w   4096 states on a pool of T threads at width w
//   Small/OP/panda/count:C/W:w     small batches (1, 8, 64 states) on one thread: the per-call overhead
// Widths this CPU does not run are left out.
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
using denoc::SimdWidth;

struct Input {
  std::shared_ptr<const Model> model;
  std::size_t count = 0;
  std::vector<double> q, qd, u, out, I, U, D, log_det;
};

Input makeInput(const denoc::ModelSpec& spec, std::size_t count) {
  Input in;
  in.model = std::make_shared<const Model>(denoc::buildModel(spec));
  in.count = count;
  const std::size_t n = static_cast<std::size_t>(in.model->n);
  const std::size_t total = count * n;
  std::mt19937 rng(7u);
  std::uniform_real_distribution<double> u(-1.0, 1.0);
  in.q.resize(total);
  in.qd.resize(total);
  in.u.resize(total);
  in.out.resize(total);
  in.I.resize(total * n);
  in.U.resize(total * n);
  in.D.resize(total);
  in.log_det.resize(count);
  for (double& x : in.q) x = 3.0 * u(rng);
  for (double& x : in.qd) x = u(rng);
  for (double& x : in.u) x = u(rng);
  return in;
}

enum class Op { Id, Fd, FullFactor };

void runBatch(Op op, BatchPool& pool, Input& in, const denoc::BatchOptions& o) {
  switch (op) {
    case Op::Id:
      denoc::inverseDynamicsBatch(pool, in.model, in.count, in.q.data(), in.qd.data(), in.u.data(),
                                  in.out.data(), nullptr, o);
      break;
    case Op::Fd:
      denoc::forwardDynamicsBatch(pool, in.model, denoc::ForwardRoute::Saha, in.count, in.q.data(),
                                  in.qd.data(), in.u.data(), in.out.data(), o);
      break;
    case Op::FullFactor: {
      denoc::FullFactorBatchOutput f;
      f.inertia = in.I.data();
      f.u = in.U.data();
      f.d = in.D.data();
      f.log_det = in.log_det.data();
      denoc::fullFactorBatch(pool, in.model, in.count, in.q.data(), nullptr, f, o);
      break;
    }
  }
}

/// The plain loop: single-state calls on one Data, copying out as the batch functions do.
void runLoop(Op op, Input& in, Data& data) {
  const Model& m = *in.model;
  const std::size_t n = static_cast<std::size_t>(m.n);
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
        double* I = in.I.data() + o * n;
        double* U = in.U.data() + o * n;
        for (std::size_t i = 0; i < n; ++i) {
          for (std::size_t j = 0; j < n; ++j) {
            I[i * n + j] = data.M(static_cast<Eigen::Index>(i), static_cast<Eigen::Index>(j));
            U[i * n + j] = data.U(static_cast<Eigen::Index>(i), static_cast<Eigen::Index>(j));
          }
        }
        Eigen::Map<Eigen::VectorXd>(in.D.data() + o, m.n) = data.D;
        in.log_det[k] = data.log_det;
        break;
      }
    }
  }
}

void counters(benchmark::State& state, const Input& in, int width, unsigned threads) {
  state.counters["states"] = static_cast<double>(in.count);
  state.counters["dof"] = in.model->n;
  state.counters["width"] = width;
  state.counters["threads"] = threads;
  state.counters["ns_per_state"] =
      benchmark::Counter(static_cast<double>(in.count),
                         benchmark::Counter::kIsIterationInvariantRate | benchmark::Counter::kInvert);
}

void bmBatch(benchmark::State& state, Op op, const denoc::ModelSpec* spec, unsigned threads, SimdWidth width,
             std::size_t count) {
  Input in = makeInput(*spec, count);
  BatchPool pool(threads);
  denoc::BatchOptions o;
  o.width = width;
  for (auto _ : state) {
    runBatch(op, pool, in, o);
    benchmark::DoNotOptimize(in.out.data());
    benchmark::ClobberMemory();
  }
  counters(state, in, static_cast<int>(width), threads);
}

void bmLoop(benchmark::State& state, Op op, const denoc::ModelSpec* spec, std::size_t count) {
  Input in = makeInput(*spec, count);
  Data data(*in.model);
  for (auto _ : state) {
    runLoop(op, in, data);
    benchmark::DoNotOptimize(in.out.data());
    benchmark::ClobberMemory();
  }
  counters(state, in, 0, 1);
}

}  // namespace

int main(int argc, char** argv) {
  benchmark::Initialize(&argc, argv);
  if (benchmark::ReportUnrecognizedArguments(argc, argv)) return 1;
  static std::vector<denoc::ModelSpec> specs = {denoc::bench::pandaSpec(), denoc::bench::stanfordArmSpec()};
  for (int n : {6, 12, 24, 48, 96}) specs.push_back(denoc::bench::chainSpec(n));
  const denoc::ModelSpec* panda = &specs[0];
  const denoc::ModelSpec* chain48 = &specs[5];
  const struct {
    const char* name;
    Op op;
  } ops[] = {{"ID", Op::Id}, {"FD", Op::Fd}, {"FullFactor", Op::FullFactor}};
  std::vector<SimdWidth> widths;
  for (SimdWidth w : {SimdWidth::Scalar, SimdWidth::W2, SimdWidth::W4, SimdWidth::W8}) {
    if (denoc::simdWidthSupported(w)) widths.push_back(w);
  }
  const auto wname = [](SimdWidth w) { return "/W:" + std::to_string(static_cast<int>(w)); };
  for (const auto& o : ops) {
    for (const denoc::ModelSpec& spec : specs) {
      const std::string base = std::string(o.name) + "/" + spec.name;
      benchmark::RegisterBenchmark(("Loop/" + base).c_str(), bmLoop, o.op, &spec, std::size_t{1024})
          ->UseRealTime();
      for (SimdWidth w : widths) {
        benchmark::RegisterBenchmark(("Lanes/" + base + wname(w)).c_str(), bmBatch, o.op, &spec, 1u, w,
                                     std::size_t{1024})
            ->UseRealTime();
      }
    }
    for (const denoc::ModelSpec* spec : {panda, chain48}) {
      for (unsigned threads : {1u, 2u}) {
        for (SimdWidth w : widths) {
          const std::string name = std::string("Cores/") + o.name + "/" + spec->name +
                                   "/threads:" + std::to_string(threads) + wname(w);
          benchmark::RegisterBenchmark(name.c_str(), bmBatch, o.op, spec, threads, w, std::size_t{4096})
              ->UseRealTime();
        }
      }
    }
    for (std::size_t count : {std::size_t{1}, std::size_t{8}, std::size_t{64}}) {
      const std::string base = std::string(o.name) + "/panda/count:" + std::to_string(count);
      benchmark::RegisterBenchmark(("Small/" + base + "/W:0").c_str(), bmLoop, o.op, panda, count)
          ->UseRealTime();
      for (SimdWidth w : {SimdWidth::Scalar, denoc::widestSimdWidth()}) {
        benchmark::RegisterBenchmark(("Small/" + base + wname(w)).c_str(), bmBatch, o.op, panda, 1u, w, count)
            ->UseRealTime();
      }
    }
  }
  benchmark::RunSpecifiedBenchmarks();
  benchmark::Shutdown();
  return 0;
}
