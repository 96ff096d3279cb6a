#include "denoc/model.hpp"

#include <Eigen/Eigenvalues>
#include <Eigen/Geometry>
#include <cmath>
#include <set>
#include <sstream>
#include <stdexcept>

#include "denoc/data.hpp"

namespace denoc {

template struct ModelTpl<double>;
template struct DataTpl<double>;

namespace {

std::string where(const JointSpec& j) { return "joint '" + j.name + "' (link '" + j.link + "')"; }

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
    const Eigen::Matrix3d Ra = alignZ(j.axis);  // joint (link) frame <- F_i (before the turn below)
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
  m.tip_rotation = Ra_parent.transpose() * spec.tip_rotation;
  m.tip_origin = Ra_parent.transpose() * spec.tip_origin;

  // frame choice (model.hpp): turn F_{i-1} about its z axis so that its x axis is normal to joint i's axis
  // too. With u = E_i z (joint i's axis in F_{i-1}), Rz(phi)^T u has no x component for
  // (cos phi, sin phi) = (-u_y, u_x) / |(u_x, u_y)|. turn[i + 1] is F_i before <- F_i after (i = -1: the
  // base); the last link keeps its frame.
  std::vector<Eigen::Matrix3d> turn(static_cast<std::size_t>(n) + 1, Eigen::Matrix3d::Identity());
  for (int i = 0; i < n; ++i) {
    const Eigen::Vector3d u = m.E[static_cast<std::size_t>(i)].col(2);
    const double r = std::hypot(u.x(), u.y());
    if (r > 0.0) {
      Eigen::Matrix3d& T = turn[static_cast<std::size_t>(i)];
      const double c = -u.y() / r, sn = u.x() / r;
      T << c, -sn, 0.0, sn, c, 0.0, 0.0, 0.0, 1.0;
    }
  }
  for (int i = 0; i < n; ++i) {
    const auto ui = static_cast<std::size_t>(i);
    const Eigen::Matrix3d& before = turn[ui];     // F_{i-1}
    const Eigen::Matrix3d& after = turn[ui + 1];  // F_i
    const Eigen::Matrix3d Et = before.transpose() * m.E[ui] * after;
    // Et = Rx(alpha) Rz(theta0) = [[c0, -s0, 0], [ca s0, ca c0, -sa], [sa s0, sa c0, ca]] up to rounding
    const double norm_a = std::hypot(Et(2, 2), Et(1, 2));
    const double norm_t = std::hypot(Et(0, 0), Et(0, 1));
    JointConstants<double> jc;
    jc.cos_alpha = Et(2, 2) / norm_a;
    jc.sin_alpha = -Et(1, 2) / norm_a;
    jc.cos_theta0 = Et(0, 0) / norm_t;
    jc.sin_theta0 = -Et(0, 1) / norm_t;
    jc.theta0 = std::atan2(jc.sin_theta0, jc.cos_theta0);
    Eigen::Matrix3d Rx, Rz;
    Rx << 1.0, 0.0, 0.0, 0.0, jc.cos_alpha, -jc.sin_alpha, 0.0, jc.sin_alpha, jc.cos_alpha;
    Rz << jc.cos_theta0, -jc.sin_theta0, 0.0, jc.sin_theta0, jc.cos_theta0, 0.0, 0.0, 0.0, 1.0;
    const Eigen::Matrix3d E = Rx * Rz;
    if (!((E - Et).cwiseAbs().maxCoeff() < 1e-8)) {
      throw std::logic_error(where(spec.joints[ui]) + ": internal error: the joint rotation has no DH form");
    }
    m.E[ui] = E;
    m.s[ui] = before.transpose() * m.s[ui];
    m.com[ui] = after.transpose() * m.com[ui];
    m.inertia[ui] = after.transpose() * m.inertia[ui] * after;
    m.inertia[ui] = 0.5 * (m.inertia[ui] + m.inertia[ui].transpose()).eval();
    m.axis_rotation[ui] = m.axis_rotation[ui] * after;
    jc.s = m.s[ui];
    jc.m = m.mass[ui];
    jc.h = jc.m * m.com[ui];
    jc.I_o = Sym3<double>::fromMatrix(
        m.inertia[ui] +
        jc.m * (m.com[ui].squaredNorm() * Eigen::Matrix3d::Identity() - m.com[ui] * m.com[ui].transpose()));
    {
      const Eigen::SelfAdjointEigenSolver<Eigen::Matrix3d> es(m.inertia[ui]);
      const Eigen::Vector3d l = es.eigenvalues();  // ascending
      const Eigen::Matrix3d& u = es.eigenvectors();
      jc.lambda = l[0];
      jc.dv.col(0) = m.com[ui];
      jc.dv.col(1) = std::sqrt(std::max(0.0, l[1] - l[0])) * u.col(1);
      jc.dv.col(2) = std::sqrt(std::max(0.0, l[2] - l[0])) * u.col(2);
    }
    jc.armature = m.armature[ui];
    jc.revolute = m.type[ui] == JointType::Revolute;
    m.has_prismatic = m.has_prismatic || !jc.revolute;
    m.joint.push_back(jc);
  }
  // Fixman's constants: Phi = [[J, -J (c x)], [(c x) J, -(c x) J (c x) + 1/m]], J = I^-1, c = d_i
  m.fx_log_det_links = 0.0;
  for (int i = 0; i < n; ++i) {
    const auto ui = static_cast<std::size_t>(i);
    const Eigen::Matrix3d J = m.inertia[ui].inverse();
    Eigen::Matrix3d cx;
    const Eigen::Vector3d& c = m.com[ui];
    cx << 0.0, -c.z(), c.y(), c.z(), 0.0, -c.x(), -c.y(), c.x(), 0.0;
    const Eigen::Matrix3d Jcx = J * cx;
    Eigen::Matrix<double, 6, 6> Phi;
    Phi.topLeftCorner<3, 3>() = J;
    Phi.topRightCorner<3, 3>() = -Jcx;
    Phi.bottomLeftCorner<3, 3>() = -Jcx.transpose();
    Phi.bottomRightCorner<3, 3>() = -cx * Jcx;
    Phi.bottomRightCorner<3, 3>().diagonal().array() += 1.0 / m.mass[ui];
    m.fx_J.push_back(J);
    m.fx_Phi.push_back(Phi);
    m.fx_log_det_links += 3.0 * std::log(m.mass[ui]) + std::log(m.inertia[ui].determinant());
    if (m.armature[ui] > 0.0) m.fx_log_det_links += std::log(m.armature[ui]);
  }

  const Eigen::Matrix3d& last = turn[static_cast<std::size_t>(n)];
  m.tip_rotation = last.transpose() * m.tip_rotation;
  m.tip_origin = last.transpose() * m.tip_origin;
  m.base_rotation = turn[0];
  m.gravity = spec.gravity;
  m.gravity_base = turn[0].transpose() * spec.gravity;
  m.spec = std::move(spec);
  return m;
}

}  // namespace denoc
