// The tree recursions of tree.hpp (eq. T.1-T.6 of docs/algorithms.md).
#pragma once

#include <cassert>
#include <cmath>
#include <stdexcept>
#include <string>
#include <type_traits>

#include "denoc/algorithm/check.hpp"
#include "denoc/algorithm/tree.hpp"
#include "denoc/sincos.hpp"

namespace denoc {
namespace detail {

/// data.tr_* slot of a body: the joint's index, n for the root link (-1).
inline int treeSlot(int n, int body) { return body < 0 ? n : body; }

/// The link inertia about the world origin of a body with mass m, mass centre c (world) and rotational
/// inertia Ic about it in axes R (world <- axes).
template <typename S>
RigidInertia<S> worldInertia(const S& m, const typename Types<S>::Vec3& c, const typename Types<S>::Mat3& Ic,
                             const typename Types<S>::Mat3& R) {
  using Mat3 = typename Types<S>::Mat3;
  const Mat3 I = R * Ic * R.transpose();
  RigidInertia<S> M;
  M.m = m;
  M.h = m * c;
  const S c2 = c.squaredNorm();
  M.I.xx = I(0, 0) + m * (c2 - c.x() * c.x());
  M.I.yy = I(1, 1) + m * (c2 - c.y() * c.y());
  M.I.zz = I(2, 2) + m * (c2 - c.z() * c.z());
  M.I.xy = S(0.5) * (I(0, 1) + I(1, 0)) - m * c.x() * c.y();
  M.I.xz = S(0.5) * (I(0, 2) + I(2, 0)) - m * c.x() * c.z();
  M.I.yz = S(0.5) * (I(1, 2) + I(2, 1)) - m * c.y() * c.z();
  return M;
}

/// The rotation world <- root link of a floating root from q's quaternion [qx qy qz qw] (q[3..6]), divided
/// by its norm.
template <typename S>
DENOC_INLINE typename Types<S>::Mat3 floatingRootRotation(
    const Eigen::Ref<const typename Types<S>::VecX>& q) {
  using std::sqrt;
  const S x = q[3], y = q[4], z = q[5], w = q[6];
  const S inv = S(1) / sqrt(x * x + y * y + z * z + w * w);
  const S qx = x * inv, qy = y * inv, qz = z * inv, qw = w * inv;
  typename Types<S>::Mat3 R;
  R << S(1) - S(2) * (qy * qy + qz * qz), S(2) * (qx * qy - qz * qw), S(2) * (qx * qz + qy * qw),
      S(2) * (qx * qy + qz * qw), S(1) - S(2) * (qx * qx + qz * qz), S(2) * (qy * qz - qx * qw),
      S(2) * (qx * qz - qy * qw), S(2) * (qy * qz + qx * qw), S(1) - S(2) * (qx * qx + qy * qy);
  return R;
}

/// cos and sin of a planar root's yaw q[2] by sincos: the same operations on double and in SIMD lanes.
template <typename S>
DENOC_INLINE void rootYaw(const Eigen::Ref<const typename Types<S>::VecX>& q, S& c, S& s) {
  sincos(S(q[2]), s, c);
}

/// The rotation world <- root link of a planar root, Rz(yaw), from q's yaw q[2].
template <typename S>
DENOC_INLINE typename Types<S>::Mat3 planarRootRotation(const Eigen::Ref<const typename Types<S>::VecX>& q) {
  S c, s;
  rootYaw<S>(q, c, s);
  typename Types<S>::Mat3 R;
  R << c, -s, S(0), s, c, S(0), S(0), S(0), S(1);
  return R;
}

/// Solves the root's nr x nr block H x = b in place by Cholesky (H's lower triangle overwritten, b becomes
/// x), the pivots into D[0..nr). Returns the first coordinate whose pivot is not positive and finite, or -1.
template <typename S, typename Vec>
int rootBlockSolve(typename Types<S>::Mat6& H, typename Types<S>::Vec6& b, int nr, Vec& D) {
  for (int j = 0; j < nr; ++j) {
    S djj = H(j, j);
    for (int k = 0; k < j; ++k) djj -= H(j, k) * H(j, k);
    if constexpr (std::is_floating_point_v<S>) {
      if (!pivotAccepted(djj)) return j;
    }
    using std::sqrt;
    const S ljj = sqrt(djj);
    H(j, j) = ljj;
    for (int r = j + 1; r < nr; ++r) {
      S x = H(r, j);
      for (int k = 0; k < j; ++k) x -= H(r, k) * H(j, k);
      H(r, j) = x / ljj;
    }
    D[j] = djj;
  }
  for (int r = 0; r < nr; ++r) {
    S x = b[r];
    for (int k = 0; k < r; ++k) x -= H(r, k) * b[k];
    b[r] = x / H(r, r);
  }
  for (int r = nr - 1; r >= 0; --r) {
    S x = b[r];
    for (int k = r + 1; k < nr; ++k) x -= H(k, r) * b[k];
    b[r] = x / H(r, r);
  }
  return -1;
}

template <typename S>
void treePlacements(const ModelTpl<S>& model, DataTpl<S>& data,
                    const Eigen::Ref<const typename Types<S>::VecX>& q) {
  using std::cos;
  using std::sin;
  using Vec3 = typename Types<S>::Vec3;
  using Mat3 = typename Types<S>::Mat3;
  using Vec6 = typename Types<S>::Vec6;
  const int n = model.n;
  // the root link
  data.root_S.setZero();
  if (model.root == RootJoint::Floating) {
    data.root_R = floatingRootRotation<S>(q);
    const Mat3& R = data.root_R;
    data.root_p = Vec3(q[0], q[1], q[2]);
    for (int a = 0; a < 3; ++a) {
      const Vec3 e = R.col(a);
      data.root_S.col(a) << e, data.root_p.cross(e);
      data.root_S.col(3 + a) << Vec3::Zero(), e;
    }
  } else if (model.root == RootJoint::Planar) {
    data.root_R = planarRootRotation<S>(q);
    data.root_p = Vec3(q[0], q[1], S(0));
    data.root_S(3, 0) = S(1);
    data.root_S(4, 1) = S(1);
    data.root_S.col(2) << Vec3::UnitZ(), data.root_p.cross(Vec3::UnitZ());
  } else {
    data.root_R = model.base_rotation;  // world <- F_{-1}
    data.root_p.setZero();
  }
  const int nqr = model.nqr;
  if (model.root != RootJoint::Fixed) {
    data.tr_M[static_cast<std::size_t>(n)] = worldInertia<S>(
        model.root_mass, Vec3(data.root_p + data.root_R * model.root_com), model.root_inertia, data.root_R);
  } else {
    data.tr_M[static_cast<std::size_t>(n)] = RigidInertia<S>{S(0), Vec3::Zero(), Sym3<S>::zero()};
  }
  for (int i = 0; i < n; ++i) {
    const auto ui = static_cast<std::size_t>(i);
    const int p = model.parent[ui];
    const Mat3& Rp = p < 0 ? data.root_R : data.R0[static_cast<std::size_t>(p)];
    const Vec3& Op = p < 0 ? data.root_p : data.O0[static_cast<std::size_t>(p)];
    const Mat3 RE = Rp * model.E[ui];  // world <- F_i at q_i = 0
    Vec3 O = Op + Rp * model.s[ui];
    Mat3& R = data.R0[ui];
    const S qi = q[nqr + i];
    Vec6 col;
    if (model.type[ui] == JointType::Revolute) {
      rotateAboutZ<S>(RE, cos(qi), sin(qi), R);
      const Vec3 e = R.col(2);
      col << e, O.cross(e);
    } else {
      R = RE;
      const Vec3 e = R.col(2);
      O += e * qi;
      col << Vec3::Zero(), e;
    }
    data.O0[ui] = O;
    data.p0[ui] = col;
    data.C0[ui] = O + R * model.com[ui];
    data.tr_M[ui] = worldInertia<S>(model.mass[ui], data.C0[ui], model.inertia[ui], R);
  }
}

template <typename S>
typename Types<S>::Vec6 worldWrench(const ModelTpl<S>& model, const DataTpl<S>& data,
                                    const ExternalWrenchTpl<S>& w) {
  using Vec3 = typename Types<S>::Vec3;
  using Mat3 = typename Types<S>::Mat3;
  Mat3 R;
  Vec3 o;
  treeFramePose(model, data, w.frame, R, o);
  Vec3 moment = w.wrench.template head<3>();
  Vec3 force = w.wrench.template tail<3>();
  if (w.reference == ReferenceFrame::Local) {
    moment = R * moment;
    force = R * force;
  }
  typename Types<S>::Vec6 f;
  f << moment + (o + R * w.point).cross(force), force;
  return f;
}

template <typename S>
void treeForwardSweep(const ModelTpl<S>& model, DataTpl<S>& data,
                      const Eigen::Ref<const typename Types<S>::VecX>& v, const S* qdd, bool gravity,
                      const ExternalWrenchTpl<S>* wrenches, int count) {
  using Vec3 = typename Types<S>::Vec3;
  using Vec6 = typename Types<S>::Vec6;
  const int n = model.n;
  const int nr = model.nr;
  const auto un = static_cast<std::size_t>(n);
  // the world's acceleration: gravity as a base acceleration (the world is the user's base frame)
  Vec6 a0 = Vec6::Zero();
  if (gravity) a0.template tail<3>() = -model.gravity;
  // the root link
  Vec6 tr = Vec6::Zero(), ar = a0, cr = Vec6::Zero();
  for (int a = 0; a < nr; ++a) {
    tr += data.root_S.col(a) * v[a];
    if (qdd) ar += data.root_S.col(a) * qdd[a];
  }
  if (model.root == RootJoint::Planar) {
    // Sdot_r v_r = [0; v_xy x e_z] yawdot
    cr.template tail<3>() = Vec3(v[1], -v[0], S(0)) * v[2];
  }
  ar += cr;
  data.tr_t[un] = tr;
  data.tr_a[un] = ar;
  data.tr_c[un] = cr;
  {
    const RigidInertia<S>& M = data.tr_M[un];
    data.tr_w[un] = M * ar + forceCross<S>(tr, M * tr);
  }
  for (int i = 0; i < n; ++i) {
    const auto ui = static_cast<std::size_t>(i);
    const auto up = static_cast<std::size_t>(treeSlot(n, model.parent[ui]));
    const Vec6& p = data.p0[ui];
    const S vi = v[nr + i];
    const Vec6 c = motionCross<S>(data.tr_t[up], p) * vi;
    const Vec6 t = data.tr_t[up] + p * vi;
    Vec6 a = data.tr_a[up] + c;
    if (qdd) a += p * qdd[nr + i];
    data.tr_t[ui] = t;
    data.tr_a[ui] = a;
    data.tr_c[ui] = c;
    const RigidInertia<S>& M = data.tr_M[ui];
    data.tr_w[ui] = M * a + forceCross<S>(t, M * t);
  }
  for (int k = 0; k < count; ++k) {
    const auto slot = static_cast<std::size_t>(treeSlot(n, frameBody(model, wrenches[k].frame)));
    data.tr_w[slot] -= worldWrench(model, data, wrenches[k]);
  }
}

template <typename S>
void treeBackwardSweep(const ModelTpl<S>& model, DataTpl<S>& data, const S* qdd,
                       typename Types<S>::VecX& tau_out) {
  const int n = model.n;
  const int nr = model.nr;
  for (int i = n - 1; i >= 0; --i) {
    const auto ui = static_cast<std::size_t>(i);
    S tau = data.p0[ui].dot(data.tr_w[ui]);
    if (qdd) tau += model.armature[ui] * qdd[nr + i];
    tau_out[nr + i] = tau;
    data.tr_w[static_cast<std::size_t>(treeSlot(n, model.parent[ui]))] += data.tr_w[ui];
  }
  const auto un = static_cast<std::size_t>(n);
  for (int a = 0; a < nr; ++a) tau_out[a] = data.root_S.col(a).dot(data.tr_w[un]);
}

template <typename S>
void treeCrba(const ModelTpl<S>& model, DataTpl<S>& data) {
  using Vec6 = typename Types<S>::Vec6;
  const int n = model.n;
  const int nr = model.nr;
  const auto un = static_cast<std::size_t>(n);
  for (int i = 0; i <= n; ++i)
    data.tr_Mc[static_cast<std::size_t>(i)] = data.tr_M[static_cast<std::size_t>(i)];
  data.M.setZero();
  for (int i = n - 1; i >= 0; --i) {
    const auto ui = static_cast<std::size_t>(i);
    data.tr_Mc[static_cast<std::size_t>(treeSlot(n, model.parent[ui]))] += data.tr_Mc[ui];
    const Vec6 F = data.tr_Mc[ui] * data.p0[ui];
    const int ci = nr + i;
    data.M(ci, ci) = data.p0[ui].dot(F) + model.armature[ui];
    for (int j = model.parent[ui]; j >= 0; j = model.parent[static_cast<std::size_t>(j)]) {
      const S x = data.p0[static_cast<std::size_t>(j)].dot(F);
      data.M(nr + j, ci) = x;
      data.M(ci, nr + j) = x;
    }
    for (int a = 0; a < nr; ++a) {
      const S x = data.root_S.col(a).dot(F);
      data.M(a, ci) = x;
      data.M(ci, a) = x;
    }
  }
  for (int a = 0; a < nr; ++a) {
    const Vec6 F = data.tr_Mc[un] * Vec6(data.root_S.col(a));
    for (int b = 0; b <= a; ++b) {
      const S x = data.root_S.col(b).dot(F);
      data.M(b, a) = x;
      data.M(a, b) = x;
    }
  }
}

/// body(start, top) for each run of consecutive ancestors of the coordinate top and above it, the deepest
/// first (model.dof_run): a contiguous range start..top, its parent index read once per run instead of once
/// per coordinate (one run for a chain). None for top < 0.
template <typename S, typename F>
DENOC_INLINE void forAncestorRuns(const ModelTpl<S>& model, int top, F&& body) {
  const int* lambda = model.dof_parent.data();
  const int* run = model.dof_run.data();
  while (top >= 0) {
    const int start = run[top];
    body(start, top);
    top = lambda[start];
  }
}

/// body(j) for the velocity coordinate j = top and each of its ancestors (model.dof_parent), in decreasing
/// order: forAncestorRuns, each run from its top down.
template <typename S, typename F>
DENOC_INLINE void forAncestors(const ModelTpl<S>& model, int top, F&& body) {
  forAncestorRuns(model, top, [&](int start, int last) {
    for (int j = last; j >= start; --j) body(j);
  });
}

/// For a coordinate's ancestors j (and itself) y_j -= a x_j: the entries are independent, each run one
/// ascending loop in SIMD lanes.
template <typename S>
DENOC_INLINE void subtractOnPath(const ModelTpl<S>& model, int top, S* y, const S& a, const S* x) {
  forAncestorRuns(model, top, [&](int start, int last) {
    switch (last - start) {  // a run of one to three entries (a quadruped's leg) in straight lines: a vector
                             // loop's set-up would outweigh it
      case 2:
        y[start + 2] -= a * x[start + 2];
        [[fallthrough]];
      case 1:
        y[start + 1] -= a * x[start + 1];
        [[fallthrough]];
      case 0:
        y[start] -= a * x[start];
        return;
      default:
        break;
    }
    DENOC_INDEPENDENT
    for (int j = start; j <= last; ++j) y[j] -= a * x[j];
  });
}

template <typename S, bool kDispatch>
int treeFactor(const ModelTpl<S>& model, DataTpl<S>& data) {
  if constexpr (std::is_same_v<S, double> && kDispatch) {
    if (denseKernelsWide()) return treeFactorWide(model, data);
  }
  using std::log;
  const int nv = model.nv;
  const int* lambda = model.dof_parent.data();
  auto& U = data.U;
  // the upper triangle of M: U(i, k) holds L(k, i) of Featherstone's H = L^T D L, i an ancestor of k
  U.template triangularView<Eigen::Upper>() = data.M.template triangularView<Eigen::Upper>();
  int bad = -1;
  for (int k = nv - 1; k >= 0; --k) {
    const S d = U(k, k);
    if constexpr (std::is_floating_point_v<S>) {
      if (!pivotAccepted(d)) {
        bad = k;
        break;
      }
    }
    const S inv = S(1) / d;
    S* Uk = &U(0, k);
    // i down k's path: Uk[j] for j < i is still I's, Uk[i] is scaled after its own update
    forAncestors(model, lambda[k], [&](int i) {
      const S a = Uk[i] * inv;
      subtractOnPath(model, i, &U(0, i), a, Uk);
      Uk[i] = a;
    });
  }
  S log_det = S(0);
  for (int k = 0; k < nv; ++k) {
    data.D[k] = U(k, k);
    U(k, k) = S(1);
    if (bad < 0) log_det += log(data.D[k]);
  }
  data.log_det = log_det;
  U.template triangularView<Eigen::StrictlyLower>().setZero();
  return bad;
}

template <typename S>
void treeSolve(const ModelTpl<S>& model, const DataTpl<S>& data, typename Types<S>::VecX& x) {
  const int nv = model.nv;
  const auto& U = data.U;
  // U^-1: from the leaves up, x_j -= U(j, k) x_k for the ancestors j of k
  for (int k = nv - 1; k >= 0; --k) {
    const S xk = x[k];
    subtractOnPath(model, model.dof_parent[static_cast<std::size_t>(k)], x.data(), xk, &U(0, k));
  }
  for (int k = 0; k < nv; ++k) x[k] /= data.D[k];
  // U^-T: from the root down
  for (int k = 0; k < nv; ++k) {
    S xk = x[k];
    forAncestors(model, model.dof_parent[static_cast<std::size_t>(k)], [&](int j) { xk -= U(j, k) * x[j]; });
    x[k] = xk;
  }
}

template <typename S>
void treeInverseFromFactor(const ModelTpl<S>& model, DataTpl<S>& data) {
  const int nv = model.nv;
  const int* lambda = model.dof_parent.data();
  const S* U = data.U.data();    // column-major nv x nv, unit upper triangular, nonzero on ancestor pairs
  S* W = data.minv_Uinv.data();  // column-major nv x nv: W = U^-1, upper triangle
  S* inv_D = data.minv_inv_D.data();
  S* Mi = data.Minv.data();
  // W's column b solves U w = e_b; w is zero off b's path (b and its ancestors, in decreasing order), so
  // the column is cleared above b (the product below reads its zeros) and the back substitution runs along
  // the path only: w_b = 1, then for k on the path w_j -= U_jk w_k for the ancestors j of k (w_k final by
  // then: its terms come from the path below k)
  for (int b = 0; b < nv; ++b) {
    S* Wb = W + b * nv;
    for (int j = 0; j < b; ++j) Wb[j] = S(0);
    Wb[b] = S(1);
    forAncestors(model, b, [&](int k) {
      const S wk = Wb[k];
      const S* Uk = U + k * nv;
      subtractOnPath(model, lambda[k], Wb, wk, Uk);
    });
  }
  for (int k = 0; k < nv; ++k) inv_D[k] = S(1) / data.D[k];
  // (I^-1)_ab = sum_k W_ka W_kb / D_k over the common ancestors k of a and b: for column b, the k on b's
  // path, each for the a <= b of its subtree. Column b takes W_kb / D_k times W_ka for a = k..b, k down b's
  // path (k decreasing, the order of a sum along a's path), each entry its own sum instead of one chain of
  // dependent additions per entry. In depth-first order every a in [k, b] is in k's subtree (a contiguous
  // range that holds b); in any other order of parents before children the a outside it read W_ka = 0
  for (int b = 0; b < nv; ++b) {
    S* col = Mi + b * nv;
    for (int a = 0; a <= b; ++a) col[a] = S(0);
    const S* Wb = W + b * nv;
    forAncestors(model, b, [&](int k) {
      const S vk = Wb[k] * inv_D[k];
      for (int a = k; a <= b; ++a) col[a] += W[k + a * nv] * vk;
    });
    for (int a = 0; a < b; ++a) Mi[b + a * nv] = col[a];
  }
}

template <typename S>
int treeAba(const ModelTpl<S>& model, DataTpl<S>& data, const Eigen::Ref<const typename Types<S>::VecX>& v,
            const Eigen::Ref<const typename Types<S>::VecX>& tau, const ExternalWrenchTpl<S>* wrenches,
            int count) {
  using Vec6 = typename Types<S>::Vec6;
  using Mat6 = typename Types<S>::Mat6;
  const int n = model.n;
  const int nr = model.nr;
  const auto un = static_cast<std::size_t>(n);
  // velocities and the bias wrenches t x* (M t) - f_ext (accelerations zero, no gravity: gravity enters as
  // the world's acceleration below)
  treeForwardSweep<S>(model, data, v, nullptr, false, wrenches, count);
  for (int i = 0; i <= n; ++i) {
    const auto ui = static_cast<std::size_t>(i);
    data.tr_IA[ui] = data.tr_M[ui].dense();
    // tr_w holds M a + t x* (M t) - f_ext with a the velocity-product acceleration summed from the root;
    // the bias pA excludes M a (the c_i enter through the accelerations)
    data.tr_w[ui] -= data.tr_M[ui] * data.tr_a[ui];
  }
  int bad = -1;
  for (int i = n - 1; i >= 0; --i) {
    const auto ui = static_cast<std::size_t>(i);
    const Vec6& p = data.p0[ui];
    const Mat6& IA = data.tr_IA[ui];
    const Vec6 U = IA * p;
    const S d = p.dot(U) + model.armature[ui];
    if constexpr (std::is_floating_point_v<S>) {
      if (!pivotAccepted(d) && bad < 0) bad = nr + i;
    }
    const S u = tau[nr + i] - p.dot(data.tr_w[ui]);
    data.tr_U[ui] = U;
    data.D[nr + i] = d;
    data.tr_x[nr + i] = u;
    const auto up = static_cast<std::size_t>(treeSlot(n, model.parent[ui]));
    const S inv = S(1) / d;
    const Mat6 Ia = IA - (U * inv) * U.transpose();
    data.tr_IA[up] += Ia;
    data.tr_w[up] += data.tr_w[ui] + Ia * data.tr_c[ui] + U * (u * inv);
  }
  if (bad >= 0) return bad;
  // the root: S^T IA S vdot = tau_r - S^T (pA + IA (a0 + c_r)), then the world's acceleration
  Vec6 a0 = Vec6::Zero();
  a0.template tail<3>() = -model.gravity;
  Vec6 ar = a0 + data.tr_c[un];
  if (nr > 0) {
    const Mat6& IA = data.tr_IA[un];
    Mat6 H = Mat6::Zero();
    Vec6 b = Vec6::Zero();
    const Vec6 rhs = data.tr_w[un] + IA * ar;
    for (int a = 0; a < nr; ++a) {
      const Vec6 Fa = IA * data.root_S.col(a);
      for (int c = 0; c < nr; ++c) H(c, a) = data.root_S.col(c).dot(Fa);
      b[a] = tau[a] - data.root_S.col(a).dot(rhs);
    }
    if (const int bad_root = rootBlockSolve<S>(H, b, nr, data.D); bad_root >= 0) return bad_root;
    for (int a = 0; a < nr; ++a) {
      data.qdd[a] = b[a];
      ar += data.root_S.col(a) * b[a];
    }
  }
  data.tr_a[un] = ar;
  for (int i = 0; i < n; ++i) {
    const auto ui = static_cast<std::size_t>(i);
    const auto up = static_cast<std::size_t>(treeSlot(n, model.parent[ui]));
    const Vec6 a = data.tr_a[up] + data.tr_c[ui];
    const S qdd = (data.tr_x[nr + i] - data.tr_U[ui].dot(a)) / data.D[nr + i];
    data.qdd[nr + i] = qdd;
    data.tr_a[ui] = a + data.p0[ui] * qdd;
  }
  return -1;
}

template <typename S>
void treeFramePose(const ModelTpl<S>& model, const DataTpl<S>& data, int frame, typename Types<S>::Mat3& R,
                   typename Types<S>::Vec3& p) {
  const int n = model.n;
  if (frame < n) {
    const auto uf = static_cast<std::size_t>(frame);
    R = data.R0[uf] * model.axis_rotation[uf].template cast<S>().transpose();
    p = data.O0[uf];
  } else if (frame == n && n > 0) {
    const auto ul = static_cast<std::size_t>(n - 1);
    R = data.R0[ul] * model.tip_rotation;
    p = data.O0[ul] + data.R0[ul] * model.tip_origin;
  } else if (frame == n) {
    R = data.root_R * model.tip_rotation;
    p = data.root_p + data.root_R * model.tip_origin;
  } else {
    R = data.root_R * model.base_rotation.transpose();
    p = data.root_p;
  }
}

template <typename S, typename Jac>
void treeJacobian(const ModelTpl<S>& model, const DataTpl<S>& data, int frame,
                  const typename Types<S>::Vec3& point, ReferenceFrame reference, Jac& J) {
  using Vec3 = typename Types<S>::Vec3;
  using Mat3 = typename Types<S>::Mat3;
  using Vec6 = typename Types<S>::Vec6;
  const int nr = model.nr;
  Mat3 R;
  Vec3 o;
  treeFramePose(model, data, frame, R, o);
  const Vec3 P = o + R * point;
  // the twist at the world origin [w; v_O] moves P at v_O + w x P
  const auto shifted = [&](const Vec6& col) {
    Vec6 c;
    c << col.template head<3>(), col.template tail<3>() + col.template head<3>().cross(P);
    return c;
  };
  J.setZero();
  for (int i = frameBody(model, frame); i >= 0; i = model.parent[static_cast<std::size_t>(i)])
    J.col(nr + i) = shifted(data.p0[static_cast<std::size_t>(i)]);
  for (int a = 0; a < nr; ++a) J.col(a) = shifted(data.root_S.col(a));
  if (reference == ReferenceFrame::Local) {
    const Mat3 Rt = R.transpose();
    J.template topRows<3>() = (Rt * J.template topRows<3>()).eval();
    J.template bottomRows<3>() = (Rt * J.template bottomRows<3>()).eval();
  }
}

template <typename S>
void checkWrenches(const ModelTpl<S>& model, const ExternalWrenchTpl<S>* wrenches, int count,
                   const char* function) {
  for (int k = 0; k < count; ++k) {
    const int f = wrenches[k].frame;
    if (f < 0 || f > model.n + 1) {
      throw std::invalid_argument(std::string(function) + ": external wrench " + std::to_string(k) +
                                  " names frame " + std::to_string(f) + ", expected 0.." +
                                  std::to_string(model.n + 1) + " (frameIndex)");
    }
    // the name is made only for the message: no allocation on the hot path
    try {
      checkEntries<S>(wrenches[k].wrench, function, "external wrench");
      checkEntries<S>(wrenches[k].point, function, "external wrench point");
    } catch (const std::invalid_argument& e) {
      throw std::invalid_argument(std::string(e.what()) + " (external wrench " + std::to_string(k) + ")");
    }
  }
}

}  // namespace detail
}  // namespace denoc

namespace denoc {
namespace detail {

/// The checked entries behind the public functions for a tree model (and the external-wrench overloads of
/// any model): `function` names the public function in errors.
template <typename S>
const typename Types<S>::VecX& treeInverseDynamics(const ModelTpl<S>& model, DataTpl<S>& data,
                                                   const Eigen::Ref<const typename Types<S>::VecX>& q,
                                                   const Eigen::Ref<const typename Types<S>::VecX>& v,
                                                   const Eigen::Ref<const typename Types<S>::VecX>& a,
                                                   const ExternalWrenchTpl<S>* wrenches, int count,
                                                   const char* function) {
  checkData(model, data, function, true);
  checkConfigurationVector(model, q, function, "q");
  checkVector(model, v, function, model.serial ? "qd" : "v");
  checkVector(model, a, function, model.serial ? "qdd" : "a");
  checkWrenches(model, wrenches, count, function);
  treeLocalRnea<S>(model, data, q, v, a.data(), true, data.tau, wrenches, count);
  checkOutput<S>(data.tau, function, "tau");
  return data.tau;
}

/// The bias C(q, v) v + g(q) (gravity true) or C(q, v) v into out.
template <typename S>
void treeBias(const ModelTpl<S>& model, DataTpl<S>& data, const Eigen::Ref<const typename Types<S>::VecX>& q,
              const Eigen::Ref<const typename Types<S>::VecX>& v, bool gravity, typename Types<S>::VecX& out,
              const char* function) {
  checkData(model, data, function, true);
  checkConfigurationVector(model, q, function, "q");
  checkVector(model, v, function, "v");
  treeLocalRnea<S>(model, data, q, v, nullptr, gravity, out);
  checkOutput<S>(out, function, "bias");
}

template <typename S>
const typename Types<S>::VecX& treeForwardDynamics(const ModelTpl<S>& model, DataTpl<S>& data,
                                                   const Eigen::Ref<const typename Types<S>::VecX>& q,
                                                   const Eigen::Ref<const typename Types<S>::VecX>& v,
                                                   const Eigen::Ref<const typename Types<S>::VecX>& tau,
                                                   const ExternalWrenchTpl<S>* wrenches, int count,
                                                   const char* function) {
  checkData(model, data, function, true);
  checkConfigurationVector(model, q, function, "q");
  checkVector(model, v, function, model.serial ? "qd" : "v");
  checkVector(model, tau, function, "tau");
  checkWrenches(model, wrenches, count, function);
  if (const int k = treeLocalForward<S>(model, data, q, v, tau, wrenches, count); k >= 0) {
    throw NumericalError(
        std::string(function) + ": pivot of velocity coordinate " + std::to_string(k) +
        " is not positive and finite: the inertia matrix is not numerically positive definite "
        "at this state");
  }
  checkOutput<S>(data.qdd, function, "qdd");
  return data.qdd;
}

template <typename S>
const typename Types<S>::MatX& treeInertiaMatrix(const ModelTpl<S>& model, DataTpl<S>& data,
                                                 const Eigen::Ref<const typename Types<S>::VecX>& q,
                                                 const char* function) {
  checkData(model, data, function, true);
  checkConfigurationVector(model, q, function, "q");
  treeLocalCrba<S>(model, data, q);
  // no pass over the result, as for a chain (computeInertiaMatrix): the same sums and products of checked
  // arguments, the root's rotation divided by a quaternion norm checked within 1 +- its tolerance
  assert(allFinite(data.M.data(), data.M.size()));
  return data.M;
}

/// The error of a pivot D[k] refused by a tree's factor or elimination.
[[noreturn]] inline void treePivotError(const char* function, int k) {
  throw NumericalError(
      std::string(function) + ": pivot D[" + std::to_string(k) +
      "] is not positive and finite: the inertia matrix is not numerically positive definite "
      "at this state");
}

/// I(q) and its tree-sparse factor U D U^T (data.M, U, D, log_det).
template <typename S>
void treeFullFactor(const ModelTpl<S>& model, DataTpl<S>& data,
                    const Eigen::Ref<const typename Types<S>::VecX>& q, const char* function) {
  treeInertiaMatrix(model, data, q, function);
  if (const int k = treeFactor(model, data); k >= 0) treePivotError(function, k);
}

/// Forward dynamics by the inertia-matrix route on the tree's sparsity: I(q), U D U^T, two sparse solves.
template <typename S>
const typename Types<S>::VecX& treeForwardDynamicsFactor(const ModelTpl<S>& model, DataTpl<S>& data,
                                                         const Eigen::Ref<const typename Types<S>::VecX>& q,
                                                         const Eigen::Ref<const typename Types<S>::VecX>& v,
                                                         const Eigen::Ref<const typename Types<S>::VecX>& tau,
                                                         const char* function) {
  checkData(model, data, function, true);
  checkVector(model, tau, function, "tau");
  treeBias(model, data, q, v, true, data.tr_x, function);
  data.tr_x = tau - data.tr_x;
  // I(q) on the joint angles and offsets of the bias's sweep (treeFullFactor's steps)
  treeLocalCrba<S>(model, data, q, true);
  if (const int k = treeFactor(model, data); k >= 0) treePivotError(function, k);
  treeSolve(model, data, data.tr_x);
  data.qdd = data.tr_x;
  checkOutput<S>(data.qdd, function, "qdd");
  return data.qdd;
}

/// Kinetic energy 1/2 sum t_i^T M_i t_i + 1/2 sum J_i v_i^2 (armature) and potential energy -sum m_i g^T c_i
/// (root link included).
template <typename S>
void treeEnergies(const ModelTpl<S>& model, DataTpl<S>& data,
                  const Eigen::Ref<const typename Types<S>::VecX>& q,
                  const Eigen::Ref<const typename Types<S>::VecX>& v, S& kinetic, S& potential,
                  const char* function) {
  checkData(model, data, function, true);
  checkConfigurationVector(model, q, function, "q");
  checkVector(model, v, function, "v");
  treePlacements(model, data, q);
  treeForwardSweep<S>(model, data, v, nullptr, false, nullptr, 0);
  kinetic = S(0);
  potential = S(0);
  for (int i = 0; i <= model.n; ++i) {
    const auto ui = static_cast<std::size_t>(i);
    const RigidInertia<S>& M = data.tr_M[ui];
    kinetic += S(0.5) * data.tr_t[ui].dot(M * data.tr_t[ui]);
    potential -= model.gravity.dot(M.h);  // h = m c about the world origin
  }
  // the rotors' armature (as in I(q)'s diagonal and the serial route): 1/2 J_i v_i^2
  for (int i = 0; i < model.n; ++i) {
    const S vi = v[model.nr + i];
    kinetic += S(0.5) * model.armature[static_cast<std::size_t>(i)] * vi * vi;
  }
  checkScalar<S>(kinetic + potential, function, "energy");
}

/// Every frame's pose into data.kin_R, data.kin_p (0..n + 1).
template <typename S>
void treeForwardKinematics(const ModelTpl<S>& model, DataTpl<S>& data,
                           const Eigen::Ref<const typename Types<S>::VecX>& q, const char* function) {
  checkData(model, data, function, true);
  checkConfigurationVector(model, q, function, "q");
  treePlacements(model, data, q);
  for (int f = 0; f <= model.n + 1; ++f)
    treeFramePose(model, data, f, data.kin_R[static_cast<std::size_t>(f)],
                  data.kin_p[static_cast<std::size_t>(f)]);
}

template <typename S>
void checkTreeFrame(const ModelTpl<S>& model, int frame, const typename Types<S>::Vec3* point,
                    const char* function) {
  if (frame < 0 || frame > model.n + 1) {
    throw std::invalid_argument(std::string(function) + ": frame is " + std::to_string(frame) +
                                ", expected 0.." + std::to_string(model.n + 1) + " (a link, " +
                                std::to_string(model.n) + " for the tip frame, " +
                                std::to_string(model.n + 1) + " for the root link)");
  }
  if constexpr (std::is_floating_point_v<S>) {
    if (point && !point->allFinite())
      throw std::invalid_argument(std::string(function) + ": point has a non-finite entry");
  }
}

/// The Jacobian of a frame's point into data.J (and the frame's pose into data.kin_R, kin_p).
template <typename S>
const Eigen::Matrix<S, 6, Eigen::Dynamic>& treeFrameJacobian(
    const ModelTpl<S>& model, DataTpl<S>& data, const Eigen::Ref<const typename Types<S>::VecX>& q, int frame,
    const typename Types<S>::Vec3& point, ReferenceFrame reference, const char* function) {
  checkData(model, data, function, true);
  checkConfigurationVector(model, q, function, "q");
  checkTreeFrame<S>(model, frame, &point, function);
  treePlacements(model, data, q);
  const auto uf = static_cast<std::size_t>(frame);
  treeFramePose(model, data, frame, data.kin_R[uf], data.kin_p[uf]);
  treeJacobian(model, data, frame, point, reference, data.J);
  return data.J;
}

/// (dJ/dt) v of the frame's point into data.Jdot_qd (and data.J).
template <typename S>
const typename Types<S>::Vec6& treeFrameJdotQd(const ModelTpl<S>& model, DataTpl<S>& data,
                                               const Eigen::Ref<const typename Types<S>::VecX>& q,
                                               const Eigen::Ref<const typename Types<S>::VecX>& v, int frame,
                                               const typename Types<S>::Vec3& point, ReferenceFrame reference,
                                               const char* function) {
  using Vec3 = typename Types<S>::Vec3;
  treeFrameJacobian(model, data, q, frame, point, reference, function);
  checkVector(model, v, function, "v");
  treeForwardSweep<S>(model, data, v, nullptr, false, nullptr, 0);
  const auto uf = static_cast<std::size_t>(frame);
  const auto slot = static_cast<std::size_t>(treeSlot(model.n, frameBody(model, frame)));
  const typename Types<S>::Mat3& R = data.kin_R[uf];
  const Vec3 P = data.kin_p[uf] + R * point;
  const Vec3 w = data.tr_t[slot].template head<3>();
  const Vec3 v_P = data.tr_t[slot].template tail<3>() + w.cross(P);
  const Vec3 wd = data.tr_a[slot].template head<3>();
  const Vec3 a_P = data.tr_a[slot].template tail<3>() + wd.cross(P) + w.cross(v_P);
  if (reference == ReferenceFrame::Base) {
    data.Jdot_qd << wd, a_P;
  } else {
    data.Jdot_qd << R.transpose() * wd, R.transpose() * (a_P - w.cross(v_P));
  }
  return data.Jdot_qd;
}

/// C(q, v) of a tree (docs/algorithms.md, "Trees", eq. T.7): with J_i the columns p_k of body i's path and
/// B_i = (t_i x* M_i - M_i (t_i x) + (M_i t_i) xbar) / 2 ((f xbar) x = x x* f), C = sum_i J_i^T (M_i Jdot_i +
/// B_i J_i), so that C v is the velocity part of the bias and Idot - 2C is skew. A body contributes to (j, k)
/// only when both lie on its path: C_jk = p_j^T (Mc_d pdot_k + Bc_d p_k) with d the deeper of the two and Mc,
/// Bc the subtree sums. O(n depth) 6 x 6 products.
template <typename S>
const typename Types<S>::MatX& treeConvective(const ModelTpl<S>& model, DataTpl<S>& data,
                                              const Eigen::Ref<const typename Types<S>::VecX>& q,
                                              const Eigen::Ref<const typename Types<S>::VecX>& v,
                                              const char* function) {
  using Vec3 = typename Types<S>::Vec3;
  using Vec6 = typename Types<S>::Vec6;
  using Mat6 = typename Types<S>::Mat6;
  checkData(model, data, function, true);
  checkConfigurationVector(model, q, function, "q");
  checkVector(model, v, function, "v");
  treePlacements(model, data, q);
  treeForwardSweep<S>(model, data, v, nullptr, false, nullptr, 0);
  const int n = model.n;
  const int nr = model.nr;
  const auto un = static_cast<std::size_t>(n);
  const auto cross3 = [](const Vec3& a) { return skew<S>(a); };
  // B_i and the subtree sums (slot n: the root link)
  for (int i = 0; i <= n; ++i) {
    const auto ui = static_cast<std::size_t>(i);
    const Mat6 M = data.tr_M[ui].dense();
    const Vec6& t = data.tr_t[ui];
    Mat6 crm = Mat6::Zero();  // t x (motion)
    crm.template topLeftCorner<3, 3>() = cross3(t.template head<3>());
    crm.template bottomRightCorner<3, 3>() = crm.template topLeftCorner<3, 3>();
    crm.template bottomLeftCorner<3, 3>() = cross3(t.template tail<3>());
    const Vec6 h = M * t;
    Mat6 bar = Mat6::Zero();  // x -> x x* h
    bar.template topLeftCorner<3, 3>() = -cross3(h.template head<3>());
    bar.template topRightCorner<3, 3>() = -cross3(h.template tail<3>());
    bar.template bottomLeftCorner<3, 3>() = -cross3(h.template tail<3>());
    data.tr_B[ui] = S(0.5) * (Mat6(-crm.transpose() * M) - M * crm + bar);
    data.tr_Mc[ui] = data.tr_M[ui];
  }
  for (int i = n - 1; i >= 0; --i) {
    const auto ui = static_cast<std::size_t>(i);
    const auto up = static_cast<std::size_t>(treeSlot(n, model.parent[ui]));
    data.tr_B[up] += data.tr_B[ui];
    data.tr_Mc[up] += data.tr_Mc[ui];
  }
  // column k (p_k, pdot_k) against every row j on its path and in its subtree
  const auto rootColumn = [&](int a, Vec6& p, Vec6& pdot) {
    p = data.root_S.col(a);
    if (model.root == RootJoint::Floating) {
      pdot = motionCross<S>(data.tr_t[un], p);
    } else if (a == 2) {  // planar yaw: moves with x, y
      Vec6 txy = Vec6::Zero();
      txy.template tail<3>() = Vec3(v[0], v[1], S(0));
      pdot = motionCross<S>(txy, p);
    } else {
      pdot.setZero();
    }
  };
  data.C.setZero();
  const auto entry = [&](std::size_t deeper, const Vec6& pj, const Vec6& pk, const Vec6& pdotk) {
    return pj.dot(data.tr_Mc[deeper] * pdotk + data.tr_B[deeper] * pk);
  };
  for (int k = 0; k < model.nv; ++k) {
    Vec6 pk, pdotk;
    int body;  // the body whose coordinate k is (-1: the root link)
    if (k < nr) {
      rootColumn(k, pk, pdotk);
      body = -1;
    } else {
      body = k - nr;
      pk = data.p0[static_cast<std::size_t>(body)];
      pdotk = motionCross<S>(
          data.tr_t[static_cast<std::size_t>(treeSlot(n, model.parent[static_cast<std::size_t>(body)]))], pk);
    }
    const auto kslot = static_cast<std::size_t>(treeSlot(n, body));
    // rows j on k's path (k deeper or the same body): the subtree of k's body
    for (int j = body; j >= 0; j = model.parent[static_cast<std::size_t>(j)])
      data.C(nr + j, k) = entry(kslot, data.p0[static_cast<std::size_t>(j)], pk, pdotk);
    for (int a = 0; a < nr; ++a) {
      Vec6 pa, pdota;
      rootColumn(a, pa, pdota);
      data.C(a, k) = entry(kslot, pa, pk, pdotk);
    }
    // rows j below k's body (j deeper): the subtree of j's body
    for (int j = std::max(body + 1, 0); j < n; ++j) {
      int up = model.parent[static_cast<std::size_t>(j)];
      while (up > body) up = model.parent[static_cast<std::size_t>(up)];
      if (up != body) continue;  // j is not in the subtree of k's body
      data.C(nr + j, k) = entry(static_cast<std::size_t>(j), data.p0[static_cast<std::size_t>(j)], pk, pdotk);
    }
  }
  checkOutput<S>(data.C, function, "C");
  return data.C;
}

/// I(q)^-1: by the sweeps (treeArticulated, inverseBySweeps) where the coordinates are numbered depth first
/// and a path is long enough (model.inverse_by_sweeps), else from the tree-sparse factor
/// (treeInverseFromFactor).
template <typename S>
const typename Types<S>::MatX& treeInverseInertia(const ModelTpl<S>& model, DataTpl<S>& data,
                                                  const Eigen::Ref<const typename Types<S>::VecX>& q,
                                                  const char* function) {
  if (model.inverse_by_sweeps) {
    checkData(model, data, function, true);
    checkConfigurationVector(model, q, function, "q");
    if (const int k = treeInverseBySweeps(model, data, q); k >= 0) treePivotError(function, k);
  } else {
    treeFullFactor(model, data, q, function);
    treeInverseFromFactor(model, data);
  }
  checkOutput<S>(data.Minv, function, "Minv");
  return data.Minv;
}

}  // namespace detail

/// Inverse dynamics with external wrenches on any links (every model): tau (nv) = I a + C v + g - sum of
/// J_k^T f_k. Result in data.tau (returned). O(n) plus O(depth) per wrench.
template <typename S>
const typename Types<S>::VecX& inverseDynamics(const ModelTpl<S>& model, DataTpl<S>& data,
                                               const Eigen::Ref<const typename Types<S>::VecX>& q,
                                               const Eigen::Ref<const typename Types<S>::VecX>& v,
                                               const Eigen::Ref<const typename Types<S>::VecX>& a,
                                               const std::vector<ExternalWrenchTpl<S>>& wrenches) {
  return detail::treeInverseDynamics(model, data, q, v, a, wrenches.data(), static_cast<int>(wrenches.size()),
                                     "inverseDynamics");
}

/// Forward dynamics with external wrenches on any links (every model), O(n) by articulated bodies in the
/// common frame. Result in data.qdd (returned).
template <typename S>
const typename Types<S>::VecX& forwardDynamics(const ModelTpl<S>& model, DataTpl<S>& data,
                                               const Eigen::Ref<const typename Types<S>::VecX>& q,
                                               const Eigen::Ref<const typename Types<S>::VecX>& v,
                                               const Eigen::Ref<const typename Types<S>::VecX>& tau,
                                               const std::vector<ExternalWrenchTpl<S>>& wrenches) {
  return detail::treeForwardDynamics(model, data, q, v, tau, wrenches.data(),
                                     static_cast<int>(wrenches.size()), "forwardDynamics");
}

}  // namespace denoc
