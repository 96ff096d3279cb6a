#include "denoc/configuration.hpp"

#include <Eigen/Geometry>
#include <cmath>
#include <stdexcept>

#include "denoc/algorithm/check.hpp"

namespace denoc {

namespace {

// the quaternion of q[3..7) (vector part first) as Eigen's (w first internally)
Eigen::Quaterniond rootQuaternion(const Eigen::VectorXd& q) {
  return Eigen::Quaterniond(q[6], q[3], q[4], q[5]).normalized();
}

void setRootQuaternion(Eigen::VectorXd& q, const Eigen::Quaterniond& r) {
  q[3] = r.x();
  q[4] = r.y();
  q[5] = r.z();
  q[6] = r.w();
}

// exp of a rotation vector and its log (|w| <= pi)
Eigen::Quaterniond expRotation(const Eigen::Vector3d& w) {
  const double angle = w.norm();
  if (angle < 1e-300) return Eigen::Quaterniond::Identity();
  return Eigen::Quaterniond(Eigen::AngleAxisd(angle, w / angle));
}

Eigen::Vector3d logRotation(Eigen::Quaterniond r) {
  if (r.w() < 0.0) r.coeffs() = -r.coeffs();  // the shorter way round
  const double s = r.vec().norm();
  if (s < 1e-300) return 2.0 * r.vec();
  return 2.0 * std::atan2(s, r.w()) * r.vec() / s;
}

}  // namespace

void checkConfiguration(const Model& model, const Eigen::Ref<const Eigen::VectorXd>& q, const char* function,
                        const char* name) {
  detail::checkConfigurationVector(model, q, function, name);
}

Eigen::VectorXd neutralConfiguration(const Model& model) {
  Eigen::VectorXd q = Eigen::VectorXd::Zero(model.nq);
  if (model.root == RootJoint::Floating) q[6] = 1.0;
  for (int i = 0; i < model.n; ++i) {
    const JointSpec& j = model.spec.joints[static_cast<std::size_t>(i)];
    q[model.nqr + i] = std::min(std::max(0.0, j.lower), j.upper);
  }
  return q;
}

Eigen::VectorXd normalizeConfiguration(const Model& model, const Eigen::VectorXd& q) {
  checkConfiguration(model, q, "normalizeConfiguration");
  Eigen::VectorXd out = q;
  if (model.root == RootJoint::Floating) out.segment<4>(3) /= q.segment<4>(3).norm();
  return out;
}

Eigen::VectorXd integrateConfiguration(const Model& model, const Eigen::VectorXd& q, const Eigen::VectorXd& v,
                                       double dt) {
  checkConfiguration(model, q, "integrateConfiguration");
  detail::checkVector(model, v, "integrateConfiguration", "v");
  if (!std::isfinite(dt)) throw std::invalid_argument("integrateConfiguration: dt is not finite");
  Eigen::VectorXd out = q;
  if (model.root == RootJoint::Floating) {
    const Eigen::Quaterniond r = rootQuaternion(q);
    out.head<3>() = q.head<3>() + r.toRotationMatrix() * (v.segment<3>(3) * dt);
    setRootQuaternion(out, (r * expRotation(v.head<3>() * dt)).normalized());
  } else if (model.root == RootJoint::Planar) {
    out.head<3>() += v.head<3>() * dt;
  }
  out.tail(model.n) += v.tail(model.n) * dt;
  return out;
}

Eigen::VectorXd differenceConfiguration(const Model& model, const Eigen::VectorXd& q0,
                                        const Eigen::VectorXd& q1) {
  checkConfiguration(model, q0, "differenceConfiguration", "q0");
  checkConfiguration(model, q1, "differenceConfiguration", "q1");
  Eigen::VectorXd v(model.nv);
  if (model.root == RootJoint::Floating) {
    const Eigen::Quaterniond r0 = rootQuaternion(q0);
    v.head<3>() = logRotation(r0.conjugate() * rootQuaternion(q1));
    v.segment<3>(3) = r0.toRotationMatrix().transpose() * (q1.head<3>() - q0.head<3>());
  } else if (model.root == RootJoint::Planar) {
    v.head<3>() = q1.head<3>() - q0.head<3>();
  }
  v.tail(model.n) = q1.tail(model.n) - q0.tail(model.n);
  return v;
}

Eigen::VectorXd randomConfiguration(const Model& model, std::mt19937_64& rng) {
  std::uniform_real_distribution<double> unit(-1.0, 1.0);
  std::normal_distribution<double> gauss(0.0, 1.0);
  Eigen::VectorXd q = neutralConfiguration(model);
  if (model.root == RootJoint::Floating) {
    for (int k = 0; k < 3; ++k) q[k] = unit(rng);
    Eigen::Vector4d x;
    do {
      for (int k = 0; k < 4; ++k) x[k] = gauss(rng);
    } while (x.norm() < 1e-6);
    q.segment<4>(3) = x.normalized();  // uniform over the unit sphere of quaternions
  } else if (model.root == RootJoint::Planar) {
    q[0] = unit(rng);
    q[1] = unit(rng);
    q[2] = M_PI * unit(rng);
  }
  for (int i = 0; i < model.n; ++i) {
    const JointSpec& j = model.spec.joints[static_cast<std::size_t>(i)];
    double lo = j.type == JointType::Revolute ? -M_PI : -1.0, hi = -lo;
    if (std::isfinite(j.lower) && std::isfinite(j.upper)) {
      lo = j.lower;
      hi = j.upper;
    }
    q[model.nqr + i] = lo + (hi - lo) * 0.5 * (unit(rng) + 1.0);
  }
  return q;
}

}  // namespace denoc
