// Row-major wire arrays <-> Eigen, DH tables and model descriptions <-> messages.
#include <cmath>

#include "denoc/client/client.hpp"

namespace denoc::client::convert {

Eigen::MatrixXd rows(const double* data, int count, int dof) {
  using RowMajor = Eigen::Matrix<double, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor>;
  if (count <= 0 || dof <= 0) return Eigen::MatrixXd(std::max(count, 0), std::max(dof, 0));
  return Eigen::Map<const RowMajor>(data, count, dof);
}

void append(google::protobuf::RepeatedField<double>* out, const Eigen::MatrixXd& m) {
  out->Reserve(out->size() + static_cast<int>(m.size()));
  for (Eigen::Index i = 0; i < m.rows(); ++i) {
    for (Eigen::Index j = 0; j < m.cols(); ++j) out->Add(m(i, j));
  }
}

namespace {
v1::Vec3 vec3(const Eigen::Vector3d& v) {
  v1::Vec3 m;
  m.set_x(v.x());
  m.set_y(v.y());
  m.set_z(v.z());
  return m;
}
Eigen::VectorXd vector(const google::protobuf::RepeatedField<double>& f) {
  return f.empty() ? Eigen::VectorXd()
                   : Eigen::VectorXd(Eigen::Map<const Eigen::VectorXd>(f.data(), f.size()));
}
}  // namespace

v1::RegisterModelRequest dhRequest(const DHSpec& dh) {
  v1::RegisterModelRequest r;
  if (!dh.name.empty()) r.set_name(dh.name);
  *r.mutable_gravity() = vec3(dh.gravity);
  for (const DHLink& l : dh.links) {
    v1::DHLink* m = r.mutable_dh()->add_links();
    m->set_joint(l.joint);
    m->set_link(l.link);
    m->set_type(l.type == denoc::JointType::Revolute ? v1::JOINT_TYPE_REVOLUTE : v1::JOINT_TYPE_PRISMATIC);
    m->set_a(l.a);
    m->set_b(l.b);
    m->set_alpha(l.alpha);
    m->set_theta(l.theta);
    m->set_mass(l.mass);
    *m->mutable_com() = vec3(l.com);
    v1::Inertia* I = m->mutable_inertia();
    I->set_ixx(l.inertia(0, 0));
    I->set_ixy(l.inertia(0, 1));
    I->set_ixz(l.inertia(0, 2));
    I->set_iyy(l.inertia(1, 1));
    I->set_iyz(l.inertia(1, 2));
    I->set_izz(l.inertia(2, 2));
    if (!std::isinf(l.lower)) m->mutable_limits()->set_lower(l.lower);
    if (!std::isinf(l.upper)) m->mutable_limits()->set_upper(l.upper);
    if (!std::isinf(l.velocity_limit)) m->mutable_limits()->set_velocity(l.velocity_limit);
    if (!std::isinf(l.effort_limit)) m->mutable_limits()->set_effort(l.effort_limit);
    m->set_armature(l.armature);
  }
  return r;
}

ModelInfo modelInfo(const v1::ModelInfo& m) {
  ModelInfo info;
  info.model_id = m.model_id();
  info.name = m.name();
  info.dof = static_cast<int>(m.dof());
  info.joint_names.assign(m.joint_names().begin(), m.joint_names().end());
  info.link_names.assign(m.link_names().begin(), m.link_names().end());
  for (int t : m.joint_types()) {
    info.joint_types.push_back(t == v1::JOINT_TYPE_PRISMATIC ? JointType::Prismatic : JointType::Revolute);
  }
  info.gravity = Eigen::Vector3d(m.gravity().x(), m.gravity().y(), m.gravity().z());
  info.lower = vector(m.lower());
  info.upper = vector(m.upper());
  info.velocity_limit = vector(m.velocity_limit());
  info.effort_limit = vector(m.effort_limit());
  info.armature = vector(m.armature());
  info.pinned = m.pinned();
  info.source = m.source();
  return info;
}

}  // namespace denoc::client::convert
