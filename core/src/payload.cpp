#include "denoc/payload.hpp"

#include <cmath>
#include <sstream>
#include <stdexcept>
#include <string>

#include "serial_only.hpp"

namespace denoc {

namespace {

std::string num(double x) {
  std::ostringstream os;
  os.precision(17);
  os << x;
  return os.str();
}

/// Rotational inertia of a point mass m at d from the reference point: m (|d|^2 1 - d d^T).
Eigen::Matrix3d pointInertia(double m, const Eigen::Vector3d& d) {
  return m * (d.squaredNorm() * Eigen::Matrix3d::Identity() - d * d.transpose());
}

}  // namespace

void checkPayload(const Payload& p) {
  if (!std::isfinite(p.mass) || !(p.mass > 0.0)) {
    throw std::invalid_argument("payload: mass is " + num(p.mass) + ", expected a finite number > 0");
  }
  if (!p.com.allFinite()) throw std::invalid_argument("payload: mass centre has a non-finite entry");
  if (!p.inertia.allFinite()) throw std::invalid_argument("payload: inertia has a non-finite entry");
  if (p.inertia.isZero(0.0)) return;  // a point mass
  if (const std::string why = checkInertia(p.inertia); !why.empty()) {
    throw std::invalid_argument("payload: " + why);
  }
}

ModelSpec specWithPayload(const ModelSpec& spec, const Payload& payload) {
  checkPayload(payload);
  if (spec.joints.empty()) throw std::invalid_argument("payload: the model has no joints");
  ModelSpec out = spec;
  JointSpec& last = out.joints.back();
  // the payload in the last link's frame
  const Eigen::Vector3d c2 = spec.tip_origin + spec.tip_rotation * payload.com;
  const Eigen::Matrix3d I2 = spec.tip_rotation * payload.inertia * spec.tip_rotation.transpose();
  // the composite: mass, mass centre, inertia about it (parallel-axis theorem)
  const double m1 = last.mass, m2 = payload.mass, m = m1 + m2;
  const Eigen::Vector3d c = (m1 * last.com + m2 * c2) / m;
  const Eigen::Matrix3d I = last.inertia + pointInertia(m1, last.com - c) + I2 + pointInertia(m2, c2 - c);
  last.mass = m;
  last.com = c;
  last.inertia = 0.5 * (I + I.transpose());
  return out;
}

Model attachPayload(const Model& model, const Payload& payload) {
  detail::requireSerial(model, "attachPayload");
  const ModelSpec spec = specWithPayload(model.spec, payload);
  const int n = model.n;
  const auto k = static_cast<std::size_t>(n - 1);
  const JointSpec& composite = spec.joints.back();
  // the last link's constants in F_{n-1}, computed by buildModel on a one-joint chain whose frame is F_{n-1}
  // itself (joint frame = F_{n-1}, axis z; the last link's frame is not turned by the builder), from the
  // composite's data carried into F_{n-1} by the operations buildModel applies to the last link
  const Eigen::Matrix3d& Ra = model.axis_rotation[k];  // user link frame <- F_{n-1}
  const Eigen::Matrix3d sym = 0.5 * (composite.inertia + composite.inertia.transpose());
  ModelSpec one;
  one.name = spec.name;
  JointSpec j;
  j.name = composite.name;
  j.link = composite.link;
  j.type = composite.type;
  j.mass = composite.mass;
  j.com = Ra.transpose() * composite.com;
  j.inertia = Ra.transpose() * sym * Ra;
  j.armature = composite.armature;
  one.joints.push_back(j);
  const Model link = buildModel(one);

  Model out = model;
  out.mass[k] = link.mass[0];
  out.com[k] = link.com[0];
  out.inertia[k] = link.inertia[0];
  JointConstants<double>& jc = out.joint[k];
  const JointConstants<double>& lc = link.joint[0];
  jc.m = lc.m;
  jc.h = lc.h;
  jc.I_o = lc.I_o;
  jc.lambda = lc.lambda;
  jc.dv = lc.dv;
  out.fx_J[k] = link.fx_J[0];
  out.fx_Phi[k] = link.fx_Phi[0];
  // the sum of buildModel, in its order
  out.fx_log_det_links = 0.0;
  for (int i = 0; i < n; ++i) {
    const auto ui = static_cast<std::size_t>(i);
    out.fx_log_det_links += 3.0 * std::log(out.mass[ui]) + std::log(out.inertia[ui].determinant());
    if (out.armature[ui] > 0.0) out.fx_log_det_links += std::log(out.armature[ui]);
  }
  out.spec = spec;
  return out;
}

}  // namespace denoc
