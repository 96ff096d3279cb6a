#pragma once

#include <cassert>

#include "denoc/algorithm/check.hpp"
#include "denoc/algorithm/fixed_size.hpp"
#include "denoc/algorithm/kinematics.hpp"

namespace denoc {
namespace detail {

/// Placement of F_i in the common frame from that of F_{i-1} (a tree: of the parent's frame), R0_in and
/// O_in: R0_i = R0_{i-1} R_i (24 multiplications with R_i = Rx(alpha_i) Rz(theta_i)), O_i = O_{i-1} +
/// R0_{i-1} s_i. For i = 0 (first), R0_{-1} = 1 and O_{-1} = 0. The outputs may be the inputs.
template <typename S, typename Rot>
DENOC_INLINE void placeCommon(const Rot& R, const typename Types<S>::Vec3& s_q, bool first,
                              const typename Types<S>::Mat3& R0_in, const typename Types<S>::Vec3& O_in,
                              typename Types<S>::Mat3& R0, typename Types<S>::Vec3& O) {
  if (first) {
    R0 = R.matrix();
    O = s_q;
  } else {
    O = O_in + R0_in * s_q;
    R0 = R.rightOf(R0_in);
  }
}

/// placeCommon in place: (R0, O) of F_{i-1} become those of F_i.
template <typename S>
DENOC_INLINE void placeCommon(const JointRotation<S>& R, const typename Types<S>::Vec3& s_q, bool first,
                              typename Types<S>::Mat3& R0, typename Types<S>::Vec3& O) {
  placeCommon<S>(R, s_q, first, R0, O, R0, O);
}

/// p_i in the common frame: [e_i; O_i x e_i] (revolute) or [0; e_i] (prismatic), e_i = R0_i z.
template <typename S>
DENOC_INLINE typename Types<S>::Vec6 jointVector(bool revolute, const typename Types<S>::Mat3& R0,
                                                 const typename Types<S>::Vec3& O) {
  using Vec3 = typename Types<S>::Vec3;
  const Vec3 e = R0.col(2);
  typename Types<S>::Vec6 p;
  if (revolute) {
    p << e, O.cross(e);
  } else {
    p << Vec3::Zero(), e;
  }
  return p;
}

/// Link inertia M_i about the base origin in base axes (51 multiplications): with [d, v1, v2] rotated by
/// R0_i, the mass center is C = O_i + R0 d, h = m C, and
/// I = lambda 1 + v1 v1^T + v2 v2^T + m (|C|^2 1 - C C^T)   (rotated inertia plus the parallel-axis term).
template <typename S>
DENOC_INLINE RigidInertia<S> linkInertiaCommon(const JointConstants<S>& jc, const typename Types<S>::Mat3& R0,
                                               const typename Types<S>::Vec3& O) {
  using Vec3 = typename Types<S>::Vec3;
  const typename Types<S>::Mat3 X = R0 * jc.dv;
  const Vec3 C = O + X.col(0);
  const Vec3 v1 = X.col(1), v2 = X.col(2);
  RigidInertia<S> M;
  M.m = jc.m;
  M.h = jc.m * C;
  const S d = jc.lambda + M.h.dot(C);
  M.I.xx = d + v1.x() * v1.x() + v2.x() * v2.x() - M.h.x() * C.x();
  M.I.yy = d + v1.y() * v1.y() + v2.y() * v2.y() - M.h.y() * C.y();
  M.I.zz = d + v1.z() * v1.z() + v2.z() * v2.z() - M.h.z() * C.z();
  M.I.xy = v1.x() * v1.y() + v2.x() * v2.y() - M.h.x() * C.y();
  M.I.xz = v1.x() * v1.z() + v2.x() * v2.z() - M.h.x() * C.z();
  M.I.yz = v1.y() * v1.z() + v2.y() * v2.z() - M.h.y() * C.z();
  return M;
}

/// The link inertia from the common placements of computeCommonPlacements (data.R0, data.C0), for the
/// convective matrix: R0 I R0^T + m (|C|^2 1 - C C^T).
template <typename S>
RigidInertia<S> linkInertia(const ModelTpl<S>& model, const DataTpl<S>& data, int i) {
  using Mat3 = typename Types<S>::Mat3;
  const auto& R0 = data.R0[i];
  const auto& C = data.C0[i];
  const S m = model.mass[i];
  RigidInertia<S> M;
  M.m = m;
  M.h = m * C;
  const Mat3 RI = R0 * model.inertia[i];
  const S cc = C.squaredNorm();
  Mat3 I;
  for (int b = 0; b < 3; ++b) {
    for (int a = 0; a <= b; ++a) I(a, b) = RI.row(a).dot(R0.row(b)) - M.h[a] * C[b];
    I(b, b) += m * cc;
  }
  M.I = {I(0, 0), I(1, 1), I(2, 2), I(0, 1), I(0, 2), I(1, 2)};
  return M;
}

/// Forward pass shared by the common-frame algorithms: joint angles (unless angles_ready: data.cos_theta and
/// data.sin_theta already hold them for this q), placements, p_i (into data.p0) and the link inertias M_i
/// (into data.work[i].M).
template <typename S>
DENOC_FLATTEN void commonPlacementsAndInertias(const ModelTpl<S>& model, DataTpl<S>& data,
                                               const Eigen::Ref<const typename Types<S>::VecX>& q,
                                               bool angles_ready = false) {
  typename Types<S>::Mat3 R0 = Types<S>::Mat3::Identity();  // F_{-1}
  typename Types<S>::Vec3 O = Types<S>::Vec3::Zero();
  if (!angles_ready) jointAngles(model, data, q);
  for (int i = 0; i < model.n; ++i) {
    const JointConstants<S>& jc = model.joint[i];
    JointWork<S>& wk = data.work[i];
    const S q_i = q[i];
    const JointRotation<S> R{jc.cos_alpha, jc.sin_alpha, data.cos_theta[i], data.sin_theta[i]};
    placeCommon(R, jointOffset(jc, R, q_i), i == 0, R0, O);
    data.p0[i] = jointVector<S>(jc.revolute, R0, O);
    wk.M = linkInertiaCommon(jc, R0, O);
  }
}

/// Composite-body inertias and I(q) from commonPlacementsAndInertias: Mt_i = M_i + Mt_{i+1} (eq. 23-24 with
/// B = 1), I_ii = p_i^T Mt_i p_i (+ armature), I_ji = p_j^T (Mt_i p_i) for j < i (dot6: the n^2 / 2
/// products in pairs of lanes). The link inertias in data.work stay as they are.
template <typename S>
DENOC_FLATTEN void crba(const ModelTpl<S>& model, DataTpl<S>& data) {
  using Vec6 = typename Types<S>::Vec6;
  withJointCount<S>(model.n, [&](auto fixed) {
    constexpr int N = decltype(fixed)::value;
    const int n = N > 0 ? N : model.n;
    S* M = data.M.data();
    RigidInertia<S> Mt = data.work[n - 1].M;
    forJoints<N>(0, n, [&](int step) {
      const int i = n - 1 - step;
      if (i + 1 < n) Mt += data.work[i].M;
      const Vec6 F = Mt * data.p0[i];
      M[i + i * n] = dot6<S>(data.p0[i], F) + model.joint[i].armature;
      forJoints<N>(0, i, [&](int j) { M[j + i * n] = M[i + j * n] = dot6<S>(data.p0[j], F); });
    });
  });
}

}  // namespace detail

template <typename S>
const typename Types<S>::MatX& computeInertiaMatrix(const ModelTpl<S>& model, DataTpl<S>& data,
                                                    const Eigen::Ref<const typename Types<S>::VecX>& q) {
  if (!model.serial) return detail::treeInertiaMatrix<S>(model, data, q, "computeInertiaMatrix");
  detail::checkData(model, data, "computeInertiaMatrix");
  detail::checkVector(model, q, "computeInertiaMatrix", "q", kMaxPosition);
  detail::commonPlacementsAndInertias(model, data, q);
  detail::crba(model, data);
  // no pass over the result: sums and products of checked arguments and a checked model, no division,
  // cannot leave double's range (docs/algorithms.md, "Argument checks and the numerical range")
  assert(detail::allFinite(data.M.data(), data.M.size()));
  return data.M;
}

}  // namespace denoc
