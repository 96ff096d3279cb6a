#include "denoc/payload.hpp"

#include <cmath>
#include <stdexcept>
#include <string>

#include "format.hpp"

namespace denoc {

namespace {

/// Rotational inertia of a point mass m at d from the reference point: m (|d|^2 1 - d d^T).
Eigen::Matrix3d pointInertia(double m, const Eigen::Vector3d& d) {
  return m * (d.squaredNorm() * Eigen::Matrix3d::Identity() - d * d.transpose());
}

}  // namespace

void checkPayload(const Payload& p) {
  if (!std::isfinite(p.mass) || !(p.mass > 0.0)) {
    throw std::invalid_argument("payload: mass is " + detail::formatNumber17(p.mass) +
                                ", expected a finite number > 0");
  }
  if (!p.com.allFinite()) throw std::invalid_argument("payload: mass centre has a non-finite entry");
  if (!p.inertia.allFinite()) throw std::invalid_argument("payload: inertia has a non-finite entry");
  if (p.inertia.isZero(0.0)) return;  // a point mass
  if (const std::string why = checkInertia(p.inertia); !why.empty()) {
    throw std::invalid_argument("payload: " + why);
  }
}

namespace {

/// Merges a body (mass m2, mass centre c2, inertia I2 about it, all in a link's frame) into the link's
/// inertial data: mass added, mass centres combined, inertias moved to the common mass centre by the
/// parallel-axis theorem.
void merge(double& mass, Eigen::Vector3d& com, Eigen::Matrix3d& inertia, double m2, const Eigen::Vector3d& c2,
           const Eigen::Matrix3d& I2) {
  const double m1 = mass, m = m1 + m2;
  const Eigen::Vector3d c = (m1 * com + m2 * c2) / m;
  const Eigen::Matrix3d I = inertia + pointInertia(m1, com - c) + I2 + pointInertia(m2, c2 - c);
  mass = m;
  com = c;
  inertia = 0.5 * (I + I.transpose());
}

/// Checks a payload's frame index for a spec (the frames of frameIndex: 0..n-1 the links, n the tip, n + 1
/// the root link of a floating or planar root).
void checkPayloadFrame(const ModelSpec& spec, int frame) {
  const int n = static_cast<int>(spec.joints.size());
  if (frame < 0 || frame > n + 1) {
    throw std::invalid_argument("payload: frame is " + std::to_string(frame) + ", expected 0.." +
                                std::to_string(n + 1) + " (a link, " + std::to_string(n) +
                                " for the tip frame, " + std::to_string(n + 1) + " for the root link)");
  }
  if (frame == n + 1 && spec.root == RootJoint::Fixed) {
    throw std::invalid_argument("payload: frame " + std::to_string(frame) +
                                " is the root link of a fixed root, which does not move: a payload on it "
                                "changes no dynamics");
  }
  if (frame == n && n == 0 && spec.root == RootJoint::Fixed)
    throw std::invalid_argument("payload: the model has no joints");
}

}  // namespace

ModelSpec specWithPayload(const ModelSpec& spec, const Payload& payload) {
  return specWithPayload(spec, payload, static_cast<int>(spec.joints.size()));
}

ModelSpec specWithPayload(const ModelSpec& spec, const Payload& payload, int frame) {
  checkPayload(payload);
  checkPayloadFrame(spec, frame);
  const int n = static_cast<int>(spec.joints.size());
  ModelSpec out = spec;
  if (frame == n) {
    // the tip frame: the payload in the frame of the link that carries it (the last joint's, or the root
    // link of a model without joints)
    const Eigen::Vector3d c2 = spec.tip_origin + spec.tip_rotation * payload.com;
    const Eigen::Matrix3d I2 = spec.tip_rotation * payload.inertia * spec.tip_rotation.transpose();
    if (n > 0) {
      JointSpec& last = out.joints.back();
      merge(last.mass, last.com, last.inertia, payload.mass, c2, I2);
    } else {
      merge(out.root_mass, out.root_com, out.root_inertia, payload.mass, c2, I2);
    }
  } else if (frame == n + 1) {
    merge(out.root_mass, out.root_com, out.root_inertia, payload.mass, payload.com, payload.inertia);
  } else {
    JointSpec& link = out.joints[static_cast<std::size_t>(frame)];
    merge(link.mass, link.com, link.inertia, payload.mass, payload.com, payload.inertia);
  }
  return out;
}

Model attachPayload(const Model& model, const Payload& payload) {
  return attachPayload(model, payload, model.n);
}

Model attachPayload(const Model& model, const Payload& payload, int frame) {
  const int n = model.n;
  // a tree model, or a serial chain's link before the last: the spec with the payload, rebuilt
  if (!model.serial || frame < n - 1 || frame > n)
    return buildModel(specWithPayload(model.spec, payload, frame));
  const ModelSpec spec = specWithPayload(model.spec, payload, frame);
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
