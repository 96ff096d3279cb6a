// The batch engine (denoc/batch.hpp) across threads: every batch function gives what the single-state
// function gives state by state (bit for bit in the default build), at every SIMD width this CPU runs,
// for batch sizes 0, 1, odd and large, pools of 1..8 threads (more threads than states too), several
// grains, several models, and several threads sharing one pool; errors name the batch function, the state
// and the array, the lowest failing state wins; stop conditions stop a batch and report the states done.
// (tests/core/test_batch_lanes.cpp: the lanes on every model; the oracle is tests/support/batch_states.hpp.)
#include <gtest/gtest.h>
#include <sched.h>

#include <atomic>
#include <limits>
#include <memory>
#include <mutex>
#include <set>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

#include "denoc/batch.hpp"
#include "denoc/denoc.hpp"
#include "support/batch_states.hpp"
#include "support/random_chain.hpp"

namespace denoc {
namespace {

using testing::kLaneTolerance;
using testing::randomStates;
using testing::sameStates;
using testing::States;
using testing::supportedWidths;
using testing::widthName;

std::shared_ptr<const Model> makeModel(const ModelSpec& spec) {
  return std::make_shared<const Model>(buildModel(spec));
}

/// A random chain with a prismatic joint and armature on some joints.
std::shared_ptr<const Model> randomModel(int n, std::uint32_t seed) {
  ModelSpec spec = testing::randomChainSpec(n, seed, 0.3);
  for (std::size_t i = 0; i < spec.joints.size(); i += 2)
    spec.joints[i].armature = 0.05 * static_cast<double>(i + 1);
  return makeModel(spec);
}

BatchOptions options(SimdWidth width, std::size_t grain = 0) {
  BatchOptions o;
  o.width = width;
  o.grain = grain;
  return o;
}

/// The single-state results of every batch function for one model and batch of states.
struct Expected {
  std::vector<double> id, id_wrench, fd[3];
  testing::Factor factor;
  Expected(const Model& m, const States& s)
      : id(testing::referenceId(m, s, false)),
        id_wrench(testing::referenceId(m, s, true)),
        factor(testing::referenceFactor(m, s)) {
    for (ForwardRoute r : {ForwardRoute::Saha, ForwardRoute::Cholesky, ForwardRoute::Fixman})
      fd[static_cast<int>(r)] = testing::referenceFd(m, s, r);
  }
};

void expectBatchesMatch(BatchPool& pool, const std::shared_ptr<const Model>& model, const States& s,
                        const Expected& want, const BatchOptions& o) {
  const std::size_t n = static_cast<std::size_t>(model->n);
  const std::string what = std::string("n=") + std::to_string(n) + " count=" + std::to_string(s.count) +
                           " threads=" + std::to_string(pool.threads()) +
                           " grain=" + std::to_string(o.grain) + " " + widthName(o.width);
  std::vector<double> out(s.q.size(), -1.0);
  inverseDynamicsBatch(pool, model, s.count, s.q.data(), s.qd.data(), s.u.data(), out.data(), nullptr, o);
  EXPECT_TRUE(sameStates(out, want.id, n, kLaneTolerance)) << "inverse dynamics, " << what;
  inverseDynamicsBatch(pool, model, s.count, s.q.data(), s.qd.data(), s.u.data(), out.data(), s.wrench.data(),
                       o);
  EXPECT_TRUE(sameStates(out, want.id_wrench, n, kLaneTolerance)) << "inverse dynamics with wrench, " << what;
  for (ForwardRoute route : {ForwardRoute::Saha, ForwardRoute::Cholesky, ForwardRoute::Fixman}) {
    forwardDynamicsBatch(pool, model, route, s.count, s.q.data(), s.qd.data(), s.u.data(), out.data(), o);
    EXPECT_TRUE(sameStates(out, want.fd[static_cast<int>(route)], n, kLaneTolerance))
        << "forward dynamics, route " << static_cast<int>(route) << ", " << what;
  }
  for (bool optional : {false, true}) {
    testing::Factor f(s);
    fullFactorBatch(pool, model, s.count, s.q.data(), optional ? s.qd.data() : nullptr,
                    f.out(optional, optional), o);
    EXPECT_TRUE(sameStates(f.I, want.factor.I, n * n, kLaneTolerance)) << "I, " << what;
    EXPECT_TRUE(sameStates(f.U, want.factor.U, n * n, kLaneTolerance)) << "U, " << what;
    EXPECT_TRUE(sameStates(f.D, want.factor.D, n, kLaneTolerance)) << "D, " << what;
    EXPECT_TRUE(sameStates(f.log_det, want.factor.log_det, 1, kLaneTolerance)) << "log det, " << what;
    if (optional) {
      EXPECT_TRUE(sameStates(f.Minv, want.factor.Minv, n * n, kLaneTolerance)) << "I^-1, " << what;
      EXPECT_TRUE(sameStates(f.C, want.factor.C, n * n, 0.0)) << "C, " << what;
      EXPECT_TRUE(sameStates(f.bias, want.factor.bias, n, 0.0)) << "bias, " << what;
      EXPECT_TRUE(sameStates(f.g, want.factor.g, n, 0.0)) << "g, " << what;
    }
  }
}

TEST(Batch, PoolSize) {
  EXPECT_EQ(BatchPool(3).threads(), 3u);
  EXPECT_EQ(BatchPool(1).threads(), 1u);
  EXPECT_EQ(BatchPool().threads(), usableCores());
  // the default follows the calling thread's affinity mask, not the host's core count: a thread pinned to
  // one core gets a pool of one thread
  unsigned pinned_cores = 0, pinned_threads = 0;
  std::thread([&] {
    cpu_set_t one;
    CPU_ZERO(&one);
    CPU_SET(static_cast<int>(::sched_getcpu() < 0 ? 0 : ::sched_getcpu()), &one);
    ASSERT_EQ(::sched_setaffinity(0, sizeof one, &one), 0);
    pinned_cores = usableCores();
    pinned_threads = BatchPool().threads();
  }).join();
  EXPECT_EQ(pinned_cores, 1u);
  EXPECT_EQ(pinned_threads, 1u);
  cpu_set_t mine;
  CPU_ZERO(&mine);
  ASSERT_EQ(::sched_getaffinity(0, sizeof mine, &mine), 0);
  EXPECT_EQ(usableCores(), static_cast<unsigned>(CPU_COUNT(&mine)));
}

TEST(Batch, EqualsSingleStateCalls) {
  const std::vector<std::shared_ptr<const Model>> models = {makeModel(specFromDH(stanfordArmDH())),
                                                            randomModel(7, 11), randomModel(30, 12)};
  std::vector<std::unique_ptr<BatchPool>> pools;
  for (unsigned threads : {1u, 2u, 3u, 8u}) pools.push_back(std::make_unique<BatchPool>(threads));
  for (const auto& model : models) {
    for (std::size_t count : {0u, 1u, 2u, 3u, 7u, 17u, 64u}) {
      const States s = randomStates(model->n, count, static_cast<std::uint32_t>(count * 31 + 5));
      const Expected want(*model, s);
      for (const auto& pool : pools) {
        for (std::size_t grain : {std::size_t{1}, std::size_t{4}, std::size_t{0}}) {
          for (SimdWidth width : supportedWidths())
            expectBatchesMatch(*pool, model, s, want, options(width, grain));
        }
      }
    }
  }
}

TEST(Batch, ManyModelsOnOnePool) {
  // more models than a worker keeps workspaces for: workspaces are dropped and made again
  BatchPool pool(3);
  std::vector<std::shared_ptr<const Model>> models;
  for (int k = 0; k < 12; ++k) models.push_back(randomModel(3 + k % 5, 100u + static_cast<std::uint32_t>(k)));
  for (int round = 0; round < 2; ++round) {
    for (const auto& model : models) {
      const States s = randomStates(model->n, 40, 7u);
      std::vector<double> tau(s.q.size());
      for (SimdWidth width : supportedWidths()) {
        inverseDynamicsBatch(pool, model, s.count, s.q.data(), s.qd.data(), s.u.data(), tau.data(), nullptr,
                             options(width, 1));
        EXPECT_TRUE(sameStates(tau, testing::referenceId(*model, s, false), model->n, kLaneTolerance))
            << widthName(width);
      }
    }
  }
}

TEST(Batch, SeveralThreadsShareOnePool) {
  BatchPool pool(3);
  const std::vector<std::shared_ptr<const Model>> models = {randomModel(6, 21), randomModel(9, 22),
                                                            makeModel(specFromDH(stanfordArmDH()))};
  std::vector<States> states;
  std::vector<std::vector<double>> expected;
  for (std::size_t k = 0; k < models.size(); ++k) {
    states.push_back(randomStates(models[k]->n, 101, static_cast<std::uint32_t>(k)));
    expected.push_back(testing::referenceFd(*models[k], states.back(), ForwardRoute::Saha));
  }
  const std::vector<SimdWidth> widths = supportedWidths();
  std::vector<int> mismatches(6, 0);
  std::vector<std::thread> callers;
  for (int t = 0; t < 6; ++t) {
    callers.emplace_back([&, t] {
      const std::size_t k = static_cast<std::size_t>(t) % models.size();
      const States& s = states[k];
      std::vector<double> qdd(s.q.size());
      for (int round = 0; round < 40; ++round) {
        forwardDynamicsBatch(pool, models[k], ForwardRoute::Saha, s.count, s.q.data(), s.qd.data(),
                             s.u.data(), qdd.data(),
                             options(widths[static_cast<std::size_t>(round) % widths.size()],
                                     1 + static_cast<std::size_t>(round % 7)));
        if (!sameStates(qdd, expected[k], models[k]->n, kLaneTolerance))
          ++mismatches[static_cast<std::size_t>(t)];
      }
    });
  }
  for (std::thread& c : callers) c.join();
  for (int t = 0; t < 6; ++t) EXPECT_EQ(mismatches[static_cast<std::size_t>(t)], 0) << "caller " << t;
}

/// The message of the BatchError an inverse dynamics batch throws, or "" when it does not throw.
std::string idError(BatchPool& pool, const std::shared_ptr<const Model>& model, const States& s,
                    const BatchOptions& o, std::size_t* state = nullptr) {
  std::vector<double> out(s.q.size());
  try {
    inverseDynamicsBatch(pool, model, s.count, s.q.data(), s.qd.data(), s.u.data(), out.data(), nullptr, o);
  } catch (const BatchError& e) {
    if (state) *state = e.state();
    return e.what();
  }
  return "";
}

TEST(Batch, ErrorsNameTheLowestFailingState) {
  const auto model = randomModel(5, 3);
  for (unsigned threads : {1u, 2u, 4u}) {
    BatchPool pool(threads);
    for (SimdWidth width : supportedWidths()) {
      const BatchOptions o = options(width, 1);
      States s = randomStates(model->n, 50, 9u);
      s.qd[static_cast<std::size_t>(40 * model->n + 2)] = std::numeric_limits<double>::infinity();
      std::size_t state = 0;
      std::string msg = idError(pool, model, s, o, &state);
      EXPECT_NE(msg.find("inverseDynamicsBatch: state 40: inverseDynamics: qd[2] is inf"), std::string::npos)
          << msg;
      EXPECT_EQ(state, 40u);
      s.q[static_cast<std::size_t>(3 * model->n + 1)] = std::numeric_limits<double>::quiet_NaN();
      msg = idError(pool, model, s, o, &state);
      EXPECT_NE(msg.find("state 3: inverseDynamics: q[1] is nan"), std::string::npos) << msg;
      EXPECT_EQ(state, 3u);
      // the pool still works afterwards
      EXPECT_EQ(idError(pool, model, randomStates(model->n, 50, 10u), o), "");
    }
  }
}

TEST(Batch, BadStateInEveryLaneAndInThePaddedTail) {
  // a bad entry at every position of a group of 8 and in a last group of fewer states than lanes: the
  // error is the single-state function's for that state, at every width
  const auto model = randomModel(6, 31);
  BatchPool pool(1);
  for (SimdWidth width : supportedWidths()) {
    for (std::size_t count : {13u, 16u}) {
      for (std::size_t bad = 0; bad < count; ++bad) {
        States s = randomStates(model->n, count, 17u);
        s.u[bad * static_cast<std::size_t>(model->n) + 4] = -std::numeric_limits<double>::infinity();
        std::size_t state = 0;
        const std::string msg = idError(pool, model, s, options(width), &state);
        EXPECT_EQ(state, bad) << widthName(width) << " " << msg;
        EXPECT_NE(msg.find("inverseDynamics: qdd[4] is -inf"), std::string::npos) << msg;
      }
    }
  }
}

TEST(Batch, StatesBeyondDoublePrecisionBehaveAsSingleStates) {
  // a prismatic joint pushed to 1e200 m: whatever the single-state functions do with it (an error, or
  // numbers that are not finite), the batch does for that state, at every width and on every route
  ModelSpec spec = testing::randomChainSpec(5, 41, 0.0);
  spec.joints[2].type = JointType::Prismatic;
  const auto model = makeModel(spec);
  States s = randomStates(model->n, 11, 43u);
  s.q[6 * 5 + 2] = 1e200;
  BatchPool pool(2);
  for (ForwardRoute route : {ForwardRoute::Saha, ForwardRoute::Cholesky, ForwardRoute::Fixman}) {
    // the single-state outcome, state by state
    std::string single_error;
    std::size_t single_state = 0;
    std::vector<double> want(s.q.size());
    for (std::size_t k = 0; k < s.count && single_error.empty(); ++k) {
      Data d(*model);
      const testing::CMap q(s.q.data() + 5 * k, 5), qd(s.qd.data() + 5 * k, 5), tau(s.u.data() + 5 * k, 5);
      try {
        Eigen::Map<Eigen::VectorXd>(want.data() + 5 * k, 5) =
            route == ForwardRoute::Saha       ? forwardDynamics(*model, d, q, qd, tau)
            : route == ForwardRoute::Cholesky ? forwardDynamicsCholesky(*model, d, q, qd, tau)
                                              : forwardDynamicsFixman(*model, d, q, qd, tau);
      } catch (const std::exception& e) {
        single_error = e.what();
        single_state = k;
      }
    }
    for (SimdWidth width : supportedWidths()) {
      std::vector<double> got(s.q.size());
      try {
        forwardDynamicsBatch(pool, model, route, s.count, s.q.data(), s.qd.data(), s.u.data(), got.data(),
                             options(width, 1));
        EXPECT_EQ(single_error, "") << widthName(width);
        EXPECT_TRUE(sameStates(got, want, 5, 0.0))
            << widthName(width) << " route " << static_cast<int>(route);
      } catch (const BatchError& e) {
        EXPECT_EQ(e.state(), single_state);
        EXPECT_EQ(std::string(e.what()), std::string("forwardDynamicsBatch: state ") +
                                             std::to_string(single_state) + ": " + single_error);
        // beyond the accepted range (check.hpp): refused as an argument by every route before any work
        EXPECT_THROW(std::rethrow_exception(e.cause()), std::invalid_argument);
      }
    }
  }
}

TEST(Batch, NullArgumentsAndUnknownWidthsAreRefused) {
  BatchPool pool(2);
  const auto model = randomModel(4, 5);
  std::vector<double> a(8), b(8);
  EXPECT_THROW(inverseDynamicsBatch(pool, nullptr, 2, a.data(), a.data(), a.data(), b.data()),
               std::invalid_argument);
  EXPECT_THROW(inverseDynamicsBatch(pool, model, 2, nullptr, a.data(), a.data(), b.data()),
               std::invalid_argument);
  EXPECT_THROW(
      forwardDynamicsBatch(pool, model, ForwardRoute::Saha, 2, a.data(), a.data(), a.data(), nullptr),
      std::invalid_argument);
  EXPECT_THROW(forwardDynamicsBatch(pool, model, static_cast<ForwardRoute>(9), 2, a.data(), a.data(),
                                    a.data(), b.data()),
               std::invalid_argument);
  FullFactorBatchOutput out;
  EXPECT_THROW(fullFactorBatch(pool, model, 2, a.data(), nullptr, out), std::invalid_argument);
  // count 0 needs no arrays at all
  EXPECT_NO_THROW(inverseDynamicsBatch(pool, model, 0, nullptr, nullptr, nullptr, nullptr));
  EXPECT_NO_THROW(fullFactorBatch(pool, model, 0, nullptr, nullptr, out));
  // a width that does not exist, and one this CPU does not run (when there is one)
  EXPECT_THROW(inverseDynamicsBatch(pool, model, 2, a.data(), a.data(), a.data(), b.data(), nullptr,
                                    options(static_cast<SimdWidth>(3))),
               std::invalid_argument);
  if (!simdWidthSupported(SimdWidth::W8)) {
    EXPECT_THROW(inverseDynamicsBatch(pool, model, 2, a.data(), a.data(), a.data(), b.data(), nullptr,
                                      options(SimdWidth::W8)),
                 std::invalid_argument);
  }
}

// ---- stopping

TEST(BatchStop, PassedDeadlineStopsBeforeAnyState) {
  const auto model = randomModel(6, 51);
  const States s = randomStates(model->n, 300, 52u);
  std::vector<double> out(s.q.size());
  for (unsigned threads : {1u, 2u}) {
    BatchPool pool(threads);
    for (SimdWidth width : supportedWidths()) {
      const StopCondition stop({}, StopCondition::Clock::now() - std::chrono::seconds(1));
      BatchOptions o = options(width, 8);
      o.stop = &stop;
      try {
        forwardDynamicsBatch(pool, model, ForwardRoute::Saha, s.count, s.q.data(), s.qd.data(), s.u.data(),
                             out.data(), o);
        ADD_FAILURE() << "not stopped";
      } catch (const Stopped& e) {
        EXPECT_EQ(e.reason(), StopReason::Deadline);
        EXPECT_EQ(e.done(), 0u);
        EXPECT_STREQ(e.what(), "forwardDynamicsBatch: stopped after 0 of 300 states: the deadline passed");
      }
    }
  }
}

TEST(BatchStop, CancellationStopsPartWayAndCountsTheStatesDone) {
  // the callable is asked at every poll (interval 0) and says "cancelled" from its 4th answer on
  const auto model = randomModel(12, 53);
  const States s = randomStates(model->n, 4000, 54u);
  std::vector<double> out(s.q.size());
  for (unsigned threads : {1u, 2u}) {
    BatchPool pool(threads);
    for (SimdWidth width : supportedWidths()) {
      std::atomic<int> asked{0};
      const StopCondition stop([&] { return asked.fetch_add(1) >= 3; },
                               StopCondition::Clock::time_point::max(), std::chrono::nanoseconds(0));
      BatchOptions o = options(width, 64);
      o.stop = &stop;
      try {
        inverseDynamicsBatch(pool, model, s.count, s.q.data(), s.qd.data(), s.u.data(), out.data(), nullptr,
                             o);
        ADD_FAILURE() << "not stopped";
      } catch (const Stopped& e) {
        EXPECT_EQ(e.reason(), StopReason::Cancelled);
        EXPECT_GT(e.done(), 0u);
        EXPECT_LT(e.done(), s.count);
        EXPECT_EQ(e.done() % static_cast<std::size_t>(width), 0u) << "whole groups of lanes";
      }
      // the callable was asked a few times, not once per state
      EXPECT_GE(asked.load(), 4);
      EXPECT_LT(asked.load(), 40);
    }
  }
}

TEST(BatchStop, UnsetConditionLetsTheBatchFinish) {
  const auto model = randomModel(7, 55);
  const States s = randomStates(model->n, 500, 56u);
  std::vector<double> out(s.q.size());
  BatchPool pool(2);
  std::atomic<int> asked{0};
  const StopCondition stop([&] { return ++asked, false; },
                           StopCondition::Clock::now() + std::chrono::hours(1), std::chrono::nanoseconds(0));
  BatchOptions o;
  o.stop = &stop;
  o.grain = 16;
  EXPECT_NO_THROW(inverseDynamicsBatch(pool, model, s.count, s.q.data(), s.qd.data(), s.u.data(), out.data(),
                                       nullptr, o));
  EXPECT_TRUE(sameStates(out, testing::referenceId(*model, s, false), model->n, kLaneTolerance));
  EXPECT_GT(asked.load(), 0);
}

TEST(BatchThreads, MaxThreadsOneRunsOnTheCallingThread) {
  // the stop condition's callable runs on the threads that compute the chunks
  const auto model = randomModel(5, 57);
  const States s = randomStates(model->n, 3000, 58u);
  std::vector<double> out(s.q.size());
  BatchPool pool(4);
  for (unsigned max_threads : {1u, 0u}) {
    std::mutex mutex;
    std::set<std::thread::id> ids;
    const StopCondition stop(
        [&] {
          const std::lock_guard<std::mutex> lock(mutex);
          ids.insert(std::this_thread::get_id());
          return false;
        },
        StopCondition::Clock::time_point::max(), std::chrono::nanoseconds(0));
    BatchOptions o;
    o.stop = &stop;
    o.grain = 8;
    o.max_threads = max_threads;
    inverseDynamicsBatch(pool, model, s.count, s.q.data(), s.qd.data(), s.u.data(), out.data(), nullptr, o);
    if (max_threads == 1) {
      EXPECT_EQ(ids, std::set<std::thread::id>{std::this_thread::get_id()});
    } else {
      EXPECT_GE(ids.size(), 1u);
      EXPECT_LE(ids.size(), 4u);
    }
  }
}

// The cgroup CPU quota that bounds usableCores(): cgroup v2's cpu.max text, by its definition (quota and
// period in microseconds, "max" for none), rounded up to whole cores.
TEST(UsableCores, QuotaCoresReadsCpuMax) {
  EXPECT_EQ(detail::quotaCores("200000 100000"), 2u);
  EXPECT_EQ(detail::quotaCores("150000 100000\n"), 2u);  // 1.5 CPUs of time: 2 threads
  EXPECT_EQ(detail::quotaCores("50000 100000"), 1u);
  EXPECT_EQ(detail::quotaCores("6400000 100000"), 64u);
  EXPECT_EQ(detail::quotaCores("max 100000"), 0u);  // no limit
  EXPECT_EQ(detail::quotaCores("-1 100000"), 0u);   // cgroup v1's "no limit"
  EXPECT_EQ(detail::quotaCores(""), 0u);
  EXPECT_EQ(detail::quotaCores("12x 100000"), 0u);
  EXPECT_EQ(detail::quotaCores("100000 0"), 0u);
  // on this machine: at least one core, at most the affinity mask's
  cpu_set_t set;
  CPU_ZERO(&set);
  ASSERT_EQ(::sched_getaffinity(0, sizeof set, &set), 0);
  EXPECT_GE(usableCores(), 1u);
  EXPECT_LE(usableCores(), static_cast<unsigned>(CPU_COUNT(&set)));
}

}  // namespace
}  // namespace denoc
