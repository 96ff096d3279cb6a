// DeNOC over a kinematic tree (docs/trees.md, docs/algorithms.md "Trees"): the recursions of a model with
// branches and a fixed, floating or planar root, in world axes about the world origin (Saha's common frame).
//
// In that frame the twist-propagation matrix between a body and its parent is the identity, so the natural
// orthogonal complement of a tree is block lower-triangular with the columns p_k of every joint on a body's
// path to the root:
//   t_i = t_{lambda(i)} + p_i qd_i                                 (twist, eq. T.1)
//   tdot_i = tdot_{lambda(i)} + p_i qdd_i + pdot_i qd_i,            (eq. T.2)
//   pdot_i = t_{lambda(i)} x p_i                                   (the axis is fixed in the parent)
// with p_i = [e_i; O_i x e_i] (revolute) or [0; e_i] (prismatic). The root link's twist is t_r = S_r v_r with
// S_r = [R e_a; p x R e_a | 0; R e_a] (floating: the root's own axes, angular first) or [0 e_x | 0 e_y |
// e_z; p x e_z] (planar); its rate adds Sdot_r v_r, which is zero for a floating root (t_r x t_r) and
// [0; v_xy x e_z] yawdot for a planar one. The backward sweeps sum a body's subtree into its parent:
//   w_i^sub = w_i + sum over children c of w_c^sub,  tau_i = p_i^T w_i^sub       (eq. T.3)
//   Mc_i = M_i + sum over children of Mc_c,  I_{ki} = p_k^T Mc_i p_i (k on i's path)   (eq. T.4)
// Gravity enters as the world's acceleration tdot_world = [0; -g]. The unactuated root's equations
// S_r^T (IA_r tdot_r + pA_r) = tau_r are solved first in forward dynamics (eq. T.6).
//
// Frame indices: 0..n-1 the links, n the tip frame (on the last joint's link), n + 1 the root link.
// These functions apply to any model: a serial chain's internal base frame is turned by base_rotation.
#pragma once

#include <string>
#include <vector>

#include "denoc/algorithm/dense_kernels.hpp"
#include "denoc/data.hpp"

namespace denoc {

/// The number of kinematic frames of a model: its links, the tip frame and the root link.
template <typename S>
int frameCount(const ModelTpl<S>& model) {
  return model.n + 2;
}

namespace detail {

/// Body index of a frame: 0..n-1 the joint's link, n the last joint's link (-1 if none), n + 1 the root (-1).
template <typename S>
int frameBody(const ModelTpl<S>& model, int frame) {
  if (frame < model.n) return frame;
  if (frame == model.n) return model.n - 1;
  return -1;
}

/// Placements at q (nq entries, unchecked; a floating root's quaternion is divided by its norm): the root
/// link's pose and columns (data.root_R, root_p, root_S), every joint's body frame (data.R0, O0), mass centre
/// (data.C0), column p_i (data.p0) and link inertia about the world origin (data.tr_M, index n the root
/// link).
template <typename S>
void treePlacements(const ModelTpl<S>& model, DataTpl<S>& data,
                    const Eigen::Ref<const typename Types<S>::VecX>& q);

/// The forward sweep (eq. T.1, T.2) after treePlacements: twists data.tr_t, accelerations data.tr_a
/// (qdd == nullptr: zero accelerations; gravity false: no gravity), velocity-product terms data.tr_c and
/// the Newton-Euler wrenches data.tr_w = M a + t x* (M t), less the external wrenches (count entries).
template <typename S>
void treeForwardSweep(const ModelTpl<S>& model, DataTpl<S>& data,
                      const Eigen::Ref<const typename Types<S>::VecX>& v, const S* qdd, bool gravity,
                      const ExternalWrenchTpl<S>* wrenches, int count);

/// Inverse dynamics over the tree (eq. T.3) after treeForwardSweep: tau_out (nv entries).
template <typename S>
void treeBackwardSweep(const ModelTpl<S>& model, DataTpl<S>& data, const S* qdd,
                       typename Types<S>::VecX& tau_out);

/// The inertia matrix by composite bodies (eq. T.4) after treePlacements: data.M, both triangles.
template <typename S>
void treeCrba(const ModelTpl<S>& model, DataTpl<S>& data);

/// I = U D U^T on the tree's sparsity (eq. T.5, Featherstone's LTDL): data.U (unit upper, nonzero on ancestor
/// pairs), data.D, data.log_det from data.M. Returns the first coordinate whose pivot is not positive and
/// finite, or -1. O(n depth^2) for a tree of bounded depth. kDispatch (double): the AVX2 twin where
/// denseKernelsWide().
template <typename S, bool kDispatch = true>
int treeFactor(const ModelTpl<S>& model, DataTpl<S>& data);

/// x <- (U D U^T)^-1 x after treeFactor: two sparse triangular solves, O(n depth).
template <typename S>
void treeSolve(const ModelTpl<S>& model, const DataTpl<S>& data, typename Types<S>::VecX& x);

/// I(q)^-1 = U^-T D^-1 U^-1 after treeFactor into data.Minv, both triangles (data.minv_Uinv and minv_inv_D
/// are the work space), on the tree's sparsity: O(n depth^2) for U^-1, O(n^2 depth) for the product.
template <typename S>
void treeInverseFromFactor(const ModelTpl<S>& model, DataTpl<S>& data);

/// O(n) forward dynamics by articulated bodies in the common frame (eq. T.6) after treePlacements:
/// data.qdd. Returns the first coordinate whose pivot is not positive and finite, or -1. The public
/// functions run the local recursions (treeLocalForward); this world-axes formulation is what the tests
/// check them against (tests/core/test_trees.cpp).
template <typename S>
int treeAba(const ModelTpl<S>& model, DataTpl<S>& data, const Eigen::Ref<const typename Types<S>::VecX>& v,
            const Eigen::Ref<const typename Types<S>::VecX>& tau, const ExternalWrenchTpl<S>* wrenches,
            int count);

/// Pose of frame `frame` in the world after treePlacements.
template <typename S>
void treeFramePose(const ModelTpl<S>& model, const DataTpl<S>& data, int frame, typename Types<S>::Mat3& R,
                   typename Types<S>::Vec3& p);

/// The Jacobian (6 x nv) of the point `point` of frame `frame` after treePlacements, into J: rows
/// [angular; linear], columns of the coordinates on the frame's path to the root, world or frame axes.
template <typename S, typename Jac>
void treeJacobian(const ModelTpl<S>& model, const DataTpl<S>& data, int frame,
                  const typename Types<S>::Vec3& point, ReferenceFrame reference, Jac& J);

/// The wrench of an external wrench about the world origin, world axes, after treePlacements.
template <typename S>
typename Types<S>::Vec6 worldWrench(const ModelTpl<S>& model, const DataTpl<S>& data,
                                    const ExternalWrenchTpl<S>& w);

/// Checks frame indices and entries of external wrenches (std::invalid_argument naming the function).
template <typename S>
void checkWrenches(const ModelTpl<S>& model, const ExternalWrenchTpl<S>* wrenches, int count,
                   const char* function);

/// The local recursions of tree_local.hpp (defined there).
/// Inverse dynamics (a != nullptr) or the bias (a == nullptr: zero accelerations) with or without gravity on
/// checked arguments, less the `count` external wrenches' J^T f (eq. TL.7): tau_out (nv entries). Uses
/// data.work, data.tl_state, data.tl_root and the joint angles.
template <typename S>
void treeLocalRnea(const ModelTpl<S>& model, DataTpl<S>& data,
                   const Eigen::Ref<const typename Types<S>::VecX>& q,
                   const Eigen::Ref<const typename Types<S>::VecX>& v, const S* a, bool gravity,
                   typename Types<S>::VecX& tau_out, const ExternalWrenchTpl<S>* wrenches = nullptr,
                   int count = 0);

/// O(n) forward dynamics on checked arguments, under `count` external wrenches (eq. TL.7): data.qdd, the
/// pivots in data.D (mh_k; the root's Cholesky pivots first). Returns the first velocity coordinate whose
/// pivot is not positive and finite, or -1.
template <typename S>
int treeLocalForward(const ModelTpl<S>& model, DataTpl<S>& data,
                     const Eigen::Ref<const typename Types<S>::VecX>& q,
                     const Eigen::Ref<const typename Types<S>::VecX>& v,
                     const Eigen::Ref<const typename Types<S>::VecX>& tau,
                     const ExternalWrenchTpl<S>* wrenches = nullptr, int count = 0);

/// The inertia matrix by composite bodies in the root's frame (TL.6) on checked arguments: data.M.
/// after_sweep: the joint angles and offsets are those of a forward sweep of the inverse dynamics just run
/// at q (treeLocalRnea), as the serial Cholesky route reuses them. kDispatch (double): the AVX2 twin where
/// denseKernelsWide().
template <typename S, bool kDispatch = true>
void treeLocalCrba(const ModelTpl<S>& model, DataTpl<S>& data,
                   const Eigen::Ref<const typename Types<S>::VecX>& q, bool after_sweep = false);

/// The reverse Gaussian elimination over the tree in the root's frame (TL.3 without the forces) after
/// treeCommonPlacements (p_k and M_k in data.p0, data.work): psi_k, 1 / mh_k of every joint in data.work and
/// mh_k in data.D; a moving root's coordinates a = nr - 1..0 then take the same step on its columns S_r with
/// the root link's inertia and the subtree sums (data.sweep_root_p, sweep_root_psi, sweep_root_inv_mh), as a
/// chain of nr joints of one body. Returns the first coordinate whose pivot is not positive and finite, or
/// -1.
template <typename S>
int treeArticulated(const ModelTpl<S>& model, DataTpl<S>& data,
                    const Eigen::Ref<const typename Types<S>::VecX>& q);

/// I(q)^-1 by the sweeps on checked arguments (model.tree_sweeps): the placements, treeArticulated and
/// inverseBySweeps. Returns the first coordinate whose pivot is not positive and finite (data.Minv then
/// unspecified), or -1.
template <typename S>
int treeInverseBySweeps(const ModelTpl<S>& model, DataTpl<S>& data,
                        const Eigen::Ref<const typename Types<S>::VecX>& q);

/// Refuses a model whose inertia matrix is singular at the neutral configuration (ModelError naming the
/// joint that moves no mass), for the models the tree builder makes (core/src/model.cpp).
void checkNeutralInertia(const ModelTpl<double>& model);

}  // namespace detail
}  // namespace denoc

#include "denoc/algorithm/tree.hxx"
