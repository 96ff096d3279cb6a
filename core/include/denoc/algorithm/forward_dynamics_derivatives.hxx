#pragma once

#include <type_traits>

#include "denoc/algorithm/check.hpp"
#include "denoc/algorithm/forward_dynamics.hpp"
#include "denoc/algorithm/inertia_matrix.hpp"
#include "denoc/algorithm/inverse_dynamics.hpp"
#include "denoc/algorithm/inverse_dynamics_derivatives.hpp"
#include "denoc/algorithm/udu.hpp"

namespace denoc {
namespace detail {

template <typename S>
DENOC_FLATTEN void solveWithFactors(const ModelTpl<S>& model, DataTpl<S>& data, const S* b, S* x,
                                    const S& scale) {
  using Vec6 = typename Types<S>::Vec6;
  const int n = model.n;
  JointWork<S>* work = data.work.data();
  const Vec6* p = data.p0.data();
  // the three sweeps of section 5.2 (solveUDU) on a raw column
  Vec6 eta = Vec6::Zero();
  for (int i = n - 1; i >= 0; --i) {
    work[i].tau_hat = scale * b[i] - p[i].dot(eta);
    eta += work[i].psi * work[i].tau_hat;
  }
  Vec6 mu = Vec6::Zero();
  for (int i = 0; i < n; ++i) {
    x[i] = work[i].tau_hat * work[i].inv_mh - work[i].psi.dot(mu);
    mu += p[i] * x[i];
  }
}

/// out = -A B for A symmetric (both triangles stored), all n x n column-major; out must not alias B.
template <typename S>
DENOC_FLATTEN void negatedProduct(const typename Types<S>::MatX& A, const typename Types<S>::MatX& B,
                                  typename Types<S>::MatX& out) {
  const Eigen::Index n = A.rows();
  const S* a = A.data();
  const S* b = B.data();
  S* o = out.data();
  for (Eigen::Index j = 0; j < n; ++j) {
    S* oj = o + j * n;
    for (Eigen::Index i = 0; i < n; ++i) oj[i] = S(0);
    for (Eigen::Index k = 0; k < n; ++k) {
      const S bkj = -b[k + j * n];
      const S* ak = a + k * n;
      for (Eigen::Index i = 0; i < n; ++i) oj[i] += ak[i] * bkj;
    }
  }
}

template <typename S>
DENOC_FLATTEN void abaDerivatives(const ModelTpl<S>& model, DataTpl<S>& data,
                                  const Eigen::Ref<const typename Types<S>::VecX>& q,
                                  const Eigen::Ref<const typename Types<S>::VecX>& qd,
                                  const Eigen::Ref<const typename Types<S>::VecX>& tau,
                                  const typename Types<S>::Vec6* tip_wrench) {
  const int n = model.n;
  // the tip wrench's joint torques, ID(q, 0, 0, wrench) without gravity, move to the right-hand side
  if (tip_wrench) {
    rnea<S>(model, data, q, data.zeros, nullptr, tip_wrench, false, data.tau_eff);
    data.tau_eff = tau - data.tau_eff;
    forwardDynamicsSaha<S>(model, data, q, qd, data.tau_eff);
  } else {
    forwardDynamicsSaha<S>(model, data, q, qd, tau);
  }
  // dtau/dq, dtau/dqd at qdd (the factors of the forward dynamics stay in data.work, data.p0)
  rneaDerivatives<S>(model, data, q, qd, data.qdd, tip_wrench);
  if (n <= kDenseUDUMaxDof) {
    crba(model, data);  // the link inertias and p_k of the forward dynamics
    denseUDU(model, data);
    inverseFromUDU(model, data);
    negatedProduct<S>(data.Minv, data.dtau_dq, data.dqdd_dq);
    negatedProduct<S>(data.Minv, data.dtau_dqd, data.dqdd_dqd);
  } else {
    inverseBySweeps(model, data);
    for (int j = 0; j < n; ++j) {
      const Eigen::Index c = static_cast<Eigen::Index>(j) * n;
      solveWithFactors<S>(model, data, data.dtau_dq.data() + c, data.dqdd_dq.data() + c, S(-1));
      solveWithFactors<S>(model, data, data.dtau_dqd.data() + c, data.dqdd_dqd.data() + c, S(-1));
    }
  }
}

}  // namespace detail

template <typename S>
void computeForwardDynamicsDerivatives(const ModelTpl<S>& model, DataTpl<S>& data,
                                       const Eigen::Ref<const typename Types<S>::VecX>& q,
                                       const Eigen::Ref<const typename Types<S>::VecX>& qd,
                                       const Eigen::Ref<const typename Types<S>::VecX>& tau) {
  detail::checkVectors(model, "computeForwardDynamicsDerivatives", q, "q", qd, "qd", tau, "tau");
  detail::abaDerivatives<S>(model, data, q, qd, tau, nullptr);
}

template <typename S>
void computeForwardDynamicsDerivatives(const ModelTpl<S>& model, DataTpl<S>& data,
                                       const Eigen::Ref<const typename Types<S>::VecX>& q,
                                       const Eigen::Ref<const typename Types<S>::VecX>& qd,
                                       const Eigen::Ref<const typename Types<S>::VecX>& tau,
                                       const typename Types<S>::Vec6& tip_wrench) {
  detail::checkVectors(model, "computeForwardDynamicsDerivatives", q, "q", qd, "qd", tau, "tau");
  if constexpr (std::is_floating_point_v<S>) {
    if (!tip_wrench.allFinite()) {
      throw std::invalid_argument("computeForwardDynamicsDerivatives: tip_wrench has a non-finite entry");
    }
  }
  detail::abaDerivatives<S>(model, data, q, qd, tau, &tip_wrench);
}

}  // namespace denoc
