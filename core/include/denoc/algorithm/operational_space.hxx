#pragma once

#include <cstdio>
#include <string>
#include <utility>

#include "denoc/algorithm/check.hpp"
#include "denoc/algorithm/common_placement.hpp"
#include "denoc/algorithm/inertia_matrix.hpp"
#include "denoc/algorithm/kinematics.hpp"
#include "denoc/algorithm/udu.hpp"

namespace denoc {
namespace detail {

/// G^-1 for a symmetric positive semi-definite R x R matrix G by a Cholesky (L D L^T) factorization with
/// symmetric diagonal pivoting; false when a pivot falls to `ratio` of the largest or below (then `worst`
/// holds that ratio).
template <typename S, int R>
DENOC_FLATTEN bool pivotedInverse(const Eigen::Matrix<S, R, R>& G, Eigen::Matrix<S, R, R>& inverse,
                                  const S& ratio, S& worst) {
  Eigen::Matrix<S, R, R> A = G;
  int perm[R];
  S d[R];
  for (int k = 0; k < R; ++k) perm[k] = k;
  worst = S(1);
  for (int k = 0; k < R; ++k) {
    int p = k;
    for (int i = k + 1; i < R; ++i) {
      if (A(i, i) > A(p, p)) p = i;
    }
    if (p != k) {  // symmetric swap of rows and columns k and p
      A.row(k).swap(A.row(p));
      A.col(k).swap(A.col(p));
      std::swap(perm[k], perm[p]);
    }
    d[k] = A(k, k);
    const S r = k == 0 ? S(1) : d[k] / d[0];
    if (r < worst) worst = r;
    if (!(d[0] > S(0)) || !(r > ratio)) return false;
    for (int i = k + 1; i < R; ++i) A(i, k) /= d[k];  // L below the diagonal
    // the trailing Schur complement, both triangles (later swaps read either)
    for (int j = k + 1; j < R; ++j) {
      const S l_jk_d = A(j, k) * d[k];
      for (int i = j; i < R; ++i) A(j, i) = A(i, j) -= A(i, k) * l_jk_d;
    }
  }
  // W = L^-1 (unit lower), then (P G P^T)^-1 = W^T D^-1 W
  Eigen::Matrix<S, R, R> W = Eigen::Matrix<S, R, R>::Identity();
  for (int j = 0; j < R; ++j) {
    for (int i = j + 1; i < R; ++i) {
      S v = A(i, j);
      for (int k = j + 1; k < i; ++k) v += A(i, k) * W(k, j);
      W(i, j) = -v;
    }
  }
  S inv_d[R];
  for (int k = 0; k < R; ++k) inv_d[k] = S(1) / d[k];
  for (int a = 0; a < R; ++a) {
    for (int b = 0; b <= a; ++b) {
      S sum = S(0);
      for (int k = a; k < R; ++k) sum += W(k, a) * inv_d[k] * W(k, b);
      inverse(perm[a], perm[b]) = inverse(perm[b], perm[a]) = sum;
    }
  }
  return true;
}

template <typename S, int R>
void storeOperationalSpace(const ModelTpl<S>& model, DataTpl<S>& data, const Eigen::Matrix<S, R, R>& G,
                           const char* what, int frame);

/// A tree model's Lambda (docs/trees.md): the frame's Jacobian rows `first`..`first + R` (treeFrameJacobian),
/// G = J I^-1 J^T by R solves with the tree-sparse U D U^T factor (O(n depth) each), then its inverse.
template <typename S, int R>
void treeOperationalSpace(const ModelTpl<S>& model, DataTpl<S>& data, int first, const char* what,
                          int frame) {
  Eigen::Matrix<S, R, R> G;
  for (int r = 0; r < R; ++r) {
    data.tr_x = data.J.row(first + r).transpose();
    treeSolve(model, data, data.tr_x);
    for (int c = 0; c < R; ++c) G(c, r) = data.J.row(first + c).dot(data.tr_x);
  }
  for (int b = 0; b < R; ++b) {
    for (int a = b + 1; a < R; ++a) G(a, b) = G(b, a) = S(0.5) * (G(a, b) + G(b, a));
  }
  storeOperationalSpace<S, R>(model, data, G, what, frame);
}

/// The recursion of operational_space.hpp for R task rows; T: the R x 6 map from a twist at the base origin
/// in F_{-1} to the task's rows. Needs the factors of articulated() in data. Leaves G = J I^-1 J^T and its
/// inverse in data.Lambda_inv, data.Lambda.
template <typename S, int R>
DENOC_FLATTEN void operationalSpaceRecursion(const ModelTpl<S>& model, DataTpl<S>& data, int k,
                                             const Eigen::Matrix<S, R, 6>& T, const char* what, int frame) {
  Eigen::Matrix<S, R, 6> Phi = T;
  Eigen::Matrix<S, R, R> G = Eigen::Matrix<S, R, R>::Zero();
  for (int i = k; i >= 0; --i) {
    const JointWork<S>& wk = data.work[i];
    const typename Types<S>::Vec6& p = data.p0[i];
    S Q[R], Qs[R];
    for (int a = 0; a < R; ++a) Q[a] = Phi(a, 0) * p[0];
    for (int c = 1; c < 6; ++c) {
      for (int a = 0; a < R; ++a) Q[a] += Phi(a, c) * p[c];  // down the columns of Phi
    }
    for (int a = 0; a < R; ++a) Qs[a] = Q[a] * wk.inv_mh;
    for (int b = 0; b < R; ++b) {
      for (int a = b; a < R; ++a) G(a, b) += Qs[a] * Q[b];
    }
    if (i > 0) {
      for (int c = 0; c < 6; ++c) {
        for (int a = 0; a < R; ++a) Phi(a, c) -= Q[a] * wk.psi[c];
      }
    }
  }
  for (int b = 0; b < R; ++b) {
    for (int a = b + 1; a < R; ++a) G(b, a) = G(a, b);
  }
  storeOperationalSpace<S, R>(model, data, G, what, frame);
}

/// Lambda = G^-1 for G = J I^-1 J^T (R x R) into data.Lambda, data.Lambda_inv, or NumericalError naming the
/// frame when the configuration is singular for the task (kSingularPivotRatio).
template <typename S, int R>
void storeOperationalSpace(const ModelTpl<S>& model, DataTpl<S>& data, const Eigen::Matrix<S, R, R>& G,
                           const char* what, int frame) {
  Eigen::Matrix<S, R, R> L;
  S worst;
  if (!pivotedInverse<S, R>(G, L, S(kSingularPivotRatio), worst)) {
    char buf[96];
    std::snprintf(buf, sizeof buf, "%.3g of the largest (at most %.0e)", static_cast<double>(worst),
                  kSingularPivotRatio);
    const std::string name = frame == model.n ? std::string("the tip frame")
                             : frame == model.n + 1
                                 ? "the root link '" + model.spec.root_link + "'"
                                 : "link '" + model.spec.joints[static_cast<std::size_t>(frame)].link + "'";
    throw NumericalError(std::string(what) + ": the configuration is singular for the task (" + name + ", " +
                         std::to_string(R) + " rows): the smallest pivot of J I^-1 J^T is " + buf);
  }
  data.Lambda.setZero();
  data.Lambda_inv.setZero();
  data.Lambda.template topLeftCorner<R, R>() = L;
  data.Lambda_inv.template topLeftCorner<R, R>() = G;
}

}  // namespace detail

template <typename S>
const typename Types<S>::Mat6& computeOperationalSpaceInertia(
    const ModelTpl<S>& model, DataTpl<S>& data, const Eigen::Ref<const typename Types<S>::VecX>& q, int frame,
    const typename Types<S>::Vec3& point, ReferenceFrame reference, TaskRows rows) {
  using Mat3 = typename Types<S>::Mat3;
  using Vec3 = typename Types<S>::Vec3;
  constexpr const char* what = "computeOperationalSpaceInertia";
  if (!model.serial || frame < 0 || frame > model.n) {
    detail::treeFrameJacobian<S>(model, data, q, frame, point, reference, what);
    detail::treeFullFactor<S>(model, data, q, what);
    if (rows == TaskRows::Full) {
      detail::treeOperationalSpace<S, 6>(model, data, 0, what, frame);
    } else {
      detail::treeOperationalSpace<S, 3>(model, data, rows == TaskRows::Linear ? 3 : 0, what, frame);
    }
    return data.Lambda;
  }
  detail::checkData(model, data, what);
  detail::checkVector(model, q, what, "q");
  detail::checkFrame<S>(model, frame, &point, what);
  const int k = frame < model.n ? frame : model.n - 1;
  detail::KeptPlacement<S> kept;  // F_{-1} <- F_k, O_k
  kept.link = k;
  detail::commonPlacementsAndInertias(model, data, q, false, &kept);
  const Mat3& R0 = kept.R0;
  const Vec3& O = kept.O;
  detail::articulated(model, data, false);
  // the frame's pose (F_{-1} <- frame, origin), also left in the user's base frame in data.kin_R, kin_p
  Mat3 Rf;  // F_{-1} <- frame
  Vec3 of;
  if (frame == model.n) {
    Rf = R0 * model.tip_rotation;
    of = O + R0 * model.tip_origin;
  } else {
    Rf = R0 * model.axis_rotation[static_cast<std::size_t>(frame)].transpose().template cast<S>();
    of = O;
  }
  data.kin_R[frame] = model.base_rotation * Rf;
  data.kin_p[frame] = model.base_rotation * of;
  // the task rows of a twist at the base origin in F_{-1}: w_task = Rt w, v_P = Rt (v_O - P x w), with P the
  // point in F_{-1} and Rt: task axes <- F_{-1}
  const Vec3 P = of + Rf * point;
  const Mat3 Rt = reference == ReferenceFrame::Base ? Mat3(model.base_rotation) : Mat3(Rf.transpose());
  const Mat3 RtPx = Rt * skew(P);
  if (rows == TaskRows::Full) {
    Eigen::Matrix<S, 6, 6> T;
    T << Rt, Mat3::Zero(), -RtPx, Rt;
    detail::operationalSpaceRecursion<S, 6>(model, data, k, T, what, frame);
  } else if (rows == TaskRows::Linear) {
    Eigen::Matrix<S, 3, 6> T;
    T << -RtPx, Rt;
    detail::operationalSpaceRecursion<S, 3>(model, data, k, T, what, frame);
  } else {
    Eigen::Matrix<S, 3, 6> T;
    T << Rt, Mat3::Zero();
    detail::operationalSpaceRecursion<S, 3>(model, data, k, T, what, frame);
  }
  return data.Lambda;
}

}  // namespace denoc
