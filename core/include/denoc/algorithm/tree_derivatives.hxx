// The derivatives over a tree of tree_derivatives.hpp (eq. D.1-D.3 there and in docs/algorithms.md).
#pragma once

#include <string>

#include "denoc/algorithm/check.hpp"
#include "denoc/algorithm/negated_product.hpp"
#include "denoc/algorithm/tree.hpp"
#include "denoc/algorithm/tree_derivatives.hpp"

namespace denoc {
namespace detail {

/// F1, F2, G, H of one coordinate (its s, Y, Z, X set) from its body's subtree: composite inertia Mc,
/// rotational-inertia rate Idot, momentum h (whose linear part is the first-moment rate) and wrench W.
template <typename S>
DENOC_INLINE void treeColumnProducts(const RigidInertia<S>& Mc, const Sym3<S>& Idot,
                                     const typename Types<S>::Vec6& h, const typename Types<S>::Vec6& W,
                                     TreeDerivativeWork<S>& d) {
  using Vec3 = typename Types<S>::Vec3;
  using Vec6 = typename Types<S>::Vec6;
  const Vec3 hdot = h.template tail<3>();
  Vec6 r, c;
  coriolisParts<S>(hdot, Idot, h, d.s, r, c);
  d.F1 = Mc * d.s;
  d.F2 = r - c;
  d.H = Mc * d.X + r + c;
  coriolisParts<S>(hdot, Idot, h, d.sdot, r, c);
  d.G = forceCross<S>(d.s, W) + Mc * d.sddot + r + c;
}

/// Phi += [ [m]x + [c]x [F]x ; [F]x ] of a world-axes wrench f = [m + c x F; F] at the point c (eq. D.0).
template <typename S>
DENOC_INLINE void addWrenchPhi(const typename Types<S>::Vec3& m, const typename Types<S>::Vec3& c,
                               const typename Types<S>::Vec3& F, Eigen::Matrix<S, 6, 3>& Phi) {
  using Mat3 = typename Types<S>::Mat3;
  Mat3 mx, cx, Fx;
  mx << S(0), -m.z(), m.y(), m.z(), S(0), -m.x(), -m.y(), m.x(), S(0);
  cx << S(0), -c.z(), c.y(), c.z(), S(0), -c.x(), -c.y(), c.x(), S(0);
  Fx << S(0), -F.z(), F.y(), F.z(), S(0), -F.x(), -F.y(), F.x(), S(0);
  Phi.template topRows<3>() += mx + cx * Fx;
  Phi.template bottomRows<3>() += Fx;
}

template <typename S>
DENOC_FLATTEN void treeRneaDerivatives(const ModelTpl<S>& model, DataTpl<S>& data,
                                       const Eigen::Ref<const typename Types<S>::VecX>& q,
                                       const Eigen::Ref<const typename Types<S>::VecX>& v,
                                       const Eigen::Ref<const typename Types<S>::VecX>& a,
                                       const ExternalWrenchTpl<S>* wrenches, int count) {
  using Vec3 = typename Types<S>::Vec3;
  using Vec6 = typename Types<S>::Vec6;
  using Mat3 = typename Types<S>::Mat3;
  const int n = model.n;
  const int nr = model.nr;
  const int nv = model.nv;
  const auto un = static_cast<std::size_t>(n);
  TreeDerivativeWork<S>* tdw = data.tdw.data();

  // placements, twists t_b, rates tdot_b (gravity as the world's acceleration), the Newton-Euler wrenches
  // less the external wrenches, eq. T.1-T.3
  treePlacements(model, data, q);
  treeForwardSweep<S>(model, data, v, a.data(), true, wrenches, count);
  // the world-axes wrenches' Phi per body (eq. D.0): their force stays in the world's axes as the point moves
  bool base_wrenches = false;
  for (int k = 0; k < count; ++k)
    base_wrenches = base_wrenches || wrenches[k].reference == ReferenceFrame::Base;
  if (base_wrenches) {
    for (std::size_t b = 0; b <= un; ++b) data.td_Phi[b].setZero();
    for (int k = 0; k < count; ++k) {
      const ExternalWrenchTpl<S>& w = wrenches[k];
      if (w.reference != ReferenceFrame::Base) continue;
      Mat3 R;
      Vec3 o;
      treeFramePose(model, data, w.frame, R, o);
      const auto slot = static_cast<std::size_t>(treeSlot(n, frameBody(model, w.frame)));
      const Vec3 m = w.wrench.template head<3>();
      const Vec3 F = w.wrench.template tail<3>();
      addWrenchPhi<S>(m, Vec3(o + R * w.point), F, data.td_Phi[slot]);
    }
  }
  // per body: momentum h_b = M_b t_b and the rate of its rotational inertia; the composites start at the link
  for (std::size_t b = 0; b <= un; ++b) {
    data.td_h[b] = data.tr_M[b] * data.tr_t[b];
    inertiaRate<S>(data.tr_M[b], data.tr_t[b], data.td_Idot[b]);
    data.tr_Mc[b] = data.tr_M[b];
  }

  // the columns and how the motion below them changes with them: Y, Z (q) and X (v)
  Vec6 a_world = Vec6::Zero();
  a_world.template tail<3>() = -model.gravity;
  if (model.root == RootJoint::Floating) {
    // fixed in the root link; q along integrate moves the whole state rigidly, gravity stays in the world
    for (int k = 0; k < 6; ++k) {
      TreeDerivativeWork<S>& d = tdw[k];
      d.s = data.root_S.col(k);
      d.sdot.setZero();
      d.sddot = motionCross<S>(a_world, d.s);
      d.X = motionCross<S>(data.tr_t[un], d.s);
    }
  } else if (model.root == RootJoint::Planar) {
    // the chain x -> y -> yaw: x and y fixed in the world (Y = Z = X = 0), yaw's column moving with them:
    // Y = [0; v_xy] x s_yaw = [0; v_xy x e_z], Z = [0; a_xy - g] x s_yaw = [0; (a_xy - g) x e_z]
    for (int k = 0; k < 3; ++k) {
      TreeDerivativeWork<S>& d = tdw[k];
      d.s = data.root_S.col(k);
      d.sdot.setZero();
      d.sddot.setZero();
      d.X.setZero();
    }
    TreeDerivativeWork<S>& d = tdw[2];
    const Vec3 u = Vec3(a[0], a[1], S(0)) - model.gravity;
    d.sdot.template tail<3>() = Vec3(v[1], -v[0], S(0));
    d.sddot.template tail<3>() = Vec3(u.y(), -u.x(), S(0));
    d.X = S(2) * d.sdot;
  }
  for (int i = 0; i < n; ++i) {
    const auto ui = static_cast<std::size_t>(i);
    const auto up = static_cast<std::size_t>(treeSlot(n, model.parent[ui]));
    TreeDerivativeWork<S>& d = tdw[nr + i];
    d.s = data.p0[ui];
    d.sdot = motionCross<S>(data.tr_t[up], d.s);
    d.sddot = motionCross<S>(data.tr_a[up], d.s) + motionCross<S>(data.tr_t[up], d.sdot);
    d.X = S(2) * d.sdot;
  }

  // leaves to root: each body's subtree sums (a child's index exceeds its parent's), tau and the products
  for (int i = n - 1; i >= 0; --i) {
    const auto ui = static_cast<std::size_t>(i);
    const auto up = static_cast<std::size_t>(treeSlot(n, model.parent[ui]));
    TreeDerivativeWork<S>& d = tdw[nr + i];
    data.tau[nr + i] = d.s.dot(data.tr_w[ui]) + model.armature[ui] * a[nr + i];
    treeColumnProducts<S>(data.tr_Mc[ui], data.td_Idot[ui], data.td_h[ui], data.tr_w[ui], d);
    if (base_wrenches) {
      const Eigen::Matrix<S, 6, 3>& Phi = data.td_Phi[ui];
      d.G.noalias() -= Phi * d.s.template head<3>();
      d.K.noalias() = -Phi.transpose() * d.s;
      data.td_Phi[up] += Phi;
    }
    data.tr_Mc[up] += data.tr_Mc[ui];
    data.td_Idot[up] += data.td_Idot[ui];
    data.td_h[up] += data.td_h[ui];
    data.tr_w[up] += data.tr_w[ui];
  }
  for (int k = 0; k < nr; ++k) {
    TreeDerivativeWork<S>& d = tdw[k];
    data.tau[k] = d.s.dot(data.tr_w[un]);
    treeColumnProducts<S>(data.tr_Mc[un], data.td_Idot[un], data.td_h[un], data.tr_w[un], d);
    if (base_wrenches) {
      d.G.noalias() -= data.td_Phi[un] * d.s.template head<3>();
      d.K.noalias() = -data.td_Phi[un].transpose() * d.s;
    }
  }

  // assembly on the ancestor pairs (D.1, D.2); every other entry is zero (D.3)
  data.dtau_dq.setZero();
  data.dtau_dqd.setZero();
  S* dq = data.dtau_dq.data();
  S* dv = data.dtau_dqd.data();
  const bool floating = model.root == RootJoint::Floating;
  for (int i = 0; i < nv; ++i) {
    const TreeDerivativeWork<S>& r = tdw[i];
    for (int j = i; j >= 0; j = model.dof_parent[static_cast<std::size_t>(j)]) {
      const TreeDerivativeWork<S>& c = tdw[j];
      // (i, j), j an ancestor of i or i itself: D.1
      const Eigen::Index ij = i + static_cast<Eigen::Index>(j) * nv;
      dq[ij] = dot6<S>(r.F1, c.sddot) + dot6<S>(r.F2, c.sdot);
      if (base_wrenches) dq[ij] += r.K.dot(c.s.template head<3>());
      dv[ij] = dot6<S>(r.F1, c.X) + dot6<S>(r.F2, c.s);
      if (j == i) continue;
      // (j, i), row j a strict ancestor of column i: D.2, except among a floating root's coordinates (D.1)
      const Eigen::Index ji = j + static_cast<Eigen::Index>(i) * nv;
      if (floating && i < nr) {
        dq[ji] = dot6<S>(c.F1, r.sddot) + dot6<S>(c.F2, r.sdot);
        if (base_wrenches) dq[ji] += c.K.dot(r.s.template head<3>());
      } else {
        dq[ji] = dot6<S>(c.s, r.G);
      }
      dv[ji] = dot6<S>(c.s, r.H);
    }
  }
}

template <typename S>
void treeInverseDynamicsDerivatives(const ModelTpl<S>& model, DataTpl<S>& data,
                                    const Eigen::Ref<const typename Types<S>::VecX>& q,
                                    const Eigen::Ref<const typename Types<S>::VecX>& v,
                                    const Eigen::Ref<const typename Types<S>::VecX>& a,
                                    const ExternalWrenchTpl<S>* wrenches, int count, const char* function) {
  checkData(model, data, function, true);
  checkConfigurationVector(model, q, function, "q");
  checkVector(model, v, function, model.serial ? "qd" : "v");
  checkVector(model, a, function, model.serial ? "qdd" : "a");
  checkWrenches(model, wrenches, count, function);
  treeRneaDerivatives<S>(model, data, q, v, a, wrenches, count);
  checkOutput<S>(data.tau, function, "tau");
  checkOutput<S>(data.dtau_dq, function, "dtau_dq");
  checkOutput<S>(data.dtau_dqd, function, "dtau_dqd");
}

template <typename S>
void treeForwardDynamicsDerivatives(const ModelTpl<S>& model, DataTpl<S>& data,
                                    const Eigen::Ref<const typename Types<S>::VecX>& q,
                                    const Eigen::Ref<const typename Types<S>::VecX>& v,
                                    const Eigen::Ref<const typename Types<S>::VecX>& tau,
                                    const ExternalWrenchTpl<S>* wrenches, int count, const char* function) {
  checkData(model, data, function, true);
  checkConfigurationVector(model, q, function, "q");
  checkVector(model, v, function, model.serial ? "qd" : "v");
  checkVector(model, tau, function, "tau");
  checkWrenches(model, wrenches, count, function);
  const int nv = model.nv;
  // qdd = I^-1 (tau - C v - g + sum J_k^T f_k): the bias with the external wrenches at zero acceleration,
  // I(q), its tree-sparse factor and two sparse solves
  treePlacements(model, data, q);
  treeForwardSweep<S>(model, data, v, nullptr, true, wrenches, count);
  treeBackwardSweep<S>(model, data, nullptr, data.tr_x);
  data.tr_x = tau - data.tr_x;
  treeCrba(model, data);
  if (const int k = treeFactor(model, data); k >= 0) treePivotError(function, k);
  treeSolve(model, data, data.tr_x);
  data.qdd = data.tr_x;
  checkOutput<S>(data.qdd, function, "qdd");
  // dtau/dq, dtau/dv at qdd (the factor stays in data.U, data.D)
  treeRneaDerivatives<S>(model, data, q, v, data.qdd, wrenches, count);
  checkOutput<S>(data.dtau_dq, function, "dtau_dq");
  checkOutput<S>(data.dtau_dqd, function, "dtau_dqd");
  // I^-1, -I^-1 dtau/dq and -I^-1 dtau/dv as the serial route takes them (abaDerivatives): up to
  // productDerivativesMaxDof, I^-1 by computeInverseInertia's route (the sweeps where the coordinates are
  // numbered depth first and a path is long enough, O(nv^2); else from the factor) and two dense products in
  // SIMD lanes; above it, column by column through the sparse factor (O(nv depth) per column)
  if (nv <= productDerivativesMaxDof<S>()) {
    if (model.inverse_by_sweeps) {
      if (const int k = treeInverseBySweeps(model, data, q); k >= 0) treePivotError(function, k);
    } else {
      treeInverseFromFactor(model, data);
    }
    negatedProduct<S>(data.Minv, data.dtau_dq, data.dqdd_dq);
    negatedProduct<S>(data.Minv, data.dtau_dqd, data.dqdd_dqd);
  } else {
    for (int j = 0; j < nv; ++j) {
      data.tr_x.setZero();
      data.tr_x[j] = S(1);
      treeSolve(model, data, data.tr_x);
      data.Minv.col(j) = data.tr_x;
      data.tr_x = -data.dtau_dq.col(j);
      treeSolve(model, data, data.tr_x);
      data.dqdd_dq.col(j) = data.tr_x;
      data.tr_x = -data.dtau_dqd.col(j);
      treeSolve(model, data, data.tr_x);
      data.dqdd_dqd.col(j) = data.tr_x;
    }
  }
  checkOutput<S>(data.Minv, function, "Minv");
  checkOutput<S>(data.dqdd_dq, function, "dqdd_dq");
  checkOutput<S>(data.dqdd_dqd, function, "dqdd_dqd");
}

}  // namespace detail
}  // namespace denoc
