#include "denoc/model.hpp"

#include <Eigen/Eigenvalues>
#include <Eigen/Geometry>
#include <charconv>
#include <cmath>
#include <cstdint>
#include <limits>
#include <set>
#include <sstream>
#include <stdexcept>

#include "denoc/data.hpp"
#include "denoc/stop.hpp"

namespace denoc {

template struct ModelTpl<double>;
template struct DataTpl<double>;

namespace {

std::string where(const JointSpec& j) { return "joint '" + j.name + "' (link '" + j.link + "')"; }

// the shortest text that reads back to x
std::string num(double x) {
  char buf[32];
  const auto r = std::to_chars(buf, buf + sizeof buf, x);
  return std::string(buf, r.ptr);
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

std::string checkNumber(double x, double lo, double hi, const char* unit) {
  if (std::isfinite(x) && x >= lo && x <= hi && (x == 0.0 || std::isnormal(x))) return {};
  std::string why = "is " + num(x) + ", expected ";
  if (std::isfinite(x) && x != 0.0 && !std::isnormal(x) && x >= lo && x <= hi) {
    return why + "0 or a normal number (this one is subnormal, below 2.2e-308 in magnitude)";
  }
  return why + "a number in [" + num(lo) + ", " + num(hi) + "]" + unit;
}

std::string checkName(const std::string& name) {
  if (name.size() <= kMaxNameLength) return {};
  return "name of " + std::to_string(name.size()) + " bytes ('" + name.substr(0, 40) +
         "...') is longer than the limit of " + std::to_string(kMaxNameLength) + " bytes";
}

std::string checkInertia(const Eigen::Matrix3d& inertia) {
  if (!inertia.allFinite()) return "inertia has a non-finite entry";
  const double scale = inertia.cwiseAbs().maxCoeff();
  if (scale == 0.0) return "inertia is zero";
  for (int r = 0; r < 3; ++r) {
    for (int c = 0; c < 3; ++c) {
      if (const std::string why = checkNumber(inertia(r, c), -kMaxInertia, kMaxInertia, " kg m^2");
          !why.empty()) {
        return "inertia entry (" + std::to_string(r + 1) + ", " + std::to_string(c + 1) + ") " + why;
      }
    }
  }
  if ((inertia - inertia.transpose()).cwiseAbs().maxCoeff() > 1e-9 * scale) return "inertia is not symmetric";
  const Eigen::SelfAdjointEigenSolver<Eigen::Matrix3d> es(0.5 * (inertia + inertia.transpose()),
                                                          Eigen::EigenvaluesOnly);
  const Eigen::Vector3d l = es.eigenvalues();  // ascending
  const std::string moments = " (principal moments " + num(l[0]) + ", " + num(l[1]) + ", " + num(l[2]) + ")";
  if (!(l[0] > 0.0)) return "inertia is not positive definite" + moments;
  if (l[0] < kMinInertia) {
    return "inertia's least principal moment is below the limit of " + num(kMinInertia) + " kg m^2" + moments;
  }
  if (l[2] > kMaxInertia) {
    return "inertia's largest principal moment is above the limit of " + num(kMaxInertia) + " kg m^2" +
           moments;
  }
  if (l[0] + l[1] < l[2] * (1.0 - 1e-9)) {
    return "inertia violates the triangle inequality (principal moments " + num(l[0]) + " + " + num(l[1]) +
           " < " + num(l[2]) + ")";
  }
  return {};
}

Model buildModel(const ModelSpec& input, const StopCondition* stop) {
  ModelSpec spec = input;
  const int n = static_cast<int>(spec.joints.size());
  if (const std::string why = checkName(spec.name); !why.empty()) throw ModelError("model " + why);
  if (n == 0) throw ModelError("model '" + spec.name + "' has no joints");
  if (!spec.gravity.allFinite()) throw ModelError("gravity has a non-finite entry");
  for (int k = 0; k < 3; ++k) {
    if (const std::string why = checkNumber(spec.gravity[k], -kMaxGravity, kMaxGravity, " m/s^2");
        !why.empty())
      throw ModelError("gravity[" + std::to_string(k) + "] " + why);
  }

  // why a vector's first entry out of [-bound, bound] is, or an empty string
  const auto vectorWhy = [](const Eigen::Vector3d& v, double bound) -> std::string {
    for (int k = 0; k < 3; ++k) {
      if (std::string why = checkNumber(v[k], -bound, bound, " m"); !why.empty()) {
        std::string r(1, '[');  // appended: GCC 12 warns falsely on "literal" + std::string&&
        r += std::to_string(k);
        r += "] ";
        r += why;
        return r;
      }
    }
    return {};
  };

  std::set<std::string> names;
  for (int i = 0; i < n; ++i) {
    if (stop && stop->stopRequested()) stop->raise("buildModel", static_cast<std::uint64_t>(i), n, "joints");
    JointSpec& j = spec.joints[static_cast<std::size_t>(i)];
    if (const std::string why = checkName(j.name); !why.empty())
      throw ModelError("joint " + std::to_string(i + 1) + ": joint " + why);
    if (const std::string why = checkName(j.link); !why.empty())
      throw ModelError("joint '" + j.name + "': link " + why);
    if (j.name.empty()) j.name = "joint" + std::to_string(i + 1);
    if (j.link.empty()) j.link = "link" + std::to_string(i + 1);
    const std::string who = where(j);
    if (!names.insert(j.name).second) throw ModelError(who + ": joint name is used twice");
    checkRotation(j.rotation, who, "joint rotation");
    if (!j.origin.allFinite()) throw ModelError(who + ": joint origin has a non-finite entry");
    if (const std::string why = vectorWhy(j.origin, kMaxLength); !why.empty())
      throw ModelError(who + ": joint origin" + why);
    if (!j.axis.allFinite()) throw ModelError(who + ": axis has a non-finite entry");
    // scaled first: the norm of an axis such as (1e300, 1e300, 0) overflows
    const double axis_scale = j.axis.cwiseAbs().maxCoeff();
    if (!(axis_scale > 0.0)) throw ModelError(who + ": axis is zero");
    j.axis /= axis_scale;
    j.axis.normalize();
    if (!std::isfinite(j.mass) || !(j.mass > 0.0)) {
      throw ModelError(who + ": mass is " + num(j.mass) + ", expected a finite number > 0");
    }
    if (const std::string why = checkNumber(j.mass, kMinMass, kMaxMass, " kg"); !why.empty())
      throw ModelError(who + ": mass " + why);
    if (!j.com.allFinite()) throw ModelError(who + ": mass center has a non-finite entry");
    if (const std::string why = vectorWhy(j.com, kMaxLength); !why.empty())
      throw ModelError(who + ": mass center" + why);
    if (const std::string why = checkInertia(j.inertia); !why.empty()) throw ModelError(who + ": " + why);
    j.inertia = 0.5 * (j.inertia + j.inertia.transpose());
    if (std::isnan(j.lower) || std::isnan(j.upper) || j.lower > j.upper ||
        j.lower == std::numeric_limits<double>::infinity() ||
        j.upper == -std::numeric_limits<double>::infinity()) {
      throw ModelError(who + ": position limits [" + num(j.lower) + ", " + num(j.upper) +
                       "] are invalid (expected lower <= upper, lower < +inf, upper > -inf, no NaN)");
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
    if (const std::string why = checkNumber(j.armature, 0.0, kMaxArmature); !why.empty())
      throw ModelError(who + ": armature " + why);
  }
  checkRotation(spec.tip_rotation, "tip frame", "rotation");
  if (!spec.tip_origin.allFinite()) throw ModelError("tip frame: origin has a non-finite entry");
  if (const std::string why = vectorWhy(spec.tip_origin, kMaxLength); !why.empty())
    throw ModelError("tip frame: origin" + why);

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
