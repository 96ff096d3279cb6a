// Operational-space inertia Lambda(q) = (J I(q)^-1 J^T)^-1 of a point on a link (Khatib), from the U D U^T
// factors of I(q) by an O(n) recursion, without forming I^-1.
//
// With P the 6 x n matrix of the joint-rate propagation vectors p_i (common frame; zero columns beyond the
// point's link) and J = T P (T maps a twist at the base origin, base axes, to [w; v_P] in the requested
// axes), J I^-1 J^T = sum_i Q_i Q_i^T / D_i over the columns of Q = T P U^-T. From Q U^T = T P and Saha's
// U_ik = p_i^T psi_k (i < k), tip to base from the point's link k:
//   Q_i = Phi_i p_i,   Phi_{i-1} = Phi_i - Q_i psi_i^T,   Phi_k = T
// (Phi: r x 6, r = 6 task rows, or 3 for a linear or angular task). 21 + 6r multiplications per joint.
#pragma once

#include <cstdint>

#include "denoc/algorithm/kinematics.hpp"
#include "denoc/data.hpp"

namespace denoc {

/// Which rows of the Jacobian the task has.
enum class TaskRows : std::uint8_t {
  Full,     // [angular; linear]: Lambda is 6 x 6
  Linear,   // the point's linear velocity: 3 x 3
  Angular,  // the link's angular velocity: 3 x 3
};

/// A configuration is singular for the task when the smallest pivot of the diagonally pivoted Cholesky
/// factorization of J I^-1 J^T is below this fraction of the largest (the largest pivot is the largest
/// diagonal entry; for a positive semi-definite matrix the pivots reveal its rank).
inline constexpr double kSingularPivotRatio = 1e-10;

/// Lambda = (J I^-1 J^T)^-1 for the Jacobian of computeFrameJacobian(q, frame, point, reference), restricted
/// to `rows`: 6 x 6 in data.Lambda (returned), or its top-left 3 x 3 for a 3-row task (the rest zero);
/// J I^-1 J^T likewise in data.Lambda_inv. Armature included. Leaves the frame's pose in data.kin_R[frame],
/// data.kin_p[frame] and the factors of computeUDU in data. O(n), no allocation. Throws NumericalError when
/// the configuration is singular for the task (kSingularPivotRatio; always for a 6-row task of a chain of
/// fewer than 6 joints), std::invalid_argument on a bad q, frame or point.
template <typename S>
const typename Types<S>::Mat6& computeOperationalSpaceInertia(
    const ModelTpl<S>& model, DataTpl<S>& data, const Eigen::Ref<const typename Types<S>::VecX>& q, int frame,
    const typename Types<S>::Vec3& point, ReferenceFrame reference = ReferenceFrame::Base,
    TaskRows rows = TaskRows::Full);

}  // namespace denoc

#include "denoc/algorithm/operational_space.hxx"

namespace denoc {
// instantiated for double in core/src/instantiate_planning.cpp
extern template const Types<double>::Mat6& computeOperationalSpaceInertia<double>(
    const Model&, Data&, const Eigen::Ref<const Types<double>::VecX>&, int, const Types<double>::Vec3&,
    ReferenceFrame, TaskRows);
}  // namespace denoc
