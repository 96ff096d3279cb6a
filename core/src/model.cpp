#include "denoc/model.hpp"

#include <Eigen/Eigenvalues>
#include <Eigen/Geometry>
#include <cmath>
#include <set>
#include <sstream>

#include "denoc/data.hpp"

namespace denoc {

template struct ModelTpl<double>;
template struct DataTpl<double>;

namespace {

std::string where(const JointSpec& j) {
  return "joint '" + j.name + "' (link '" + j.link + "')";
}

std::string num(double x) {
  std::ostringstream os;
  os.precision(17);
  os << x;
  return os.str();
}

bool finite(const Eigen::MatrixXd& m) { return m.allFinite(); }

// rotation Ra with Ra * z = a (a unit)
Eigen::Matrix3d alignZ(const Eigen::Vector3d& a) {
  return Eigen::Quaterniond::FromTwoVectors(Eigen::Vector3d::UnitZ(), a).toRotationMatrix();
}

void checkRotation(const Eigen::Matrix3d& R, const std::string& who, const std::string& what) {
  if (!finite(R)) throw ModelError(who + ": " + what + " has a non-finite entry");
  if ((R.transpose() * R - Eigen::Matrix3d::Identity()).cwiseAbs().maxCoeff() > 1e-9 || R.determinant() < 0) {
    throw ModelError(who + ": " + what + " is not a proper rotation (orthonormal, determinant +1)");
  }
}

}  // namespace

std::string checkInertia(const Eigen::Matrix3d& inertia) {
  if (!inertia.allFinite()) return "inertia has a non-finite entry";
  const double scale = inertia.cwiseAbs().maxCoeff();
  if (scale == 0.0) return "inertia is zero";
  if ((inertia - inertia.transpose()).cwiseAbs().maxCoeff() > 1e-9 * scale) return "inertia is not symmetric";
  const Eigen::SelfAdjointEigenSolver<Eigen::Matrix3d> es(0.5 * (inertia + inertia.transpose()),
                                                          Eigen::EigenvaluesOnly);
  const Eigen::Vector3d l = es.eigenvalues();  // ascending
  if (!(l[0] > 0.0)) {
    return "inertia is not positive definite (principal moments " + num(l[0]) + ", " + num(l[1]) + ", " +
           num(l[2]) + ")";
  }
  if (l[0] + l[1] < l[2] * (1.0 - 1e-9)) {
    return "inertia violates the triangle inequality (principal moments " + num(l[0]) + " + " + num(l[1]) +
           " < " + num(l[2]) + ")";
  }
  return {};
}

Model buildModel(const ModelSpec& input) {
  ModelSpec spec = input;
  const int n = static_cast<int>(spec.joints.size());
  if (n == 0) throw ModelError("model '" + spec.name + "' has no joints");
  if (!spec.gravity.allFinite()) throw ModelError("gravity has a non-finite entry");

  std::set<std::string> names;
  for (int i = 0; i < n; ++i) {
    JointSpec& j = spec.joints[static_cast<std::size_t>(i)];
    if (j.name.empty()) j.name = "joint" + std::to_string(i + 1);
    if (j.link.empty()) j.link = "link" + std::to_string(i + 1);
    const std::string who = where(j);
    if (!names.insert(j.name).second) throw ModelError(who + ": joint name is used twice");
    checkRotation(j.rotation, who, "joint rotation");
    if (!j.origin.allFinite()) throw ModelError(who + ": joint origin has a non-finite entry");
    if (!j.axis.allFinite()) throw ModelError(who + ": axis has a non-finite entry");
    const double axis_norm = j.axis.norm();
    if (!(axis_norm > 1e-12)) throw ModelError(who + ": axis is zero");
    j.axis /= axis_norm;
    if (!std::isfinite(j.mass) || !(j.mass > 0.0)) {
      throw ModelError(who + ": mass is " + num(j.mass) + ", expected a finite number > 0");
    }
    if (!j.com.allFinite()) throw ModelError(who + ": mass center has a non-finite entry");
    if (const std::string why = checkInertia(j.inertia); !why.empty()) throw ModelError(who + ": " + why);
    j.inertia = 0.5 * (j.inertia + j.inertia.transpose());
    if (std::isnan(j.lower) || std::isnan(j.upper) || j.lower > j.upper) {
      throw ModelError(who + ": position limits [" + num(j.lower) + ", " + num(j.upper) + "] are invalid");
    }
    if (std::isnan(j.velocity_limit) || !(j.velocity_limit > 0.0)) {
      throw ModelError(who + ": velocity limit is " + num(j.velocity_limit) + ", expected > 0");
    }
    if (std::isnan(j.effort_limit) || !(j.effort_limit > 0.0)) {
      throw ModelError(who + ": effort limit is " + num(j.effort_limit) + ", expected > 0");
    }
    if (!std::isfinite(j.armature) || j.armature < 0.0) {
      throw ModelError(who + ": armature is " + num(j.armature) + ", expected a finite number >= 0");
    }
  }
  checkRotation(spec.tip_rotation, "tip frame", "rotation");
  if (!spec.tip_origin.allFinite()) throw ModelError("tip frame: origin has a non-finite entry");

  Model m;
  m.n = n;
  Eigen::Matrix3d Ra_parent = Eigen::Matrix3d::Identity();
  for (int i = 0; i < n; ++i) {
    const JointSpec& j = spec.joints[static_cast<std::size_t>(i)];
    const Eigen::Matrix3d Ra = alignZ(j.axis);  // joint (link) frame <- F_i
    m.parent.push_back(i - 1);
    m.type.push_back(j.type);
    m.E.push_back(Ra_parent.transpose() * j.rotation * Ra);
    m.s.push_back(Ra_parent.transpose() * j.origin);
    m.mass.push_back(j.mass);
    m.com.push_back(Ra.transpose() * j.com);
    m.inertia.push_back(Ra.transpose() * j.inertia * Ra);
    m.armature.push_back(j.armature);
    m.axis_rotation.push_back(Ra);
    Ra_parent = Ra;
  }
  m.gravity = spec.gravity;
  m.tip_rotation = Ra_parent.transpose() * spec.tip_rotation;
  m.tip_origin = Ra_parent.transpose() * spec.tip_origin;
  m.spec = std::move(spec);
  return m;
}

}  // namespace denoc
