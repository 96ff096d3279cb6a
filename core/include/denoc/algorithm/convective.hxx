#pragma once

#include "denoc/algorithm/check.hpp"
#include "denoc/algorithm/inertia_matrix.hpp"
#include "denoc/algorithm/inverse_dynamics.hpp"
#include "denoc/algorithm/kinematics.hpp"

namespace denoc {
namespace detail {

// Saha's C (eq. 25) is C = N^T (M Ndot + Mdot N), with twists referred to the mass centers and
// Mdot_i = diag(w_i x I_i, 0) (eq. 8). Refer every twist to the base origin instead: t_i^C = X_i t_i^0 with
// X_i = [[1, 0], [-C_i x, 1]] (C_i the mass center's position), so N = X N^0, M_i^0 = X_i^T M_i X_i and
//   C = N^0T (M^0 Ndot^0 + Q N^0),  Q_i = X_i^T (M_i Xdot_i + Mdot_i X_i)
//     = [[w_i x Ic_i - m_i (C_i x)(vC_i x), 0], [-m_i (vC_i x), 0]]
// (Ic_i about C_i in base axes, vC_i the velocity of C_i). In this common frame B_ij = 1 (eq. 14), the blocks
// of N^0 are p_j for every link k >= j (eq. 17) and those of Ndot^0 are pdot_j = t_{j-1} x p_j (the motion
// cross product: p_j is fixed in link j-1, and t_j - t_{j-1} is parallel to p_j). Summing over links k >=
// max(i, j) gives the composite forms of eq. 27-29, Mt_k (eq. 23) and Qt_k = sum_{l >= k} Q_l (the
// common-frame counterpart of eq. 28's composite Mdot; Bdot_ij = 0 here, so the H_ij terms of eq. 28 fold
// into pdot_j):
//   c_ij = p_i^T (Mt_j pdot_j + Qt_j p_j)                      for i <= j,
//   c_ij = (Mt_i p_i)^T pdot_j + (Qt_i^T p_i)^T p_j             for i > j.
// Q_i t_i = t_i x* (M_i^0 t_i), so C qd is the Newton-Euler bias; M^0's true derivative is
// Q_i + Q_i^T, so dI/dt = C + C^T.
template <typename S>
void convective(const ModelTpl<S>& model, DataTpl<S>& data,
                const Eigen::Ref<const typename Types<S>::VecX>& qd) {
  using Vec3 = typename Types<S>::Vec3;
  using Mat3 = typename Types<S>::Mat3;
  using Vec6 = typename Types<S>::Vec6;
  const int n = model.n;

  // forward: pdot_i = t_{i-1} x p_i, t_i = t_{i-1} + p_i qd_i (eq. 12 with B = 1)
  Vec6 t_prev = Vec6::Zero();
  for (int i = 0; i < n; ++i) {
    const Vec6& p = data.p0[i];
    const Vec3 w = t_prev.template head<3>();
    const Vec3 v = t_prev.template tail<3>();
    const Vec3 pa = p.template head<3>();
    const Vec3 pl = p.template tail<3>();
    Vec6& pd = data.cv_pdot[i];
    pd.template head<3>() = w.cross(pa);
    pd.template tail<3>() = w.cross(pl) + v.cross(pa);
    t_prev += p * qd[i];
    data.cv_t[i] = t_prev;
  }

  // backward: composite inertias Mt_i (eq. 23, B = 1) and composite Qt_i
  for (int i = n - 1; i >= 0; --i) {
    const RigidInertia<S> Mi = linkInertia(model, data, i);
    const Vec3 w = data.cv_t[i].template head<3>();
    const Vec3& c = data.C0[i];
    const Vec3 vc = data.cv_t[i].template tail<3>() + w.cross(c);  // velocity of C_i
    const S m = model.mass[i];
    // Ic_i in base axes
    const Mat3 Ic = data.R0[i] * model.inertia[i] * data.R0[i].transpose();
    Mat3& Qa = data.cv_Qa[i];
    Mat3& Ql = data.cv_Ql[i];
    // w x Ic - m (C x)(vC x), with (C x)(vC x) = vC C^T - (C . vC) 1
    Qa = skew(w) * Ic;
    Qa.noalias() -= m * vc * c.transpose();
    Qa.diagonal().array() += m * c.dot(vc);
    Ql = -m * skew(vc);
    data.Mt[i] = Mi;
    if (i + 1 < n) {
      data.Mt[i].m += data.Mt[i + 1].m;
      data.Mt[i].h += data.Mt[i + 1].h;
      data.Mt[i].I += data.Mt[i + 1].I;
      Qa += data.cv_Qa[i + 1];
      Ql += data.cv_Ql[i + 1];
    }
  }

  // per joint: Mt_j p_j, y_j = Mt_j pdot_j + Qt_j p_j, u_j = Qt_j^T p_j (angular rows only)
  for (int j = 0; j < n; ++j) {
    const Vec6& p = data.p0[j];
    const Vec3 pa = p.template head<3>();
    const Vec3 pl = p.template tail<3>();
    data.Mtp[j] = data.Mt[j] * p;
    Vec6& y = data.cv_y[j];
    y = data.Mt[j] * data.cv_pdot[j];
    y.template head<3>() += data.cv_Qa[j] * pa;
    y.template tail<3>() += data.cv_Ql[j] * pa;
    data.cv_u[j].noalias() = data.cv_Qa[j].transpose() * pa;
    data.cv_u[j].noalias() += data.cv_Ql[j].transpose() * pl;
  }

  // eq. 29 in the common frame
  for (int j = 0; j < n; ++j) {
    const Vec6& y = data.cv_y[j];
    for (int i = 0; i <= j; ++i) data.C(i, j) = data.p0[i].dot(y);
    const Vec6& pd = data.cv_pdot[j];
    const Vec3 pa = data.p0[j].template head<3>();
    for (int i = j + 1; i < n; ++i) data.C(i, j) = data.Mtp[i].dot(pd) + data.cv_u[i].dot(pa);
  }
}

}  // namespace detail

template <typename S>
const typename Types<S>::MatX& computeConvectiveMatrix(const ModelTpl<S>& model, DataTpl<S>& data,
                                                       const Eigen::Ref<const typename Types<S>::VecX>& q,
                                                       const Eigen::Ref<const typename Types<S>::VecX>& qd) {
  if (!model.serial) return detail::treeConvective<S>(model, data, q, qd, "computeConvectiveMatrix");
  detail::checkData(model, data, "computeConvectiveMatrix");
  detail::checkVector(model, q, "computeConvectiveMatrix", "q", kMaxPosition);
  detail::checkVector(model, qd, "computeConvectiveMatrix", "qd");
  detail::localPlacements(model, data, q);
  detail::commonPlacements(model, data);
  detail::convective(model, data, qd);
  detail::checkOutput<S>(data.C, "computeConvectiveMatrix", "C");
  return data.C;
}

template <typename S>
const typename Types<S>::VecX& computeVelocityBias(const ModelTpl<S>& model, DataTpl<S>& data,
                                                   const Eigen::Ref<const typename Types<S>::VecX>& q,
                                                   const Eigen::Ref<const typename Types<S>::VecX>& qd) {
  if (!model.serial) {
    detail::treeBias<S>(model, data, q, qd, false, data.cqd, "computeVelocityBias");
    return data.cqd;
  }
  detail::checkData(model, data, "computeVelocityBias");
  detail::checkVector(model, q, "computeVelocityBias", "q", kMaxPosition);
  detail::checkVector(model, qd, "computeVelocityBias", "qd");
  detail::rnea<S>(model, data, q, qd, nullptr, nullptr, false, data.cqd);
  detail::checkOutput<S>(data.cqd, "computeVelocityBias", "C qd");
  return data.cqd;
}

template <typename S>
const typename Types<S>::VecX& computeBias(const ModelTpl<S>& model, DataTpl<S>& data,
                                           const Eigen::Ref<const typename Types<S>::VecX>& q,
                                           const Eigen::Ref<const typename Types<S>::VecX>& qd) {
  if (!model.serial) {
    detail::treeBias<S>(model, data, q, qd, true, data.bias, "computeBias");
    return data.bias;
  }
  detail::checkData(model, data, "computeBias");
  detail::checkVector(model, q, "computeBias", "q", kMaxPosition);
  detail::checkVector(model, qd, "computeBias", "qd");
  detail::rnea<S>(model, data, q, qd, nullptr, nullptr, true, data.bias);
  detail::checkOutput<S>(data.bias, "computeBias", "bias");
  return data.bias;
}

template <typename S>
const typename Types<S>::VecX& computeGravity(const ModelTpl<S>& model, DataTpl<S>& data,
                                              const Eigen::Ref<const typename Types<S>::VecX>& q) {
  if (!model.serial) {
    detail::treeBias<S>(model, data, q, data.zeros.head(model.nv), true, data.g, "computeGravity");
    return data.g;
  }
  detail::checkData(model, data, "computeGravity");
  detail::checkVector(model, q, "computeGravity", "q", kMaxPosition);
  detail::rnea<S>(model, data, q, data.zeros, nullptr, nullptr, true, data.g);
  detail::checkOutput<S>(data.g, "computeGravity", "g");
  return data.g;
}

}  // namespace denoc
