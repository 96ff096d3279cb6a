// Batches across threads (denoc/batch.hpp): every batch function gives bit for bit what the single-state
// function gives state by state, for batch sizes 0, 1, odd and large, pools of 1..8 threads (more threads
// than states too), several grains, several models, and several threads sharing one pool; errors name the
// batch function, the state and the array, and the lowest failing state wins.
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <limits>
#include <memory>
#include <random>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

#include "denoc/algorithm/convective.hpp"
#include "denoc/batch.hpp"
#include "denoc/denoc.hpp"
#include "support/random_chain.hpp"

namespace denoc {
namespace {

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

struct States {
  int n = 0;
  std::size_t count = 0;
  std::vector<double> q, qd, u, wrench;  // u: qdd or tau
};

States randomStates(int n, std::size_t count, std::uint32_t seed) {
  std::mt19937 rng(seed);
  std::uniform_real_distribution<double> d(-2.0, 2.0);
  States s;
  s.n = n;
  s.count = count;
  const std::size_t total = count * static_cast<std::size_t>(n);
  s.q.resize(total);
  s.qd.resize(total);
  s.u.resize(total);
  s.wrench.resize(6 * count);
  for (double& x : s.q) x = d(rng);
  for (double& x : s.qd) x = d(rng);
  for (double& x : s.u) x = 3.0 * d(rng);
  for (double& x : s.wrench) x = d(rng);
  return s;
}

using CMap = Eigen::Map<const Eigen::VectorXd>;

/// Bitwise equality of two arrays (NaN-safe, and -0 differs from +0).
::testing::AssertionResult sameBits(const std::vector<double>& a, const std::vector<double>& b) {
  if (a.size() != b.size())
    return ::testing::AssertionFailure() << "sizes " << a.size() << " vs " << b.size();
  for (std::size_t i = 0; i < a.size(); ++i) {
    if (std::memcmp(&a[i], &b[i], sizeof(double)) != 0) {
      return ::testing::AssertionFailure() << "entry " << i << ": " << a[i] << " vs " << b[i];
    }
  }
  return ::testing::AssertionSuccess();
}

void rowMajor(const Eigen::MatrixXd& m, double* out) {
  for (Eigen::Index i = 0; i < m.rows(); ++i)
    for (Eigen::Index j = 0; j < m.cols(); ++j) out[i * m.cols() + j] = m(i, j);
}

// ---- the single-state reference, one fresh Data per state

std::vector<double> referenceId(const Model& m, const States& s, bool wrench) {
  std::vector<double> tau(s.q.size());
  for (std::size_t k = 0; k < s.count; ++k) {
    Data d(m);
    const std::size_t o = k * static_cast<std::size_t>(m.n);
    const CMap q(s.q.data() + o, m.n), qd(s.qd.data() + o, m.n), qdd(s.u.data() + o, m.n);
    Eigen::Map<Eigen::VectorXd>(tau.data() + o, m.n) =
        wrench ? inverseDynamics(m, d, q, qd, qdd,
                                 Eigen::Map<const Eigen::Matrix<double, 6, 1>>(s.wrench.data() + 6 * k))
               : inverseDynamics(m, d, q, qd, qdd);
  }
  return tau;
}

std::vector<double> referenceFd(const Model& m, const States& s, ForwardRoute route) {
  std::vector<double> qdd(s.q.size());
  for (std::size_t k = 0; k < s.count; ++k) {
    Data d(m);
    const std::size_t o = k * static_cast<std::size_t>(m.n);
    const CMap q(s.q.data() + o, m.n), qd(s.qd.data() + o, m.n), tau(s.u.data() + o, m.n);
    Eigen::Map<Eigen::VectorXd> out(qdd.data() + o, m.n);
    switch (route) {
      case ForwardRoute::Saha:
        out = forwardDynamics(m, d, q, qd, tau);
        break;
      case ForwardRoute::Cholesky:
        out = forwardDynamicsCholesky(m, d, q, qd, tau);
        break;
      case ForwardRoute::Fixman:
        out = forwardDynamicsFixman(m, d, q, qd, tau);
        break;
    }
  }
  return qdd;
}

struct Factor {
  std::vector<double> I, U, D, log_det, Minv, C, bias, g;
  explicit Factor(const States& s) {
    const std::size_t nn = s.q.size() * static_cast<std::size_t>(s.n);
    I.resize(nn);
    U.resize(nn);
    Minv.resize(nn);
    C.resize(nn);
    D.resize(s.q.size());
    bias.resize(s.q.size());
    g.resize(s.q.size());
    log_det.resize(s.count);
  }
  FullFactorBatchOutput out(bool optional) {
    FullFactorBatchOutput o;
    o.inertia = I.data();
    o.u = U.data();
    o.d = D.data();
    o.log_det = log_det.data();
    if (optional) {
      o.inverse = Minv.data();
      o.convective = C.data();
      o.bias = bias.data();
      o.gravity_torque = g.data();
    }
    return o;
  }
};

Factor referenceFactor(const Model& m, const States& s) {
  Factor f(s);
  const std::size_t n = static_cast<std::size_t>(m.n);
  for (std::size_t k = 0; k < s.count; ++k) {
    Data d(m);
    const std::size_t o = k * n, oo = o * n;
    const CMap q(s.q.data() + o, m.n), qd(s.qd.data() + o, m.n);
    computeFullFactor(m, d, q);
    rowMajor(d.M, f.I.data() + oo);
    rowMajor(d.U, f.U.data() + oo);
    Eigen::Map<Eigen::VectorXd>(f.D.data() + o, m.n) = d.D;
    f.log_det[k] = d.log_det;
    rowMajor(computeInverseInertia(m, d, q), f.Minv.data() + oo);
    rowMajor(computeConvectiveMatrix(m, d, q, qd), f.C.data() + oo);
    Eigen::Map<Eigen::VectorXd>(f.bias.data() + o, m.n) = computeBias(m, d, q, qd);
    Eigen::Map<Eigen::VectorXd>(f.g.data() + o, m.n) = computeGravity(m, d, q);
  }
  return f;
}

void expectBatchesMatch(BatchPool& pool, const std::shared_ptr<const Model>& model, std::size_t count,
                        std::size_t grain, std::uint32_t seed) {
  const Model& m = *model;
  const States s = randomStates(m.n, count, seed);
  const std::string what = "n=" + std::to_string(m.n) + " count=" + std::to_string(count) +
                           " threads=" + std::to_string(pool.threads()) + " grain=" + std::to_string(grain);
  std::vector<double> out(s.q.size(), -1.0);
  for (bool wrench : {false, true}) {
    inverseDynamicsBatch(pool, model, count, s.q.data(), s.qd.data(), s.u.data(), out.data(),
                         wrench ? s.wrench.data() : nullptr, grain);
    EXPECT_TRUE(sameBits(out, referenceId(m, s, wrench)))
        << "inverse dynamics, wrench " << wrench << ", " << what;
  }
  for (ForwardRoute route : {ForwardRoute::Saha, ForwardRoute::Cholesky, ForwardRoute::Fixman}) {
    forwardDynamicsBatch(pool, model, route, count, s.q.data(), s.qd.data(), s.u.data(), out.data(), grain);
    EXPECT_TRUE(sameBits(out, referenceFd(m, s, route)))
        << "forward dynamics, route " << static_cast<int>(route) << ", " << what;
  }
  const Factor ref = referenceFactor(m, s);
  for (bool optional : {false, true}) {
    Factor f(s);
    fullFactorBatch(pool, model, count, s.q.data(), optional ? s.qd.data() : nullptr, f.out(optional), grain);
    EXPECT_TRUE(sameBits(f.I, ref.I)) << "I, " << what;
    EXPECT_TRUE(sameBits(f.U, ref.U)) << "U, " << what;
    EXPECT_TRUE(sameBits(f.D, ref.D)) << "D, " << what;
    EXPECT_TRUE(sameBits(f.log_det, ref.log_det)) << "log det, " << what;
    if (optional) {
      EXPECT_TRUE(sameBits(f.Minv, ref.Minv)) << "I^-1, " << what;
      EXPECT_TRUE(sameBits(f.C, ref.C)) << "C, " << what;
      EXPECT_TRUE(sameBits(f.bias, ref.bias)) << "bias, " << what;
      EXPECT_TRUE(sameBits(f.g, ref.g)) << "g, " << what;
    }
  }
}

TEST(Batch, PoolSize) {
  EXPECT_EQ(BatchPool(3).threads(), 3u);
  EXPECT_EQ(BatchPool(1).threads(), 1u);
  EXPECT_EQ(BatchPool().threads(), std::max(1u, std::thread::hardware_concurrency()));
}

TEST(Batch, EqualsSingleStateCallsBitForBit) {
  const std::vector<std::shared_ptr<const Model>> models = {makeModel(specFromDH(stanfordArmDH())),
                                                            randomModel(7, 11), randomModel(30, 12)};
  for (unsigned threads : {1u, 2u, 3u, 8u}) {
    BatchPool pool(threads);
    for (const auto& model : models) {
      for (std::size_t count : {0u, 1u, 2u, 3u, 7u, 17u, 64u}) {
        for (std::size_t grain : {std::size_t{1}, std::size_t{4}, kDefaultBatchGrain}) {
          expectBatchesMatch(pool, model, count, grain, static_cast<std::uint32_t>(count * 31 + threads));
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
      inverseDynamicsBatch(pool, model, s.count, s.q.data(), s.qd.data(), s.u.data(), tau.data(), nullptr, 1);
      EXPECT_TRUE(sameBits(tau, referenceId(*model, s, false)));
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
    expected.push_back(referenceFd(*models[k], states.back(), ForwardRoute::Saha));
  }
  std::vector<int> mismatches(6, 0);
  std::vector<std::thread> callers;
  for (int t = 0; t < 6; ++t) {
    callers.emplace_back([&, t] {
      const std::size_t k = static_cast<std::size_t>(t) % models.size();
      const States& s = states[k];
      std::vector<double> qdd(s.q.size());
      for (int round = 0; round < 40; ++round) {
        forwardDynamicsBatch(pool, models[k], ForwardRoute::Saha, s.count, s.q.data(), s.qd.data(),
                             s.u.data(), qdd.data(), 1 + static_cast<std::size_t>(round % 7));
        if (!sameBits(qdd, expected[k])) ++mismatches[static_cast<std::size_t>(t)];
      }
    });
  }
  for (std::thread& c : callers) c.join();
  for (int t = 0; t < 6; ++t) EXPECT_EQ(mismatches[static_cast<std::size_t>(t)], 0) << "caller " << t;
}

std::string batchError(BatchPool& pool, const std::shared_ptr<const Model>& model, States s) {
  std::vector<double> out(s.q.size());
  try {
    inverseDynamicsBatch(pool, model, s.count, s.q.data(), s.qd.data(), s.u.data(), out.data(), nullptr, 1);
  } catch (const std::invalid_argument& e) {
    return e.what();
  }
  return "";
}

TEST(Batch, ErrorsNameTheLowestFailingState) {
  const auto model = randomModel(5, 3);
  for (unsigned threads : {1u, 2u, 4u}) {
    BatchPool pool(threads);
    States s = randomStates(model->n, 50, 9u);
    s.qd[static_cast<std::size_t>(40 * model->n + 2)] = std::numeric_limits<double>::infinity();
    std::string msg = batchError(pool, model, s);
    EXPECT_NE(msg.find("inverseDynamicsBatch: state 40"), std::string::npos) << msg;
    EXPECT_NE(msg.find("qd[2]"), std::string::npos) << msg;
    s.q[static_cast<std::size_t>(3 * model->n + 1)] = std::numeric_limits<double>::quiet_NaN();
    msg = batchError(pool, model, s);
    EXPECT_NE(msg.find("state 3:"), std::string::npos) << msg;
    EXPECT_NE(msg.find("q[1]"), std::string::npos) << msg;
    // the pool still works afterwards
    const States good = randomStates(model->n, 50, 10u);
    EXPECT_EQ(batchError(pool, model, good), "");
  }
}

TEST(Batch, NullArgumentsAreRefused) {
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
  FullFactorBatchOutput out;
  EXPECT_THROW(fullFactorBatch(pool, model, 2, a.data(), nullptr, out), std::invalid_argument);
  // count 0 needs no arrays at all
  EXPECT_NO_THROW(inverseDynamicsBatch(pool, model, 0, nullptr, nullptr, nullptr, nullptr));
  EXPECT_NO_THROW(fullFactorBatch(pool, model, 0, nullptr, nullptr, out));
}

}  // namespace
}  // namespace denoc
