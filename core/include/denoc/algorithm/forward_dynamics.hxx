#pragma once

#include <cmath>
#include <limits>
#include <stdexcept>
#include <type_traits>

#include "denoc/algorithm/check.hpp"
#include "denoc/algorithm/common_placement.hpp"
#include "denoc/algorithm/inertia_matrix.hpp"
#include "denoc/algorithm/inverse_dynamics.hpp"
#include "denoc/algorithm/kinematics.hpp"
#include "denoc/algorithm/udu.hpp"

namespace denoc {

namespace detail {

/// The O(n) forward dynamics on checked arguments (see forwardDynamics): phi = tau - (inverse dynamics with
/// qdd = 0) by the steps of the inverse dynamics (the same operations as inverseDynamics, so that
/// forwardDynamics(q, qd, inverseDynamics(q, qd, 0)) is exactly zero), the reverse Gaussian elimination in
/// the common frame, where B_ij = 1, and the three sweeps of section 5.2; one pass of each direction per
/// quantity that runs in it.
template <typename S>
DENOC_FLATTEN void forwardDynamicsSaha(const ModelTpl<S>& model, DataTpl<S>& data,
                                       const Eigen::Ref<const typename Types<S>::VecX>& q,
                                       const Eigen::Ref<const typename Types<S>::VecX>& qd,
                                       const Eigen::Ref<const typename Types<S>::VecX>& tau) {
  using Vec6 = typename Types<S>::Vec6;
  const int n = model.n;
  const JointConstants<S>* joint = model.joint.data();
  JointWork<S>* work = data.work.data();
  Vec6* p = data.p0.data();

  // pass 1, base to tip: the forward sweep of the inverse dynamics with qdd = 0 (link wrenches in F_k),
  // and the placements, p_k and link inertias M_k in the common frame
  jointAngles(model, data, q);
  const S* c = data.cos_theta.data();
  const S* s = data.sin_theta.data();
  MotionState<S> state;
  state.a = -model.gravity_base;
  CommonPlacement<S> P;
  for (int k = 0; k < n; ++k) {
    const JointConstants<S>& jc = joint[k];
    JointWork<S>& wk = work[k];
    const JointRotation<S> R{jc.cos_alpha, jc.sin_alpha, c[k], s[k]};
    idForwardStep(jc, R, wk, state, state, S(q[k]), S(qd[k]), S(0), k == 0);
    P.next(R, wk.s_q, k == 0);
    p[k] = P.jointVector(jc.revolute);
    wk.M = P.linkInertia(jc);
  }

  // pass 2, tip to base: the backward sweep of the inverse dynamics gives phi_k = tau_k - p_k^T w_k; the
  // reverse Gaussian elimination (eliminationStep) gives psi_k, mh_k; and the first of the three sweeps:
  // tauh_k = phi_k - p_k^T eta_{k+1}, eta_k = psi_k tauh_k + eta_{k+1}
  SymInertia6<S> Mh;
  Mh.setZero();
  Vec6 eta = Vec6::Zero();
  for (int k = n - 1; k >= 0; --k) {
    JointWork<S>& wk = work[k];
    const bool last = k + 1 == n;
    const int j = last ? k : k + 1;  // the child (unused for the last joint)
    const JointRotation<S> R{joint[j].cos_alpha, joint[j].sin_alpha, c[j], s[j]};
    const S phi_k = tau[k] - idBackwardStep(joint[k], wk, R, last ? nullptr : &work[k + 1]);
    eliminationStep(Mh, wk.M, p[k], joint[k].armature, wk.psi, data.D[k], wk.inv_mh);
    wk.tau_hat = last ? phi_k : phi_k - p[k].dot(eta);
    eta += wk.psi * wk.tau_hat;
  }

  // pass 3, base to tip: qdd_k = tauh_k / mh_k - psi_k^T mu_{k-1}, mu_k = p_k qdd_k + mu_{k-1}
  Vec6 mu = Vec6::Zero();
  for (int k = 0; k < n; ++k) {
    const JointWork<S>& wk = work[k];
    S qdd_k = wk.tau_hat * wk.inv_mh;
    if (k > 0) qdd_k -= wk.psi.dot(mu);
    data.qdd[k] = qdd_k;
    mu += p[k] * qdd_k;
  }
}

}  // namespace detail

template <typename S>
const typename Types<S>::VecX& forwardDynamics(const ModelTpl<S>& model, DataTpl<S>& data,
                                               const Eigen::Ref<const typename Types<S>::VecX>& q,
                                               const Eigen::Ref<const typename Types<S>::VecX>& qd,
                                               const Eigen::Ref<const typename Types<S>::VecX>& tau) {
  if (!model.serial)
    return detail::treeForwardDynamics<S>(model, data, q, qd, tau, nullptr, 0, "forwardDynamics");
  detail::checkData(model, data, "forwardDynamics");
  detail::checkVectors(model, "forwardDynamics", q, "q", qd, "qd", tau, "tau");
  detail::forwardDynamicsSaha(model, data, q, qd, tau);
  detail::checkPivots<S>(data.D, "forwardDynamics");  // mh_k, as Cholesky and Fixman check theirs
  detail::checkOutput<S>(data.qdd, "forwardDynamics", "qdd");
  return data.qdd;
}

namespace detail {

template <typename S>
DENOC_FLATTEN bool choleskyInPlace(typename Types<S>::MatX& A) {
  using std::sqrt;
  const int n = static_cast<int>(A.rows());
  S* a = A.data();  // column-major; only the lower triangle is read and written
  // right-looking, column oriented: contiguous column updates (plain loops: at arm sizes Eigen's dynamic
  // block expressions cost more than the arithmetic)
  for (int j = 0; j < n; ++j) {
    S* aj = a + j * n;
    const S d = aj[j];
    if (!(d > S(0))) return false;
    if constexpr (std::is_floating_point_v<S>) {
      if (!(d <= std::numeric_limits<S>::max())) return false;  // a pivot must be finite too
    }
    const S l = sqrt(d);
    aj[j] = l;
    const S inv_l = S(1) / l;
    for (int i = j + 1; i < n; ++i) aj[i] *= inv_l;
    for (int c = j + 1; c < n; ++c) {
      S* ac = a + c * n;
      const S l_cj = aj[c];
      for (int i = c; i < n; ++i) ac[i] -= l_cj * aj[i];
    }
  }
  return true;
}

template <typename S>
DENOC_FLATTEN void choleskySolveInPlace(const typename Types<S>::MatX& L, typename Types<S>::VecX& x) {
  const int n = static_cast<int>(L.rows());
  const S* l = L.data();
  S* v = x.data();
  // L y = b
  for (int j = 0; j < n; ++j) {
    const S* lj = l + j * n;
    v[j] /= lj[j];
    const S vj = v[j];
    for (int i = j + 1; i < n; ++i) v[i] -= vj * lj[i];
  }
  // L^T x = y
  for (int j = n - 1; j >= 0; --j) {
    const S* lj = l + j * n;
    S sum = v[j];
    for (int i = j + 1; i < n; ++i) sum -= lj[i] * v[i];
    v[j] = sum / lj[j];
  }
}

}  // namespace detail

template <typename S>
const typename Types<S>::VecX& forwardDynamicsCholesky(const ModelTpl<S>& model, DataTpl<S>& data,
                                                       const Eigen::Ref<const typename Types<S>::VecX>& q,
                                                       const Eigen::Ref<const typename Types<S>::VecX>& qd,
                                                       const Eigen::Ref<const typename Types<S>::VecX>& tau) {
  if (!model.serial)
    return detail::treeForwardDynamicsFactor<S>(model, data, q, qd, tau, "forwardDynamicsCholesky");
  detail::checkData(model, data, "forwardDynamicsCholesky");
  detail::checkVectors(model, "forwardDynamicsCholesky", q, "q", qd, "qd", tau, "tau");
  detail::rnea<S>(model, data, q, qd, nullptr, nullptr, true, data.qdd);
  data.qdd = tau - data.qdd;
  detail::commonPlacementsAndInertias(model, data, q, true);  // the angles of the inverse dynamics
  detail::crba(model, data);
  data.chol_L = data.M;
  bool positive;
  if constexpr (std::is_same_v<S, double>) {
    positive = model.n >= kCholeskyBlockedMinDof ? detail::choleskyBlocked(data.chol_L.data(), model.n)
                                                 : detail::choleskyInPlace<S>(data.chol_L);
  } else {
    positive = detail::choleskyInPlace<S>(data.chol_L);
  }
  if (!positive) {
    throw NumericalError(
        "forwardDynamicsCholesky: a Cholesky pivot is not positive and finite: the inertia matrix is not "
        "numerically positive definite at this state");
  }
  detail::choleskySolveInPlace<S>(data.chol_L, data.qdd);
  detail::checkOutput<S>(data.qdd, "forwardDynamicsCholesky", "qdd");
  return data.qdd;
}

}  // namespace denoc
