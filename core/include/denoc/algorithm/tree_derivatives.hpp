// Analytic derivatives of the inverse and forward dynamics of a tree model (branches, a fixed, floating or
// planar root: docs/trees.md), the serial derivatives' derivation (docs/planning.md, after Carpentier and
// Mansard, RSS 2018) carried over to the tree recursions of tree.hpp in Saha's common frame: world axes,
// every twist and wrench referred to the world origin O. docs/algorithms.md, "Derivatives over a tree".
//
// Quantities (per body b: the links, and the root link as body n; per velocity coordinate k: its column s_k,
// the joint's p_k or a column of the root's S_r, and the body B(k) it moves; Sub(k) the bodies B(k) carries,
// the root link and every link for a root coordinate; x and x* the motion and force cross products):
//   t_b, tdot_b (gravity as the world's acceleration a_w = [0; -g]), M_b, h_b = M_b t_b,
//   w_b = M_b tdot_b + t_b x* h_b - f_b^ext,  W_b = sum over Sub(b) of w,  tau_k = s_k^T W_B(k) (+ armature),
//   B_b x = Mdot_b x + x x* h_b (Mdot_b = t_b x* M_b - M_b t_b x), Mc_b, Bc_b their sums over Sub(b).
// Perturbing coordinate k moves Sub(k) rigidly along the screw s_k (a joint; a planar root, read as the
// chain x -> y -> yaw of three joints, x and y fixed in the world, yaw moving with them), or the whole robot
// (a floating root's coordinate along integrateConfiguration: angular a turns it about the root link's axis
// R e_a through its origin, linear a moves it along R e_a). What changes besides that rigid motion:
//   d t_b / d q_k    = s_k x t_b + Y_k,                       b in Sub(k)
//   d tdot_b / d q_k = s_k x tdot_b + Z_k + Y_k x t_b
//   d t_b / d v_k    = s_k,  d tdot_b / d v_k = X_k + s_k x t_b
// with, for a joint under the body P (and the planar root's coordinates under their chain):
//   Y_k = pdot_k = t_P x s_k,  Z_k = tdot_P x s_k + t_P x pdot_k,  X_k = 2 pdot_k,
// and for a floating root's coordinates (their columns are fixed in the root link, v is held in its axes,
// so the whole state moves rigidly and only gravity, fixed in the world, does not):
//   Y_k = 0,  Z_k = a_w x s_k (0 for the linear columns),  X_k = t_root x s_k.
// Then d w_b = s_k x* w_b + M_b Z_k + B_b Y_k - Phi_b e_k (q) and M_b X_k + B_b s_k (v), where the last term
// comes from the external wrenches f_b on body b (w_b holds -f_b), e_k the angular part of s_k = [e_k; l_k]:
//  - a wrench in the frame's axes (Local, the tip wrench among them) is fixed in the body: d f_b / d q_k =
//    s_k x* f_b, the rigid part only (Phi_b = 0);
//  - a wrench in world axes (Base), moment m and force F at the point c fixed on the body, f_b = [m + c x F;
//    F]: the point moves with the body (dc = e_k x c + l_k) but m and F keep their world axes, so
//      d f_b / d q_k = s_k x* f_b - [e_k x m + c x (e_k x F); e_k x F] = s_k x* f_b + Phi_b e_k,
//      Phi_b = [ [m]x + [c]x [F]x ; [F]x ]   (6 x 3, summed over the body's Base wrenches)       (D.0)
//    (a translation moves a world-axes wrench rigidly: only e_k enters).
// With F1_k = Mc s_k, F2_k = Bc^T s_k, G_k = s_k x* W + Mc Z_k + Bc Y_k - Phic e_k, H_k = Mc X_k + Bc s_k and
// K_k = -Phic^T s_k (Mc, Bc, W, Phic of B(k)'s subtree), for rows i and columns j:
//   j an ancestor of i or i itself (s_i moves rigidly with q_j and the rigid parts cancel in s_i^T W):
//     d tau_i / d q_j = F1_i . Z_j + F2_i . Y_j + K_i . e_j,
//     d tau_i / d v_j = F1_i . X_j + F2_i . s_j                                                      (D.1)
//   i a strict ancestor of j (s_i does not move; W_i changes as W_j does):
//     d tau_i / d q_j = s_i . G_j,                   d tau_i / d v_j = s_i . H_j                     (D.2)
//   otherwise (disjoint subtrees) both are 0.                                                        (D.3)
// The root's coordinates form a chain at the top (model.dof_parent); a floating root's move each other's
// columns rigidly, so every entry among them is D.1. Its columns in q are therefore F1_i . (a_w x s_j)
// + K_i . e_j: d tau / d q of a floating root is the moment of gravity and of the world-axes wrenches on the
// subtrees, zero along the linear columns.
// Forward dynamics: qdd = FD(q, v, tau) solves ID(q, v, qdd) = tau, so dqdd/dq = -I^-1 dtau/dq and
// dqdd/dv = -I^-1 dtau/dv at that qdd, dqdd/dtau = I^-1: as the serial route, I^-1 and two dense products up
// to productDerivativesMaxDof (algorithm/negated_product.hpp), above it each column by the two sparse
// triangular solves of the tree's U D U^T (eq. T.5).
//
// Tangent convention: column j of a q-derivative is the derivative along integrateConfiguration(q, e_j eps)
// at eps = 0 with v and a (or tau) held as numbers; for a planar root and the joints that is the ordinary
// partial derivative.
#pragma once

#include "denoc/algorithm/tree.hpp"
#include "denoc/data.hpp"

namespace denoc {
namespace detail {

/// The unchecked inverse-dynamics derivatives over a tree at (q, v, a) with `count` external wrenches (eq.
/// D.0; a tip wrench is {n, wrench, Local}): data.tau, data.dtau_dq, data.dtau_dqd (nv x nv, every entry
/// written), with data.tdw, td_h, td_Idot, td_Phi and the tree scratch. O(n) sweeps, O(depth) per wrench,
/// and an O(nv depth) assembly (plus the nv^2 zeros off the ancestor pairs).
template <typename S>
void treeRneaDerivatives(const ModelTpl<S>& model, DataTpl<S>& data,
                         const Eigen::Ref<const typename Types<S>::VecX>& q,
                         const Eigen::Ref<const typename Types<S>::VecX>& v,
                         const Eigen::Ref<const typename Types<S>::VecX>& a,
                         const ExternalWrenchTpl<S>* wrenches, int count);

/// computeInverseDynamicsDerivatives for a tree model, and for any model with external wrenches: checks
/// (naming `function`; the wrenches as checkWrenches), then treeRneaDerivatives; NumericalError on a
/// non-finite result.
template <typename S>
void treeInverseDynamicsDerivatives(const ModelTpl<S>& model, DataTpl<S>& data,
                                    const Eigen::Ref<const typename Types<S>::VecX>& q,
                                    const Eigen::Ref<const typename Types<S>::VecX>& v,
                                    const Eigen::Ref<const typename Types<S>::VecX>& a,
                                    const ExternalWrenchTpl<S>* wrenches, int count, const char* function);

/// computeForwardDynamicsDerivatives for a tree model (and any model with external wrenches): qdd by I(q) and
/// its tree-sparse U D U^T (data.M, U, D, log_det), the inverse-dynamics derivatives at it; then, up to
/// productDerivativesMaxDof, data.Minv by computeInverseInertia's route (the sweeps where
/// model.inverse_by_sweeps, which leave their articulated-body pivots in data.D: the factor's D but for
/// rounding; else from the factor) and dqdd_dq, dqdd_dqd by two dense products; above it, all three column
/// by column by sparse solves, O(n depth) per column.
template <typename S>
void treeForwardDynamicsDerivatives(const ModelTpl<S>& model, DataTpl<S>& data,
                                    const Eigen::Ref<const typename Types<S>::VecX>& q,
                                    const Eigen::Ref<const typename Types<S>::VecX>& v,
                                    const Eigen::Ref<const typename Types<S>::VecX>& tau,
                                    const ExternalWrenchTpl<S>* wrenches, int count, const char* function);

}  // namespace detail
}  // namespace denoc

#include "denoc/algorithm/tree_derivatives.hxx"
