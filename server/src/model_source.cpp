#include "model_source.hpp"

#include <google/protobuf/unknown_field_set.h>
#include <openssl/evp.h>

#include <cmath>
#include <cstdio>
#include <string>

#include "denoc/stop.hpp"
#include "errors.hpp"

#if DENOC_HAVE_URDF
#include "denoc/urdf.hpp"
#endif

namespace denoc::server {

namespace {

void requireFinite(double v, const std::string& field) {
  if (!std::isfinite(v)) {
    fail(ErrorCode::InvalidArgument, field + " is " + std::to_string(v) + ", expected a finite number");
  }
}

JointType jointType(v1::JointType t, const std::string& field) {
  switch (t) {
    case v1::JOINT_TYPE_REVOLUTE:
      return JointType::Revolute;
    case v1::JOINT_TYPE_PRISMATIC:
      return JointType::Prismatic;
    default:
      fail(ErrorCode::InvalidArgument, field + " is " + std::to_string(static_cast<int>(t)) +
                                           ", expected JOINT_TYPE_REVOLUTE (1) or JOINT_TYPE_PRISMATIC (2)");
  }
}

Eigen::Vector3d vec3(const v1::Vec3& v, const std::string& field) {
  requireFinite(v.x(), field + ".x");
  requireFinite(v.y(), field + ".y");
  requireFinite(v.z(), field + ".z");
  return {v.x(), v.y(), v.z()};
}

// the core's bound on names (kMaxNameLength), checked here too so that the message names the request's field
void checkName(const std::string& s, const std::string& field) {
  if (s.size() > kMaxNameLength) {
    fail(ErrorCode::InvalidArgument, field + " has " + std::to_string(s.size()) +
                                         " characters, expected at most " + std::to_string(kMaxNameLength));
  }
}

// the call's deadline on the steady clock the core polls (max: none)
StopCondition::Clock::time_point steadyDeadline(std::chrono::system_clock::time_point deadline) {
  using namespace std::chrono;
  if (deadline == system_clock::time_point::max()) return StopCondition::Clock::time_point::max();
  const auto left = deadline - system_clock::now();
  if (left > hours(24 * 365)) return StopCondition::Clock::time_point::max();
  return StopCondition::Clock::now() + duration_cast<StopCondition::Clock::duration>(left);
}

DHSpec dhFromMessage(const v1::DHModel& m, const Limits& limits) {
  if (m.links_size() == 0) fail(ErrorCode::InvalidArgument, "dh.links is empty, expected at least one link");
  if (static_cast<std::uint64_t>(m.links_size()) > limits.max_dof) {
    fail(ErrorCode::ResourceExhausted, "dh.links has " + std::to_string(m.links_size()) +
                                           " links, more than the limit max_dof = " +
                                           std::to_string(limits.max_dof) + " (--max-dof, DENOC_MAX_DOF)");
  }
  DHSpec dh;
  for (int i = 0; i < m.links_size(); ++i) {
    const v1::DHLink& l = m.links(i);
    const std::string f = "dh.links[" + std::to_string(i) + "]";
    DHLink o;
    checkName(l.joint(), f + ".joint");
    checkName(l.link(), f + ".link");
    o.joint = l.joint();
    o.link = l.link();
    o.type = jointType(l.type(), f + ".type");
    requireFinite(l.a(), f + ".a");
    requireFinite(l.b(), f + ".b");
    requireFinite(l.alpha(), f + ".alpha");
    requireFinite(l.theta(), f + ".theta");
    requireFinite(l.mass(), f + ".mass");
    requireFinite(l.armature(), f + ".armature");
    o.a = l.a();
    o.b = l.b();
    o.alpha = l.alpha();
    o.theta = l.theta();
    o.mass = l.mass();
    o.com = vec3(l.com(), f + ".com");
    const v1::Inertia& I = l.inertia();
    const double c[6] = {I.ixx(), I.ixy(), I.ixz(), I.iyy(), I.iyz(), I.izz()};
    const char* cn[6] = {"ixx", "ixy", "ixz", "iyy", "iyz", "izz"};
    for (int k = 0; k < 6; ++k) requireFinite(c[k], f + ".inertia." + cn[k]);
    o.inertia << c[0], c[1], c[2], c[1], c[3], c[4], c[2], c[4], c[5];
    // limits: absent means unlimited; NaN is refused here, the rest (ordering, signs) by the core
    const v1::Limits& lim = l.limits();
    auto limit = [&](bool has, double v, const char* name, double dflt) {
      if (!has) return dflt;
      if (std::isnan(v)) fail(ErrorCode::InvalidArgument, f + ".limits." + name + " is nan");
      return v;
    };
    o.lower = limit(lim.has_lower(), lim.lower(), "lower", o.lower);
    o.upper = limit(lim.has_upper(), lim.upper(), "upper", o.upper);
    o.velocity_limit = limit(lim.has_velocity(), lim.velocity(), "velocity", o.velocity_limit);
    o.effort_limit = limit(lim.has_effort(), lim.effort(), "effort", o.effort_limit);
    o.armature = l.armature();
    dh.links.push_back(std::move(o));
  }
  return dh;
}

void appendDouble(std::string& out, double v) {
  char buf[64];
  if (v == 0.0) v = 0.0;  // -0 and +0 are the same model
  std::snprintf(buf, sizeof buf, " %a", v);
  out += buf;
}

template <typename M>
void appendMatrix(std::string& out, const char* key, const M& m) {
  out += key;
  for (Eigen::Index r = 0; r < m.rows(); ++r) {
    for (Eigen::Index c = 0; c < m.cols(); ++c) appendDouble(out, m(r, c));
  }
  out += '\n';
}

void appendScalar(std::string& out, const char* key, double v) {
  out += key;
  appendDouble(out, v);
  out += '\n';
}

void appendName(std::string& out, const char* key, const std::string& s) {
  out += key;
  out += ' ';
  out += std::to_string(s.size());
  out += ':';
  out += s;
  out += '\n';
}

BuiltModel finish(Model&& model, std::string name, std::string source) {
  BuiltModel b;
  b.id = sha256Hex(canonicalForm(model.spec));
  b.name = std::move(name);
  b.source = std::move(source);
  b.model = std::make_shared<const Model>(std::move(model));
  return b;
}

}  // namespace

bool haveUrdf() { return DENOC_HAVE_URDF != 0; }

std::string canonicalForm(const ModelSpec& spec) {
  std::string out = "denoc-model-v1\n";
  appendMatrix(out, "gravity", spec.gravity.transpose());
  appendMatrix(out, "tip_rotation", spec.tip_rotation);
  appendMatrix(out, "tip_origin", spec.tip_origin.transpose());
  out += "joints " + std::to_string(spec.joints.size()) + "\n";
  for (const JointSpec& j : spec.joints) {
    appendName(out, "joint", j.name);
    appendName(out, "link", j.link);
    out += j.type == JointType::Revolute ? "type revolute\n" : "type prismatic\n";
    appendMatrix(out, "rotation", j.rotation);
    appendMatrix(out, "origin", j.origin.transpose());
    appendMatrix(out, "axis", j.axis.transpose());
    appendScalar(out, "mass", j.mass);
    appendMatrix(out, "com", j.com.transpose());
    appendMatrix(out, "inertia", j.inertia);
    appendScalar(out, "lower", j.lower);
    appendScalar(out, "upper", j.upper);
    appendScalar(out, "velocity_limit", j.velocity_limit);
    appendScalar(out, "effort_limit", j.effort_limit);
    appendScalar(out, "armature", j.armature);
  }
  return out;
}

std::string sha256Hex(const std::string& bytes) {
  unsigned char md[EVP_MAX_MD_SIZE];
  unsigned int len = 0;
  if (EVP_Digest(bytes.data(), bytes.size(), md, &len, EVP_sha256(), nullptr) != 1 || len != 32) {
    fail(ErrorCode::Internal, "SHA-256 failed");
  }
  static const char* hex = "0123456789abcdef";
  std::string s(64, '0');
  for (unsigned i = 0; i < 32; ++i) {
    s[2 * i] = hex[md[i] >> 4];
    s[2 * i + 1] = hex[md[i] & 15];
  }
  return s;
}

bool isModelId(const std::string& s) {
  if (s.size() != 64) return false;
  for (char c : s) {
    if (!((c >= '0' && c <= '9') || (c >= 'a' && c <= 'f'))) return false;
  }
  return true;
}

BuiltModel buildFromRequest(const v1::RegisterModelRequest& request, const Limits& limits,
                            std::function<bool()> cancelled, std::chrono::system_clock::time_point deadline) {
  const StopCondition stop(std::move(cancelled), steadyDeadline(deadline));
  return buildFromRequest(request, limits, stop);
}

BuiltModel buildFromRequest(const v1::RegisterModelRequest& request, const Limits& limits,
                            const StopCondition& stop) {
  if (request.has_name()) checkName(request.name(), "name");
  Eigen::Vector3d gravity(0.0, 0.0, -9.81);
  if (request.has_gravity()) gravity = vec3(request.gravity(), "gravity");
  for (int i = 0; i < request.armature_size(); ++i) {
    requireFinite(request.armature(i), "armature[" + std::to_string(i) + "]");
  }
  switch (request.source_case()) {
    case v1::RegisterModelRequest::kDh: {
      if (request.armature_size() != 0) {
        fail(ErrorCode::InvalidArgument,
             "armature is for URDF models; a DH model gives armature per link (dh.links[i].armature)");
      }
      DHSpec dh = dhFromMessage(request.dh(), limits);
      dh.gravity = gravity;
      dh.name = request.has_name() ? request.name() : "dh_model";
      ModelSpec spec = specFromDH(dh, &stop);
      return finish(buildModel(spec, &stop), dh.name, "dh");
    }
    case v1::RegisterModelRequest::kUrdf: {
      const v1::UrdfModel& u = request.urdf();
      if (u.text().empty()) fail(ErrorCode::InvalidArgument, "urdf.text is empty, expected a URDF document");
      checkName(u.base_link(), "urdf.base_link");
      checkName(u.tip_link(), "urdf.tip_link");
#if DENOC_HAVE_URDF
      UrdfOptions options;
      options.base_link = u.base_link();
      options.tip_link = u.tip_link();
      options.gravity = gravity;
      options.armature.assign(request.armature().begin(),
                              request.armature().end());  // the core checks the count
      ModelSpec spec = specFromUrdf(u.text(), options, &stop);
      if (spec.joints.size() > limits.max_dof) {
        fail(ErrorCode::ResourceExhausted,
             "the URDF chain has " + std::to_string(spec.joints.size()) +
                 " moving joints, more than the limit max_dof = " + std::to_string(limits.max_dof) +
                 " (--max-dof, DENOC_MAX_DOF)");
      }
      std::string name = request.has_name() ? request.name() : spec.name;
      return finish(buildModel(spec, &stop), name, "urdf");
#else
      fail(ErrorCode::Unimplemented, "urdf: this build of the core has no URDF builder; register a DH model");
#endif
    }
    default:
      fail(ErrorCode::InvalidArgument, "source is not set, expected urdf or dh");
  }
}

BuiltModel buildBuiltin(const DHSpec& dh) { return finish(buildModelFromDH(dh), dh.name, "builtin"); }

namespace {
constexpr int kOwnerField = 1000;  // not defined by RegisterModelRequest
}  // namespace

std::string storeRecord(const v1::RegisterModelRequest& request, const std::string& owner) {
  v1::RegisterModelRequest record = request;
  record.DiscardUnknownFields();  // a client cannot smuggle an owner in
  if (!owner.empty())
    record.GetReflection()->MutableUnknownFields(&record)->AddLengthDelimited(kOwnerField, owner);
  std::string bytes;
  if (!record.SerializeToString(&bytes))
    fail(ErrorCode::Internal, "cannot serialize the model for the store");
  return bytes;
}

std::string recordOwner(const v1::RegisterModelRequest& record) {
  const auto& unknown = record.GetReflection()->GetUnknownFields(record);
  for (int i = 0; i < unknown.field_count(); ++i) {
    const auto& f = unknown.field(i);
    if (f.number() == kOwnerField && f.type() == google::protobuf::UnknownField::TYPE_LENGTH_DELIMITED)
      return f.length_delimited();
  }
  return {};
}

}  // namespace denoc::server
