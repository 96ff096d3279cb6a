// KDL chains as kdl_parser builds them from URDF, for the benchmarks that time KDL beside the core.
#pragma once

#include <kdl/chain.hpp>
#include <stdexcept>

namespace denoc::bench {

/// The chain of toKdlChain with every fixed, massless segment folded into the next moving one, as
/// kdl_parser builds chains from URDF: one segment per joint, the joint's origin and axis expressed in the
/// parent segment's frame. The trailing tip segment is dropped (it carries no mass). KDL's Vereshchagin
/// solver in 1.5.1 requires as many segments as joints, and the fixed segments would cost KDL extra work
/// in every solver.
inline KDL::Chain compactChain(const KDL::Chain& in) {
  KDL::Chain out;
  KDL::Frame acc = KDL::Frame::Identity();
  for (unsigned int i = 0; i < in.getNrOfSegments(); ++i) {
    const KDL::Segment& s = in.getSegment(i);
    const KDL::Joint& j = s.getJoint();
    if (j.getType() == KDL::Joint::Fixed) {
      if (s.getInertia().getMass() != 0.0) throw std::runtime_error("compactChain: a fixed segment has mass");
      acc = acc * s.getFrameToTip();
      continue;
    }
    // pose(q) = joint.pose(q) * f_tip with joint.pose(0) = 1: the segment's f_tip is getFrameToTip()
    const KDL::Joint moved(j.getName(), acc * j.JointOrigin(), acc.M * j.JointAxis(), j.getType(), 1.0, 0.0,
                           j.getInertia(), j.getDamping(), j.getStiffness());
    out.addSegment(KDL::Segment(s.getName(), moved, acc * s.getFrameToTip(), s.getInertia()));
    acc = KDL::Frame::Identity();
  }
  return out;
}

}  // namespace denoc::bench
