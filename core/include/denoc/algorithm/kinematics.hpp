// Joint placements at a configuration q, in the two frame sets of data.hpp; the poses of the user's link
// frames and of the tip frame; the geometric Jacobian of a point on a link and (dJ/dt) qd.
//
// Frames. Link i's frame is the user's (URDF: the child link's frame; DH: the frame L_i of dh.hpp that moves
// with joint i, with the joint axis as z); frame index n is the tip frame (ModelSpec::tip_rotation,
// tip_origin). Poses and Jacobians are in the user's base frame (the frame gravity is given in).
//
// Jacobian convention, everywhere in the core: rows [angular; linear], as Saha's twists t = [w; v] and the
// tip wrench [moment; force]. The Jacobian of point P on link k maps qd to the twist [w_k; v_P] of link k
// with v_P the velocity of P. Columns j <= k: revolute [e_j; e_j x (P - O_j)], prismatic [0; e_j]; columns
// j > k are zero. ReferenceFrame::Base gives both rows in base axes; ReferenceFrame::Local in the frame's
// own axes (the same twist rotated by R^T).
#pragma once

#include <cstdint>
#include <string>

#include "denoc/algorithm/tree.hpp"
#include "denoc/data.hpp"

namespace denoc {

/// Index of a kinematic frame by name, resolved once (not per call): link i's name (JointSpec::link)
/// gives i in 0..n-1; the empty name gives n, the tip frame. Throws std::invalid_argument naming the
/// unknown link and the chain's links.
template <typename S>
int frameIndex(const ModelTpl<S>& model, const std::string& link);

/// Poses of every link frame and of the tip frame in the user's base frame: data.kin_R[i] (base <- frame
/// i) and data.kin_p[i] (its origin), i = 0..n (n: the tip), and the joint axes data.kin_e (n). O(n), no
/// allocation. q: n entries. Throws std::invalid_argument on a wrong size or a non-finite entry.
template <typename S>
void forwardKinematics(const ModelTpl<S>& model, DataTpl<S>& data,
                       const Eigen::Ref<const typename Types<S>::VecX>& q);

/// Pose of one frame (0..n, frameIndex) in the user's base frame: rotation (base <- frame) and origin,
/// also left in data.kin_R[frame], data.kin_p[frame]. The sweep stops at the frame's link. O(n).
/// Throws std::invalid_argument on a bad q or frame.
template <typename S>
void framePlacement(const ModelTpl<S>& model, DataTpl<S>& data,
                    const Eigen::Ref<const typename Types<S>::VecX>& q, int frame,
                    typename Types<S>::Mat3& rotation, typename Types<S>::Vec3& origin);

/// Geometric Jacobian (6 x n, rows [angular; linear], see the file comment) of the point with coordinates
/// `point` in frame `frame` (0..n, frameIndex; the point moves with the frame's link), in base or local
/// axes. Result in data.J (returned); data.kin_R[frame], kin_p[frame] hold the frame's pose. O(n), no
/// allocation. Throws std::invalid_argument on a bad q, frame or point.
template <typename S>
const Eigen::Matrix<S, 6, Eigen::Dynamic>& computeFrameJacobian(
    const ModelTpl<S>& model, DataTpl<S>& data, const Eigen::Ref<const typename Types<S>::VecX>& q, int frame,
    const typename Types<S>::Vec3& point, ReferenceFrame reference = ReferenceFrame::Base);

/// (dJ/dt) qd (6 entries) for the Jacobian of computeFrameJacobian with the same arguments, so that the
/// point's twist rate is J qdd + (dJ/dt) qd. Base axes: [dw/dt; a_P] at qdd = 0 without gravity (a_P the
/// point's classical acceleration); local axes: [R^T dw/dt; R^T (a_P - w x v_P)], the derivative of the
/// local Jacobian's twist. Result in data.Jdot_qd (returned); also fills data.J. O(n), no allocation.
/// Throws std::invalid_argument on a bad q, qd, frame or point.
template <typename S>
const typename Types<S>::Vec6& computeFrameJdotQd(const ModelTpl<S>& model, DataTpl<S>& data,
                                                  const Eigen::Ref<const typename Types<S>::VecX>& q,
                                                  const Eigen::Ref<const typename Types<S>::VecX>& qd,
                                                  int frame, const typename Types<S>::Vec3& point,
                                                  ReferenceFrame reference = ReferenceFrame::Base);

/// Local placements: data.R[i] (F_{i-1} <- F_i) and data.rho[i] (C_{i-1} to O_i in F_{i-1}).
/// q: n joint positions. Checks q and that data was made for a model of n joints (std::invalid_argument).
template <typename S>
void computeLocalPlacements(const ModelTpl<S>& model, DataTpl<S>& data,
                            const Eigen::Ref<const typename Types<S>::VecX>& q);

/// Common-frame placements from the local ones: data.R0, data.O0, data.C0 and the joint-rate propagation
/// vectors data.p0 = [e_i; O_i x e_i] (revolute) or [0; e_i] (prismatic), all in base axes about the base
/// origin. Call computeLocalPlacements first. Checks that data was made for a model of n joints.
template <typename S>
void computeCommonPlacements(const ModelTpl<S>& model, DataTpl<S>& data);

/// Pose of the tip frame in the base frame (rotation, origin) after computeCommonPlacements.
template <typename S>
void tipPose(const ModelTpl<S>& model, const DataTpl<S>& data, typename Types<S>::Mat3& rotation,
             typename Types<S>::Vec3& origin);

namespace detail {
/// Checks a frame index (0..n) and a point for the function named `function`.
template <typename S>
void checkFrame(const ModelTpl<S>& model, int frame, const typename Types<S>::Vec3* point,
                const char* function);

/// The base-to-tip placement sweep of the user-frame kinematics up to the link of `frame` (the last link
/// for the tip): data.kin_p[i] = O_i and data.kin_e[i] = e_i for every joint up to it, the user frame's
/// rotation data.kin_R[i] for each of them when all_frames, else only data.kin_R[frame], kin_p[frame].
/// Computes the joint angles into data. Unchecked.
template <typename S>
void kinematicSweep(const ModelTpl<S>& model, DataTpl<S>& data,
                    const Eigen::Ref<const typename Types<S>::VecX>& q, int frame, bool all_frames);

/// The Jacobian columns from the sweep's placements (computeFrameJacobian without the sweep); returns the
/// point in base coordinates.
template <typename S>
typename Types<S>::Vec3 jacobianFromSweep(const ModelTpl<S>& model, DataTpl<S>& data, int frame,
                                          const typename Types<S>::Vec3& point, ReferenceFrame reference);
}  // namespace detail

}  // namespace denoc

#include "denoc/algorithm/kinematics.hxx"

namespace denoc {
// instantiated for double in core/src/instantiate.cpp
extern template void computeLocalPlacements<double>(const Model&, Data&,
                                                    const Eigen::Ref<const Types<double>::VecX>&);
extern template void computeCommonPlacements<double>(const Model&, Data&);
// instantiated for double in core/src/instantiate_planning.cpp
extern template int frameIndex<double>(const Model&, const std::string&);
extern template void forwardKinematics<double>(const Model&, Data&,
                                               const Eigen::Ref<const Types<double>::VecX>&);
extern template void framePlacement<double>(const Model&, Data&, const Eigen::Ref<const Types<double>::VecX>&,
                                            int, Types<double>::Mat3&, Types<double>::Vec3&);
extern template const Eigen::Matrix<double, 6, Eigen::Dynamic>& computeFrameJacobian<double>(
    const Model&, Data&, const Eigen::Ref<const Types<double>::VecX>&, int, const Types<double>::Vec3&,
    ReferenceFrame);
extern template const Types<double>::Vec6& computeFrameJdotQd<double>(
    const Model&, Data&, const Eigen::Ref<const Types<double>::VecX>&,
    const Eigen::Ref<const Types<double>::VecX>&, int, const Types<double>::Vec3&, ReferenceFrame);
}  // namespace denoc
