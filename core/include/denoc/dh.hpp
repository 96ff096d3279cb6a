// Denavit-Hartenberg models in Saha's convention (1999, appendix A): frame i is attached to link i-1,
// Z_i is the axis of joint i, and frame i+1 is reached from frame i by Rz(theta_i) Tz(b_i) Tx(a_i)
// Rx(alpha_i). theta_i is the joint variable of a revolute joint (plus a constant offset), b_i that of a
// prismatic one. Link i's inertial data are given in frame i+1 (the frame attached to link i).
#pragma once

#include <limits>
#include <string>
#include <vector>

#include "denoc/model.hpp"

namespace denoc {

struct DHLink {
  std::string joint;  // joint name (default "joint<i>")
  std::string link;   // link name (default "link<i>")
  JointType type = JointType::Revolute;
  double a = 0.0;      // m
  double b = 0.0;      // m; for a prismatic joint, the offset added to q
  double alpha = 0.0;  // rad
  double theta = 0.0;  // rad; for a revolute joint, the offset added to q
  double mass = 0.0;
  Eigen::Vector3d com = Eigen::Vector3d::Zero();      // mass center: position in frame i+1
  Eigen::Matrix3d inertia = Eigen::Matrix3d::Zero();  // about the mass center, frame i+1 axes
  double lower = -std::numeric_limits<double>::infinity();
  double upper = std::numeric_limits<double>::infinity();
  double velocity_limit = std::numeric_limits<double>::infinity();
  double effort_limit = std::numeric_limits<double>::infinity();
  double armature = 0.0;
};

struct DHSpec {
  std::string name;
  std::vector<DHLink> links;
  Eigen::Vector3d gravity = Eigen::Vector3d(0.0, 0.0, -9.81);  // in frame 1 (the base frame)
};

/// The general description of a DH chain; its tip frame is frame n+1. Throws ModelError naming the joint,
/// the link and the DH field for a name longer than kMaxNameLength or a number a, b (|x| <= kMaxLength),
/// alpha, theta (|x| <= kMaxAngle) or com entry (kMaxLength) that is not finite, out of range or subnormal;
/// the rest (masses, inertias, limits) is checked by buildModel. `stop`, if given, is polled between links
/// (denoc::Stopped).
ModelSpec specFromDH(const DHSpec& dh, const StopCondition* stop = nullptr);

/// specFromDH then buildModel, both polling `stop`.
Model buildModelFromDH(const DHSpec& dh, const StopCondition* stop = nullptr);

/// The Stanford arm of Saha 1999 Table 3 as read in docs/design.md (gravity 9.81 along -Z_1).
DHSpec stanfordArmDH();

/// The 3-DOF planar arm of Saha 1999 section 6.1, moving in the X-Y plane with gravity along -Y. The paper
/// gives no dimensions; ours: link lengths 0.3, 0.25, 0.2 m, masses 1.0, 0.8, 0.5 kg, each link a uniform
/// 0.04 m x 0.04 m bar with its mass center at mid-length.
DHSpec planarArmDH();

}  // namespace denoc
