// Row-major wire arrays <-> Eigen, DH tables, payloads and model descriptions <-> messages.
#include "denoc/client/convert.hpp"

#include <algorithm>
#include <cmath>
#include <string>
#include <utility>

#include "convert_internal.hpp"
#include "denoc/client/errors.hpp"

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

Eigen::Vector3d vec3(const v1::Vec3& v) { return {v.x(), v.y(), v.z()}; }

v1::Vec3 vec3(const Eigen::Vector3d& v) {
  v1::Vec3 m;
  m.set_x(v.x());
  m.set_y(v.y());
  m.set_z(v.z());
  return m;
}

v1::Inertia inertia(const Eigen::Matrix3d& m) {
  v1::Inertia i;
  i.set_ixx(m(0, 0));
  i.set_ixy(m(0, 1));
  i.set_ixz(m(0, 2));
  i.set_iyy(m(1, 1));
  i.set_iyz(m(1, 2));
  i.set_izz(m(2, 2));
  return i;
}

void writePayload(v1::Payload* out, const Payload& p) {
  out->set_mass(p.mass);
  *out->mutable_com() = vec3(p.com);
  *out->mutable_inertia() = inertia(p.inertia);
  out->set_link(p.link);
}

void appendWrenches(google::protobuf::RepeatedPtrField<v1::LinkWrench>* out,
                    const std::vector<LinkWrench>& wrenches) {
  for (const LinkWrench& w : wrenches) {
    v1::LinkWrench* m = out->Add();
    m->set_link(w.link);
    m->set_reference(w.reference == Reference::Local ? v1::REFERENCE_FRAME_LOCAL : v1::REFERENCE_FRAME_BASE);
    append(m->mutable_wrench(), w.wrench);
  }
}

v1::RootJoint wireRoot(RootJoint root) {
  switch (root) {
    case RootJoint::Floating:
      return v1::ROOT_JOINT_FLOATING;
    case RootJoint::Planar:
      return v1::ROOT_JOINT_PLANAR;
    case RootJoint::Fixed:
      break;
  }
  return v1::ROOT_JOINT_FIXED;
}

v1::ForwardRoute wireRoute(Route r) {
  switch (r) {
    case Route::Fixman:
      return v1::FORWARD_ROUTE_FIXMAN;
    case Route::Cholesky:
      return v1::FORWARD_ROUTE_CHOLESKY;
    case Route::Saha:
      break;
  }
  return v1::FORWARD_ROUTE_SAHA;
}

Route route(v1::ForwardRoute r) {
  return r == v1::FORWARD_ROUTE_FIXMAN     ? Route::Fixman
         : r == v1::FORWARD_ROUTE_CHOLESKY ? Route::Cholesky
                                           : Route::Saha;
}

void expectSize(int got, std::int64_t want, const char* field, const char* call) {
  if (got != want) {
    throw Error(grpc::StatusCode::INTERNAL,
                std::string("the answer's ") + field + " has " + std::to_string(got) + " values, expected " +
                    std::to_string(want),
                call);
  }
}

Eigen::VectorXd vector(const Field& f) {
  return f.empty() ? Eigen::VectorXd()
                   : Eigen::VectorXd(Eigen::Map<const Eigen::VectorXd>(f.data(), f.size()));
}

Eigen::MatrixXd checkedRows(const Field& f, int count, int cols, const char* field, const char* call) {
  if (f.empty()) return {};
  expectSize(f.size(), static_cast<std::int64_t>(count) * cols, field, call);
  return rows(f.data(), count, cols);
}

std::vector<Eigen::MatrixXd> checkedBlocks(const Field& f, std::int64_t count, int rows_, int cols,
                                           const char* field, const char* call) {
  std::vector<Eigen::MatrixXd> out;
  if (f.empty()) return out;
  expectSize(f.size(), count * rows_ * cols, field, call);
  out.reserve(static_cast<std::size_t>(count));
  for (std::int64_t k = 0; k < count; ++k) out.push_back(rows(f.data() + k * rows_ * cols, rows_, cols));
  return out;
}

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
    *m->mutable_inertia() = inertia(l.inertia);
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
  const auto type = [](int t) {
    return t == v1::JOINT_TYPE_PRISMATIC  ? JointType::Prismatic
           : t == v1::JOINT_TYPE_FLOATING ? JointType::Floating
           : t == v1::JOINT_TYPE_PLANAR   ? JointType::Planar
                                          : JointType::Revolute;
  };
  for (int t : m.joint_types()) info.joint_types.push_back(type(t));
  info.gravity = vec3(m.gravity());
  info.lower = vector(m.lower());
  info.upper = vector(m.upper());
  info.velocity_limit = vector(m.velocity_limit());
  info.effort_limit = vector(m.effort_limit());
  info.armature = vector(m.armature());
  info.pinned = m.pinned();
  info.source = m.source();
  // the tree; a server from before trees leaves the sizes 0: a fixed-root chain of dof joints
  info.nv = m.nv() != 0 ? static_cast<int>(m.nv()) : info.dof;
  info.nq = m.nq() != 0 ? static_cast<int>(m.nq()) : info.nv;
  info.nu = m.nu() != 0 || m.nv() != 0 ? static_cast<int>(m.nu()) : info.dof;
  info.root = m.root() == v1::ROOT_JOINT_FLOATING ? RootJoint::Floating
              : m.root() == v1::ROOT_JOINT_PLANAR ? RootJoint::Planar
                                                  : RootJoint::Fixed;
  for (const v1::Joint& j : m.joints()) {
    Joint joint;
    joint.name = j.name();
    joint.type = type(j.type());
    joint.parent = j.parent();
    joint.q_index = static_cast<int>(j.q_index());
    joint.v_index = static_cast<int>(j.v_index());
    joint.nq = static_cast<int>(j.nq());
    joint.nv = static_cast<int>(j.nv());
    joint.link = j.link();
    joint.depth = static_cast<int>(j.depth());
    info.joints.push_back(std::move(joint));
  }
  for (const v1::Frame& f : m.frames()) info.frames.push_back({f.name(), f.joint(), f.fixed_to()});
  info.depth = m.depth() != 0 ? static_cast<int>(m.depth()) : (m.nv() != 0 ? 0 : info.dof);
  return info;
}

}  // namespace denoc::client::convert
