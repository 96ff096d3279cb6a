// The centre of mass, its Jacobian and the centroidal momentum matrix A_G (Orin and Goswami 2008) from the
// composite bodies of the tree recursions (algorithm/tree.hpp, docs/algorithms.md "Centroidal"), for any
// model: a serial chain, a tree, a fixed, floating or planar root.
//
// With F_k = Mc_{b(k)} p_k, the momentum about the world origin that a unit rate of coordinate k gives the
// subtree it moves (eq. T.4's composite inertia times its column):
//   J_com[:, k] = F_k,lin / m                                   (eq. C.1)
//   A_G[:, k] = [F_k,ang - c x F_k,lin; F_k,lin]                (eq. C.2: the momentum moved to the com)
//   h_G = A_G v,  (dA_G/dt) v = [hdot_O,ang - c x hdot_O,lin; hdot_O,lin]   (eq. C.3)
// where hdot_O is the sum of the Newton-Euler wrenches M_i tdot_i + t_i x* (M_i t_i) at zero acceleration
// without gravity (c x (m cdot) = 0 drops the com's own motion). Rows [angular; linear], world axes.
#pragma once

#include "denoc/algorithm/tree.hpp"

namespace denoc {

/// The model's total mass and centre of mass at q into data.mass and data.com (world). O(n).
template <typename S>
const typename Types<S>::Vec3& computeCenterOfMass(const ModelTpl<S>& model, DataTpl<S>& data,
                                                   const Eigen::Ref<const typename Types<S>::VecX>& q);

/// The Jacobian of the centre of mass (3 x nv) into data.Jcom (also data.mass, data.com). O(n depth).
template <typename S>
const Eigen::Matrix<S, 3, Eigen::Dynamic>& computeCenterOfMassJacobian(
    const ModelTpl<S>& model, DataTpl<S>& data, const Eigen::Ref<const typename Types<S>::VecX>& q);

/// The centroidal momentum matrix A_G (6 x nv) into data.Ag (also data.mass, com, Jcom). O(n depth).
template <typename S>
const Eigen::Matrix<S, 6, Eigen::Dynamic>& computeCentroidalMap(
    const ModelTpl<S>& model, DataTpl<S>& data, const Eigen::Ref<const typename Types<S>::VecX>& q);

/// A_G, the centroidal momentum h_G = A_G v (data.hg) and (dA_G/dt) v (data.dAg_v), returned.
template <typename S>
const typename Types<S>::Vec6& computeCentroidalMapTimeVariation(
    const ModelTpl<S>& model, DataTpl<S>& data, const Eigen::Ref<const typename Types<S>::VecX>& q,
    const Eigen::Ref<const typename Types<S>::VecX>& v);

}  // namespace denoc

#include "denoc/algorithm/centroidal.hxx"
