// The planar two-link arm both consumers compute with, and its inverse dynamics in closed form (Lagrange's
// equations): the independent value the installed library's answers are checked against.
#pragma once

#include <cmath>
#include <sstream>
#include <string>

namespace consumer {

// links along x, joints about -y (the arm moves in the x-z plane, z up), gravity 9.81 along -z
constexpr double m1 = 2.0, m2 = 1.5;     // kg
constexpr double l1 = 0.6;               // m, joint 1 to joint 2
constexpr double lc1 = 0.3, lc2 = 0.25;  // m, joint to mass centre
constexpr double I1 = 0.05, I2 = 0.03;   // kg m^2, about the mass centre (all three axes)
constexpr double g = 9.81;

inline std::string urdf() {
  std::ostringstream os;
  const auto link = [&](const char* name, double m, double c, double I) {
    os << "<link name='" << name << "'><inertial><origin xyz='" << c << " 0 0'/><mass value='" << m
       << "'/><inertia ixx='" << I << "' iyy='" << I << "' izz='" << I
       << "' ixy='0' ixz='0' iyz='0'/></inertial></link>";
  };
  os << "<robot name='two_link'><link name='base'/>";
  link("link1", m1, lc1, I1);
  link("link2", m2, lc2, I2);
  os << "<joint name='j1' type='continuous'><parent link='base'/><child link='link1'/><axis xyz='0 -1 0'/>"
     << "</joint><joint name='j2' type='continuous'><parent link='link1'/><child link='link2'/>"
     << "<origin xyz='" << l1 << " 0 0'/><axis xyz='0 -1 0'/></joint></robot>";
  return os.str();
}

/// tau = M(q) qdd + C(q, qd) qd + g(q) of the planar 2R arm.
inline void closedForm(const double q[2], const double qd[2], const double qdd[2], double tau[2]) {
  const double c2 = std::cos(q[1]), s2 = std::sin(q[1]);
  const double M11 = I1 + I2 + m1 * lc1 * lc1 + m2 * (l1 * l1 + lc2 * lc2 + 2 * l1 * lc2 * c2);
  const double M12 = I2 + m2 * (lc2 * lc2 + l1 * lc2 * c2);
  const double M22 = I2 + m2 * lc2 * lc2;
  const double h = m2 * l1 * lc2 * s2;
  const double g1 = (m1 * lc1 + m2 * l1) * g * std::cos(q[0]) + m2 * lc2 * g * std::cos(q[0] + q[1]);
  const double g2 = m2 * lc2 * g * std::cos(q[0] + q[1]);
  tau[0] = M11 * qdd[0] + M12 * qdd[1] - h * (2 * qd[0] * qd[1] + qd[1] * qd[1]) + g1;
  tau[1] = M12 * qdd[0] + M22 * qdd[1] + h * qd[0] * qd[0] + g2;
}

}  // namespace consumer
