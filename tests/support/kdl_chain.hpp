// The robot of a denoc::ModelSpec built as an Orocos KDL chain, the independent oracle of the dynamics tests.
//
// Conventions (KDL 1.5, checked against its sources):
//  - A KDL segment's pose(q) = joint.pose(q) * f_tip; the segment's frame is the frame at its tip. Its rigid
//    body inertia is expressed in that frame (RigidBodyInertia(m, c, Ic): c is the mass center, Ic the
//    rotational inertia about the mass center in that frame's axes).
//  - ChainIdSolver_RNE::CartToJnt computes f_i = I_i a_i + v_i x* I_i v_i - f_ext[i] in segment i's frame,
//    so f_ext[i] is the wrench the environment applies on segment i, expressed in segment i's (tip) frame,
//    torque about that frame's origin, stored as KDL::Wrench(force, torque).
//  - Both ChainIdSolver_RNE and ChainDynParam keep a reference to the chain: the chain must outlive them.
//
// The mapping of one JointSpec (URDF convention): a fixed, massless segment whose f_tip is the joint frame's
// placement (rotation, origin) in the parent link frame, then a segment with a RotAxis/TransAxis joint
// through that frame's origin along `axis` (no offset), f_tip = identity, carrying the link's inertia (child
// link frame = joint frame moved by q). A last fixed, massless segment holds the tip frame (tip_rotation,
// tip_origin in the last link frame), so the chain's end frame is the model's tip frame and
// f_ext[getNrOfSegments() - 1] is a tip wrench. Armature maps to the KDL joint inertia.
#pragma once

#include <Eigen/Core>
#include <kdl/chain.hpp>
#include <kdl/frames.hpp>
#include <kdl/jntarray.hpp>
#include <kdl/rigidbodyinertia.hpp>
#include <kdl/rotationalinertia.hpp>
#include <kdl/segment.hpp>

#include "denoc/model.hpp"

namespace denoc::testing {

inline KDL::Vector toKdl(const Eigen::Vector3d& v) { return KDL::Vector(v.x(), v.y(), v.z()); }

inline KDL::Rotation toKdl(const Eigen::Matrix3d& R) {
  return KDL::Rotation(R(0, 0), R(0, 1), R(0, 2), R(1, 0), R(1, 1), R(1, 2), R(2, 0), R(2, 1), R(2, 2));
}

inline KDL::Frame toKdlFrame(const Eigen::Matrix3d& R, const Eigen::Vector3d& p) {
  return KDL::Frame(toKdl(R), toKdl(p));
}

/// Rigid-body inertia of a link: mass, mass center and rotational inertia about the mass center (all in the
/// frame the KDL segment's inertia is expressed in).
inline KDL::RigidBodyInertia toKdlInertia(double mass, const Eigen::Vector3d& com,
                                          const Eigen::Matrix3d& Ic) {
  return KDL::RigidBodyInertia(
      mass, toKdl(com), KDL::RotationalInertia(Ic(0, 0), Ic(1, 1), Ic(2, 2), Ic(0, 1), Ic(0, 2), Ic(1, 2)));
}

inline KDL::JntArray toKdl(const Eigen::VectorXd& v) {
  KDL::JntArray a(static_cast<unsigned int>(v.size()));
  a.data = v;
  return a;
}

/// The same robot as denoc::buildModel(spec), as a KDL chain whose end frame is the spec's tip frame.
/// Segments: 2 per joint (placement, moving link) plus the tip segment.
inline KDL::Chain toKdlChain(const ModelSpec& spec) {
  KDL::Chain chain;
  for (std::size_t i = 0; i < spec.joints.size(); ++i) {
    const JointSpec& j = spec.joints[i];
    const std::string name = j.name.empty() ? "joint" + std::to_string(i + 1) : j.name;
    chain.addSegment(KDL::Segment(name + "_placement", KDL::Joint(name + "_fixed", KDL::Joint::Fixed),
                                  toKdlFrame(j.rotation, j.origin)));
    const KDL::Joint::JointType type =
        j.type == JointType::Revolute ? KDL::Joint::RotAxis : KDL::Joint::TransAxis;
    // Joint(name, origin, axis, type, scale, offset, inertia), the axis normalised here.
    const KDL::Joint joint(name, KDL::Vector::Zero(), toKdl(Eigen::Vector3d(j.axis.normalized())), type, 1.0,
                           0.0, j.armature);
    chain.addSegment(KDL::Segment(j.link.empty() ? "link" + std::to_string(i + 1) : j.link, joint,
                                  KDL::Frame::Identity(), toKdlInertia(j.mass, j.com, j.inertia)));
  }
  chain.addSegment(KDL::Segment("tip", KDL::Joint("tip_fixed", KDL::Joint::Fixed),
                                toKdlFrame(spec.tip_rotation, spec.tip_origin)));
  return chain;
}

}  // namespace denoc::testing
