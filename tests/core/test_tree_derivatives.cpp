// Analytic derivatives of the inverse and forward dynamics over trees (algorithm/tree_derivatives.hpp) on
// random trees of 0..30 joints under every root (revolute and prismatic joints, armature on every third
// joint), with and without a tip wrench, against:
//  - forward-mode automatic differentiation (the dual scalar) through the scalar-templated tree recursions
//    (inverseDynamics, forwardDynamics on ModelTpl<Dual>), q perturbed along integrateConfiguration in dual
//    arithmetic (dualIntegrate below: the floating root's quaternion times the exponential of a dual
//    rotation vector), to 1e-10 relative;
//  - central differences on the manifold with integrateConfiguration, to 1e-6 relative;
//  - the identity dqdd/dx = -I^-1 dtau/dx with Eigen's dense inverse of I(q), and dqdd/dtau I(q) = 1;
//  - the serial derivatives on a chain built on the tree recursions (ModelSpec::force_tree), to 1e-11;
//  - the structure: entries off the ancestor pairs are exactly zero, so are a floating root's linear and a
//    planar root's x, y columns in q, and without gravity every root column in q (the inverse dynamics are
//    invariant under a rigid motion of the whole robot);
//  - a tree with a massless link, a point mass and a thin rod, against automatic differentiation;
//  - no heap allocation after Data is made; refusals of bad arguments naming the function;
//  - external wrenches on several frames (Local: fixed in the link; Base: world axes, at a point fixed on the
//    link; on links, the tip, the root link, and Solo-12's feet as fixed frames with their offsets) against
//    central differences of the wrench-aware inverse and forward dynamics and automatic differentiation.
// The worst errors measured are printed at the end.
#include <gtest/gtest.h>

#include <Eigen/LU>
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <map>
#include <random>
#include <string>
#include <vector>

#include "denoc/denoc.hpp"
#include "support/compare.hpp"
#include "support/count_allocations.hpp"  // first: replaces malloc in this binary
#include "support/differentiate.hpp"
#include "support/random_chain.hpp"
#include "support/random_tree.hpp"

#ifndef DENOC_MODELS_DIR
#error "DENOC_MODELS_DIR must be defined"
#endif

namespace denoc {
namespace {

using testing::adJacobian;
using testing::Dual;
using testing::DualVec;
using testing::fdJacobian;
using testing::near;
using testing::relativeError;
using Vec6 = Eigen::Matrix<double, 6, 1>;
using DualVec6 = Eigen::Matrix<Dual, 6, 1>;
using DualModel = ModelTpl<Dual>;
using DualData = DataTpl<Dual>;

constexpr double kAdTol = 1e-10;
constexpr double kFdTol = 1e-6;
constexpr double kFdStep = 1e-6;
constexpr double kSerialTol = 1e-11;

/// The worst relative error of each comparison, printed when the tests end.
std::map<std::string, double>& worst() {
  static std::map<std::string, double> w;
  return w;
}

/// near() that also records the error under `key`.
template <typename A, typename B>
::testing::AssertionResult check(const A& actual, const B& expected, double tol, const std::string& what,
                                 const std::string& key, double floor = 1e-12) {
  if (actual.rows() == expected.rows() && actual.cols() == expected.cols()) {
    double& w = worst()[key];
    w = std::max(w, relativeError(actual, expected, floor));
  }
  return near(actual, expected, tol, what, floor);
}

class PrintWorst : public ::testing::Environment {
 public:
  void TearDown() override {
    std::printf("worst relative errors (Frobenius norm of the difference over the oracle's):\n");
    for (const auto& [key, err] : worst()) std::printf("  %-50s %.3g\n", key.c_str(), err);
  }
};
const auto* const kPrintWorst = ::testing::AddGlobalTestEnvironment(new PrintWorst);

/// A random tree with armature on every third joint, on the tree recursions even where its joints happen to
/// form a chain from a fixed root.
Model treeModel(int n, std::uint32_t seed, RootJoint root) {
  ModelSpec spec = testing::randomTreeSpec(n, seed, root);
  spec.force_tree = true;
  for (std::size_t i = 0; i < spec.joints.size(); i += 3) spec.joints[i].armature = 0.05;
  return buildModel(spec);
}

struct State {
  Eigen::VectorXd q, v, a, tau;
  Vec6 wrench;
};

std::vector<State> states(const Model& model, std::uint64_t seed) {
  std::mt19937_64 rng(seed);
  std::vector<State> out;
  for (int s = 0; s < 3; ++s) {
    State st;
    st.q = randomConfiguration(model, rng);
    st.v = s == 2 ? Eigen::VectorXd::Zero(model.nv) : testing::randomStateVector(model.nv, rng, 2.0);
    st.a = testing::randomStateVector(model.nv, rng, 3.0);
    st.tau = testing::randomStateVector(model.nv, rng, 5.0);
    st.wrench << testing::randomStateVector(3, rng, 2.0), testing::randomStateVector(3, rng, 10.0);
    out.push_back(st);
  }
  return out;
}

/// integrateConfiguration(q, delta, 1) in dual arithmetic, for a tangent delta whose values are 0 and whose
/// derivative parts give the direction: the joints and a planar root add delta; a floating root's origin
/// moves by R delta_lin (R at q) and its quaternion becomes r exp(delta_ang), exp of a rotation vector w
/// being [sin(|w|/2) w / |w|; cos(|w|/2)] (vector part first; its series near 0, where |w| has no
/// derivative), normalised.
DualVec dualIntegrate(const Model& model, const Eigen::VectorXd& q, const DualVec& delta) {
  using DVec3 = Eigen::Matrix<Dual, 3, 1>;
  DualVec out = q.cast<Dual>();
  if (model.root == RootJoint::Floating) {
    Eigen::Vector4d r = q.segment<4>(3);
    r /= r.norm();
    const Eigen::Quaterniond rq(r[3], r[0], r[1], r[2]);
    const DVec3 lin = delta.segment<3>(3);
    out.head<3>() = q.head<3>().cast<Dual>() + rq.toRotationMatrix().cast<Dual>() * lin;
    const DVec3 w = delta.head<3>();
    const Dual th2 = w.dot(w);
    Dual s_over_th, c;  // sin(|w|/2) / |w| and cos(|w|/2)
    if (th2.value() < 1e-12) {
      s_over_th = Dual(0.5) - th2 / Dual(48.0);
      c = Dual(1.0) - th2 / Dual(8.0);
    } else {
      const Dual th = sqrt(th2);
      s_over_th = sin(th / Dual(2.0)) / th;
      c = cos(th / Dual(2.0));
    }
    const DVec3 ev = w * s_over_th;
    const DVec3 rv = r.head<3>().cast<Dual>();
    const Dual rw = Dual(r[3]);
    // (rv, rw) (ev, ew) = (rw ev + ew rv + rv x ev, rw ew - rv . ev)
    const DVec3 pv = ev * rw + rv * c + rv.cross(ev);
    const Dual pw = rw * c - rv.dot(ev);
    const Dual norm = sqrt(pv.dot(pv) + pw * pw);
    out.segment<3>(3) = pv / norm;
    out[6] = pw / norm;
  } else if (model.root == RootJoint::Planar) {
    out.head<3>() += delta.head<3>();
  }
  out.tail(model.n) += delta.tail(model.n);
  return out;
}

std::vector<ExternalWrenchTpl<Dual>> dualTip(const Model& model, const Vec6* wrench) {
  if (!wrench) return {};
  return {ExternalWrenchTpl<Dual>{model.n, wrench->cast<Dual>(), ReferenceFrame::Local}};
}

DualVec dualId(const Model& model, const DualModel& m, DualData& d, const DualVec& q, const DualVec& v,
               const DualVec& a, const Vec6* wrench) {
  return inverseDynamics(m, d, q, v, a, dualTip(model, wrench));
}

DualVec dualFd(const Model& model, const DualModel& m, DualData& d, const DualVec& q, const DualVec& v,
               const DualVec& tau, const Vec6* wrench) {
  return forwardDynamics(m, d, q, v, tau, dualTip(model, wrench));
}

Eigen::VectorXd doubleId(const Model& m, Data& d, const Eigen::VectorXd& q, const Eigen::VectorXd& v,
                         const Eigen::VectorXd& a, const Vec6* wrench) {
  return wrench ? inverseDynamics(m, d, q, v, a, *wrench) : inverseDynamics(m, d, q, v, a);
}

Eigen::VectorXd doubleFd(const Model& m, Data& d, const Eigen::VectorXd& q, const Eigen::VectorXd& v,
                         const Eigen::VectorXd& tau, const Vec6* wrench) {
  if (!wrench) return forwardDynamics(m, d, q, v, tau);
  return forwardDynamics(m, d, q, v, tau, {ExternalWrench{m.n, *wrench, ReferenceFrame::Local}});
}

/// relation[i][j]: j is an ancestor of velocity coordinate i or i itself (model.dof_parent).
std::vector<std::vector<bool>> ancestorOrSelf(const Model& model) {
  const auto unv = static_cast<std::size_t>(model.nv);
  std::vector<std::vector<bool>> rel(unv, std::vector<bool>(unv, false));
  for (int i = 0; i < model.nv; ++i)
    for (int j = i; j >= 0; j = model.dof_parent[static_cast<std::size_t>(j)])
      rel[static_cast<std::size_t>(i)][static_cast<std::size_t>(j)] = true;
  return rel;
}

std::string describe(const testing::TreeCase& c) {
  return std::string(testing::rootName(c.root)) + " n = " + std::to_string(c.n);
}

TEST(TreeDerivatives, InverseDynamicsAgainstAutomaticDifferentiationAndFiniteDifferences) {
  for (const testing::TreeCase& c : testing::treeCases({1, 2, 3, 5, 8, 12, 20, 30})) {
    const Model model = treeModel(c.n, 600 + static_cast<std::uint32_t>(c.n), c.root);
    ASSERT_FALSE(model.serial);
    const DualModel dmodel = model.cast<Dual>();
    Data data(model), ref(model);
    DualData ddata(dmodel);
    const int nv = model.nv;
    const Eigen::VectorXd zero = Eigen::VectorXd::Zero(nv);
    const auto rel = ancestorOrSelf(model);
    int s = 0;
    for (const State& st : states(model, 700 + static_cast<std::uint64_t>(c.n))) {
      for (const Vec6* wrench : {static_cast<const Vec6*>(nullptr), &st.wrench}) {
        const std::string what =
            describe(c) + " state " + std::to_string(s) + (wrench ? " with tip wrench" : "");
        if (wrench) {
          computeInverseDynamicsDerivatives(model, data, st.q, st.v, st.a, *wrench);
        } else {
          computeInverseDynamicsDerivatives(model, data, st.q, st.v, st.a);
        }
        const Eigen::MatrixXd dq = data.dtau_dq, dv = data.dtau_dqd;
        ASSERT_EQ(dq.rows(), nv);
        ASSERT_EQ(dq.cols(), nv);
        EXPECT_TRUE(check(data.tau, doubleId(model, ref, st.q, st.v, st.a, wrench), 1e-12, what + ": tau",
                          "ID: tau vs inverseDynamics"));

        // automatic differentiation, q along integrate
        const DualVec V = st.v.cast<Dual>(), A = st.a.cast<Dual>(), Q = st.q.cast<Dual>();
        const Eigen::MatrixXd ad_q = adJacobian(zero, [&](const DualVec& x) {
          return dualId(model, dmodel, ddata, dualIntegrate(model, st.q, x), V, A, wrench);
        });
        const Eigen::MatrixXd ad_v =
            adJacobian(st.v, [&](const DualVec& x) { return dualId(model, dmodel, ddata, Q, x, A, wrench); });
        const double scale = std::max(1e-12, std::hypot(ad_q.norm(), ad_v.norm()));
        EXPECT_TRUE(check(dq, ad_q, kAdTol, what + ": dtau/dq vs AD", "ID: dtau/dq vs AD", scale));
        EXPECT_TRUE(check(dv, ad_v, kAdTol, what + ": dtau/dv vs AD", "ID: dtau/dv vs AD", scale));

        // central differences on the manifold
        const Eigen::MatrixXd fd_q = fdJacobian(
            zero,
            [&](const Eigen::VectorXd& x) {
              return doubleId(model, ref, integrateConfiguration(model, st.q, x, 1.0), st.v, st.a, wrench);
            },
            kFdStep);
        const Eigen::MatrixXd fd_v = fdJacobian(
            st.v, [&](const Eigen::VectorXd& x) { return doubleId(model, ref, st.q, x, st.a, wrench); },
            kFdStep);
        EXPECT_TRUE(check(dq, fd_q, kFdTol, what + ": dtau/dq vs finite differences",
                          "ID: dtau/dq vs central differences", scale));
        EXPECT_TRUE(check(dv, fd_v, kFdTol, what + ": dtau/dv vs finite differences",
                          "ID: dtau/dv vs central differences", scale));

        // structural zeros: entries off the ancestor pairs, and the root's translations in q
        for (int i = 0; i < nv; ++i) {
          for (int j = 0; j < nv; ++j) {
            const auto ui = static_cast<std::size_t>(i), uj = static_cast<std::size_t>(j);
            if (!rel[ui][uj] && !rel[uj][ui]) {
              EXPECT_EQ(dq(i, j), 0.0) << what << " dtau/dq(" << i << ", " << j << ")";
              EXPECT_EQ(dv(i, j), 0.0) << what << " dtau/dv(" << i << ", " << j << ")";
            }
          }
        }
        const int first_lin = model.root == RootJoint::Floating ? 3 : 0;
        const int lin_count = model.root == RootJoint::Floating ? 3 : model.root == RootJoint::Planar ? 2 : 0;
        for (int j = first_lin; j < first_lin + lin_count; ++j)
          EXPECT_EQ(dq.col(j).cwiseAbs().maxCoeff(), 0.0) << what << ": translation column " << j;
      }
      ++s;
    }
  }
}

TEST(TreeDerivatives, ForwardDynamicsAgainstAutomaticDifferentiationFiniteDifferencesAndTheIdentity) {
  for (const testing::TreeCase& c : testing::treeCases({1, 2, 3, 5, 8, 12, 20, 30})) {
    const Model model = treeModel(c.n, 800 + static_cast<std::uint32_t>(c.n), c.root);
    const DualModel dmodel = model.cast<Dual>();
    Data data(model), ref(model);
    DualData ddata(dmodel);
    const int nv = model.nv;
    const Eigen::VectorXd zero = Eigen::VectorXd::Zero(nv);
    int s = 0;
    for (const State& st : states(model, 900 + static_cast<std::uint64_t>(c.n))) {
      for (const Vec6* wrench : {static_cast<const Vec6*>(nullptr), &st.wrench}) {
        const std::string what =
            describe(c) + " state " + std::to_string(s) + (wrench ? " with tip wrench" : "");
        if (wrench) {
          computeForwardDynamicsDerivatives(model, data, st.q, st.v, st.tau, *wrench);
        } else {
          computeForwardDynamicsDerivatives(model, data, st.q, st.v, st.tau);
        }
        const Eigen::VectorXd qdd = data.qdd;
        const Eigen::MatrixXd dq = data.dqdd_dq, dv = data.dqdd_dqd, dtau = data.Minv;
        const Eigen::MatrixXd M = computeInertiaMatrix(model, ref, st.q);
        const Eigen::MatrixXd Minv = M.inverse();
        const double cond = M.norm() * Minv.norm();
        const double ad_tol = kAdTol * std::max(1.0, cond / 1e5);
        const double fd_tol = kFdTol * std::max(1.0, cond / 1e5);
        EXPECT_TRUE(check(qdd, doubleFd(model, ref, st.q, st.v, st.tau, wrench), 1e-12 * std::max(1.0, cond),
                          what + ": qdd", "FD: qdd vs forwardDynamics"));

        const DualVec V = st.v.cast<Dual>(), T = st.tau.cast<Dual>(), Q = st.q.cast<Dual>();
        const Eigen::MatrixXd ad_q = adJacobian(zero, [&](const DualVec& x) {
          return dualFd(model, dmodel, ddata, dualIntegrate(model, st.q, x), V, T, wrench);
        });
        const Eigen::MatrixXd ad_v =
            adJacobian(st.v, [&](const DualVec& x) { return dualFd(model, dmodel, ddata, Q, x, T, wrench); });
        const Eigen::MatrixXd ad_tau = adJacobian(
            st.tau, [&](const DualVec& x) { return dualFd(model, dmodel, ddata, Q, V, x, wrench); });
        const double scale =
            std::max(1e-12, std::sqrt(ad_q.squaredNorm() + ad_v.squaredNorm() + ad_tau.squaredNorm()));
        EXPECT_TRUE(check(dq, ad_q, ad_tol, what + ": dqdd/dq vs AD (cond " + std::to_string(cond) + ")",
                          "FD: dqdd/dq vs AD", scale));
        EXPECT_TRUE(check(dv, ad_v, ad_tol, what + ": dqdd/dv vs AD", "FD: dqdd/dv vs AD", scale));
        EXPECT_TRUE(check(dtau, ad_tau, ad_tol, what + ": dqdd/dtau vs AD", "FD: dqdd/dtau vs AD", scale));

        const Eigen::MatrixXd fd_q = fdJacobian(
            zero,
            [&](const Eigen::VectorXd& x) {
              return doubleFd(model, ref, integrateConfiguration(model, st.q, x, 1.0), st.v, st.tau, wrench);
            },
            kFdStep);
        const Eigen::MatrixXd fd_v = fdJacobian(
            st.v, [&](const Eigen::VectorXd& x) { return doubleFd(model, ref, st.q, x, st.tau, wrench); },
            kFdStep);
        EXPECT_TRUE(check(dq, fd_q, fd_tol, what + ": dqdd/dq vs finite differences",
                          "FD: dqdd/dq vs central differences", scale));
        EXPECT_TRUE(check(dv, fd_v, fd_tol, what + ": dqdd/dv vs finite differences",
                          "FD: dqdd/dv vs central differences", scale));

        // dqdd/dx = -I^-1 dtau/dx at qdd (dtau/dx by AD, I^-1 dense) and dqdd/dtau I = 1
        const DualVec QDD = qdd.cast<Dual>();
        const Eigen::MatrixXd id_q = adJacobian(zero, [&](const DualVec& x) {
          return dualId(model, dmodel, ddata, dualIntegrate(model, st.q, x), V, QDD, wrench);
        });
        EXPECT_TRUE(check(dq, Eigen::MatrixXd(-Minv * id_q), ad_tol, what + ": dqdd/dq vs -I^-1 dtau/dq",
                          "FD: dqdd/dq vs -I^-1 dtau/dq (AD)", scale));
        EXPECT_TRUE(check(Eigen::MatrixXd(dtau * M), Eigen::MatrixXd::Identity(nv, nv),
                          1e-10 * std::max(1.0, cond / 1e3), what + ": dqdd/dtau I", "FD: dqdd/dtau I vs 1"));
        EXPECT_TRUE(check(data.dtau_dq, id_q, ad_tol, what + ": dtau/dq at qdd", "FD: dtau/dq at qdd vs AD",
                          std::max(1e-12, id_q.norm())));
      }
      ++s;
    }
  }
}

TEST(TreeDerivatives, ASerialChainOnTheTreeRecursionsGivesTheSerialDerivatives) {
  std::mt19937_64 rng(31);
  for (int n : {1, 2, 4, 7, 13, 25, 30}) {
    ModelSpec spec = testing::randomChainSpec(n, 1000 + static_cast<std::uint32_t>(n));
    for (std::size_t i = 1; i < spec.joints.size(); i += 2) spec.joints[i].armature = 0.02;
    const auto [serial, tree] = testing::serialAndTree(spec);
    Data ds(serial), dt(tree);
    for (int trial = 0; trial < 3; ++trial) {
      const Eigen::VectorXd q = randomConfiguration(serial, rng), v = testing::randomStateVector(n, rng, 2.0),
                            a = testing::randomStateVector(n, rng, 3.0),
                            tau = testing::randomStateVector(n, rng, 5.0);
      Vec6 w;
      w << testing::randomStateVector(3, rng, 2.0), testing::randomStateVector(3, rng, 10.0);
      for (const Vec6* wrench : {static_cast<const Vec6*>(nullptr), static_cast<const Vec6*>(&w)}) {
        const std::string what = "n = " + std::to_string(n) + (wrench ? " with tip wrench" : "");
        if (wrench) {
          computeInverseDynamicsDerivatives(serial, ds, q, v, a, *wrench);
          computeInverseDynamicsDerivatives(tree, dt, q, v, a, *wrench);
        } else {
          computeInverseDynamicsDerivatives(serial, ds, q, v, a);
          computeInverseDynamicsDerivatives(tree, dt, q, v, a);
        }
        const double scale = std::max(1e-12, std::hypot(ds.dtau_dq.norm(), ds.dtau_dqd.norm()));
        EXPECT_TRUE(
            check(dt.dtau_dq, ds.dtau_dq, kSerialTol, what + ": dtau/dq", "serial chain: dtau/dq", scale));
        EXPECT_TRUE(
            check(dt.dtau_dqd, ds.dtau_dqd, kSerialTol, what + ": dtau/dv", "serial chain: dtau/dv", scale));
        EXPECT_TRUE(check(dt.tau, ds.tau, kSerialTol, what + ": tau", "serial chain: tau"));
        if (wrench) {
          computeForwardDynamicsDerivatives(serial, ds, q, v, tau, *wrench);
          computeForwardDynamicsDerivatives(tree, dt, q, v, tau, *wrench);
        } else {
          computeForwardDynamicsDerivatives(serial, ds, q, v, tau);
          computeForwardDynamicsDerivatives(tree, dt, q, v, tau);
        }
        const double fscale =
            std::sqrt(ds.dqdd_dq.squaredNorm() + ds.dqdd_dqd.squaredNorm() + ds.Minv.squaredNorm());
        EXPECT_TRUE(
            check(dt.dqdd_dq, ds.dqdd_dq, kSerialTol, what + ": dqdd/dq", "serial chain: dqdd/dq", fscale));
        EXPECT_TRUE(
            check(dt.dqdd_dqd, ds.dqdd_dqd, kSerialTol, what + ": dqdd/dv", "serial chain: dqdd/dv", fscale));
        EXPECT_TRUE(
            check(dt.Minv, ds.Minv, kSerialTol, what + ": dqdd/dtau", "serial chain: dqdd/dtau", fscale));
        EXPECT_TRUE(check(dt.qdd, ds.qdd, kSerialTol, what + ": qdd", "serial chain: qdd"));
      }
    }
  }
}

// I^-1 and -I^-1 dtau/dx take one of three routes: the sweeps (coordinates numbered depth first, a long
// enough path) or the sparse factor's I^-1, each with two dense products, up to
// detail::productDerivativesMaxDof; above it, the sparse factor's solves column by column. Each route against
// Eigen's inverse of I(q) and the product with the call's own dtau/dx (checked against automatic
// differentiation above).
TEST(TreeDerivatives, EveryRouteOfTheInverseAndTheProductsAgreesWithTheDefinition) {
  const int wide = detail::productDerivativesMaxDof<double>();
  struct Route {
    std::string name;
    Model model;
    bool sweeps, columns;
  };
  ModelSpec depth_first = testing::depthFirst(testing::randomTreeSpec(30, 1400, RootJoint::Floating));
  ModelSpec shuffled = testing::randomTreeSpec(30, 1401, RootJoint::Floating);
  ModelSpec large = testing::depthFirst(testing::randomTreeSpec(wide, 1402, RootJoint::Floating));
  for (ModelSpec* spec : {&depth_first, &shuffled, &large}) spec->force_tree = true;
  const std::vector<Route> routes = {{"sweeps", buildModel(depth_first), true, false},
                                     {"factor", buildModel(shuffled), false, false},
                                     {"columns", buildModel(large), true, true}};
  std::mt19937_64 rng(41);
  for (const Route& r : routes) {
    const Model& model = r.model;
    ASSERT_EQ(model.inverse_by_sweeps, r.sweeps) << r.name;
    ASSERT_EQ(model.nv > wide, r.columns) << r.name;
    Data data(model), ref(model);
    const int nv = model.nv;
    for (int trial = 0; trial < 2; ++trial) {
      const Eigen::VectorXd q = randomConfiguration(model, rng), v = testing::randomStateVector(nv, rng, 2.0),
                            tau = testing::randomStateVector(nv, rng, 5.0);
      computeForwardDynamicsDerivatives(model, data, q, v, tau);
      const Eigen::MatrixXd M = computeInertiaMatrix(model, ref, q);
      const Eigen::MatrixXd Minv = M.inverse();
      const double tol = 1e-14 * M.norm() * Minv.norm() + 1e-13;
      const std::string what = r.name + " (nv = " + std::to_string(nv) + ") trial " + std::to_string(trial);
      EXPECT_TRUE(check(data.Minv, Minv, tol, what + ": I^-1", "routes: I^-1"));
      EXPECT_TRUE(check(data.dqdd_dq, Eigen::MatrixXd(-Minv * data.dtau_dq), tol, what + ": dqdd/dq",
                        "routes: dqdd/dq"));
      EXPECT_TRUE(check(data.dqdd_dqd, Eigen::MatrixXd(-Minv * data.dtau_dqd), tol, what + ": dqdd/dv",
                        "routes: dqdd/dv"));
    }
  }
}

TEST(TreeDerivatives, WithoutGravityARigidMotionOfTheRobotChangesOnlyWorldAxisForces) {
  // the inverse dynamics are invariant under a rigid motion of the whole robot with its velocities,
  // accelerations and a tip wrench, except through what stays in the world: gravity, and the axes of a
  // planar root's generalized force. Without gravity, a floating root's q columns vanish; a planar root's x,
  // y columns vanish, and, once its x, y rates and accelerations (world axes, which do not turn with yaw)
  // are zero, a turn by yaw turns the force [f_x f_y] and changes nothing else: d[f_x f_y]/d yaw =
  // [-f_y f_x]
  std::mt19937_64 rng(41);
  for (RootJoint root : {RootJoint::Floating, RootJoint::Planar}) {
    for (int n : {0, 3, 11}) {
      ModelSpec spec = testing::randomTreeSpec(n, 1100 + static_cast<std::uint32_t>(n), root);
      spec.gravity.setZero();
      const Model model = buildModel(spec);
      const DualModel dmodel = model.cast<Dual>();
      Data data(model);
      DualData ddata(dmodel);
      const int nv = model.nv;
      const Eigen::VectorXd q = randomConfiguration(model, rng);
      Eigen::VectorXd v = testing::randomStateVector(nv, rng, 2.0);
      Eigen::VectorXd a = testing::randomStateVector(nv, rng, 3.0);
      if (root == RootJoint::Planar) {
        v.head<2>().setZero();
        a.head<2>().setZero();
      }
      Vec6 w;
      w << testing::randomStateVector(3, rng, 2.0), testing::randomStateVector(3, rng, 10.0);
      computeInverseDynamicsDerivatives(model, data, q, v, a, w);
      const std::string what = std::string(testing::rootName(root)) + " n = " + std::to_string(n);
      Eigen::MatrixXd expected = Eigen::MatrixXd::Zero(nv, model.nr);
      if (root == RootJoint::Planar) {
        expected(0, 2) = -data.tau[1];
        expected(1, 2) = data.tau[0];
      }
      const Eigen::MatrixXd root_cols = data.dtau_dq.leftCols(model.nr);
      EXPECT_TRUE(check(root_cols, expected, 1e-13, what + ": root columns in q",
                        "no gravity: root columns in q vs closed form", std::max(1.0, data.tau.norm())));
      // automatic differentiation agrees
      const Eigen::MatrixXd ad_q = adJacobian(Eigen::VectorXd::Zero(nv), [&](const DualVec& x) {
        return dualId(model, dmodel, ddata, dualIntegrate(model, q, x), v.cast<Dual>(), a.cast<Dual>(), &w);
      });
      const double scale = std::max(1.0, ad_q.norm());
      EXPECT_TRUE(check(Eigen::MatrixXd(ad_q.leftCols(model.nr)), expected, 1e-12, what + ": AD root columns",
                        "no gravity: AD root columns in q vs closed form", scale));
    }
  }
}

TEST(TreeDerivatives, MasslessLinksAndPointMassesAgainstAutomaticDifferentiation) {
  // a massless intermediate link carrying a massive one, a point mass on a prismatic joint and a thin rod
  ModelSpec spec = testing::randomTreeSpec(6, 1150, RootJoint::Floating);
  spec.joints[1].parent = 0;
  spec.joints[1].mass = 0.0;
  spec.joints[1].inertia.setZero();
  spec.joints[2].parent = 1;
  spec.joints[3].parent = -1;
  spec.joints[3].type = JointType::Prismatic;
  spec.joints[3].inertia.setZero();
  spec.joints[5].inertia = Eigen::Vector3d(0.0, 0.02, 0.02).asDiagonal();
  for (RootJoint root : {RootJoint::Fixed, RootJoint::Floating, RootJoint::Planar}) {
    spec.root = root;
    const Model model = buildModel(spec);
    ASSERT_FALSE(model.serial);
    const DualModel dmodel = model.cast<Dual>();
    Data data(model);
    DualData ddata(dmodel);
    const int nv = model.nv;
    const Eigen::VectorXd zero = Eigen::VectorXd::Zero(nv);
    for (const State& st : states(model, 1160)) {
      const std::string what = std::string(testing::rootName(root)) + " massless links";
      computeInverseDynamicsDerivatives(model, data, st.q, st.v, st.a, st.wrench);
      const Eigen::MatrixXd dq = data.dtau_dq, dv = data.dtau_dqd;
      const DualVec V = st.v.cast<Dual>(), A = st.a.cast<Dual>(), T = st.tau.cast<Dual>(),
                    Q = st.q.cast<Dual>();
      const Eigen::MatrixXd ad_q = adJacobian(zero, [&](const DualVec& x) {
        return dualId(model, dmodel, ddata, dualIntegrate(model, st.q, x), V, A, &st.wrench);
      });
      const Eigen::MatrixXd ad_v = adJacobian(
          st.v, [&](const DualVec& x) { return dualId(model, dmodel, ddata, Q, x, A, &st.wrench); });
      const double scale = std::max(1e-12, std::hypot(ad_q.norm(), ad_v.norm()));
      EXPECT_TRUE(check(dq, ad_q, kAdTol, what + ": dtau/dq vs AD", "massless links: dtau/dq vs AD", scale));
      EXPECT_TRUE(check(dv, ad_v, kAdTol, what + ": dtau/dv vs AD", "massless links: dtau/dv vs AD", scale));
      computeForwardDynamicsDerivatives(model, data, st.q, st.v, st.tau, st.wrench);
      const Eigen::MatrixXd fq = adJacobian(zero, [&](const DualVec& x) {
        return dualFd(model, dmodel, ddata, dualIntegrate(model, st.q, x), V, T, &st.wrench);
      });
      const Eigen::MatrixXd M = computeInertiaMatrix(model, data, st.q);
      const double cond = M.norm() * M.inverse().norm();
      EXPECT_TRUE(check(data.dqdd_dq, fq, kAdTol * std::max(1.0, cond / 1e5), what + ": dqdd/dq vs AD",
                        "massless links: dqdd/dq vs AD", std::max(1e-12, fq.norm())));
    }
  }
}

/// A set of external wrenches on a model: Base and Local on several links (two on one link), with points
/// off the frames' origins, on the tip and, for a moving root, on the root link.
std::vector<ExternalWrench> someWrenches(const Model& model, std::mt19937_64& rng) {
  std::vector<ExternalWrench> out;
  const auto wrench = [&] {
    Vec6 w;
    w << testing::randomStateVector(3, rng, 2.0), testing::randomStateVector(3, rng, 10.0);
    return w;
  };
  const auto point = [&] { return Eigen::Vector3d(testing::randomStateVector(3, rng, 0.3)); };
  const int n = model.n;
  if (n > 0) {
    out.push_back({n / 2, wrench(), ReferenceFrame::Base, point()});
    out.push_back({n / 2, wrench(), ReferenceFrame::Local, point()});
    out.push_back({n - 1, wrench(), ReferenceFrame::Base, Eigen::Vector3d::Zero()});
    out.push_back({0, wrench(), ReferenceFrame::Local, point()});
    out.push_back({n, wrench(), ReferenceFrame::Base, point()});  // the tip frame
  }
  if (model.root != RootJoint::Fixed) {
    out.push_back({n + 1, wrench(), ReferenceFrame::Base, point()});  // the root link
    out.push_back({n + 1, wrench(), ReferenceFrame::Local, point()});
  }
  return out;
}

/// The Base wrenches of `ws` turned into their frames' axes at q (the same world wrenches at q; Local ones
/// turn with their links where Base ones keep their axes).
std::vector<ExternalWrench> turnedLocal(const Model& model, Data& data, const Eigen::VectorXd& q,
                                        std::vector<ExternalWrench> ws) {
  detail::treePlacements(model, data, q);
  for (ExternalWrench& w : ws) {
    if (w.reference != ReferenceFrame::Base) continue;
    Eigen::Matrix3d R;
    Eigen::Vector3d o;
    detail::treeFramePose(model, data, w.frame, R, o);
    w.wrench.head<3>() = R.transpose() * Eigen::Vector3d(w.wrench.head<3>());
    w.wrench.tail<3>() = R.transpose() * Eigen::Vector3d(w.wrench.tail<3>());
    w.reference = ReferenceFrame::Local;
  }
  return ws;
}

std::vector<ExternalWrenchTpl<Dual>> dualWrenches(const std::vector<ExternalWrench>& ws) {
  std::vector<ExternalWrenchTpl<Dual>> out;
  for (const ExternalWrench& w : ws)
    out.push_back({w.frame, w.wrench.cast<Dual>(), w.reference, w.point.cast<Dual>()});
  return out;
}

/// The inverse and forward dynamics derivatives with `wrenches` at a state, against central differences of
/// the wrench-aware inverseDynamics and forwardDynamics (q along integrateConfiguration) and, when `ad`,
/// automatic differentiation. Returns how much the Base wrenches' own q-dependence weighs: the relative
/// difference from dtau/dq with the same wrenches turned Local at q (equal tau).
double checkWrenchDerivatives(const Model& model, const State& st, const std::vector<ExternalWrench>& ws,
                              const std::string& what, bool ad) {
  Data data(model), ref(model);
  const int nv = model.nv;
  const Eigen::VectorXd zero = Eigen::VectorXd::Zero(nv);
  computeInverseDynamicsDerivatives(model, data, st.q, st.v, st.a, ws);
  const Eigen::MatrixXd dq = data.dtau_dq, dv = data.dtau_dqd;
  const Eigen::VectorXd tau = data.tau;
  EXPECT_TRUE(check(tau, Eigen::VectorXd(inverseDynamics(model, ref, st.q, st.v, st.a, ws)), 1e-12,
                    what + ": tau", "wrenches ID: tau vs inverseDynamics"));
  const auto id = [&](const Eigen::VectorXd& q, const Eigen::VectorXd& v) {
    return Eigen::VectorXd(inverseDynamics(model, ref, q, v, st.a, ws));
  };
  const Eigen::MatrixXd fd_q = fdJacobian(
      zero, [&](const Eigen::VectorXd& x) { return id(integrateConfiguration(model, st.q, x, 1.0), st.v); },
      kFdStep);
  const Eigen::MatrixXd fd_v = fdJacobian(
      st.v, [&](const Eigen::VectorXd& x) { return id(st.q, x); }, kFdStep);
  const double scale = std::max(1e-12, std::hypot(fd_q.norm(), fd_v.norm()));
  EXPECT_TRUE(check(dq, fd_q, kFdTol, what + ": dtau/dq vs finite differences",
                    "wrenches ID: dtau/dq vs central differences", scale));
  EXPECT_TRUE(check(dv, fd_v, kFdTol, what + ": dtau/dv vs finite differences",
                    "wrenches ID: dtau/dv vs central differences", scale));
  if (ad) {
    const DualModel dmodel = model.cast<Dual>();
    DualData ddata(dmodel);
    const auto dws = dualWrenches(ws);
    const DualVec V = st.v.cast<Dual>(), A = st.a.cast<Dual>();
    const Eigen::MatrixXd ad_q = adJacobian(zero, [&](const DualVec& x) {
      return DualVec(inverseDynamics(dmodel, ddata, dualIntegrate(model, st.q, x), V, A, dws));
    });
    EXPECT_TRUE(check(dq, ad_q, kAdTol, what + ": dtau/dq vs AD", "wrenches ID: dtau/dq vs AD", scale));
  }
  // the same wrenches turned into their links' axes at this q: equal tau, dtau/dq without the Base terms
  const std::vector<ExternalWrench> local = turnedLocal(model, ref, st.q, ws);
  computeInverseDynamicsDerivatives(model, ref, st.q, st.v, st.a, local);
  EXPECT_TRUE(check(ref.tau, tau, 1e-10, what + ": the wrenches turned Local", "wrenches: tau turned Local"));
  const double base_weight = (ref.dtau_dq - dq).norm() / scale;

  // forward dynamics at tau
  computeForwardDynamicsDerivatives(model, data, st.q, st.v, st.tau, ws);
  const Eigen::MatrixXd fq = data.dqdd_dq, fv = data.dqdd_dqd, minv = data.Minv;
  const auto fdyn = [&](const Eigen::VectorXd& q, const Eigen::VectorXd& v, const Eigen::VectorXd& t) {
    return Eigen::VectorXd(forwardDynamics(model, ref, q, v, t, ws));
  };
  EXPECT_TRUE(check(data.qdd, fdyn(st.q, st.v, st.tau), 1e-10, what + ": qdd",
                    "wrenches FD: qdd vs forwardDynamics"));
  const Eigen::MatrixXd ffd_q = fdJacobian(
      zero,
      [&](const Eigen::VectorXd& x) {
        return fdyn(integrateConfiguration(model, st.q, x, 1.0), st.v, st.tau);
      },
      kFdStep);
  const Eigen::MatrixXd ffd_v = fdJacobian(
      st.v, [&](const Eigen::VectorXd& x) { return fdyn(st.q, x, st.tau); }, kFdStep);
  const Eigen::MatrixXd ffd_t = fdJacobian(
      st.tau, [&](const Eigen::VectorXd& x) { return fdyn(st.q, st.v, x); }, kFdStep);
  const double fscale =
      std::max(1e-12, std::sqrt(ffd_q.squaredNorm() + ffd_v.squaredNorm() + ffd_t.squaredNorm()));
  EXPECT_TRUE(check(fq, ffd_q, kFdTol, what + ": dqdd/dq vs finite differences",
                    "wrenches FD: dqdd/dq vs central differences", fscale));
  EXPECT_TRUE(check(fv, ffd_v, kFdTol, what + ": dqdd/dv vs finite differences",
                    "wrenches FD: dqdd/dv vs central differences", fscale));
  EXPECT_TRUE(check(minv, ffd_t, kFdTol, what + ": dqdd/dtau vs finite differences",
                    "wrenches FD: dqdd/dtau vs central differences", fscale));
  return base_weight;
}

TEST(TreeDerivatives, ExternalWrenchesLocalAndBaseAgainstFiniteDifferences) {
  for (const testing::TreeCase& c : testing::treeCases({1, 3, 8, 20})) {
    const Model model = treeModel(c.n, 1600 + static_cast<std::uint32_t>(c.n), c.root);
    std::mt19937_64 rng(1700 + static_cast<std::uint64_t>(c.n));
    int s = 0;
    double weight = 0.0;
    for (const State& st : states(model, 1800 + static_cast<std::uint64_t>(c.n))) {
      const std::vector<ExternalWrench> ws = someWrenches(model, rng);
      weight = std::max(
          weight, checkWrenchDerivatives(
                      model, st, ws, describe(c) + " state " + std::to_string(s++) + " with wrenches", true));
    }
    // the Base wrenches' own q-dependence is not negligible (else the oracles above would not see it)
    if (c.n >= 3) {
      EXPECT_GT(weight, 1e-3) << describe(c);
    }
  }
}

TEST(TreeDerivatives, ExternalWrenchesOnASerialChainTakeTheTreeRoute) {
  std::mt19937_64 rng(41);
  for (int n : {2, 7, 13}) {
    const Model model = buildModel(testing::randomChainSpec(n, 1900 + static_cast<std::uint32_t>(n)));
    ASSERT_TRUE(model.serial);
    int s = 0;
    for (const State& st : states(model, 2000 + static_cast<std::uint64_t>(n))) {
      const std::vector<ExternalWrench> ws = someWrenches(model, rng);
      checkWrenchDerivatives(model, st, ws,
                             "chain n = " + std::to_string(n) + " state " + std::to_string(s++), false);
      // a lone tip wrench in the tip frame: the serial route's derivatives
      Data a(model), b(model);
      computeInverseDynamicsDerivatives(model, a, st.q, st.v, st.a, st.wrench);
      computeInverseDynamicsDerivatives(model, b, st.q, st.v, st.a,
                                        std::vector<ExternalWrench>{{n, st.wrench, ReferenceFrame::Local}});
      const double scale = std::hypot(a.dtau_dq.norm(), a.dtau_dqd.norm());
      EXPECT_TRUE(check(b.dtau_dq, a.dtau_dq, kSerialTol, "chain tip wrench: dtau/dq",
                        "serial chain: dtau/dq", scale));
      EXPECT_TRUE(check(b.dtau_dqd, a.dtau_dqd, kSerialTol, "chain tip wrench: dtau/dv",
                        "serial chain: dtau/dv", scale));
    }
  }
}

TEST(TreeDerivatives, Solo12ContactForcesOnTheFeetAgainstFiniteDifferences) {
  UrdfOptions options;
  options.root = RootJoint::Floating;
  const std::string path = std::string(DENOC_MODELS_DIR) + "/trees/solo12.urdf";
  const Model model = buildModelFromUrdfFile(path, options);
  const ModelSpec spec = specFromUrdf(
      [&] {
        std::FILE* f = std::fopen(path.c_str(), "rb");
        std::string text;
        char buf[4096];
        for (std::size_t r; f && (r = std::fread(buf, 1, sizeof buf, f)) > 0;) text.append(buf, r);
        if (f) std::fclose(f);
        return text;
      }(),
      options);
  std::mt19937_64 rng(43);
  // the four feet, fixed frames off their links: contact forces in world axes, and a foot's moment in its
  // own axes (turned into the link's)
  std::vector<ExternalWrench> ws;
  for (const FixedFrameSpec& f : spec.fixed_frames) {
    if (f.name.size() < 5 || f.name.substr(f.name.size() - 5) != "_FOOT") continue;
    ASSERT_GE(f.joint, 0) << f.name;
    ASSERT_GT(f.origin.norm(), 0.0) << f.name << ": expected an offset from its link";
    Vec6 w;
    w << testing::randomStateVector(3, rng, 0.5), testing::randomStateVector(2, rng, 5.0), 20.0;
    ws.push_back({f.joint, w, ReferenceFrame::Base, f.origin});
    Vec6 l;
    l << f.rotation * Eigen::Vector3d(testing::randomStateVector(3, rng, 0.5)),
        f.rotation * Eigen::Vector3d(testing::randomStateVector(3, rng, 3.0));
    ws.push_back({f.joint, l, ReferenceFrame::Local, f.origin});
  }
  ASSERT_EQ(ws.size(), 8u);
  int s = 0;
  double weight = 0.0;
  for (const State& st : states(model, 2100)) {
    weight =
        std::max(weight, checkWrenchDerivatives(model, st, ws, "Solo-12 state " + std::to_string(s++), true));
  }
  EXPECT_GT(weight, 1e-3);
}

TEST(TreeDerivatives, NoHeapAllocation) {
#ifdef DENOC_COUNT_ALLOCATIONS
  for (RootJoint root : {RootJoint::Fixed, RootJoint::Floating, RootJoint::Planar}) {
    const Model model = treeModel(9, 1200, root);
    Data data(model);
    std::mt19937_64 rng(3);
    const Eigen::VectorXd q = randomConfiguration(model, rng),
                          v = testing::randomStateVector(model.nv, rng, 1.0),
                          a = testing::randomStateVector(model.nv, rng, 1.0);
    Vec6 w = Vec6::Ones();
    const std::vector<ExternalWrench> wrenches = {
        {3, w, ReferenceFrame::Base, Eigen::Vector3d(0.1, 0.2, 0.3)},
        {8, w, ReferenceFrame::Local, Eigen::Vector3d::Zero()},
        {10, w, ReferenceFrame::Base, Eigen::Vector3d::Zero()}};
    const long count = testing::allocationsIn([&] {
      computeInverseDynamicsDerivatives(model, data, q, v, a);
      computeInverseDynamicsDerivatives(model, data, q, v, a, w);
      computeForwardDynamicsDerivatives(model, data, q, v, a);
      computeForwardDynamicsDerivatives(model, data, q, v, a, w);
      computeInverseDynamicsDerivatives(model, data, q, v, a, wrenches);
      computeForwardDynamicsDerivatives(model, data, q, v, a, wrenches);
    });
    EXPECT_EQ(count, 0) << testing::rootName(root);
  }
#else
  GTEST_SKIP() << testing::kNoAllocationCounting;
#endif
}

TEST(TreeDerivatives, BadArgumentsAreRefusedNamingTheFunction) {
  const Model model = treeModel(4, 1300, RootJoint::Floating);
  Data data(model);
  const Eigen::VectorXd q = neutralConfiguration(model), v = Eigen::VectorXd::Zero(model.nv);
  const auto expectMessage = [](const auto& f, const std::string& text) {
    try {
      f();
      FAIL() << "no exception, expected " << text;
    } catch (const std::invalid_argument& e) {
      EXPECT_NE(std::string(e.what()).find(text), std::string::npos) << e.what();
    }
  };
  expectMessage([&] { computeInverseDynamicsDerivatives(model, data, v, v, v); },
                "computeInverseDynamicsDerivatives: q has 10 entries, expected 11");
  expectMessage([&] { computeForwardDynamicsDerivatives(model, data, q, q, v); },
                "computeForwardDynamicsDerivatives: v has 11 entries, expected 10");
  Eigen::VectorXd bad = q;
  bad[6] = 1.01;
  expectMessage([&] { computeForwardDynamicsDerivatives(model, data, bad, v, v, Vec6::Zero()); },
                "computeForwardDynamicsDerivatives: q[3..7), the root's quaternion, has norm 1.01");
  Eigen::VectorXd nan = v;
  nan[2] = NAN;
  expectMessage([&] { computeInverseDynamicsDerivatives(model, data, q, v, nan); },
                "computeInverseDynamicsDerivatives: a[2] is nan");
  Vec6 w = Vec6::Zero();
  w[4] = INFINITY;
  expectMessage([&] { computeInverseDynamicsDerivatives(model, data, q, v, v, w); },
                "computeInverseDynamicsDerivatives: tip_wrench[4] is inf");
  const Model other = treeModel(4, 1300, RootJoint::Planar);
  Data wrong(other);
  expectMessage([&] { computeInverseDynamicsDerivatives(model, wrong, q, v, v); },
                "computeInverseDynamicsDerivatives: the Data was made for a model of 4 joints (nv = 7)");
}

}  // namespace
}  // namespace denoc
