#include "denoc/dh.hpp"

#include <Eigen/Geometry>
#include <cmath>
#include <numbers>
#include <string>

#include "denoc/stop.hpp"

namespace denoc {

namespace {
Eigen::Matrix3d rotX(double a) { return Eigen::AngleAxisd(a, Eigen::Vector3d::UnitX()).toRotationMatrix(); }
Eigen::Matrix3d rotZ(double a) { return Eigen::AngleAxisd(a, Eigen::Vector3d::UnitZ()).toRotationMatrix(); }
}  // namespace

ModelSpec specFromDH(const DHSpec& dh, const StopCondition* stop) {
  // Link frame L_i = frame_i Rz(theta_i) Tz(b_i): it moves with joint i, its z axis is joint i's axis.
  // Joint i's frame at q = 0 in L_{i-1} is Tx(a_{i-1}) Rx(alpha_{i-1}) Rz(theta_i) Tz(b_i) with the offsets.
  // Frame i+1 (where link i's inertial data are given) is L_i Tx(a_i) Rx(alpha_i).
  if (const std::string why = checkName(dh.name); !why.empty()) throw ModelError("DH model " + why);
  ModelSpec spec;
  spec.name = dh.name;
  spec.gravity = dh.gravity;
  double a_prev = 0.0;
  double alpha_prev = 0.0;
  for (std::size_t k = 0; k < dh.links.size(); ++k) {
    if (stop && stop->stopRequested()) stop->raise("specFromDH", k, dh.links.size(), "links");
    const DHLink& l = dh.links[k];
    JointSpec j;
    if (const std::string why = checkName(l.joint); !why.empty())
      throw ModelError("DH link " + std::to_string(k + 1) + ": joint " + why);
    if (const std::string why = checkName(l.link); !why.empty())
      throw ModelError("DH link " + std::to_string(k + 1) + ": link " + why);
    j.name = l.joint.empty() ? "joint" + std::to_string(k + 1) : l.joint;
    j.link = l.link.empty() ? "link" + std::to_string(k + 1) : l.link;
    // the DH numbers themselves, named as the table names them (buildModel checks what they become)
    const std::string who = "joint '" + j.name + "' (link '" + j.link + "'): DH ";
    const struct {
      const char* field;
      double value, bound;
      const char* unit;
    } numbers[] = {{"a", l.a, kMaxLength, " m"},
                   {"b", l.b, kMaxLength, " m"},
                   {"alpha", l.alpha, kMaxAngle, " rad"},
                   {"theta", l.theta, kMaxAngle, " rad"},
                   {"com[0]", l.com.x(), kMaxLength, " m"},
                   {"com[1]", l.com.y(), kMaxLength, " m"},
                   {"com[2]", l.com.z(), kMaxLength, " m"}};
    for (const auto& x : numbers) {
      if (const std::string why = checkNumber(x.value, -x.bound, x.bound, x.unit); !why.empty())
        throw ModelError(who + x.field + " " + why);
    }
    j.type = l.type;
    const Eigen::Matrix3d Rx_prev = rotX(alpha_prev);
    j.rotation = Rx_prev * rotZ(l.theta);
    j.origin = Eigen::Vector3d(a_prev, 0.0, 0.0) + Rx_prev * Eigen::Vector3d(0.0, 0.0, l.b);
    j.axis = Eigen::Vector3d::UnitZ();
    const Eigen::Matrix3d Rx = rotX(l.alpha);
    j.mass = l.mass;
    j.com = Eigen::Vector3d(l.a, 0.0, 0.0) + Rx * l.com;
    j.inertia = Rx * l.inertia * Rx.transpose();
    j.lower = l.lower;
    j.upper = l.upper;
    j.velocity_limit = l.velocity_limit;
    j.effort_limit = l.effort_limit;
    j.armature = l.armature;
    spec.joints.push_back(j);
    a_prev = l.a;
    alpha_prev = l.alpha;
  }
  spec.tip_rotation = rotX(alpha_prev);
  spec.tip_origin = Eigen::Vector3d(a_prev, 0.0, 0.0);
  return spec;
}

Model buildModelFromDH(const DHSpec& dh, const StopCondition* stop) {
  return buildModel(specFromDH(dh, stop), stop);
}

DHSpec stanfordArmDH() {
  constexpr double deg = std::numbers::pi / 180.0;
  struct Row {
    JointType type;
    double b, alpha, m;
    Eigen::Vector3d r;  // the paper's vector from C_i to O_{i+1}, frame i+1
    Eigen::Vector3d I;  // principal moments about C_i along frame i+1's axes
  };
  const JointType R = JointType::Revolute;
  const JointType P = JointType::Prismatic;
  const Row rows[6] = {
      {R, 0.2, -90 * deg, 9.0, {0, -0.1, 0}, {0.01, 0.02, 0.01}},
      {R, 0.1, 90 * deg, 6.0, {0, 0, 0}, {0.05, 0.06, 0.01}},
      {P, 0.0, 0.0, 4.0, {0, 0, 0}, {0.4, 0.4, 0.01}},
      {R, 0.6, 90 * deg, 1.0, {0, 0.1, 0}, {0.001, 0.001, 0.0005}},
      {R, 0.0, -90 * deg, 0.6, {0, 0, 0}, {0.0005, 0.0005, 0.0002}},
      {R, 0.0, 0.0, 0.5, {0, 0, 0}, {0.003, 0.001, 0.002}},
  };
  DHSpec dh;
  dh.name = "stanford_arm";
  dh.gravity = Eigen::Vector3d(0.0, 0.0, -9.81);
  for (int i = 0; i < 6; ++i) {
    DHLink l;
    l.type = rows[i].type;
    l.a = 0.0;
    l.b = rows[i].b;  // b_3 = q3 for the prismatic joint (offset 0)
    l.alpha = rows[i].alpha;
    l.theta = 0.0;
    l.mass = rows[i].m;
    l.com = -rows[i].r;
    l.inertia = rows[i].I.asDiagonal();
    dh.links.push_back(l);
  }
  return dh;
}

DHSpec planarArmDH() {
  const double length[3] = {0.3, 0.25, 0.2};
  const double mass[3] = {1.0, 0.8, 0.5};
  const double width = 0.04;
  DHSpec dh;
  dh.name = "planar_3r";
  dh.gravity = Eigen::Vector3d(0.0, -9.81, 0.0);
  for (int i = 0; i < 3; ++i) {
    DHLink l;
    l.type = JointType::Revolute;
    l.a = length[i];
    // frame i+1 sits at the link's far end with X_{i+1} along the link: the mass center is half a length back
    l.com = Eigen::Vector3d(-0.5 * length[i], 0.0, 0.0);
    const double m = mass[i];
    const double a2 = length[i] * length[i];
    const double w2 = width * width;
    l.mass = m;
    l.inertia =
        Eigen::Vector3d(m * (w2 + w2) / 12.0, m * (a2 + w2) / 12.0, m * (a2 + w2) / 12.0).asDiagonal();
    dh.links.push_back(l);
  }
  return dh;
}

}  // namespace denoc
