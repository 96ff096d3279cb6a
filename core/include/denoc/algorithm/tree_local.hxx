// The local recursions over the parent index of tree_local.hpp (eq. TL.1-TL.6 of docs/algorithms.md).
#pragma once

#include <cmath>
#include <limits>
#include <type_traits>

#include "denoc/algorithm/check.hpp"
#include "denoc/algorithm/common_placement.hpp"

namespace denoc {
namespace detail {

/// R_i of a tree's joint at the angle whose cosine and sine are c, s.
template <typename S>
DENOC_INLINE TreeJointRotation<S> treeRotation(const JointConstants<S>& jc, const S& c, const S& s) {
  return TreeJointRotation<S>{JointRotation<S>{jc.cos_alpha, jc.sin_alpha, c, s}, jc.cos_gamma, jc.sin_gamma,
                              jc.turned};
}

/// f(R_i) with R_i as the serial route's JointRotation where joint i is not turned (gamma_i = 0: most
/// joints of a tree, every joint of a chain), so that its products test no turn, and as a
/// TreeJointRotation where it is. f is inlined twice.
template <typename S, typename F>
DENOC_INLINE void withTreeRotation(const JointConstants<S>& jc, const S& c, const S& s, F&& f) {
  if (jc.turned) {
    f(treeRotation(jc, c, s));
  } else {
    f(JointRotation<S>{jc.cos_alpha, jc.sin_alpha, c, s});
  }
}

/// The root link's motion in F_{-1} into data.tl_state[n] and, for a moving root, its Newton-Euler wrench
/// about its origin into data.tl_root (eq. TL.1); a (nv entries) null: zero accelerations.
template <typename S>
DENOC_INLINE void rootMotion(const ModelTpl<S>& model, DataTpl<S>& data,
                             const Eigen::Ref<const typename Types<S>::VecX>& q,
                             const Eigen::Ref<const typename Types<S>::VecX>& v, const S* a, bool gravity) {
  using Vec3 = typename Types<S>::Vec3;
  MotionState<S>& root = data.tl_state[static_cast<std::size_t>(model.n)];
  if (model.root == RootJoint::Fixed) {
    // at rest: its children read only the acceleration of its origin (idForwardStep's first step)
    root.a = gravity ? Vec3(-model.gravity_base) : Vec3::Zero();
    return;
  }
  Vec3 w, wd, acc, g_root;
  if (model.root == RootJoint::Floating) {
    const typename Types<S>::Mat3 R = floatingRootRotation<S>(q);
    w = v.template head<3>();
    const Vec3 vl = v.template segment<3>(3);
    wd = a ? Vec3(a[0], a[1], a[2]) : Vec3::Zero();
    acc = (a ? Vec3(a[3], a[4], a[5]) : Vec3::Zero()) + w.cross(vl);
    if (gravity) g_root = R.transpose() * model.gravity;
  } else {
    S c, s;
    rootYaw<S>(q, c, s);
    w = Vec3(S(0), S(0), v[2]);
    wd = Vec3(S(0), S(0), a ? a[2] : S(0));
    acc = a ? Vec3(c * a[0] + s * a[1], c * a[1] - s * a[0], S(0)) : Vec3::Zero();
    if (gravity) {
      const Vec3& g = model.gravity;
      g_root = Vec3(c * g.x() + s * g.y(), c * g.y() - s * g.x(), g.z());
    }
  }
  if (gravity) acc -= g_root;
  linkMotion(model.root_joint, w, wd, acc, root, data.tl_root);
}

/// The root link's inertia about its origin in F_{-1} (zero for a fixed root).
template <typename S>
DENOC_INLINE RigidInertia<S> rootLinkInertia(const ModelTpl<S>& model) {
  return RigidInertia<S>{model.root_joint.m, model.root_joint.h, model.root_joint.I_o};
}

/// The root's generalized force from its wrench [n; f] about its origin in F_{-1} (eq. TL.2): nr entries of
/// out.
template <typename S, typename Out>
DENOC_INLINE void rootForce(const ModelTpl<S>& model, const Eigen::Ref<const typename Types<S>::VecX>& q,
                            const typename Types<S>::Vec3& n, const typename Types<S>::Vec3& f, Out& out) {
  if (model.root == RootJoint::Floating) {
    for (int k = 0; k < 3; ++k) {
      out[k] = n[k];
      out[3 + k] = f[k];
    }
  } else if (model.root == RootJoint::Planar) {
    S c, s;
    rootYaw<S>(q, c, s);
    out[0] = c * f.x() - s * f.y();
    out[1] = s * f.x() + c * f.y();
    out[2] = n.z();
  }
}

/// The forward sweep of the inverse dynamics over the parent index (eq. TL.1): every body's motion into
/// data.tl_state and its Newton-Euler wrench into data.work (the root's into data.tl_root).
template <typename S>
DENOC_INLINE void treeLocalForwardSweep(const ModelTpl<S>& model, DataTpl<S>& data,
                                        const Eigen::Ref<const typename Types<S>::VecX>& q,
                                        const Eigen::Ref<const typename Types<S>::VecX>& v, const S* a,
                                        bool gravity) {
  const int n = model.n, nr = model.nr, nqr = model.nqr;
  const bool fixed = model.root == RootJoint::Fixed;
  jointAngles(model, data, q.segment(nqr, n));
  rootMotion(model, data, q, v, a, gravity);
  const JointConstants<S>* joint = model.joint.data();
  const int* parent = model.parent.data();
  const S* c = data.cos_theta.data();
  const S* s = data.sin_theta.data();
  MotionState<S>* state = data.tl_state.data();
  // the parent's motion is the previous body's but after a branch: kept in registers, stored only at the
  // branch points, for their further children
  const unsigned char* branch_point = model.branch_point.data();
  MotionState<S> cur = state[n];
  for (int i = 0; i < n; ++i) {
    const int p = parent[i];
    if (p != i - 1) cur = state[p < 0 ? n : p];
    withTreeRotation(joint[i], c[i], s[i], [&](const auto& R) {
      idForwardStep(joint[i], R, data.work[i], cur, cur, S(q[nqr + i]), S(v[nr + i]), a ? a[nr + i] : S(0),
                    fixed && p < 0);
    });
    if (branch_point[i]) state[i] = cur;
  }
}

/// Adds body i's wrench (data.work[i], about O_i in F_i) into its parent's (eq. TL.2); a fixed root takes
/// none.
template <typename S>
DENOC_INLINE void pushWrench(const ModelTpl<S>& model, DataTpl<S>& data, int i) {
  const int p = model.parent[static_cast<std::size_t>(i)];
  if (p < 0 && model.root == RootJoint::Fixed) return;
  const JointConstants<S>& jc = model.joint[static_cast<std::size_t>(i)];
  withTreeRotation(jc, data.cos_theta[i], data.sin_theta[i], [&](const auto& R) {
    if (p < 0) {
      idBackwardStep(model.root_joint, data.tl_root, R, &data.work[i]);
    } else {
      idBackwardStep(model.joint[static_cast<std::size_t>(p)], data.work[p], R, &data.work[i]);
    }
  });
}

/// The rotation world <- F_{-1} of the root link: the base rotation (a fixed root), the quaternion's
/// (floating) or Rz(yaw) (planar).
template <typename S>
DENOC_INLINE typename Types<S>::Mat3 rootWorldRotation(const ModelTpl<S>& model,
                                                       const Eigen::Ref<const typename Types<S>::VecX>& q) {
  if (model.root == RootJoint::Floating) return floatingRootRotation<S>(q);
  if (model.root == RootJoint::Fixed) return model.base_rotation;
  return planarRootRotation<S>(q);
}

/// Subtracts external wrenches from the bodies' Newton-Euler wrenches (data.work, data.tl_root) between the
/// forward and the backward sweep (eq. TL.7). Wrench k on frame f (moment m and force f about the point r
/// of f, in f's axes or the world's) acts on f's body b (the root link for the root's frame, and for the
/// tip of a model without joints) as
///   f_b = A f,  n_b = A m + (o + E r) x f_b,
/// in F_b about O_b: E is F_b <- f's axes and o f's origin in F_b (a link frame: its axis rotation transposed
/// and 0; the tip: tip_rotation and tip_origin; the root's frame: base_rotation transposed and 0); A = E
/// for a wrench in f's axes, else F_b <- world, the product of the rotations on b's path (O(depth)). The
/// root's frame of a fixed root moves nothing: its wrenches are dropped.
template <typename S>
void subtractLocalWrenches(const ModelTpl<S>& model, DataTpl<S>& data,
                           const Eigen::Ref<const typename Types<S>::VecX>& q,
                           const ExternalWrenchTpl<S>* wrenches, int count) {
  using Vec3 = typename Types<S>::Vec3;
  using Mat3 = typename Types<S>::Mat3;
  const int n = model.n;
  for (int k = 0; k < count; ++k) {
    const ExternalWrenchTpl<S>& w = wrenches[k];
    const int b = frameBody(model, w.frame);
    if (b < 0 && model.root == RootJoint::Fixed) continue;
    Mat3 E;
    Vec3 o = Vec3::Zero();
    if (w.frame < n) {
      E = model.axis_rotation[static_cast<std::size_t>(w.frame)].transpose().template cast<S>();
    } else if (w.frame == n) {
      E = model.tip_rotation;
      o = model.tip_origin;
    } else {
      E = model.base_rotation.transpose();
    }
    Mat3 A = E;
    if (w.reference == ReferenceFrame::Base) {
      // world <- F_b = R_root R_{a_1} ... R_b, built from b up: W <- R_j W
      Mat3 W = Mat3::Identity();
      for (int j = b; j >= 0; j = model.parent[static_cast<std::size_t>(j)]) {
        const auto R =
            treeRotation(model.joint[static_cast<std::size_t>(j)], data.cos_theta[j], data.sin_theta[j]);
        for (int c = 0; c < 3; ++c) W.col(c) = R * Vec3(W.col(c));
      }
      A = (rootWorldRotation<S>(model, q) * W).transpose();
    }
    const Vec3 f = A * w.wrench.template tail<3>();
    const Vec3 m = A * w.wrench.template head<3>() + (o + E * w.point).cross(f);
    JointWork<S>& body = b < 0 ? data.tl_root : data.work[b];
    body.f -= f;
    body.n -= m;
  }
}

template <typename S>
DENOC_FLATTEN void treeLocalRnea(const ModelTpl<S>& model, DataTpl<S>& data,
                                 const Eigen::Ref<const typename Types<S>::VecX>& q,
                                 const Eigen::Ref<const typename Types<S>::VecX>& v, const S* a, bool gravity,
                                 typename Types<S>::VecX& tau_out, const ExternalWrenchTpl<S>* wrenches,
                                 int count) {
  const int n = model.n, nr = model.nr;
  treeLocalForwardSweep(model, data, q, v, a, gravity);
  if (count > 0) subtractLocalWrenches(model, data, q, wrenches, count);
  for (int i = n - 1; i >= 0; --i) {
    const JointWork<S>& wk = data.work[i];
    const JointConstants<S>& jc = model.joint[static_cast<std::size_t>(i)];
    S tau = jc.revolute ? wk.n.z() : wk.f.z();
    if (a) tau += jc.armature * a[nr + i];
    tau_out[nr + i] = tau;
    pushWrench(model, data, i);
  }
  rootForce(model, q, data.tl_root.n, data.tl_root.f, tau_out);
}

/// The placements of every body in F_{-1} (R0, O kept at the branch points), its column p_k (data.p0) and
/// link inertia (data.work[k].M) in that common frame, from the joint angles in data (pass 1 of TL.3 and
/// of TL.6). offsets_ready: data.work[k].s_q hold the joint offsets already (the inverse dynamics' sweep ran,
/// as in forward dynamics).
template <typename S>
DENOC_INLINE void treeCommonPlacements(const ModelTpl<S>& model, DataTpl<S>& data,
                                       const Eigen::Ref<const typename Types<S>::VecX>& q,
                                       bool offsets_ready) {
  const int n = model.n, nqr = model.nqr;
  const int* parent = model.parent.data();
  const unsigned char* branch_point = model.branch_point.data();
  const S* c = data.cos_theta.data();
  const S* s = data.sin_theta.data();
  CommonPlacement<S> P;  // the previous body's (the serial route's pairs of lanes for double)
  for (int i = 0; i < n; ++i) {
    const int p = parent[i];
    const JointConstants<S>& jc = model.joint[static_cast<std::size_t>(i)];
    JointWork<S>& wk = data.work[i];
    if (p != i - 1 && p >= 0) P = CommonPlacement<S>(data.R0[p], data.O0[p]);
    withTreeRotation(jc, c[i], s[i], [&](const auto& R) {
      if (!offsets_ready) wk.s_q = jointOffset<S>(jc, R, S(q[nqr + i]));
      P.next(R, wk.s_q, p < 0);
    });
    if (branch_point[i]) {
      data.R0[i] = P.rotation();
      data.O0[i] = P.origin();
    }
    data.p0[i] = P.jointVector(jc.revolute);
    wk.M = P.linkInertia(jc);
  }
}

/// The root's columns S_r in F_{-1} (TL.4): the identity (floating), [0; Rz^T e_x], [0; Rz^T e_y], [e_z; 0]
/// (planar), nothing for a fixed root.
template <typename S>
DENOC_INLINE typename Types<S>::Mat6 rootColumns(const ModelTpl<S>& model,
                                                 const Eigen::Ref<const typename Types<S>::VecX>& q) {
  typename Types<S>::Mat6 Sr = Types<S>::Mat6::Zero();
  if (model.root == RootJoint::Floating) {
    Sr.setIdentity();
  } else if (model.root == RootJoint::Planar) {
    S cy, sy;
    rootYaw<S>(q, cy, sy);
    Sr(3, 0) = cy;
    Sr(4, 0) = -sy;
    Sr(3, 1) = sy;
    Sr(4, 1) = cy;
    Sr(2, 2) = S(1);
  }
  return Sr;
}

/// The inertia matrix by composite bodies in the common frame F_{-1} (eq. TL.6) on checked arguments:
/// Mc_k = M_k + the children's Mc, I_jk = p_j^T Mc_k p_k for j on k's path, I_rk = S_r^T Mc_k p_k, I_rr =
/// S_r^T Mc_r S_r; data.M, both triangles, zero off the ancestor pairs. Every entry is written once (no
/// clearing pass): column k above the diagonal runs j = k - 1 down to 0 beside the walk up k's path, whose
/// ancestors come in that order (parents before children), so j is either the next ancestor or a zero.
/// The products are dot6's, the serial crba's.
template <typename S, bool kDispatch>
DENOC_FLATTEN void treeLocalCrba(const ModelTpl<S>& model, DataTpl<S>& data,
                                 const Eigen::Ref<const typename Types<S>::VecX>& q, bool after_sweep) {
  if constexpr (std::is_same_v<S, double> && kDispatch) {
    if (denseKernelsWide()) return treeLocalCrbaWide(model, data, q, after_sweep);
  }
  using Vec6 = typename Types<S>::Vec6;
  const int n = model.n, nr = model.nr, nv = model.nv;
  const bool fixed = model.root == RootJoint::Fixed;
  const int* parent = model.parent.data();
  const unsigned char* branch_point = model.branch_point.data();
  if (!after_sweep) jointAngles(model, data, q.segment(model.nqr, n));
  treeCommonPlacements(model, data, q, after_sweep);
  // the composite of body i + 1 stays in registers (Mt) when i is its parent, as in the serial crba; the
  // other children's sums go into their parent's record (a branch point's, or the root link's)
  const RigidInertia<S> zero{S(0), Types<S>::Vec3::Zero(), Sym3<S>::zero()};
  RigidInertia<S>* Mc = data.tr_Mc.data();
  for (int i = 0; i < n; ++i) {
    if (branch_point[i]) Mc[i] = zero;
  }
  Mc[n] = rootLinkInertia(model);
  RigidInertia<S> Mt = zero;
  bool carried = false;  // Mt holds the composite of body i + 1, a child of i
  const typename Types<S>::Mat6 Sr = rootColumns(model, q);
  S* M = data.M.data();  // column-major nv x nv
  const Vec6* p0 = data.p0.data();
  for (int i = n - 1; i >= 0; --i) {
    const int p = parent[i];
    if (carried) {
      Mt += data.work[i].M;
    } else {
      Mt = data.work[i].M;
    }
    if (branch_point[i]) Mt += Mc[i];
    const Vec6 F = Mt * p0[i];
    const int ci = nr + i;
    S* col = M + ci * nv;
    col[ci] = dot6<S>(p0[i], F) + model.joint[static_cast<std::size_t>(i)].armature;
    int ancestor = p;
    for (int j = i - 1; j >= 0; --j) {
      S value = S(0);
      if (j == ancestor) {
        value = dot6<S>(p0[j], F);
        ancestor = parent[j];
      }
      col[nr + j] = M[ci + (nr + j) * nv] = value;
    }
    for (int a = 0; a < nr; ++a) col[a] = M[ci + a * nv] = dot6<S>(Vec6(Sr.col(a)), F);
    carried = p == i - 1 && p >= 0;
    if (!carried && (p >= 0 || !fixed)) Mc[p < 0 ? n : p] += Mt;
  }
  for (int a = 0; a < nr; ++a) {
    const Vec6 F = Mc[n] * Vec6(Sr.col(a));
    for (int b = 0; b <= a; ++b) M[a + b * nv] = M[b + a * nv] = dot6<S>(Vec6(Sr.col(b)), F);
  }
}

template <typename S>
int treeArticulated(const ModelTpl<S>& model, DataTpl<S>& data,
                    const Eigen::Ref<const typename Types<S>::VecX>& q) {
  const int n = model.n, nr = model.nr;
  const bool fixed = model.root == RootJoint::Fixed;
  const int* parent = model.parent.data();
  const unsigned char* branch_point = model.branch_point.data();
  JointWork<S>* work = data.work.data();
  const typename Types<S>::Vec6* p0 = data.p0.data();
  SymInertia6<S>* Mh = data.tl_Mh.data();
  for (int i = 0; i < n; ++i) {
    if (branch_point[i]) Mh[i].setZero();
  }
  Mh[n].setZero();
  // as in treeLocalForward: the sums of a body whose parent is the previous joint stay in acc, the others go
  // into their parent's record
  int bad = -1;
  SymInertia6<S> acc;
  acc.setZero();
  for (int i = n - 1; i >= 0; --i) {
    JointWork<S>& wk = work[i];
    if (branch_point[i]) acc += Mh[i];
    eliminationStep(acc, wk.M, p0[i], model.joint[static_cast<std::size_t>(i)].armature, wk.psi,
                    data.D[nr + i], wk.inv_mh);
    if constexpr (std::is_floating_point_v<S>) {
      if (!pivotAccepted(data.D[nr + i]) && bad < 0) bad = nr + i;
    }
    const int p = parent[i];
    if (p == i - 1 && p >= 0) continue;
    if (p >= 0 || !fixed) Mh[p < 0 ? n : p] += acc;
    acc.setZero();
  }
  if (fixed) return bad;
  // the root link's nr coordinates: joints of one body, its inertia entering at the last
  const typename Types<S>::Mat6 Sr = rootColumns(model, q);
  const RigidInertia<S> zero{S(0), Types<S>::Vec3::Zero(), Sym3<S>::zero()};
  acc = Mh[n];
  for (int a = nr - 1; a >= 0; --a) {
    const auto ua = static_cast<std::size_t>(a);
    data.sweep_root_p[ua] = Sr.col(a);
    eliminationStep(acc, a == nr - 1 ? rootLinkInertia(model) : zero, data.sweep_root_p[ua], S(0),
                    data.sweep_root_psi[ua], data.D[a], data.sweep_root_inv_mh[a]);
    if constexpr (std::is_floating_point_v<S>) {
      if (!pivotAccepted(data.D[a]) && bad < 0) bad = a;
    }
  }
  return bad;
}

template <typename S>
int treeInverseBySweeps(const ModelTpl<S>& model, DataTpl<S>& data,
                        const Eigen::Ref<const typename Types<S>::VecX>& q) {
  jointAngles(model, data, q.segment(model.nqr, model.n));
  treeCommonPlacements(model, data, q, false);
  if (const int k = treeArticulated(model, data, q); k >= 0) return k;
  inverseBySweeps(model, data);
  return -1;
}

/// treeLocalForward's body, always inlined: what the SIMD kernels call (batch_kernels.cpp). GCC would not
/// inline the out-of-line treeLocalForward into a kernel of another instruction set, under flatten or
/// asked, and the lanes then ran it on the baseline instruction set (measured: no faster than state by
/// state).
template <typename S>
DENOC_INLINE int treeLocalForwardInline(const ModelTpl<S>& model, DataTpl<S>& data,
                                        const Eigen::Ref<const typename Types<S>::VecX>& q,
                                        const Eigen::Ref<const typename Types<S>::VecX>& v,
                                        const Eigen::Ref<const typename Types<S>::VecX>& tau,
                                        const ExternalWrenchTpl<S>* wrenches, int count) {
  using Vec6 = typename Types<S>::Vec6;
  using Mat6 = typename Types<S>::Mat6;
  const int n = model.n, nr = model.nr;
  const bool fixed = model.root == RootJoint::Fixed;
  const JointConstants<S>* joint = model.joint.data();
  const int* parent = model.parent.data();
  const unsigned char* branch_point = model.branch_point.data();
  JointWork<S>* work = data.work.data();
  Vec6* p0 = data.p0.data();
  SymInertia6<S>* Mh = data.tl_Mh.data();
  Vec6* eta = data.tl_eta.data();
  Vec6* mu = data.tl_mu.data();

  // pass 1, root to leaves: the forward sweep of the inverse dynamics with qdd = 0, and each body's
  // placement, p_k and link inertia M_k in the common frame F_{-1}
  treeLocalForwardSweep<S>(model, data, q, v, nullptr, true);
  if (count > 0) subtractLocalWrenches(model, data, q, wrenches, count);
  treeCommonPlacements(model, data, q, true);
  for (int i = 0; i < n; ++i) {
    if (branch_point[i]) {
      Mh[i].setZero();
      eta[i].setZero();
    }
  }
  Mh[n].setZero();
  eta[n].setZero();

  // pass 2, leaves to root (eq. TL.3): phi_k = tau_k - p_k^T w_k from the backward sweep; the elimination
  // step on the children's sum Mh_k; tauh_k = phi_k - p_k^T eta_k with eta_k the children's sum; both sums
  // passed to the parent. The sums of a body whose parent is the previous joint stay in registers (acc,
  // acc_eta), as in the serial route; the others are added into the parent's record (a branch point's).
  int bad = -1;
  SymInertia6<S> acc;
  acc.setZero();
  Vec6 acc_eta = Vec6::Zero();
  for (int i = n - 1; i >= 0; --i) {
    JointWork<S>& wk = work[i];
    const JointConstants<S>& jc = joint[i];
    const S phi = tau[nr + i] - (jc.revolute ? wk.n.z() : wk.f.z());
    pushWrench(model, data, i);
    if (branch_point[i]) {
      acc += Mh[i];
      acc_eta += eta[i];
    }
    eliminationStep(acc, wk.M, p0[i], jc.armature, wk.psi, data.D[nr + i], wk.inv_mh);
    if constexpr (std::is_floating_point_v<S>) {
      if (!pivotAccepted(data.D[nr + i]) && bad < 0) bad = nr + i;
    }
    wk.tau_hat = phi - p0[i].dot(acc_eta);
    acc_eta += wk.psi * wk.tau_hat;
    const int p = parent[i];
    if (p == i - 1 && p >= 0) continue;  // the previous joint's: kept in registers
    if (p >= 0 || !fixed) {
      const int up = p < 0 ? n : p;
      Mh[up] += acc;
      eta[up] += acc_eta;
    }
    acc.setZero();
    acc_eta.setZero();
  }
  if (bad >= 0) return bad;

  // the moving root (eq. TL.4): (S^T Mh_r S) qdd_r = tau_r - S^T (w_r + eta_r), mu_r = S qdd_r
  mu[n].setZero();
  if (!fixed) {
    Mh[n].addRigid(rootLinkInertia(model));
    Vec6 w_r;
    w_r << data.tl_root.n, data.tl_root.f;
    w_r += eta[n];
    Mat6 H = Mh[n].dense();
    Vec6 b = Vec6::Zero();
    if (model.root == RootJoint::Floating) {  // S_r = 1
      b = tau.template head<6>() - w_r;
      if (const int k = rootBlockSolve<S>(H, b, 6, data.D); k >= 0) return k;
      mu[n] = b;
    } else {
      const Mat6 Sr = rootColumns(model, q);
      const Mat6 Md = H;
      for (int j = 0; j < 3; ++j) {
        const Vec6 F = Md * Sr.col(j);
        for (int k = 0; k < 3; ++k) H(k, j) = Sr.col(k).dot(F);
        b[j] = tau[j] - Sr.col(j).dot(w_r);
      }
      if (const int k = rootBlockSolve<S>(H, b, 3, data.D); k >= 0) return k;
      for (int j = 0; j < 3; ++j) mu[n] += Sr.col(j) * b[j];
    }
    for (int j = 0; j < nr; ++j) data.qdd[j] = b[j];
  }

  // pass 3, root to leaves (eq. TL.5): qdd_k = tauh_k / mh_k - psi_k^T mu_parent, mu_k = p_k qdd_k +
  // mu_parent (the previous joint's mu in registers, the branch points' stored)
  Vec6 cur_mu = mu[n];
  for (int i = 0; i < n; ++i) {
    const JointWork<S>& wk = work[i];
    const int p = parent[i];
    if (p != i - 1) cur_mu = mu[p < 0 ? n : p];
    S qdd = wk.tau_hat * wk.inv_mh;
    if (p >= 0 || !fixed) qdd -= wk.psi.dot(cur_mu);
    data.qdd[nr + i] = qdd;
    cur_mu += p0[i] * qdd;
    if (branch_point[i]) mu[i] = cur_mu;
  }
  return -1;
}

template <typename S>
DENOC_FLATTEN int treeLocalForward(const ModelTpl<S>& model, DataTpl<S>& data,
                                   const Eigen::Ref<const typename Types<S>::VecX>& q,
                                   const Eigen::Ref<const typename Types<S>::VecX>& v,
                                   const Eigen::Ref<const typename Types<S>::VecX>& tau,
                                   const ExternalWrenchTpl<S>* wrenches, int count) {
  return treeLocalForwardInline<S>(model, data, q, v, tau, wrenches, count);
}

}  // namespace detail
}  // namespace denoc
