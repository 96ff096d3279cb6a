#include "convert.hpp"

#include <utility>
#include <vector>

namespace denoc::server {

namespace {

using VecX = Eigen::VectorXd;

Eigen::Vector3d gravityOf(const v1::RegisterModelRequest& request) {
  return request.has_gravity() ? toVec3(request.gravity()) : Eigen::Vector3d(0.0, 0.0, -9.81);
}

JointType toJointType(v1::JointType type) {
  return type == v1::JOINT_TYPE_PRISMATIC ? JointType::Prismatic : JointType::Revolute;
}

}  // namespace

double* resized(google::protobuf::RepeatedField<double>* field, std::uint64_t n) {
  field->Resize(static_cast<int>(n), 0.0);
  return field->mutable_data();
}

Eigen::Vector3d toVec3(const v1::Vec3& v) { return {v.x(), v.y(), v.z()}; }

ForwardRoute toForwardRoute(v1::ForwardRoute route) {
  switch (route) {
    case v1::FORWARD_ROUTE_CHOLESKY:
      return ForwardRoute::Cholesky;
    case v1::FORWARD_ROUTE_FIXMAN:
      return ForwardRoute::Fixman;
    default:
      return ForwardRoute::Saha;
  }
}

DHSpec toDHSpec(const v1::RegisterModelRequest& request) {
  DHSpec dh;
  dh.name = request.has_name() ? request.name() : "dh_model";
  dh.gravity = gravityOf(request);
  for (const v1::DHLink& l : request.dh().links()) {
    DHLink o;
    o.joint = l.joint();
    o.link = l.link();
    o.type = toJointType(l.type());
    o.a = l.a();
    o.b = l.b();
    o.alpha = l.alpha();
    o.theta = l.theta();
    o.mass = l.mass();
    o.com = toVec3(l.com());
    const v1::Inertia& I = l.inertia();
    o.inertia << I.ixx(), I.ixy(), I.ixz(), I.ixy(), I.iyy(), I.iyz(), I.ixz(), I.iyz(), I.izz();
    // limits: absent means unlimited (the DHLink defaults)
    const v1::Limits& lim = l.limits();
    if (lim.has_lower()) o.lower = lim.lower();
    if (lim.has_upper()) o.upper = lim.upper();
    if (lim.has_velocity()) o.velocity_limit = lim.velocity();
    if (lim.has_effort()) o.effort_limit = lim.effort();
    o.armature = l.armature();
    dh.links.push_back(std::move(o));
  }
  return dh;
}

UrdfOptions toUrdfOptions(const v1::RegisterModelRequest& request) {
  UrdfOptions options;
  options.base_link = request.urdf().base_link();
  options.tip_link = request.urdf().tip_link();
  options.root = request.urdf().root() == v1::ROOT_JOINT_FLOATING ? RootJoint::Floating
                 : request.urdf().root() == v1::ROOT_JOINT_PLANAR ? RootJoint::Planar
                                                                  : RootJoint::Fixed;
  options.gravity = gravityOf(request);
  options.armature.assign(request.armature().begin(), request.armature().end());  // the core checks the count
  return options;
}

Payload toPayload(const v1::Payload& p) {
  Payload payload;
  payload.mass = p.mass();
  payload.com = toVec3(p.com());
  const v1::Inertia& i = p.inertia();
  payload.inertia << i.ixx(), i.ixy(), i.ixz(), i.ixy(), i.iyy(), i.iyz(), i.ixz(), i.iyz(), i.izz();
  return payload;
}

SimulationOptions toSimulationOptions(const v1::SimulateRequest& req, int n) {
  SimulationOptions o;
  o.integrator = req.integrator() == v1::INTEGRATOR_RK4 ? Integrator::RK4 : Integrator::DormandPrince45;
  o.route = toForwardRoute(req.route());
  o.t_end = req.t_end();
  if (req.dt_out() != 0.0) o.dt_out = req.dt_out();
  o.sample_times.assign(req.sample_times().begin(), req.sample_times().end());
  if (req.step() != 0.0) o.step = req.step();
  if (req.rtol() != 0.0) o.rtol = req.rtol();
  if (req.atol() != 0.0) o.atol = req.atol();
  o.initial_step = req.initial_step();
  if (req.max_step() != 0.0) o.max_step = req.max_step();
  if (req.max_steps() != 0) o.max_steps = static_cast<std::int64_t>(req.max_steps());
  const auto un = static_cast<std::size_t>(n);
  if (req.torque_times_size() == 0 && req.torque_values_size() != 0) {
    o.torque = TorqueInput::constant(Eigen::Map<const VecX>(req.torque_values().data(), n));
  } else if (req.torque_times_size() != 0) {
    std::vector<double> times(req.torque_times().begin(), req.torque_times().end());
    std::vector<VecX> values;
    for (int k = 0; k < req.torque_times_size(); ++k) {
      values.emplace_back(
          Eigen::Map<const VecX>(req.torque_values().data() + static_cast<std::size_t>(k) * un, n));
    }
    o.torque = TorqueInput::piecewiseLinear(std::move(times), std::move(values));
  }
  if (req.damping_size() != 0) o.damping = Eigen::Map<const VecX>(req.damping().data(), n);
  return o;
}

}  // namespace denoc::server
