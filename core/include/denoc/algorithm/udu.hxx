#pragma once

#include <cmath>

#include "denoc/algorithm/check.hpp"
#include "denoc/algorithm/inertia_matrix.hpp"
#include "denoc/algorithm/kinematics.hpp"

namespace denoc {
namespace detail {

template <typename S> S logDetFromD(const typename Types<S>::VecX& D) {
  using std::log;
  if constexpr (std::is_floating_point_v<S>) {
    // one logarithm of the product when it stays a normal number (the usual case for arms) ...
    S product = S(1);
    for (Eigen::Index k = 0; k < D.size(); ++k) product *= D[k];
    if (std::isnormal(product)) return log(product);
    // ... else accumulate it as mantissa and binary exponent: no overflow, still one logarithm
    S mantissa = S(1);
    long exponent = 0;
    for (Eigen::Index k = 0; k < D.size(); ++k) {
      int e = 0;
      mantissa = std::frexp(mantissa * D[k], &e);
      exponent += e;
    }
    return log(mantissa) + S(exponent) * S(0.69314718055994530941723212145818);
  } else {
    S sum = S(0);
    for (Eigen::Index k = 0; k < D.size(); ++k) sum += log(D[k]);
    return sum;
  }
}

template <typename S>
void articulated(const ModelTpl<S>& model, DataTpl<S>& data, bool with_log_det, bool link_inertias_ready) {
  const int n = model.n;
  for (int k = n - 1; k >= 0; --k) {
    // Mh_k = M_k + B_{k+1,k}^T (Mh_{k+1} - psi_hat_{k+1} psi_{k+1}^T) B_{k+1,k}, B = 1 here
    if (!link_inertias_ready) data.Mi[k] = linkInertia(model, data, k);
    const RigidInertia<S>& Mk = data.Mi[k];
    SymInertia6<S>& Mh = data.Mh[k];
    Mh.A = Mk.I;
    Mh.H = skew(Mk.h);
    Mh.L.setZero();
    Mh.L.diagonal().setConstant(Mk.m);
    if (k + 1 < n) {
      const SymInertia6<S>& Mh1 = data.Mh[k + 1];
      const auto ph_a = data.psi_hat[k + 1].template head<3>();
      const auto ph_l = data.psi_hat[k + 1].template tail<3>();
      const auto ps_a = data.psi[k + 1].template head<3>();
      const auto ps_l = data.psi[k + 1].template tail<3>();
      Mh.A += Mh1.A - ph_a * ps_a.transpose();
      Mh.H += Mh1.H - ph_a * ps_l.transpose();
      Mh.L += Mh1.L - ph_l * ps_l.transpose();
    }
    // psi_hat_k = Mh_k p_k, mh_k = p_k^T psi_hat_k, psi_k = psi_hat_k / mh_k
    data.psi_hat[k] = Mh * data.p0[k];
    const S mh = data.p0[k].dot(data.psi_hat[k]) + model.armature[k];
    data.D[k] = mh;
    data.psi[k] = data.psi_hat[k] / mh;
  }
  if (with_log_det) data.log_det = logDetFromD<S>(data.D);
}

template <typename S> void denseUDU(const ModelTpl<S>& model, DataTpl<S>& data) {
  const int n = model.n;
  // plain loops: at the sizes this route is used for, expression overhead dominates the arithmetic
  S* W = data.L.data();  // column-major work copy of I's upper triangle: the Schur complements
  S* U = data.U.data();
  const S* M = data.M.data();
  for (int b = 0; b < n; ++b) {
    for (int a = 0; a <= b; ++a) W[a + b * n] = M[a + b * n];
    for (int a = b + 1; a < n; ++a) U[a + b * n] = S(0);
    U[b + b * n] = S(1);
  }
  for (int k = n - 1; k >= 0; --k) {
    // eliminate row and column k from the bottom: D_k = W_kk, U_ik = W_ik / D_k,
    // W_ab -= U_ak W_bk for a <= b < k
    const S d = W[k + k * n];
    data.D[k] = d;
    const S inv_d = S(1) / d;
    S* Uk = U + k * n;
    const S* Wk = W + k * n;
    for (int a = 0; a < k; ++a) Uk[a] = Wk[a] * inv_d;
    for (int b = 0; b < k; ++b) {
      const S w_bk = Wk[b];
      S* Wb = W + b * n;
      for (int a = 0; a <= b; ++a) Wb[a] -= Uk[a] * w_bk;
    }
  }
}

template <typename S> void explicitU(const ModelTpl<S>& model, DataTpl<S>& data) {
  const int n = model.n;
  data.U.setIdentity();
  for (int k = 1; k < n; ++k) {
    for (int i = 0; i < k; ++i) data.U(i, k) = data.p0[i].dot(data.psi[k]);
  }
}

template <typename S>
void solveUDU(const ModelTpl<S>& model, DataTpl<S>& data, const typename Types<S>::VecX& phi,
              typename Types<S>::VecX& x) {
  using Vec6 = typename Types<S>::Vec6;
  const int n = model.n;
  // (i) tauh_i = phi_i - p_i^T eta_{i,i+1}, eta_i = psi_i tauh_i + eta_{i,i+1}  (i = n..1)
  Vec6 eta = Vec6::Zero();
  for (int i = n - 1; i >= 0; --i) {
    data.tau_hat[i] = phi[i] - data.p0[i].dot(eta);
    eta += data.psi[i] * data.tau_hat[i];
    data.eta[i] = eta;
  }
  // (ii) taut_i = tauh_i / mh_i and (iii) qdd_i = taut_i - psi_i^T mu_{i,i-1}, mu_i = p_i qdd_i + mu_{i,i-1}
  Vec6 mu = Vec6::Zero();
  for (int i = 0; i < n; ++i) {
    x[i] = data.tau_hat[i] / data.D[i] - data.psi[i].dot(mu);
    mu += data.p0[i] * x[i];
    data.mu[i] = mu;
  }
}

}  // namespace detail

template <typename S>
void computeUDU(const ModelTpl<S>& model, DataTpl<S>& data,
                const Eigen::Ref<const typename Types<S>::VecX>& q, bool explicit_u) {
  detail::checkVector(model, q, "computeUDU", "q");
  computeLocalPlacements(model, data, q);
  computeCommonPlacements(model, data);
  detail::articulated(model, data, true);
  if (explicit_u) detail::explicitU(model, data);
}

template <typename S>
void computeFullFactor(const ModelTpl<S>& model, DataTpl<S>& data,
                       const Eigen::Ref<const typename Types<S>::VecX>& q) {
  detail::checkVector(model, q, "computeFullFactor", "q");
  computeLocalPlacements(model, data, q);
  computeCommonPlacements(model, data);
  detail::crba(model, data);
  if (model.n <= kDenseUDUMaxDof) {
    detail::denseUDU(model, data);
    data.log_det = detail::logDetFromD<S>(data.D);
  } else {
    detail::articulated(model, data, true, true);  // reuses crba's link inertias
    detail::explicitU(model, data);
  }
}

template <typename S>
const typename Types<S>::MatX& computeInverseInertia(const ModelTpl<S>& model, DataTpl<S>& data,
                                                     const Eigen::Ref<const typename Types<S>::VecX>& q) {
  detail::checkVector(model, q, "computeInverseInertia", "q");
  computeLocalPlacements(model, data, q);
  computeCommonPlacements(model, data);
  detail::articulated(model, data, false);
  const int n = model.n;
  for (int j = 0; j < n; ++j) {
    data.phi.setZero();
    data.phi[j] = S(1);
    detail::solveUDU(model, data, data.phi, data.tmp);
    data.Minv.col(j) = data.tmp;
  }
  return data.Minv;
}

}  // namespace denoc
