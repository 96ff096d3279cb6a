#pragma once

#include "denoc/algorithm/check.hpp"
#include "denoc/algorithm/kinematics.hpp"

namespace denoc {
namespace detail {

template <typename S> RigidInertia<S> linkInertia(const ModelTpl<S>& model, const DataTpl<S>& data, int i) {
  using Mat3 = typename Types<S>::Mat3;
  const auto& R0 = data.R0[i];
  const auto& C = data.C0[i];
  const S m = model.mass[i];
  RigidInertia<S> M;
  M.m = m;
  M.h = m * C;
  // rotational inertia about C in base axes (symmetric: upper triangle only), then moved to the base
  // origin by the parallel-axis theorem: I_O = R0 I_C R0^T + m (|C|^2 1 - C C^T)
  const Mat3 RI = R0 * model.inertia[i];
  const S cc = C.squaredNorm();
  for (int b = 0; b < 3; ++b) {
    for (int a = 0; a <= b; ++a) {
      M.I(a, b) = RI.row(a).dot(R0.row(b)) - M.h[a] * C[b];
      M.I(b, a) = M.I(a, b);
    }
    M.I(b, b) += m * cc;
  }
  return M;
}

template <typename S> void crba(const ModelTpl<S>& model, DataTpl<S>& data) {
  const int n = model.n;
  // Mt_n = M_n, Mt_i = M_i + B_{i+1,i}^T Mt_{i+1} B_{i+1,i}: with every inertia about one point, B = 1
  for (int i = n - 1; i >= 0; --i) {
    data.Mi[i] = linkInertia(model, data, i);
    data.Mt[i] = data.Mi[i];
    if (i + 1 < n) {
      data.Mt[i].m += data.Mt[i + 1].m;
      data.Mt[i].h += data.Mt[i + 1].h;
      data.Mt[i].I += data.Mt[i + 1].I;
    }
  }
  // I_ij = p_i^T Mt_i B_ij p_j for i >= j, i.e. I_ji = p_j^T (Mt_i p_i)
  for (int i = 0; i < n; ++i) {
    data.Mtp[i] = data.Mt[i] * data.p0[i];
    data.M(i, i) = data.p0[i].dot(data.Mtp[i]) + model.armature[i];
    for (int j = 0; j < i; ++j) {
      data.M(j, i) = data.M(i, j) = data.p0[j].dot(data.Mtp[i]);
    }
  }
}

}  // namespace detail

template <typename S>
const typename Types<S>::MatX& computeInertiaMatrix(const ModelTpl<S>& model, DataTpl<S>& data,
                                                    const Eigen::Ref<const typename Types<S>::VecX>& q) {
  detail::checkVector(model, q, "computeInertiaMatrix", "q");
  computeLocalPlacements(model, data, q);
  computeCommonPlacements(model, data);
  detail::crba(model, data);
  return data.M;
}

}  // namespace denoc
