#include "validate.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <limits>
#include <string>

#include "convert.hpp"
#include "denoc/payload.hpp"
#include "denoc/planning_batch.hpp"
#include "errors.hpp"
#include "model_id.hpp"

namespace denoc::server {

namespace {

std::string num(double v, int digits = 17) {
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.*g", digits, v);
  return buf;
}

// The numbers of a request's arrays (rates, accelerations, efforts, wrenches, times, a point): finite and
// within the core's range of rates, efforts and wrenches (kMaxStateValue, 1e12), so that no input makes an
// answer overflow. Positions (q, q0, x0) are checked finite here and against the core's tighter kMaxPosition
// by the core, whose messages name the bound; the numbers of a model (DH, gravity, armature, payload) by
// the model's own checks.
constexpr double kMaxRequestValue = kMaxStateValue;
constexpr double kAnyFinite = std::numeric_limits<double>::max();

void checkNumber(double v, const std::string& field) {
  if (!std::isfinite(v))
    fail(ErrorCode::InvalidArgument, field + " is " + num(v) + ", expected a finite number");
}

void checkBoundedVec3(const v1::Vec3& v, const std::string& field) {
  const double c[3] = {v.x(), v.y(), v.z()};
  const char* axis[3] = {".x", ".y", ".z"};
  for (int k = 0; k < 3; ++k) {
    checkNumber(c[k], field + axis[k]);
    if (!(std::abs(c[k]) <= kMaxRequestValue)) {
      fail(ErrorCode::InvalidArgument,
           field + axis[k] + " is " + num(c[k]) + ", expected a number in [-1e12, 1e12]");
    }
  }
}

void checkVec3(const v1::Vec3& v, const std::string& field) {
  checkNumber(v.x(), field + ".x");
  checkNumber(v.y(), field + ".y");
  checkNumber(v.z(), field + ".z");
}

// the core's bound on names (kMaxNameLength), checked here too so that the message names the request's field
void checkName(const std::string& s, const std::string& field) {
  if (s.size() > kMaxNameLength) {
    fail(ErrorCode::InvalidArgument, field + " has " + std::to_string(s.size()) +
                                         " characters, expected at most " + std::to_string(kMaxNameLength));
  }
}

void checkDof(std::uint32_t dof, const Model& model) {
  if (dof != static_cast<std::uint32_t>(model.nv)) {
    fail(ErrorCode::InvalidArgument,
         "dof is " + std::to_string(dof) + ", expected the model's dof = " + std::to_string(model.nv) +
             (model.nq != model.nv || model.n != model.nv ? " (nv: the velocity coordinates)" : ""));
  }
}

bool emptyPayload(const v1::Payload& p) {
  const v1::Inertia& i = p.inertia();
  return p.mass() == 0.0 && p.com().x() == 0.0 && p.com().y() == 0.0 && p.com().z() == 0.0 &&
         i.ixx() == 0.0 && i.ixy() == 0.0 && i.ixz() == 0.0 && i.iyy() == 0.0 && i.iyz() == 0.0 &&
         i.izz() == 0.0 && p.link().empty();
}

void checkDHLink(const v1::DHLink& l, const std::string& f) {
  checkName(l.joint(), f + ".joint");
  checkName(l.link(), f + ".link");
  if (l.type() != v1::JOINT_TYPE_REVOLUTE && l.type() != v1::JOINT_TYPE_PRISMATIC) {
    fail(ErrorCode::InvalidArgument, f + ".type is " + std::to_string(static_cast<int>(l.type())) +
                                         ", expected JOINT_TYPE_REVOLUTE (1) or JOINT_TYPE_PRISMATIC (2)");
  }
  checkNumber(l.a(), f + ".a");
  checkNumber(l.b(), f + ".b");
  checkNumber(l.alpha(), f + ".alpha");
  checkNumber(l.theta(), f + ".theta");
  checkNumber(l.mass(), f + ".mass");
  // the proto's contract for a DH link (a URDF may carry massless links: they make a tree model)
  if (!(l.mass() > 0.0)) fail(ErrorCode::InvalidArgument, f + ".mass is " + num(l.mass()) + ", expected > 0");
  checkNumber(l.armature(), f + ".armature");
  checkVec3(l.com(), f + ".com");
  const v1::Inertia& I = l.inertia();
  const double c[6] = {I.ixx(), I.ixy(), I.ixz(), I.iyy(), I.iyz(), I.izz()};
  const char* cn[6] = {"ixx", "ixy", "ixz", "iyy", "iyz", "izz"};
  for (int k = 0; k < 6; ++k) checkNumber(c[k], f + ".inertia." + cn[k]);
  // limits: absent means unlimited; NaN is refused here, the rest (ordering, signs) by the core
  const v1::Limits& lim = l.limits();
  const auto limit = [&](bool has, double v, const char* name) {
    if (has && std::isnan(v)) fail(ErrorCode::InvalidArgument, f + ".limits." + name + " is nan");
  };
  limit(lim.has_lower(), lim.lower(), "lower");
  limit(lim.has_upper(), lim.upper(), "upper");
  limit(lim.has_velocity(), lim.velocity(), "velocity");
  limit(lim.has_effort(), lim.effort(), "effort");
}

/// The model a request computes with: the registered one without a payload (none given, or the all-zero
/// message, which the proto says carries none), else a new model with the payload attached to the frame
/// `payload.link` names (attachPayload), the payload checked as a link's inertia is (checkPayload):
/// INVALID_ARGUMENT naming the payload's field.
std::shared_ptr<const Model> withPayload(const std::shared_ptr<const Model>& model, bool has_payload,
                                         const v1::Payload& p) {
  if (!has_payload || emptyPayload(p)) return model;
  checkName(p.link(), "payload.link");
  const NamedFrame frame = resolveFrame(*model, p.link(), "payload.link");
  Payload payload = toPayload(p);
  try {
    checkPayload(payload);
    // given in a fixed frame: its mass centre and inertia in the core frame's coordinates
    payload.com = frame.origin + frame.rotation * payload.com;
    payload.inertia = frame.rotation * payload.inertia * frame.rotation.transpose();
    return std::make_shared<const Model>(attachPayload(*model, payload, frame.frame));
  } catch (const ModelError& e) {
    fail(ErrorCode::InvalidArgument,
         std::string("payload: the link with the payload is refused: ") + e.what());
  } catch (const std::invalid_argument& e) {
    fail(ErrorCode::InvalidArgument, e.what());
  }
}

/// The model, count and dof of a batch (the first checks of every batch validator).
BatchInput batchOf(Registry& registry, const Limits& limits, const std::string& id, std::uint32_t count,
                   std::uint32_t dof, const StopCondition* stop) {
  BatchInput in;
  in.entry = requireModel(registry, id, stop);
  in.total = checkBatch(count, dof, *in.entry->model, limits);
  in.count = count;
  return in;
}

/// q and qd of a batch: count*dof finite values.
void checkStates(const Doubles& values, const char* name, std::uint64_t total, std::uint64_t dof) {
  checkLength(values, name, total, "count*dof");
  checkFinite(values, name, dof);
}

/// q of a batch: count*nq finite values, their quaternions unit.
/// (A stream message's q, batch false: named "nq" or "dof", its entries without a state.)
void checkPositions(const Doubles& values, const char* name, std::uint64_t count, const Model& m,
                    bool batch = true) {
  const auto nq = static_cast<std::uint64_t>(m.nq);
  const char* expected = m.nq == m.nv ? (batch ? "count*dof" : "dof") : (batch ? "count*nq" : "nq");
  checkLength(values, name, checkedProduct(count, nq, "count*nq"), expected);
  checkFinite(values, name, batch ? nq : 0, kAnyFinite);
  checkConfigurations(values, name, count, nq, 0, m);
}

/// The external wrenches of a request on a model (count states; a batch's arrays are count*6 or 6, a stream
/// message's 6), with a tip_wrench of count*6 values among them; the frames resolved once. A wrench on a
/// fixed frame acts at its origin; given in its axes (LOCAL), its values are turned into the axes of the
/// link it is fixed to, in `turned`.
std::vector<BatchWrench> checkWrenches(const google::protobuf::RepeatedPtrField<v1::LinkWrench>& wrenches,
                                       const Doubles* tip_wrench, const Model& m, std::uint64_t count,
                                       std::vector<std::vector<double>>& turned) {
  std::vector<BatchWrench> out;
  if (static_cast<std::uint64_t>(wrenches.size()) > kMaxWrenches) {
    fail(ErrorCode::ResourceExhausted,
         "wrenches has " + std::to_string(wrenches.size()) +
             " wrenches, more than the limit max_wrenches = " + std::to_string(kMaxWrenches));
  }
  out.reserve(static_cast<std::size_t>(wrenches.size()) + 1);
  for (int j = 0; j < wrenches.size(); ++j) {
    const v1::LinkWrench& w = wrenches.Get(j);
    const std::string field = "wrenches[" + std::to_string(j) + "]";
    checkName(w.link(), field + ".link");
    if (!v1::ReferenceFrame_IsValid(w.reference())) {
      fail(ErrorCode::InvalidArgument, field + ".reference is " +
                                           std::to_string(static_cast<int>(w.reference())) +
                                           ", expected REFERENCE_FRAME_BASE or REFERENCE_FRAME_LOCAL");
    }
    BatchWrench b;
    const NamedFrame frame = resolveFrame(m, w.link(), field + ".link");
    b.frame = frame.frame;
    b.point = frame.origin;
    b.reference = w.reference() == v1::REFERENCE_FRAME_LOCAL ? ReferenceFrame::Local : ReferenceFrame::Base;
    const std::uint64_t size = static_cast<std::uint64_t>(w.wrench_size());
    if (size != 6 && size != checkedProduct(count, 6, "count*6")) {
      fail(ErrorCode::InvalidArgument,
           field + ".wrench has " + std::to_string(size) +
               " values, expected 6 (every state) or count*6 = " + std::to_string(count * 6));
    }
    checkFinite(w.wrench(), (field + ".wrench").c_str(), 6);
    b.values = w.wrench().data();
    b.stride = size == 6 ? 0 : 6;
    if (frame.fixed && b.reference == ReferenceFrame::Local && !frame.rotation.isIdentity(0.0)) {
      std::vector<double>& v = turned.emplace_back(w.wrench().begin(), w.wrench().end());
      for (std::size_t k = 0; k < v.size(); k += 6) {
        Eigen::Map<Eigen::Vector3d>(v.data() + k) =
            frame.rotation * Eigen::Map<Eigen::Vector3d>(v.data() + k);
        Eigen::Map<Eigen::Vector3d>(v.data() + k + 3) =
            frame.rotation * Eigen::Map<Eigen::Vector3d>(v.data() + k + 3);
      }
      b.values = v.data();
    }
    out.push_back(b);
  }
  if (tip_wrench && !tip_wrench->empty() && !out.empty()) {
    if (out.size() >= kMaxWrenches) {
      fail(ErrorCode::ResourceExhausted,
           "wrenches and tip_wrench together hold more than the limit "
           "max_wrenches = " +
               std::to_string(kMaxWrenches) + " wrenches");
    }
    out.push_back({m.n, ReferenceFrame::Local, tip_wrench->data(), 6});
  }
  return out;
}

/// An array needed only with an option: empty when not needed, else as checkStates.
void checkOptionalStates(const Doubles& values, const char* name, std::uint64_t total, std::uint64_t dof,
                         bool needed, const char* why) {
  if (values.empty() && !needed) return;
  if (values.empty()) fail(ErrorCode::InvalidArgument, std::string(name) + " is empty; " + why);
  checkStates(values, name, total, dof);
}

/// How the arrays of `count` states are named in messages: a batch's ("count*dof", the state and column of
/// a bad value named) or one stream message's ("dof"); q has nq values per state (checkPositions).
struct Shape {
  std::uint64_t count;
  std::uint64_t dof;
  bool batch;
  const Model& model;
  std::uint64_t total() const { return count * dof; }
  const char* perState() const { return batch ? "count*dof" : "dof"; }
  std::uint64_t row() const { return batch ? dof : 0; }
  void checkQ(const Doubles& q) const { checkPositions(q, "q", count, model, batch); }
};

void checkInverseDynamicsArrays(const Shape& s, const Doubles& q, const Doubles& qd, const Doubles& qdd,
                                const Doubles& tip_wrench) {
  s.checkQ(q);
  checkLength(qd, "qd", s.total(), s.perState());
  checkLength(qdd, "qdd", s.total(), s.perState());
  if (tip_wrench.size() != 0) {
    checkLength(tip_wrench, "tip_wrench", checkedProduct(s.count, 6, "count*6"),
                s.batch ? "count*6" : "6 (or 0 for none)");
  }
  checkFinite(qd, "qd", s.row());
  checkFinite(qdd, "qdd", s.row());
  checkFinite(tip_wrench, "tip_wrench", s.batch ? 6 : 0);
}

void checkForwardDynamicsArrays(const Shape& s, v1::ForwardRoute route, const Doubles& q, const Doubles& qd,
                                const Doubles& tau, bool wrenches) {
  checkRoute(route, "route", s.model);
  if (wrenches && route != v1::FORWARD_ROUTE_SAHA) {
    fail(ErrorCode::InvalidArgument,
         "wrenches need route FORWARD_ROUTE_SAHA (the articulated-body route "
         "takes external wrenches), not " +
             v1::ForwardRoute_Name(route));
  }
  s.checkQ(q);
  checkLength(qd, "qd", s.total(), s.perState());
  checkLength(tau, "tau", s.total(), s.perState());
  checkFinite(qd, "qd", s.row());
  checkFinite(tau, "tau", s.row());
}

/// The simulation fields that have no core counterpart to check them: the enums, the server's step limit,
/// the torque and damping arrays of a model of n joints.
void checkSimulationFields(const v1::SimulateRequest& req, std::uint64_t n, const char* per) {
  if (req.integrator() != v1::INTEGRATOR_DOPRI5 && req.integrator() != v1::INTEGRATOR_RK4) {
    fail(ErrorCode::InvalidArgument, "integrator is " + std::to_string(static_cast<int>(req.integrator())) +
                                         ", expected INTEGRATOR_DOPRI5 or INTEGRATOR_RK4");
  }
  if (req.route() != v1::FORWARD_ROUTE_SAHA && req.route() != v1::FORWARD_ROUTE_CHOLESKY) {
    fail(ErrorCode::InvalidArgument,
         "route is " + std::to_string(static_cast<int>(req.route())) +
             ", expected FORWARD_ROUTE_SAHA or FORWARD_ROUTE_CHOLESKY for Simulate");
  }
  const auto max_steps = static_cast<std::uint64_t>(SimulationOptions{}.max_steps);
  if (req.max_steps() > max_steps) {
    fail(ErrorCode::ResourceExhausted, "max_steps is " + std::to_string(req.max_steps()) +
                                           ", more than the server's limit of " + std::to_string(max_steps));
  }
  // the steps the horizon needs at the step (RK4) or at the largest step (DOPRI5) the request allows:
  // within max_steps, refused here rather than after running up to it
  const double allowed = static_cast<double>(req.max_steps() != 0 ? req.max_steps() : max_steps);
  const bool rk4 = req.integrator() == v1::INTEGRATOR_RK4;
  const double h = rk4 ? (req.step() > 0.0 ? req.step() : 1e-3) : req.max_step();
  if (h > 0.0 && std::isfinite(req.t_end()) && req.t_end() / h > allowed) {
    fail(ErrorCode::ResourceExhausted,
         std::string("t_end / ") + (rk4 ? "step" : "max_step") + " = " + num(req.t_end() / h, 6) +
             " steps, more than max_steps = " + num(allowed, 10) + " (a larger " +
             (rk4 ? "step" : "max_step") + " or a shorter t_end)");
  }
  checkFinite(req.torque_times(), "torque_times", 0);
  checkFinite(req.torque_values(), "torque_values", n);
  if (req.torque_times_size() == 0 && req.torque_values_size() != 0) {
    checkLength(req.torque_values(), "torque_values", n,
                (std::string(per) + " (a constant torque; give torque_times for a schedule)").c_str());
  } else if (req.torque_times_size() != 0) {
    const std::string times = std::string("torque_times*") + per;
    checkLength(req.torque_values(), "torque_values",
                checkedProduct(static_cast<std::uint64_t>(req.torque_times_size()), n, times.c_str()),
                times.c_str());
  }
  if (req.damping_size() != 0) {
    checkLength(req.damping(), "damping", n, (std::string(per) + " (or 0 for none)").c_str());
    checkFinite(req.damping(), "damping", 0);
  }
}

}  // namespace

// ------------------------------------------------------------------------------------------- the registry

void validateRegisterModel(const v1::RegisterModelRequest& req, const Limits& limits) {
  if (req.has_name()) checkName(req.name(), "name");
  if (req.has_gravity()) checkVec3(req.gravity(), "gravity");
  for (int i = 0; i < req.armature_size(); ++i)
    checkNumber(req.armature(i), "armature[" + std::to_string(i) + "]");
  switch (req.source_case()) {
    case v1::RegisterModelRequest::kDh: {
      if (req.armature_size() != 0) {
        fail(ErrorCode::InvalidArgument,
             "armature is for URDF models; a DH model gives armature per link (dh.links[i].armature)");
      }
      const v1::DHModel& m = req.dh();
      if (m.links_size() == 0)
        fail(ErrorCode::InvalidArgument, "dh.links is empty, expected at least one link");
      if (static_cast<std::uint64_t>(m.links_size()) > limits.max_dof) {
        fail(ErrorCode::ResourceExhausted,
             "dh.links has " + std::to_string(m.links_size()) + " links, more than the limit max_dof = " +
                 std::to_string(limits.max_dof) + " (--max-dof, DENOC_MAX_DOF)");
      }
      for (int i = 0; i < m.links_size(); ++i) checkDHLink(m.links(i), "dh.links[" + std::to_string(i) + "]");
      return;
    }
    case v1::RegisterModelRequest::kUrdf: {
      const v1::UrdfModel& u = req.urdf();
      if (u.text().empty()) fail(ErrorCode::InvalidArgument, "urdf.text is empty, expected a URDF document");
      checkName(u.base_link(), "urdf.base_link");
      checkName(u.tip_link(), "urdf.tip_link");
      if (!v1::RootJoint_IsValid(u.root())) {
        fail(ErrorCode::InvalidArgument,
             "urdf.root is " + std::to_string(static_cast<int>(u.root())) +
                 ", expected ROOT_JOINT_FIXED, ROOT_JOINT_FLOATING or ROOT_JOINT_PLANAR");
      }
      return;
    }
    default:
      fail(ErrorCode::InvalidArgument, "source is not set, expected urdf or dh");
  }
}

std::shared_ptr<const Entry> validateGetModel(Registry& registry, const v1::GetModelRequest& req,
                                              const StopCondition* stop) {
  return requireModel(registry, req.model_id(), stop);
}

void validateDeleteModel(const v1::DeleteModelRequest& req) {
  if (!isModelId(req.model_id())) {
    fail(ErrorCode::InvalidArgument, "model_id '" + req.model_id().substr(0, 80) +
                                         "' is not a model id, expected 64 lower-case hex digits");
  }
}

ListPage validateListModels(const v1::ListModelsRequest& req) {
  if (!req.page_token().empty() && !isModelId(req.page_token())) {
    fail(ErrorCode::InvalidArgument, "page_token '" + req.page_token().substr(0, 80) +
                                         "' is not a page token of this server (give the next_page_token of "
                                         "the previous answer, or none for the first page)");
  }
  return {req.page_token(), req.page_size()};
}

// -------------------------------------------------------------------------------------------- the batches

BatchInput validateInverseDynamics(Registry& registry, const Limits& limits,
                                   const v1::InverseDynamicsRequest& req, const StopCondition* stop) {
  BatchInput in = batchOf(registry, limits, req.model_id(), req.count(), req.dof(), stop);
  const Model& m = *in.entry->model;
  checkInverseDynamicsArrays({req.count(), req.dof(), true, m}, req.q(), req.qd(), req.qdd(),
                             req.tip_wrench());
  in.wrenches = checkWrenches(req.wrenches(), &req.tip_wrench(), m, req.count(), in.wrench_values);
  checkAnswerSize(in.total, limits);
  in.model = withPayload(in.entry->model, req.has_payload(), req.payload());
  return in;
}

BatchInput validateForwardDynamics(Registry& registry, const Limits& limits,
                                   const v1::ForwardDynamicsRequest& req, const StopCondition* stop) {
  BatchInput in = batchOf(registry, limits, req.model_id(), req.count(), req.dof(), stop);
  const Model& m = *in.entry->model;
  checkForwardDynamicsArrays({req.count(), req.dof(), true, m}, req.route(), req.q(), req.qd(), req.tau(),
                             req.wrenches_size() != 0);
  in.wrenches = checkWrenches(req.wrenches(), nullptr, m, req.count(), in.wrench_values);
  checkAnswerSize(in.total, limits);
  in.model = withPayload(in.entry->model, req.has_payload(), req.payload());
  return in;
}

BatchInput validateFullFactor(Registry& registry, const Limits& limits, const v1::FullFactorRequest& req,
                              const StopCondition* stop) {
  BatchInput in = batchOf(registry, limits, req.model_id(), req.count(), req.dof(), stop);
  const std::uint64_t n = req.dof();
  const std::uint64_t square = checkedProduct(in.total, n, "count*dof*dof");
  const Model& m = *in.entry->model;
  checkPositions(req.q(), "q", req.count(), m);
  const bool need_qd = req.convective() || req.bias();
  if (need_qd || req.qd_size() != 0) {
    checkLength(req.qd(), "qd", in.total,
                need_qd ? "count*dof (qd is needed for convective and bias)" : "count*dof (or none)");
  }
  checkFinite(req.qd(), "qd", n);
  const std::uint64_t squares = 2 + (req.inverse() ? 1 : 0) + (req.convective() ? 1 : 0);
  const std::uint64_t vectors = 1 + (req.bias() ? 1 : 0) + (req.gravity_torque() ? 1 : 0);
  checkAnswerSize(checkedProduct(square, squares, "answer size") +
                      checkedProduct(in.total, vectors, "answer size") + req.count(),
                  limits);
  in.model = withPayload(in.entry->model, req.has_payload(), req.payload());
  return in;
}

KinematicsInput validateKinematics(Registry& registry, const Limits& limits, const v1::KinematicsRequest& req,
                                   const StopCondition* stop) {
  KinematicsInput in;
  static_cast<BatchInput&>(in) = batchOf(registry, limits, req.model_id(), req.count(), req.dof(), stop);
  const Model& m = *in.entry->model;
  const std::uint64_t n = req.dof();
  checkPositions(req.q(), "q", req.count(), m);
  checkOptionalStates(req.qd(), "qd", in.total, n, req.jdot_qd() || req.centroidal_momentum(),
                      "jdot_qd and centroidal_momentum need count*dof joint velocities");
  if (!v1::ReferenceFrame_IsValid(req.reference())) {
    fail(ErrorCode::InvalidArgument, "reference is " + std::to_string(static_cast<int>(req.reference())) +
                                         ", expected REFERENCE_FRAME_BASE or REFERENCE_FRAME_LOCAL");
  }
  if (!v1::TaskRows_IsValid(req.lambda_rows())) {
    fail(ErrorCode::InvalidArgument, "lambda_rows is " + std::to_string(static_cast<int>(req.lambda_rows())) +
                                         ", expected TASK_ROWS_FULL, TASK_ROWS_LINEAR or TASK_ROWS_ANGULAR");
  }
  if (req.lambda() && !m.serial) {
    fail(ErrorCode::InvalidArgument,
         "lambda: the operational-space inertia is for serial chains; this model "
         "is a tree");
  }
  checkBoundedVec3(req.point(), "point");
  checkName(req.link(), "link");
  if (req.links_size() == 0) {
    in.frames.push_back(resolveFrame(m, req.link(), "link"));
  } else {
    if (!req.link().empty()) {
      fail(ErrorCode::InvalidArgument, "link and links are both given; name the frames in links alone");
    }
    if (static_cast<std::uint64_t>(req.links_size()) > kMaxFrames) {
      fail(ErrorCode::ResourceExhausted,
           "links has " + std::to_string(req.links_size()) +
               " names, more than the limit max_frames = " + std::to_string(kMaxFrames));
    }
    for (int j = 0; j < req.links_size(); ++j) {
      const std::string field = "links[" + std::to_string(j) + "]";
      checkName(req.links(j), field);
      in.frames.push_back(resolveFrame(m, req.links(j), field));
    }
  }
  in.point = toVec3(req.point());
  in.reference = req.reference() == v1::REFERENCE_FRAME_LOCAL ? ReferenceFrame::Local : ReferenceFrame::Base;
  in.rows = req.lambda_rows() == v1::TASK_ROWS_LINEAR    ? TaskRows::Linear
            : req.lambda_rows() == v1::TASK_ROWS_ANGULAR ? TaskRows::Angular
                                                         : TaskRows::Full;
  in.lambda_size = in.rows == TaskRows::Full ? 6 : 3;
  // per state: per frame the pose (12) and what is asked for, then the frames and the centroidal terms
  const auto frames = static_cast<std::uint64_t>(in.frames.size());
  std::uint64_t per_frame = 12;
  if (req.jacobian()) per_frame += 6 * n;
  if (req.jdot_qd()) per_frame += 6;
  if (req.lambda()) per_frame += static_cast<std::uint64_t>(in.lambda_size * in.lambda_size);
  std::uint64_t per_state = checkedProduct(per_frame, frames, "the answer's size");
  if (req.all_frames()) per_state += 12 * static_cast<std::uint64_t>(frameBatchFrames(m));
  if (req.center_of_mass()) per_state += 4;
  if (req.com_jacobian()) per_state += 3 * n;
  if (req.centroidal()) per_state += 6 * n;
  if (req.centroidal_momentum()) per_state += 6;
  checkAnswerSize(checkedProduct(in.count, per_state, "the answer's size"), limits);
  in.model = withPayload(in.entry->model, req.has_payload(), req.payload());
  return in;
}

BatchInput validateDerivatives(Registry& registry, const Limits& limits, const v1::DerivativesRequest& req,
                               const StopCondition* stop) {
  BatchInput in = batchOf(registry, limits, req.model_id(), req.count(), req.dof(), stop);
  const std::uint64_t n = req.dof();
  if (!v1::DerivativeOf_IsValid(req.of())) {
    fail(ErrorCode::InvalidArgument,
         "of is " + std::to_string(static_cast<int>(req.of())) +
             ", expected DERIVATIVE_OF_INVERSE_DYNAMICS or DERIVATIVE_OF_FORWARD_DYNAMICS");
  }
  const bool inverse = req.of() == v1::DERIVATIVE_OF_INVERSE_DYNAMICS;
  checkPositions(req.q(), "q", req.count(), *in.entry->model);
  checkStates(req.qd(), "qd", in.total, n);
  if (inverse) {
    checkStates(req.qdd(), "qdd", in.total, n);
    if (!req.tau().empty()) fail(ErrorCode::InvalidArgument, "tau is for DERIVATIVE_OF_FORWARD_DYNAMICS");
  } else {
    checkStates(req.tau(), "tau", in.total, n);
    if (!req.qdd().empty()) fail(ErrorCode::InvalidArgument, "qdd is for DERIVATIVE_OF_INVERSE_DYNAMICS");
  }
  if (!req.tip_wrench().empty()) {
    checkLength(req.tip_wrench(), "tip_wrench", checkedProduct(in.count, 6, "count*6"), "count*6");
    checkFinite(req.tip_wrench(), "tip_wrench", 6);
  }
  in.wrenches =
      checkWrenches(req.wrenches(), &req.tip_wrench(), *in.entry->model, req.count(), in.wrench_values);
  // two (inverse) or three (forward) n x n matrices and a vector per state
  const std::uint64_t per_state = (inverse ? 2 : 3) * checkedProduct(n, n, "dof*dof") + n;
  checkAnswerSize(checkedProduct(in.count, per_state, "the answer's size"), limits);
  in.model = withPayload(in.entry->model, req.has_payload(), req.payload());
  return in;
}

RolloutInput validateRollout(Registry& registry, const Limits& limits, const v1::RolloutRequest& req,
                             const StopCondition* stop) {
  RolloutInput in;
  in.entry = requireModel(registry, req.model_id(), stop);
  const Model& m = *in.entry->model;
  if (req.count() == 0) fail(ErrorCode::InvalidArgument, "count is 0, expected at least 1 rollout");
  if (req.steps() == 0) fail(ErrorCode::InvalidArgument, "steps is 0, expected at least 1 step");
  checkDof(req.dof(), m);
  in.count = req.count();
  const std::uint64_t n = req.dof(), K = req.count(), T = req.steps();
  in.steps = K * T;  // both below 2^32: no overflow
  if (in.steps > limits.max_states) {
    fail(ErrorCode::ResourceExhausted,
         "count*steps is " + std::to_string(in.steps) + " (" + std::to_string(K) + " rollouts of " +
             std::to_string(T) + " steps), more than the limit max_states = " +
             std::to_string(limits.max_states) + " (--max-states, DENOC_MAX_STATES)");
  }
  checkPositive(req.dt(), "dt", false);
  if (!v1::StepScheme_IsValid(req.scheme())) {
    fail(ErrorCode::InvalidArgument, "scheme is " + std::to_string(static_cast<int>(req.scheme())) +
                                         ", expected STEP_SCHEME_RK4 or STEP_SCHEME_SEMI_IMPLICIT_EULER");
  }
  // the answer first: it bounds everything else. A state is [q; qd] (nq + nv), its tangent 2 nv, controls nu
  const auto nq = static_cast<std::uint64_t>(m.nq), nu = static_cast<std::uint64_t>(m.n);
  const bool tree = nq != n || nu != n;
  const std::uint64_t x = nq + n, dx = 2 * n;
  std::uint64_t doubles = checkedProduct(K * (T + 1), x, "the answer's size");
  if (req.linearize()) {
    doubles +=
        checkedProduct(in.steps, checkedProduct(dx, dx + nu, "(2 dof)*(2 dof + nu)"), "the answer's size");
  }
  checkAnswerSize(doubles, limits);
  checkLength(req.x0(), "x0", K * x, tree ? "count*(nq+dof)" : "count*2*dof");
  checkFinite(req.x0(), "x0", x, kAnyFinite);
  checkConfigurations(req.x0(), "x0", K, x, 0, m);
  if (req.shared_controls()) {
    checkLength(req.u(), "u", T * nu, tree ? "steps*nu (shared_controls)" : "steps*dof (shared_controls)");
  } else {
    checkLength(req.u(), "u", in.steps * nu, tree ? "count*steps*nu" : "count*steps*dof");
  }
  checkFinite(req.u(), "u", nu);
  // the external wrenches, held over each rollout: 6 values for all, or count*6 (one per rollout)
  in.wrenches = checkWrenches(req.wrenches(), nullptr, m, K, in.wrench_values);
  in.total = K * x;
  in.options.scheme =
      req.scheme() == v1::STEP_SCHEME_SEMI_IMPLICIT_EULER ? StepScheme::SemiImplicitEuler : StepScheme::RK4;
  in.options.step = req.dt();
  in.options.steps = T;
  in.model = withPayload(in.entry->model, req.has_payload(), req.payload());
  return in;
}

// ---------------------------------------------------------------------------------------------- the streams

SimulateInput validateSimulate(Registry& registry, const Limits& limits, const v1::SimulateRequest& req,
                               const StopCondition* stop) {
  SimulateInput in;
  in.entry = requireModel(registry, req.model_id(), stop);
  const Model& m = *in.entry->model;
  checkDof(req.dof(), m);
  checkLength(req.q0(), "q0", static_cast<std::uint64_t>(m.nq), m.nq == m.nv ? "dof" : "nq");
  checkLength(req.qd0(), "qd0", req.dof(), "dof");
  checkFinite(req.q0(), "q0", 0, kAnyFinite);
  checkFinite(req.qd0(), "qd0", 0);
  checkConfigurations(req.q0(), "q0", 1, static_cast<std::uint64_t>(m.nq), 0, m);
  checkSimulationFields(req, static_cast<std::uint64_t>(m.n), m.n == m.nv ? "dof" : "nu");
  in.options = toSimulationOptions(req, m.n);
  validateSimulation(m, Eigen::Map<const Eigen::VectorXd>(req.q0().data(), m.nq),
                     Eigen::Map<const Eigen::VectorXd>(req.qd0().data(), m.nv), in.options);
  in.samples = sampleCount(in.options);
  if (in.samples > limits.max_states) {
    fail(ErrorCode::ResourceExhausted,
         "the run would report " + std::to_string(in.samples) +
             " samples, more than the limit max_states = " + std::to_string(limits.max_states) +
             " (--max-states, DENOC_MAX_STATES)");
  }
  in.batch = req.batch_size() == 0 ? 64u : req.batch_size();
  checkAnswerSize(
      checkedProduct(in.batch, static_cast<std::uint64_t>(m.nq + m.nv) + 4, "batch_size*(nq+dof+4)"), limits);
  return in;
}

StreamInput validateStreamMessage(Registry& registry, const v1::StreamRequest& req, StreamInput previous,
                                  const StopCondition* stop) {
  switch (req.computation()) {
    case v1::COMPUTATION_ECHO:
      return previous;
    case v1::COMPUTATION_INVERSE_DYNAMICS:
    case v1::COMPUTATION_FORWARD_DYNAMICS:
      break;
    default:
      fail(ErrorCode::InvalidArgument, "computation is " +
                                           std::to_string(static_cast<int>(req.computation())) +
                                           ", expected COMPUTATION_INVERSE_DYNAMICS, "
                                           "COMPUTATION_FORWARD_DYNAMICS or COMPUTATION_ECHO");
  }
  StreamInput in;
  in.entry = previous.entry && previous.entry->id == req.model_id()
                 ? std::move(previous.entry)
                 : requireModel(registry, req.model_id(), stop);
  const Model& m = *in.entry->model;
  const Shape one{1, static_cast<std::uint64_t>(m.nv), false, m};
  if (req.computation() == v1::COMPUTATION_INVERSE_DYNAMICS) {
    checkInverseDynamicsArrays(one, req.q(), req.qd(), req.qdd(), req.tip_wrench());
  } else {
    checkForwardDynamicsArrays(one, req.route(), req.q(), req.qd(), req.tau(), req.wrenches_size() != 0);
  }
  std::vector<std::vector<double>> turned;
  for (const BatchWrench& w : checkWrenches(req.wrenches(), &req.tip_wrench(), m, 1, turned)) {
    ExternalWrench e;
    e.frame = w.frame;
    e.reference = w.reference;
    e.point = w.point;
    e.wrench = Eigen::Map<const Eigen::Matrix<double, 6, 1>>(w.values);
    in.wrenches.push_back(e);
  }
  // the model with this payload, kept while the messages name the same model and payload
  in.key = in.entry->id;
  if (req.has_payload()) in.key += req.payload().SerializeAsString();
  in.model = previous.model && previous.key == in.key
                 ? std::move(previous.model)
                 : withPayload(in.entry->model, req.has_payload(), req.payload());
  return in;
}

// ------------------------------------------------------------------------------------------------ the checks

std::shared_ptr<const Entry> requireModel(Registry& registry, const std::string& id,
                                          const StopCondition* stop) {
  if (id.empty()) fail(ErrorCode::InvalidArgument, "model_id is empty, expected a model id (64 hex digits)");
  if (!isModelId(id)) {
    fail(ErrorCode::InvalidArgument,
         "model_id '" + id.substr(0, 80) + "' is not a model id, expected 64 lower-case hex digits");
  }
  auto entry = registry.find(id, stop);
  if (!entry) fail(ErrorCode::NotFound, registry.notFoundMessage(id));
  return entry;
}

std::uint64_t checkedProduct(std::uint64_t a, std::uint64_t b, const char* what) {
  std::uint64_t r = 0;
  if (__builtin_mul_overflow(a, b, &r)) {
    fail(ErrorCode::InvalidArgument, std::string(what) + " overflows (" + std::to_string(a) + " * " +
                                         std::to_string(b) + " does not fit in 64 bits)");
  }
  return r;
}

std::uint64_t checkBatch(std::uint32_t count, std::uint32_t dof, const Model& model, const Limits& limits) {
  if (count == 0) fail(ErrorCode::InvalidArgument, "count is 0, expected at least 1 state");
  if (count > limits.max_states) {
    fail(ErrorCode::ResourceExhausted,
         "count is " + std::to_string(count) + ", more than the limit max_states = " +
             std::to_string(limits.max_states) + " (--max-states, DENOC_MAX_STATES)");
  }
  checkDof(dof, model);
  return checkedProduct(count, dof, "count*dof");  // dof = nv
}

void checkLength(const Doubles& values, const char* name, std::uint64_t expected, const char* expected_text) {
  if (static_cast<std::uint64_t>(values.size()) != expected) {
    fail(ErrorCode::InvalidArgument, std::string(name) + " has " + std::to_string(values.size()) +
                                         " values, expected " + expected_text + " = " +
                                         std::to_string(expected));
  }
}

void checkFinite(const Doubles& values, const char* name, std::uint64_t row, double bound) {
  const double* p = values.data();
  const int n = values.size();
  for (int i = 0; i < n; ++i) {
    if (!(std::abs(p[i]) <= bound)) [[unlikely]] {
      std::string where = std::string(name) + "[" + std::to_string(i) + "]";
      if (row > 0) {
        where += " (state " + std::to_string(static_cast<std::uint64_t>(i) / row) + ", column " +
                 std::to_string(static_cast<std::uint64_t>(i) % row) + ")";
      }
      fail(ErrorCode::InvalidArgument,
           where + " is " + num(p[i]) +
               (std::isfinite(p[i]) ? ", expected a number in [-1e12, 1e12]" : ", expected a finite number"));
    }
  }
}

void checkAnswerSize(std::uint64_t doubles, const Limits& limits) {
  // 8 bytes per double plus headroom for the other fields
  const std::uint64_t bytes = checkedProduct(doubles, 8, "answer size") + 4096;
  if (bytes > limits.max_message_bytes) {
    fail(ErrorCode::ResourceExhausted,
         "the answer would hold " + std::to_string(doubles) + " doubles (" + std::to_string(bytes) +
             " bytes), more than the limit max_message_bytes = " + std::to_string(limits.max_message_bytes) +
             " (--max-message-bytes, DENOC_MAX_MESSAGE_BYTES); send fewer states");
  }
}

void checkPositive(double v, const char* name, bool allow_zero) {
  if (!std::isfinite(v) || v < 0.0 || (!allow_zero && v == 0.0)) {
    fail(ErrorCode::InvalidArgument,
         std::string(name) + " is " + num(v) + ", expected a finite number " + (allow_zero ? ">= 0" : "> 0"));
  }
  if (v > kMaxRequestValue) {
    fail(ErrorCode::InvalidArgument, std::string(name) + " is " + num(v) + ", expected at most 1e12");
  }
}

void checkRoute(v1::ForwardRoute route, const char* field, const Model& model) {
  if (!v1::ForwardRoute_IsValid(route)) {
    fail(ErrorCode::InvalidArgument,
         std::string(field) + " is " + std::to_string(static_cast<int>(route)) +
             ", expected FORWARD_ROUTE_SAHA, FORWARD_ROUTE_FIXMAN or FORWARD_ROUTE_CHOLESKY");
  }
  if (route == v1::FORWARD_ROUTE_FIXMAN && !model.serial) {
    fail(ErrorCode::InvalidArgument, std::string(field) +
                                         " is FORWARD_ROUTE_FIXMAN, which is derived for "
                                         "serial chains; this model is a tree: use FORWARD_ROUTE_SAHA or "
                                         "FORWARD_ROUTE_CHOLESKY");
  }
}

void checkConfigurations(const Doubles& values, const char* name, std::uint64_t count, std::uint64_t stride,
                         std::uint64_t offset, const Model& model) {
  if (model.root != RootJoint::Floating) return;
  for (std::uint64_t k = 0; k < count; ++k) {
    const double* c = values.data() + k * stride + offset + 3;
    // the norm without overflow: scaled by the largest component
    double big = 0.0;
    for (int i = 0; i < 4; ++i) big = std::max(big, std::abs(c[i]));
    double sum = 0.0;
    if (big > 0.0) {
      for (int i = 0; i < 4; ++i) sum += (c[i] / big) * (c[i] / big);
    }
    const double norm = big * std::sqrt(sum);
    if (!(std::abs(norm - 1.0) <= kQuaternionTolerance)) {
      const std::uint64_t at = k * stride + offset + 3;
      fail(ErrorCode::InvalidArgument,
           std::string(name) + "[" + std::to_string(at) + ".." + std::to_string(at + 3) + "] (state " +
               std::to_string(k) + "): the floating root's quaternion [qx, qy, qz, qw] has norm " +
               num(norm, 9) + ", expected 1 within " + num(kQuaternionTolerance, 3) + " (normalize it)");
    }
  }
}

NamedFrame resolveFrame(const Model& model, const std::string& name, const std::string& field) {
  NamedFrame f;
  f.frame = model.n;
  if (name.empty()) return f;
  for (int i = 0; i < model.n; ++i) {
    if (model.spec.joints[static_cast<std::size_t>(i)].link == name) {
      f.frame = i;
      return f;
    }
  }
  if (name == "tip") return f;
  if (name == model.spec.root_link) {
    f.frame = model.n + 1;
    return f;
  }
  for (const FixedFrameSpec& fixed : model.spec.fixed_frames) {
    if (fixed.name == name) {
      f.frame = fixed.joint >= 0 ? fixed.joint : model.n + 1;
      f.fixed = true;
      f.rotation = fixed.rotation;
      f.origin = fixed.origin;
      return f;
    }
  }
  fail(ErrorCode::InvalidArgument,
       field + " '" + name.substr(0, 80) + "' is not a frame of model '" + model.spec.name.substr(0, 80) +
           "' (" + std::to_string(model.n + 2) + " frames: its links, \"tip\", the root link '" +
           model.spec.root_link.substr(0, 80) + "' and " + std::to_string(model.spec.fixed_frames.size()) +
           " fixed frames; GetModel lists them)");
}

}  // namespace denoc::server
