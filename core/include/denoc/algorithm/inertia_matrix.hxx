#pragma once

#include <cassert>
#include <type_traits>

#include "denoc/algorithm/check.hpp"
#include "denoc/algorithm/common_placement.hpp"
#include "denoc/algorithm/fixed_size.hpp"
#include "denoc/algorithm/kinematics.hpp"

namespace denoc {
namespace detail {

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
/// (into data.work[i].M); with `keep`, also the placement of F_{keep->link} (the operational-space inertia's
/// link). kDispatch (double): the AVX2 twin where denseKernelsWide().
template <typename S, bool kDispatch = true>
DENOC_FLATTEN void commonPlacementsAndInertias(const ModelTpl<S>& model, DataTpl<S>& data,
                                               const Eigen::Ref<const typename Types<S>::VecX>& q,
                                               bool angles_ready = false, KeptPlacement<S>* keep = nullptr) {
  if constexpr (std::is_same_v<S, double> && kDispatch) {
    if (denseKernelsWide()) return commonPlacementsAndInertiasWide(model, data, q, angles_ready, keep);
  }
  CommonPlacement<S> P;
  const auto step = [&](int i) {
    const JointConstants<S>& jc = model.joint[i];
    const JointRotation<S> R{jc.cos_alpha, jc.sin_alpha, data.cos_theta[i], data.sin_theta[i]};
    P.next(R, jointOffset(jc, R, S(q[i])), i == 0);
    data.p0[i] = P.jointVector(jc.revolute);
    data.work[i].M = P.linkInertia(jc);
  };
  if (keep) {  // two loops around the kept link instead of a test in every step
    if (!angles_ready) jointAngles(model, data, q);
    int i = 0;
    for (; i <= keep->link; ++i) step(i);
    keep->R0 = P.rotation();
    keep->O = P.origin();
    for (; i < model.n; ++i) step(i);
    return;
  }
  // unrolled for 6 and 7 joints, the angles too: constant offsets, no loop (docs/design.md, 2026-11-29)
  withJointCount<S>(model.n, [&](auto fixed) {
    constexpr int N = decltype(fixed)::value;
    if (!angles_ready) jointAngles<N>(model, data, q);
    forJoints<N>(0, N > 0 ? N : model.n, step);
  });
}

/// Composite-body inertias and I(q) from commonPlacementsAndInertias: Mt_i = M_i + Mt_{i+1} (eq. 23-24 with
/// B = 1), I_ii = p_i^T Mt_i p_i (+ armature), I_ji = p_j^T (Mt_i p_i) for j < i (dot6: the n^2 / 2
/// products in pairs of lanes). The link inertias in data.work stay as they are.
template <typename S, bool kDispatch>
DENOC_FLATTEN void crba(const ModelTpl<S>& model, DataTpl<S>& data) {
  if constexpr (std::is_same_v<S, double> && kDispatch) {
    if (denseKernelsWide()) return crbaWide(model, data);
  }
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
