// Analytic derivatives of the inverse and forward dynamics against independent oracles: forward-mode
// automatic differentiation of the scalar-templated inverseDynamics and forwardDynamics with the dual
// scalar (to 1e-10 relative), central finite differences (to 1e-6), the identity dqdd/dx = -I^-1 dtau/dx
// with I^-1 from Eigen's dense inverse of computeInertiaMatrix, and the heap-allocation counter. Random
// chains of 1 to 60 joints mixing revolute and prismatic joints (armature on every other joint), the Stanford
// arm and the repository's example models; with and without a tip wrench.
#include <gtest/gtest.h>

#include <Eigen/LU>
#include <atomic>
#include <chrono>
#include <cmath>
#include <random>
#include <string>
#include <vector>

#include "denoc/algorithm/forward_dynamics_derivatives.hpp"
#include "denoc/algorithm/inverse_dynamics_derivatives.hpp"
#include "denoc/denoc.hpp"
#include "support/compare.hpp"
#include "support/count_allocations.hpp"  // first: replaces malloc in this binary
#include "support/differentiate.hpp"
#include "support/robots.hpp"

namespace denoc {
namespace {

using testing::adJacobian;
using testing::Dual;
using testing::DualVec;
using testing::fdJacobian;
using testing::near;
using testing::randomConfiguration;
using testing::randomVectorX;
using testing::Robot;
using Vec6 = Eigen::Matrix<double, 6, 1>;
using DualModel = ModelTpl<Dual>;
using DualData = DataTpl<Dual>;

constexpr double kAdTol = 1e-10;
constexpr double kFdTol = 1e-6;
constexpr double kFdStep = 1e-6;

/// The states a robot is checked at: three random ones and a zero-velocity one.
struct State {
  Eigen::VectorXd q, qd, qdd, tau;
  Vec6 wrench;
};

std::vector<State> states(const Model& model, std::uint32_t seed) {
  std::mt19937 rng(seed);
  std::vector<State> out;
  for (int s = 0; s < 4; ++s) {
    State st;
    st.q = randomConfiguration(model, rng);
    st.qd = s == 3 ? Eigen::VectorXd::Zero(model.n) : randomVectorX(rng, model.n, 2.0);
    st.qdd = randomVectorX(rng, model.n, 3.0);
    st.tau = randomVectorX(rng, model.n, 5.0);
    st.wrench << randomVectorX(rng, 3, 2.0), randomVectorX(rng, 3, 10.0);
    out.push_back(st);
  }
  return out;
}

/// tau of the dual inverse dynamics, with the wrench or without.
DualVec dualId(const DualModel& m, DualData& d, const DualVec& q, const DualVec& qd, const DualVec& qdd,
               const Vec6* wrench) {
  if (wrench) return inverseDynamics(m, d, q, qd, qdd, Eigen::Matrix<Dual, 6, 1>(wrench->cast<Dual>()));
  return inverseDynamics(m, d, q, qd, qdd);
}

/// qdd of the dual forward dynamics; the wrench's joint torques ID(q, 0, 0, w) - ID(q, 0, 0) moved to the
/// right-hand side, all by public functions.
DualVec dualFd(const DualModel& m, DualData& d, const DualVec& q, const DualVec& qd, const DualVec& tau,
               const Vec6* wrench) {
  if (!wrench) return forwardDynamics(m, d, q, qd, tau);
  const DualVec zero = DualVec::Zero(m.n);
  const DualVec with = inverseDynamics(m, d, q, zero, zero, Eigen::Matrix<Dual, 6, 1>(wrench->cast<Dual>()));
  const DualVec without = inverseDynamics(m, d, q, zero, zero);
  const DualVec rhs = tau - (with - without);
  return forwardDynamics(m, d, q, qd, rhs);
}

Eigen::VectorXd doubleFd(const Model& m, Data& d, const Eigen::VectorXd& q, const Eigen::VectorXd& qd,
                         const Eigen::VectorXd& tau, const Vec6* wrench) {
  if (!wrench) return forwardDynamics(m, d, q, qd, tau);
  const Eigen::VectorXd zero = Eigen::VectorXd::Zero(m.n);
  const Eigen::VectorXd with = inverseDynamics(m, d, q, zero, zero, *wrench);
  const Eigen::VectorXd without = inverseDynamics(m, d, q, zero, zero);
  return forwardDynamics(m, d, q, qd, Eigen::VectorXd(tau - (with - without)));
}

/// cond(I(q)) at q, for the tolerance of the forward-dynamics comparisons: the analytic and the AD route
/// apply I^-1 by different sequences of operations, so they differ by about cond * eps.
double inertiaCondition(const Model& model, Data& data, const Eigen::VectorXd& q) {
  const Eigen::MatrixXd M = computeInertiaMatrix(model, data, q);
  return M.norm() * M.inverse().norm();
}

class Derivatives : public ::testing::TestWithParam<int> {};

std::vector<Robot>& robots() {
  static std::vector<Robot> r = testing::allRobots();
  return r;
}

TEST_P(Derivatives, InverseDynamicsAgainstAutomaticDifferentiationAndFiniteDifferences) {
  const Robot& robot = robots()[static_cast<std::size_t>(GetParam())];
  const Model& model = robot.model;
  const DualModel dmodel = model.cast<Dual>();
  Data data(model);
  DualData ddata(dmodel);
  int s = 0;
  for (const State& st : states(model, 100u + static_cast<std::uint32_t>(GetParam()))) {
    for (const Vec6* wrench : {static_cast<const Vec6*>(nullptr), &st.wrench}) {
      const std::string what =
          robot.name + " state " + std::to_string(s) + (wrench ? " with tip wrench" : "");
      if (wrench) {
        computeInverseDynamicsDerivatives(model, data, st.q, st.qd, st.qdd, *wrench);
      } else {
        computeInverseDynamicsDerivatives(model, data, st.q, st.qd, st.qdd);
      }
      const Eigen::VectorXd tau = data.tau;
      const Eigen::MatrixXd dq = data.dtau_dq, dqd = data.dtau_dqd;
      Data ref(model);
      const Eigen::VectorXd tau_ref = wrench ? inverseDynamics(model, ref, st.q, st.qd, st.qdd, *wrench)
                                             : inverseDynamics(model, ref, st.q, st.qd, st.qdd);
      EXPECT_TRUE(near(tau, tau_ref, 1e-12, what + ": tau"));

      const DualVec Q = st.q.cast<Dual>(), QD = st.qd.cast<Dual>(), QDD = st.qdd.cast<Dual>();
      const Eigen::MatrixXd ad_q =
          adJacobian(st.q, [&](const DualVec& x) { return dualId(dmodel, ddata, x, QD, QDD, wrench); });
      const Eigen::MatrixXd ad_qd =
          adJacobian(st.qd, [&](const DualVec& x) { return dualId(dmodel, ddata, Q, x, QDD, wrench); });
      // each block relative to the whole state Jacobian [dtau/dq, dtau/dqd] (dtau/dqd vanishes for one joint)
      const double scale = std::hypot(ad_q.norm(), ad_qd.norm());
      EXPECT_TRUE(near(dq, ad_q, kAdTol, what + ": dtau/dq vs AD", scale));
      EXPECT_TRUE(near(dqd, ad_qd, kAdTol, what + ": dtau/dqd vs AD", scale));

      const auto id = [&](const Eigen::VectorXd& q, const Eigen::VectorXd& qd) -> Eigen::VectorXd {
        return wrench ? inverseDynamics(model, ref, q, qd, st.qdd, *wrench)
                      : inverseDynamics(model, ref, q, qd, st.qdd);
      };
      const Eigen::MatrixXd fd_q = fdJacobian(
          st.q, [&](const Eigen::VectorXd& x) { return id(x, st.qd); }, kFdStep);
      const Eigen::MatrixXd fd_qd = fdJacobian(
          st.qd, [&](const Eigen::VectorXd& x) { return id(st.q, x); }, kFdStep);
      EXPECT_TRUE(near(dq, fd_q, kFdTol, what + ": dtau/dq vs finite differences", scale));
      EXPECT_TRUE(near(dqd, fd_qd, kFdTol, what + ": dtau/dqd vs finite differences", scale));
    }
    ++s;
  }
}

TEST_P(Derivatives, ForwardDynamicsAgainstAutomaticDifferentiationFiniteDifferencesAndTheIdentity) {
  const Robot& robot = robots()[static_cast<std::size_t>(GetParam())];
  const Model& model = robot.model;
  const DualModel dmodel = model.cast<Dual>();
  Data data(model), ref(model);
  DualData ddata(dmodel);
  int s = 0;
  for (const State& st : states(model, 200u + static_cast<std::uint32_t>(GetParam()))) {
    for (const Vec6* wrench : {static_cast<const Vec6*>(nullptr), &st.wrench}) {
      const std::string what =
          robot.name + " state " + std::to_string(s) + (wrench ? " with tip wrench" : "");
      if (wrench) {
        computeForwardDynamicsDerivatives(model, data, st.q, st.qd, st.tau, *wrench);
      } else {
        computeForwardDynamicsDerivatives(model, data, st.q, st.qd, st.tau);
      }
      const Eigen::VectorXd qdd = data.qdd;
      const Eigen::MatrixXd dq = data.dqdd_dq, dqd = data.dqdd_dqd, dtau = data.Minv;
      const double cond = inertiaCondition(model, ref, st.q);
      const double ad_tol = kAdTol * std::max(1.0, cond / 1e5);
      const double fd_tol = kFdTol * std::max(1.0, cond / 1e5);

      // qdd itself against the forward dynamics
      EXPECT_TRUE(near(qdd, doubleFd(model, ref, st.q, st.qd, st.tau, wrench), 1e-12 * std::max(1.0, cond),
                       what + ": qdd"));

      // automatic differentiation through forwardDynamics<Dual>
      const DualVec Q = st.q.cast<Dual>(), QD = st.qd.cast<Dual>(), T = st.tau.cast<Dual>();
      const Eigen::MatrixXd ad_q =
          adJacobian(st.q, [&](const DualVec& x) { return dualFd(dmodel, ddata, x, QD, T, wrench); });
      const Eigen::MatrixXd ad_qd =
          adJacobian(st.qd, [&](const DualVec& x) { return dualFd(dmodel, ddata, Q, x, T, wrench); });
      const Eigen::MatrixXd ad_tau =
          adJacobian(st.tau, [&](const DualVec& x) { return dualFd(dmodel, ddata, Q, QD, x, wrench); });
      // each block relative to the whole Jacobian [dqdd/dq, dqdd/dqd, dqdd/dtau]
      const double scale = std::sqrt(ad_q.squaredNorm() + ad_qd.squaredNorm() + ad_tau.squaredNorm());
      EXPECT_TRUE(
          near(dq, ad_q, ad_tol, what + ": dqdd/dq vs AD (cond " + std::to_string(cond) + ")", scale));
      EXPECT_TRUE(near(dqd, ad_qd, ad_tol, what + ": dqdd/dqd vs AD", scale));
      EXPECT_TRUE(near(dtau, ad_tau, ad_tol, what + ": dqdd/dtau vs AD", scale));

      // central finite differences of the forward dynamics
      const auto fd = [&](const Eigen::VectorXd& q, const Eigen::VectorXd& qd, const Eigen::VectorXd& tau) {
        return doubleFd(model, ref, q, qd, tau, wrench);
      };
      EXPECT_TRUE(near(dq,
                       fdJacobian(
                           st.q, [&](const Eigen::VectorXd& x) { return fd(x, st.qd, st.tau); }, kFdStep),
                       fd_tol, what + ": dqdd/dq vs finite differences", scale));
      EXPECT_TRUE(near(dqd,
                       fdJacobian(
                           st.qd, [&](const Eigen::VectorXd& x) { return fd(st.q, x, st.tau); }, kFdStep),
                       fd_tol, what + ": dqdd/dqd vs finite differences", scale));

      // the identity dqdd/dx = -I^-1 dtau/dx at qdd = FD(q, qd, tau), with dtau/dx by AD of the inverse
      // dynamics and I^-1 by Eigen's dense inverse
      const Eigen::MatrixXd Minv = computeInertiaMatrix(model, ref, st.q).inverse();
      const DualVec QDD = qdd.cast<Dual>();
      const Eigen::MatrixXd id_q =
          adJacobian(st.q, [&](const DualVec& x) { return dualId(dmodel, ddata, x, QD, QDD, wrench); });
      const Eigen::MatrixXd id_qd =
          adJacobian(st.qd, [&](const DualVec& x) { return dualId(dmodel, ddata, Q, x, QDD, wrench); });
      EXPECT_TRUE(
          near(dq, Eigen::MatrixXd(-Minv * id_q), ad_tol, what + ": dqdd/dq vs -I^-1 dtau/dq", scale));
      EXPECT_TRUE(
          near(dqd, Eigen::MatrixXd(-Minv * id_qd), ad_tol, what + ": dqdd/dqd vs -I^-1 dtau/dqd", scale));
      EXPECT_TRUE(near(dtau, Minv, ad_tol, what + ": dqdd/dtau vs I^-1", scale));
    }
    ++s;
  }
}

INSTANTIATE_TEST_SUITE_P(Robots, Derivatives,
                         ::testing::Range(0, static_cast<int>(testing::allRobots().size())),
                         [](const ::testing::TestParamInfo<int>& info) {
                           return testing::parameterName(robots()[static_cast<std::size_t>(info.param)].name);
                         });

// the routes agree across both switches: I^-1 from the dense factors (n <= kDenseInverseMaxDof) or by the
// sweeps, and -I^-1 dtau by the products (n <= detail::productDerivativesMaxDof, this CPU's bound) or by the
// sweeps on every column
TEST(DerivativesRoutes, BothSidesOfTheSwitches) {
  const int products = detail::productDerivativesMaxDof<double>();
  for (int n : {kDenseInverseMaxDof, kDenseInverseMaxDof + 1, products, products + 1}) {
    const Model model = buildModel(testing::randomChainSpec(n, 77u));
    Data data(model), ref(model);
    std::mt19937 rng(5u);
    const Eigen::VectorXd q = randomConfiguration(model, rng), qd = randomVectorX(rng, n, 1.0),
                          tau = randomVectorX(rng, n, 3.0);
    computeForwardDynamicsDerivatives(model, data, q, qd, tau);
    const Eigen::MatrixXd Minv = computeInertiaMatrix(model, ref, q).inverse();
    const double tol = 1e-10 * std::max(1.0, inertiaCondition(model, ref, q) / 1e5);
    EXPECT_TRUE(near(data.Minv, Minv, tol, "n=" + std::to_string(n) + ": I^-1"));
    EXPECT_TRUE(near(data.dqdd_dq, Eigen::MatrixXd(-Minv * data.dtau_dq), tol, "n=" + std::to_string(n)));
    EXPECT_TRUE(near(data.dqdd_dqd, Eigen::MatrixXd(-Minv * data.dtau_dqd), tol, "n=" + std::to_string(n)));
  }
}

// the product -I^-1 B (detail::negatedProduct): for double, register blocks of one and two vectors of rows x
// 4, 2 and 1 columns at every SIMD width (2, 4, 8 lanes, each as far as this CPU runs it, and the CPU's
// default); every size from 1 to 37 (each remainder of rows and of columns at every width) against the plain
// triple loop in the same order (bit for bit) and Eigen's product (1e-14)
TEST(DerivativesRoutes, TheBlockedProductEqualsThePlainLoop) {
  std::mt19937 rng(9u);
  std::uniform_real_distribution<double> u(-1.0, 1.0);
  const auto random = [&](int n) {
    Eigen::MatrixXd X(n, n);
    for (int j = 0; j < n; ++j)
      for (int i = 0; i < n; ++i) X(i, j) = u(rng);
    return X;
  };
  for (int n = 1; n <= 37; ++n) {
    const Eigen::MatrixXd R = random(n);
    const Eigen::MatrixXd A = R + R.transpose(), B = 2.0 * random(n);
    Eigen::MatrixXd plain(n, n);
    for (int j = 0; j < n; ++j) {
      for (int i = 0; i < n; ++i) {
        double s = 0.0;
        for (int k = 0; k < n; ++k) s += A(i, k) * -B(k, j);
        plain(i, j) = s;
      }
    }
    for (int lanes : {0, 2, 4, 8}) {
      const std::string what = "n=" + std::to_string(n) + ", lanes " + std::to_string(lanes);
      Eigen::MatrixXd out = Eigen::MatrixXd::Constant(n, n, 99.0);
      if (lanes == 0) {
        detail::negatedProduct<double>(A, B, out);
      } else {
        detail::negatedProductWide(A.data(), B.data(), out.data(), n, lanes);
      }
      for (int j = 0; j < n; ++j)
        for (int i = 0; i < n; ++i)
          ASSERT_EQ(out(i, j), plain(i, j)) << what << " (" << i << ", " << j << ")";
      EXPECT_TRUE(near(out, Eigen::MatrixXd(-A * B), 1e-14, what));
    }
  }
}

// the assembly of dtau/dq, dtau/dqd over rows in SIMD lanes (detail::assembleDerivativesWide) against the
// plain loop over the records with dot6, bit for bit, at 2 and 4 lanes and as
// computeInverseDynamicsDerivatives takes it (the records below kAssemblyLanesMinDof joints), on chains with
// every remainder of 4 rows in the upper and the lower part of the columns
TEST(DerivativesRoutes, TheAssemblyInLanesEqualsTheRecordLoop) {
  std::mt19937 rng(17u);
  for (int n : {1, 2, 3, 5, 7, 12, 25, 30}) {
    const Model model = buildModel(testing::randomChainSpec(n, 41u + static_cast<std::uint32_t>(n)));
    Data data(model);
    const Eigen::VectorXd q = randomConfiguration(model, rng), qd = randomVectorX(rng, n, 1.0),
                          qdd = randomVectorX(rng, n, 2.0);
    computeInverseDynamicsDerivatives(model, data, q, qd, qdd);
    Eigen::MatrixXd dq(n, n), dv(n, n), rows(n, 18);  // rows: p_i, F1_i, F2_i of the records
    for (int i = 0; i < n; ++i) {
      const auto& r = data.dw[static_cast<std::size_t>(i)];
      rows.row(i) << r.p.transpose(), r.F1.transpose(), r.F2.transpose();
    }
    if (n >= detail::kAssemblyLanesMinDof) {
      EXPECT_EQ(data.dw_rows, rows) << "n=" << n;
    }
    for (int j = 0; j < n; ++j) {
      const auto& c = data.dw[static_cast<std::size_t>(j)];
      for (int i = 0; i < n; ++i) {
        const auto& r = data.dw[static_cast<std::size_t>(i)];
        if (i < j) {
          dq(i, j) = dot6(r.p, c.G);
          dv(i, j) = dot6(r.p, c.H);
        } else {
          const double f1_pdot = dot6(r.F1, c.pdot);
          dq(i, j) = dot6(r.F1, c.pddot) + dot6(r.F2, c.pdot);
          dv(i, j) = f1_pdot + f1_pdot + dot6(r.F2, c.p);
        }
      }
    }
    for (int lanes : {0, 2, 4}) {
      Eigen::MatrixXd out_q = Eigen::MatrixXd::Constant(n, n, 99.0), out_v = out_q;
      if (lanes == 0) {
        out_q = data.dtau_dq;
        out_v = data.dtau_dqd;
      } else {
        detail::assembleDerivativesWide(rows.data(), data.dw.data(), out_q.data(), out_v.data(), n, lanes);
      }
      for (int j = 0; j < n; ++j)
        for (int i = 0; i < n; ++i) {
          ASSERT_EQ(out_q(i, j), dq(i, j))
              << "n=" << n << ", lanes " << lanes << ": dtau/dq (" << i << ", " << j << ")";
          ASSERT_EQ(out_v(i, j), dv(i, j))
              << "n=" << n << ", lanes " << lanes << ": dtau/dqd (" << i << ", " << j << ")";
        }
    }
  }
}

// the sweep route's solve X = -I^-1 B (detail::negatedSolveUDU): for double, on all columns at once in SIMD
// lanes; against the one-column sweeps in the same order (bit for bit) and against Eigen's dense inverse of
// I(q) (to 1e-10 scaled by the condition number), on chains with an even and an odd number of joints (the
// lanes' remainder), one of them a single joint
TEST(DerivativesRoutes, TheSweepsOnAllColumnsEqualTheOneColumnSweeps) {
  std::mt19937 rng(13u);
  for (int n : {1, 2, 25, 26, 41}) {
    const Model model = buildModel(testing::randomChainSpec(n, 31u + static_cast<std::uint32_t>(n)));
    Data data(model), ref(model);
    const Eigen::VectorXd q = randomConfiguration(model, rng);
    computeUDU(model, data, q, false);  // psi_k, 1/mh_k and p_k of the O(n) factors
    Eigen::MatrixXd B(n, n);
    for (int j = 0; j < n; ++j) B.col(j) = randomVectorX(rng, n, 4.0);
    Eigen::MatrixXd X = Eigen::MatrixXd::Constant(n, n, 99.0), one(n, n);
    detail::negatedSolveUDU<double>(model, data, B, X);
    for (int j = 0; j < n; ++j)
      detail::negatedSolveColumn<double>(n, data.work.data(), data.p0.data(), B.col(j).data(),
                                         one.col(j).data());
    for (int j = 0; j < n; ++j)
      for (int i = 0; i < n; ++i) ASSERT_EQ(X(i, j), one(i, j)) << "n=" << n << " (" << i << ", " << j << ")";
    const Eigen::MatrixXd Minv = computeInertiaMatrix(model, ref, q).inverse();
    const double tol = 1e-10 * std::max(1.0, inertiaCondition(model, ref, q) / 1e5);
    EXPECT_TRUE(near(X, Eigen::MatrixXd(-Minv * B), tol, "n=" + std::to_string(n)));
  }
}

TEST(DerivativesBatch, EqualSingleStateCallsBitForBitOnPools) {
  using RowMajor = Eigen::Matrix<double, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor>;
  const auto model = std::make_shared<const Model>(testing::namedRobots()[1].model);
  const int n = model->n;
  const std::size_t K = 37;
  std::mt19937 rng(19u);
  RowMajor q(K, n), qd(K, n), a(K, n), w(K, 6);
  for (std::size_t k = 0; k < K; ++k) {
    const auto r = static_cast<Eigen::Index>(k);
    q.row(r) = randomConfiguration(*model, rng).transpose();
    qd.row(r) = randomVectorX(rng, n, 1.0).transpose();
    a.row(r) = randomVectorX(rng, n, 3.0).transpose();
    w.row(r) = randomVectorX(rng, 6, 2.0).transpose();
  }
  Data data(*model);
  BatchOptions grain4;
  grain4.grain = 4;
  for (unsigned threads : {1u, 2u, 3u}) {
    BatchPool pool(threads);
    RowMajor dq(K, n * n), dqd(K, n * n), tau(K, n), fq(K, n * n), fqd(K, n * n), ftau(K, n * n), qdd(K, n);
    inverseDynamicsDerivativesBatch(pool, model, K, q.data(), qd.data(), a.data(), dq.data(), dqd.data(),
                                    tau.data(), w.data(), grain4);
    forwardDynamicsDerivativesBatch(pool, model, K, q.data(), qd.data(), a.data(), fq.data(), fqd.data(),
                                    ftau.data(), qdd.data(), nullptr, grain4);
    for (std::size_t k = 0; k < K; ++k) {
      const auto r = static_cast<Eigen::Index>(k);
      const Eigen::VectorXd qk = q.row(r).transpose(), qdk = qd.row(r).transpose(), ak = a.row(r).transpose();
      computeInverseDynamicsDerivatives(*model, data, qk, qdk, ak, Vec6(w.row(r).transpose()));
      EXPECT_EQ(dq.row(r), RowMajor(data.dtau_dq).reshaped<Eigen::RowMajor>().transpose()) << k;
      EXPECT_EQ(dqd.row(r), RowMajor(data.dtau_dqd).reshaped<Eigen::RowMajor>().transpose()) << k;
      EXPECT_EQ(tau.row(r), data.tau.transpose()) << k;
      computeForwardDynamicsDerivatives(*model, data, qk, qdk, ak);
      EXPECT_EQ(fq.row(r), RowMajor(data.dqdd_dq).reshaped<Eigen::RowMajor>().transpose()) << k;
      EXPECT_EQ(fqd.row(r), RowMajor(data.dqdd_dqd).reshaped<Eigen::RowMajor>().transpose()) << k;
      EXPECT_EQ(ftau.row(r), RowMajor(data.Minv).reshaped<Eigen::RowMajor>().transpose()) << k;
      EXPECT_EQ(qdd.row(r), data.qdd.transpose()) << k;
    }
    // a bad entry names the batch function, the state and the argument
    q(21, 3) = NAN;
    try {
      forwardDynamicsDerivativesBatch(pool, model, K, q.data(), qd.data(), a.data(), fq.data(), fqd.data());
      FAIL() << "no exception";
    } catch (const std::invalid_argument& e) {
      EXPECT_EQ(std::string(e.what()).find(
                    "forwardDynamicsDerivativesBatch: state 21: computeForwardDynamicsDerivatives: q[3]"),
                0u)
          << e.what();
    }
    q(21, 3) = 0.0;
  }
}

TEST(DerivativesBatch, StopsPartWayWhenCancelledAndAtAPassedDeadline) {
  // both batches on the batch engine: stopped between chunks and within them, counting the states done
  const auto model = std::make_shared<const Model>(testing::namedRobots()[1].model);
  const auto n = static_cast<std::size_t>(model->n);
  const std::size_t K = 3000;
  std::mt19937 rng(23u);
  std::vector<double> q(K * n), qd(K * n), a(K * n), d1(K * n * n), d2(K * n * n);
  for (double& x : q) x = std::uniform_real_distribution<double>(-1.0, 1.0)(rng);
  for (double& x : qd) x = std::uniform_real_distribution<double>(-1.0, 1.0)(rng);
  for (double& x : a) x = std::uniform_real_distribution<double>(-1.0, 1.0)(rng);
  for (unsigned threads : {1u, 2u}) {
    BatchPool pool(threads);
    for (const bool inverse : {true, false}) {
      const char* fn = inverse ? "inverseDynamicsDerivativesBatch" : "forwardDynamicsDerivativesBatch";
      const auto run = [&](const BatchOptions& o) {
        if (inverse) {
          inverseDynamicsDerivativesBatch(pool, model, K, q.data(), qd.data(), a.data(), d1.data(), d2.data(),
                                          nullptr, nullptr, o);
        } else {
          forwardDynamicsDerivativesBatch(pool, model, K, q.data(), qd.data(), a.data(), d1.data(), d2.data(),
                                          nullptr, nullptr, nullptr, o);
        }
      };
      // cancelled from the callable's 4th answer on (asked at every poll)
      std::atomic<int> asked{0};
      const StopCondition cancel([&] { return asked.fetch_add(1) >= 3; },
                                 StopCondition::Clock::time_point::max(), std::chrono::nanoseconds(0));
      BatchOptions o;
      o.stop = &cancel;
      o.grain = 64;
      try {
        run(o);
        ADD_FAILURE() << fn << ": not stopped";
      } catch (const Stopped& e) {
        EXPECT_EQ(e.reason(), StopReason::Cancelled) << fn;
        EXPECT_GT(e.done(), 0u) << fn;
        EXPECT_LT(e.done(), K) << fn;
        EXPECT_EQ(std::string(e.what()).find(std::string(fn) + ": stopped after "), 0u) << e.what();
      }
      EXPECT_LT(asked.load(), 200) << fn << ": asked about every 20 us of work, not every state";
      // a deadline already passed: not one state
      const StopCondition late({}, StopCondition::Clock::now() - std::chrono::seconds(1));
      o.stop = &late;
      try {
        run(o);
        ADD_FAILURE() << fn << ": not stopped";
      } catch (const Stopped& e) {
        EXPECT_EQ(e.reason(), StopReason::Deadline) << fn;
        EXPECT_EQ(e.done(), 0u) << fn;
      }
    }
  }
}

TEST(DerivativesArguments, BadArgumentsNameFunctionArgumentAndIndex) {
  const Model model = buildModelFromDH(stanfordArmDH());
  Data data(model);
  Eigen::VectorXd z = Eigen::VectorXd::Zero(6);
  Eigen::VectorXd bad = z;
  bad[4] = std::nan("");
  try {
    computeInverseDynamicsDerivatives(model, data, z, bad, z);
    FAIL() << "no exception";
  } catch (const std::invalid_argument& e) {
    EXPECT_EQ(std::string(e.what()).find("computeInverseDynamicsDerivatives: qd[4]"), 0u) << e.what();
  }
  EXPECT_THROW(computeForwardDynamicsDerivatives(model, data, Eigen::VectorXd::Zero(5), z, z),
               std::invalid_argument);
  Vec6 w = Vec6::Zero();
  w[2] = INFINITY;
  EXPECT_THROW(computeForwardDynamicsDerivatives(model, data, z, z, z, w), std::invalid_argument);
  EXPECT_THROW(computeInverseDynamicsDerivatives(model, data, z, z, z, w), std::invalid_argument);
}

TEST(DerivativesAllocation, NoHeapAllocation) {
#ifdef DENOC_COUNT_ALLOCATIONS
  for (const Robot& robot : testing::randomRobots({7, 30})) {
    const Model& model = robot.model;
    Data data(model);
    std::mt19937 rng(3u);
    const Eigen::VectorXd q = randomConfiguration(model, rng), qd = randomVectorX(rng, model.n, 1.0),
                          a = randomVectorX(rng, model.n, 1.0);
    const Vec6 w = Vec6::Constant(0.5);
    const long count = testing::allocationsIn([&] {
      computeInverseDynamicsDerivatives(model, data, q, qd, a);
      computeInverseDynamicsDerivatives(model, data, q, qd, a, w);
      computeForwardDynamicsDerivatives(model, data, q, qd, a);
      computeForwardDynamicsDerivatives(model, data, q, qd, a, w);
    });
    EXPECT_EQ(count, 0) << robot.name;
  }
  EXPECT_TRUE(testing::counterCounts()) << "the allocation counter counts nothing";
#else
  GTEST_SKIP() << testing::kNoAllocationCounting;
#endif
}

}  // namespace
}  // namespace denoc
