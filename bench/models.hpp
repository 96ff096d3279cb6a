// The benchmark models, built through the C++ API: the Stanford arm (Saha 1999 Table 3), the 7 arm links of
// the Franka Panda (transcribed from models/panda_hand.urdf), and the chains of n revolute joints that
// docs/design.md used to time the field's libraries.
#pragma once

#include <Eigen/Geometry>
#include <string>
#include <vector>

#include "denoc/dh.hpp"
#include "denoc/model.hpp"

namespace denoc::bench {

/// URDF's fixed-axis roll-pitch-yaw: R = Rz(yaw) Ry(pitch) Rx(roll).
inline Eigen::Matrix3d rpy(double roll, double pitch, double yaw) {
  return (Eigen::AngleAxisd(yaw, Eigen::Vector3d::UnitZ()) *
          Eigen::AngleAxisd(pitch, Eigen::Vector3d::UnitY()) *
          Eigen::AngleAxisd(roll, Eigen::Vector3d::UnitX()))
      .toRotationMatrix();
}

/// The Stanford arm of Saha 1999 Table 3 (6 DOF, joint 3 prismatic), as docs/design.md reads it.
inline ModelSpec stanfordArmSpec() {
  ModelSpec spec = specFromDH(stanfordArmDH());
  spec.name = "stanford";
  return spec;
}

/// The Franka Panda arm: joints panda_joint1..7 and links panda_link1..7 of panda_hand.urdf, with the
/// identified inertial parameters of that file. The hand and fingers are not part of it; the tip frame is
/// the flange (the origin of the fixed panda_joint8).
inline ModelSpec pandaSpec() {
  struct Row {
    const char* joint;
    const char* link;
    double xyz[3], rpy[3];  // joint origin in the parent link
    double lower, upper, effort, velocity;
    double mass;
    double com[3], com_rpy[3];            // <inertial><origin>
    double ixx, ixy, ixz, iyy, iyz, izz;  // about the mass center, in the inertial frame
  };
  constexpr double h = 1.5707963267948966;
  // clang-format off
  const Row rows[7] = {
      {"panda_joint1", "panda_link1", {0, 0, 0.333}, {0, 0, 0}, -2.8973, 2.8973, 87.0, 2.175,
       4.970684, {0.003875, 0.002081, -0.04762}, {0, 0, 0},
       0.70337, -0.000139, 0.006772, 0.70661, 0.019169, 0.009117},
      {"panda_joint2", "panda_link2", {0, 0, 0}, {-h, 0, 0}, -1.7628, 1.7628, 87.0, 2.175,
       0.646926, {-0.003141, -0.02872, 0.003495}, {0, 0, 0},
       0.007962, -0.003925, 0.010254, 0.02811, 0.000704, 0.025995},
      {"panda_joint3", "panda_link3", {0, -0.316, 0}, {h, 0, 0}, -2.8973, 2.8973, 87.0, 2.175,
       3.228604, {2.7518e-02, 3.9252e-02, -6.6502e-02}, {0, 0, 0},
       0.037242, -0.004761, -0.011396, 0.036155, -0.012805, 0.01083},
      {"panda_joint4", "panda_link4", {0.0825, 0, 0}, {h, 0, 0}, -3.0718, -0.0698, 87.0, 2.175,
       3.587895, {-5.317e-02, 1.04419e-01, 2.7454e-02}, {0, 0, 0},
       0.025853, 0.007796, -0.001332, 0.019552, 0.008641, 0.028323},
      {"panda_joint5", "panda_link5", {-0.0825, 0.384, 0}, {-h, 0, 0}, -2.8973, 2.8973, 12.0, 2.61,
       1.225946, {-1.1953e-02, 4.1065e-02, -3.8437e-02}, {0, 0, 0},
       0.035549, -0.002117, -0.004037, 0.029474, 0.000229, 0.008627},
      {"panda_joint6", "panda_link6", {0, 0, 0}, {h, 0, 0}, -0.0175, 3.7525, 12.0, 2.61,
       1.666555, {6.0149e-02, -1.4117e-02, -1.0517e-02}, {0, 0, 0},
       0.001964, 0.000109, -0.001158, 0.004354, 0.000341, 0.005433},
      {"panda_joint7", "panda_link7", {0.088, 0, 0}, {h, 0, 0}, -2.8973, 2.8973, 12.0, 2.61,
       0.735522, {1.0517e-02, -4.252e-03, 6.1597e-02}, {0, 0, 0},
       0.012516, -0.000428, -0.001196, 0.010027, -0.000741, 0.004815},
  };
  // clang-format on
  ModelSpec spec;
  spec.name = "panda";
  spec.gravity = Eigen::Vector3d(0.0, 0.0, -9.81);
  for (const Row& r : rows) {
    JointSpec j;
    j.name = r.joint;
    j.link = r.link;
    j.type = JointType::Revolute;
    j.origin = Eigen::Vector3d(r.xyz[0], r.xyz[1], r.xyz[2]);
    j.rotation = rpy(r.rpy[0], r.rpy[1], r.rpy[2]);
    j.axis = Eigen::Vector3d::UnitZ();
    j.lower = r.lower;
    j.upper = r.upper;
    j.effort_limit = r.effort;
    j.velocity_limit = r.velocity;
    j.mass = r.mass;
    j.com = Eigen::Vector3d(r.com[0], r.com[1], r.com[2]);
    Eigen::Matrix3d I;
    I << r.ixx, r.ixy, r.ixz, r.ixy, r.iyy, r.iyz, r.ixz, r.iyz, r.izz;
    // the inertia is given in the inertial frame; rotate it into the link frame
    const Eigen::Matrix3d Ri = rpy(r.com_rpy[0], r.com_rpy[1], r.com_rpy[2]);
    j.inertia = Ri * I * Ri.transpose();
    spec.joints.push_back(j);
  }
  spec.tip_rotation = Eigen::Matrix3d::Identity();
  spec.tip_origin = Eigen::Vector3d(0.0, 0.0, 0.107);  // panda_joint8, the flange
  return spec;
}

/// The chains of docs/design.md: n revolute joints with axes cycling z, y, x; links 0.1 m long (each joint
/// 0.1 m along its parent link's x axis from the previous one); 1 kg; mass center mid-link;
/// I = diag(0.01, 0.01, 0.005) about the mass center. The tip frame is at the end of the last link.
inline ModelSpec chainSpec(int n) {
  ModelSpec spec;
  spec.name = "chain" + std::to_string(n);
  spec.gravity = Eigen::Vector3d(0.0, 0.0, -9.81);
  const Eigen::Vector3d axes[3] = {Eigen::Vector3d::UnitZ(), Eigen::Vector3d::UnitY(),
                                   Eigen::Vector3d::UnitX()};
  for (int i = 0; i < n; ++i) {
    JointSpec j;
    j.name = "joint" + std::to_string(i + 1);
    j.link = "link" + std::to_string(i + 1);
    j.type = JointType::Revolute;
    j.origin = i == 0 ? Eigen::Vector3d::Zero() : Eigen::Vector3d(0.1, 0.0, 0.0);
    j.axis = axes[i % 3];
    j.mass = 1.0;
    j.com = Eigen::Vector3d(0.05, 0.0, 0.0);
    j.inertia = Eigen::Vector3d(0.01, 0.01, 0.005).asDiagonal();
    spec.joints.push_back(j);
  }
  spec.tip_origin = Eigen::Vector3d(0.1, 0.0, 0.0);
  return spec;
}

/// Chain sizes timed for every algorithm.
inline const std::vector<int>& chainSizes() {
  static const std::vector<int> sizes = {6, 12, 24, 48, 96, 192, 500};
  return sizes;
}

/// Extra chain sizes timed for the two forward-dynamics routes only, to locate their crossover.
inline const std::vector<int>& crossoverSizes() {
  static const std::vector<int> sizes = {3, 4, 5, 7, 8, 9, 10, 11, 13, 14, 15, 16, 18, 20, 22};
  return sizes;
}

}  // namespace denoc::bench
