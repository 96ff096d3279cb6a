#pragma once

#include <cstdio>
#include <string>
#include <utility>

#include "denoc/algorithm/check.hpp"
#include "denoc/algorithm/inertia_matrix.hpp"
#include "denoc/algorithm/kinematics.hpp"
#include "denoc/algorithm/udu.hpp"

namespace denoc {
namespace detail {

/// G^-1 for a symmetric positive semi-definite R x R matrix G by a Cholesky (L D L^T) factorization with
/// symmetric diagonal pivoting; false when a pivot falls to `ratio` of the largest or below (then `worst`
/// holds that ratio).
template <typename S, int R>
bool pivotedInverse(const Eigen::Matrix<S, R, R>& G, Eigen::Matrix<S, R, R>& inverse, const S& ratio,
                    S& worst) {
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
  for (int a = 0; a < R; ++a) {
    for (int b = 0; b <= a; ++b) {
      S sum = S(0);
      for (int k = a; k < R; ++k) sum += W(k, a) * W(k, b) / d[k];
      inverse(perm[a], perm[b]) = inverse(perm[b], perm[a]) = sum;
    }
  }
  return true;
}

/// The recursion of operational_space.hpp for R task rows; T: the R x 6 map from a twist at the base origin
/// in F_{-1} to the task's rows. Needs the factors of articulated() in data.
template <typename S, int R>
void operationalSpaceRecursion(const ModelTpl<S>& model, DataTpl<S>& data, int k,
                               const Eigen::Matrix<S, R, 6>& T, const char* what, int frame) {
  Eigen::Matrix<S, R, 6> Phi = T;
  Eigen::Matrix<S, R, R> G = Eigen::Matrix<S, R, R>::Zero();
  for (int i = k; i >= 0; --i) {
    const JointWork<S>& wk = data.work[i];
    const Eigen::Matrix<S, R, 1> Q = Phi * data.p0[i];
    G.template triangularView<Eigen::Lower>() += (Q * wk.inv_mh) * Q.transpose();
    if (i > 0) Phi -= Q * wk.psi.transpose();
  }
  G.template triangularView<Eigen::StrictlyUpper>() = G.transpose();
  Eigen::Matrix<S, R, R> L;
  S worst;
  if (!pivotedInverse<S, R>(G, L, S(kSingularPivotRatio), worst)) {
    char buf[96];
    std::snprintf(buf, sizeof buf, "%.3g of the largest (at most %.0e)", static_cast<double>(worst),
                  kSingularPivotRatio);
    const std::string name = frame == model.n
                                 ? std::string("the tip frame")
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
  detail::checkVector(model, q, what, "q");
  detail::checkFrame<S>(model, frame, &point, what);
  detail::kinematicSweep(model, data, q, frame, false);
  detail::commonPlacementsAndInertias(model, data, q, true);  // the angles of the sweep
  detail::articulated(model, data, false);
  // the task rows of a twist at the base origin in F_{-1}: w_task = Rt w, v_P = Rt (v_O - P x w), with P the
  // point in F_{-1} and Rt: task axes <- F_{-1}
  const Mat3& Rf = data.kin_R[frame];
  const Vec3 P = model.base_rotation.transpose() * (data.kin_p[frame] + Rf * point);
  const Mat3 Rt = reference == ReferenceFrame::Base ? Mat3(model.base_rotation)
                                                    : Mat3(Rf.transpose() * model.base_rotation);
  const Mat3 RtPx = Rt * skew(P);
  const int k = frame < model.n ? frame : model.n - 1;
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
