// Joint placements at a configuration q, in the two frame sets of data.hpp.
#pragma once

#include "denoc/data.hpp"

namespace denoc {

/// Local placements: data.R[i] (F_{i-1} <- F_i) and data.rho[i] (C_{i-1} to O_i in F_{i-1}).
/// q: n joint positions. No checks (internal building block; the public algorithms check q).
template <typename S>
void computeLocalPlacements(const ModelTpl<S>& model, DataTpl<S>& data,
                            const Eigen::Ref<const typename Types<S>::VecX>& q);

/// Common-frame placements from the local ones: data.R0, data.O0, data.C0 and the joint-rate propagation
/// vectors data.p0 = [e_i; O_i x e_i] (revolute) or [0; e_i] (prismatic), all in base axes about the base
/// origin. Call computeLocalPlacements first.
template <typename S>
void computeCommonPlacements(const ModelTpl<S>& model, DataTpl<S>& data);

/// Pose of the tip frame in the base frame (rotation, origin) after computeCommonPlacements.
template <typename S>
void tipPose(const ModelTpl<S>& model, const DataTpl<S>& data, typename Types<S>::Mat3& rotation,
             typename Types<S>::Vec3& origin);

}  // namespace denoc

#include "denoc/algorithm/kinematics.hxx"
