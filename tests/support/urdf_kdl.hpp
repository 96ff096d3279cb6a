// Orocos KDL segments from urdfdom's parse of a URDF, built independently of denoc's importer (the
// kdl_parser mapping: one KDL::Segment per URDF joint, KDL::Joint(name, origin, axis in the parent frame,
// type), fixed joints as KDL::Joint::None segments, inertias rotated out of their <inertial> frame by KDL's
// own RigidBodyInertia arithmetic). Shared by test_urdf.cpp (chains) and test_urdf_trees.cpp (trees).
#pragma once

#include <urdf_parser/urdf_parser.h>

#include <kdl/frames.hpp>
#include <kdl/joint.hpp>
#include <kdl/rigidbodyinertia.hpp>
#include <kdl/rotationalinertia.hpp>
#include <kdl/segment.hpp>

namespace denoc::urdf_kdl {

inline KDL::Frame kdlFrame(const urdf::Pose& p) {
  return KDL::Frame(KDL::Rotation::Quaternion(p.rotation.x, p.rotation.y, p.rotation.z, p.rotation.w),
                    KDL::Vector(p.position.x, p.position.y, p.position.z));
}

inline KDL::RigidBodyInertia kdlInertia(const urdf::LinkConstSharedPtr& link) {
  if (!link->inertial) return KDL::RigidBodyInertia::Zero();
  const urdf::Inertial& i = *link->inertial;
  const KDL::Frame origin = kdlFrame(i.origin);
  // rotational inertia about the mass center, rotated from the <inertial> frame into the link frame by KDL
  const KDL::RigidBodyInertia rotated =
      origin.M * KDL::RigidBodyInertia(0.0, KDL::Vector::Zero(),
                                       KDL::RotationalInertia(i.ixx, i.iyy, i.izz, i.ixy, i.ixz, i.iyz));
  return KDL::RigidBodyInertia(i.mass, origin.p, rotated.getRotationalInertia());
}

inline KDL::Joint kdlJoint(const urdf::Joint& j) {
  const KDL::Frame f = kdlFrame(j.parent_to_joint_origin_transform);
  const KDL::Vector axis(j.axis.x, j.axis.y, j.axis.z);
  switch (j.type) {
    case urdf::Joint::REVOLUTE:
    case urdf::Joint::CONTINUOUS:
      return KDL::Joint(j.name, f.p, f.M * axis, KDL::Joint::RotAxis);
    case urdf::Joint::PRISMATIC:
      return KDL::Joint(j.name, f.p, f.M * axis, KDL::Joint::TransAxis);
    default:
      return KDL::Joint(j.name, KDL::Joint::None);
  }
}

inline KDL::Segment kdlSegment(const urdf::ModelInterface& m, const urdf::Joint& j) {
  return KDL::Segment(j.child_link_name, kdlJoint(j), kdlFrame(j.parent_to_joint_origin_transform),
                      kdlInertia(m.getLink(j.child_link_name)));
}

inline bool moving(const urdf::Joint& j) {
  return j.type == urdf::Joint::REVOLUTE || j.type == urdf::Joint::CONTINUOUS ||
         j.type == urdf::Joint::PRISMATIC;
}

}  // namespace denoc::urdf_kdl
