#include "planning_validate.hpp"

#include <stdexcept>
#include <string>

#include "denoc/payload.hpp"
#include "errors.hpp"
#include "validate.hpp"

namespace denoc::server {

namespace {

Eigen::Vector3d vec3(const v1::Vec3& v) { return {v.x(), v.y(), v.z()}; }

void checkFiniteVec(const v1::Vec3& v, const char* name) {
  for (double x : {v.x(), v.y(), v.z()}) {
    if (!std::isfinite(x))
      fail(ErrorCode::InvalidArgument, std::string(name) + " has a non-finite component");
  }
}

/// q and qd of a batch (qd only when `with_qd`; otherwise it must be empty or count*dof finite values).
void checkStates(const Doubles& values, const char* name, std::uint64_t total, std::uint64_t dof) {
  checkLength(values, name, total, "count*dof");
  checkFinite(values, name, dof);
}

void checkOptionalStates(const Doubles& values, const char* name, std::uint64_t total, std::uint64_t dof,
                         bool needed, const char* why) {
  if (values.empty() && !needed) return;
  if (values.empty()) fail(ErrorCode::InvalidArgument, std::string(name) + " is empty; " + why);
  checkStates(values, name, total, dof);
}

}  // namespace

std::shared_ptr<const Model> modelWithPayload(const std::shared_ptr<const Model>& model, bool has_payload,
                                              const v1::Payload& p) {
  if (!has_payload) return model;
  Payload payload;
  payload.mass = p.mass();
  payload.com = vec3(p.com());
  const v1::Inertia& i = p.inertia();
  payload.inertia << i.ixx(), i.ixy(), i.ixz(), i.ixy(), i.iyy(), i.iyz(), i.ixz(), i.iyz(), i.izz();
  try {
    checkPayload(payload);
    return std::make_shared<const Model>(attachPayload(*model, payload));
  } catch (const std::invalid_argument& e) {
    fail(ErrorCode::InvalidArgument, e.what());
  }
}

KinematicsInput validateKinematics(Registry& registry, const Limits& limits,
                                   const v1::KinematicsRequest& req) {
  KinematicsInput in;
  in.entry = requireModel(registry, req.model_id());
  const Model& m = *in.entry->model;
  in.total = checkBatch(req.count(), req.dof(), m, limits);
  in.count = req.count();
  const std::uint64_t n = req.dof();
  checkStates(req.q(), "q", in.total, n);
  checkOptionalStates(req.qd(), "qd", in.total, n, req.jdot_qd(), "jdot_qd needs count*dof joint velocities");
  if (!v1::ReferenceFrame_IsValid(req.reference())) {
    fail(ErrorCode::InvalidArgument, "reference is " + std::to_string(static_cast<int>(req.reference())) +
                                         ", expected REFERENCE_FRAME_BASE or REFERENCE_FRAME_LOCAL");
  }
  if (!v1::TaskRows_IsValid(req.lambda_rows())) {
    fail(ErrorCode::InvalidArgument, "lambda_rows is " + std::to_string(static_cast<int>(req.lambda_rows())) +
                                         ", expected TASK_ROWS_FULL, TASK_ROWS_LINEAR or TASK_ROWS_ANGULAR");
  }
  checkFiniteVec(req.point(), "point");
  try {
    in.frame = frameIndex(m, req.link());
  } catch (const std::invalid_argument& e) {
    fail(ErrorCode::InvalidArgument, std::string("link: ") + e.what());
  }
  in.point = vec3(req.point());
  in.reference = req.reference() == v1::REFERENCE_FRAME_LOCAL ? ReferenceFrame::Local : ReferenceFrame::Base;
  in.rows = req.lambda_rows() == v1::TASK_ROWS_LINEAR    ? TaskRows::Linear
            : req.lambda_rows() == v1::TASK_ROWS_ANGULAR ? TaskRows::Angular
                                                         : TaskRows::Full;
  in.lambda_size = in.rows == TaskRows::Full ? 6 : 3;
  // per state: the pose (12), and what is asked for
  std::uint64_t per_state = 12;
  if (req.jacobian()) per_state += 6 * n;
  if (req.jdot_qd()) per_state += 6;
  if (req.lambda()) per_state += static_cast<std::uint64_t>(in.lambda_size * in.lambda_size);
  if (req.all_frames()) per_state += 12 * (n + 1);
  checkAnswerSize(checkedProduct(in.count, per_state, "the answer's size"), limits);
  in.model = modelWithPayload(in.entry->model, req.has_payload(), req.payload());
  return in;
}

PlanningInput validateDerivatives(Registry& registry, const Limits& limits,
                                  const v1::DerivativesRequest& req) {
  PlanningInput in;
  in.entry = requireModel(registry, req.model_id());
  const Model& m = *in.entry->model;
  in.total = checkBatch(req.count(), req.dof(), m, limits);
  in.count = req.count();
  const std::uint64_t n = req.dof();
  if (!v1::DerivativeOf_IsValid(req.of())) {
    fail(ErrorCode::InvalidArgument,
         "of is " + std::to_string(static_cast<int>(req.of())) +
             ", expected DERIVATIVE_OF_INVERSE_DYNAMICS or DERIVATIVE_OF_FORWARD_DYNAMICS");
  }
  const bool inverse = req.of() == v1::DERIVATIVE_OF_INVERSE_DYNAMICS;
  checkStates(req.q(), "q", in.total, n);
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
  // two (inverse) or three (forward) n x n matrices and a vector per state
  const std::uint64_t per_state = (inverse ? 2 : 3) * checkedProduct(n, n, "dof*dof") + n;
  checkAnswerSize(checkedProduct(in.count, per_state, "the answer's size"), limits);
  in.model = modelWithPayload(in.entry->model, req.has_payload(), req.payload());
  return in;
}

RolloutInput validateRollout(Registry& registry, const Limits& limits, const v1::RolloutRequest& req) {
  RolloutInput in;
  in.entry = requireModel(registry, req.model_id());
  const Model& m = *in.entry->model;
  if (req.count() == 0) fail(ErrorCode::InvalidArgument, "count is 0, expected at least 1 rollout");
  if (req.steps() == 0) fail(ErrorCode::InvalidArgument, "steps is 0, expected at least 1 step");
  if (req.dof() != static_cast<std::uint32_t>(m.n)) {
    fail(ErrorCode::InvalidArgument,
         "dof is " + std::to_string(req.dof()) + ", expected the model's dof = " + std::to_string(m.n));
  }
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
  // the answer first: it bounds everything else
  const std::uint64_t x = 2 * n;
  std::uint64_t doubles = checkedProduct(K * (T + 1), x, "the answer's size");
  if (req.linearize()) {
    doubles += checkedProduct(in.steps, checkedProduct(x, x + n, "(2 dof)*(3 dof)"), "the answer's size");
  }
  checkAnswerSize(doubles, limits);
  checkLength(req.x0(), "x0", K * x, "count*2*dof");
  checkFinite(req.x0(), "x0", x);
  if (req.shared_controls()) {
    checkLength(req.u(), "u", T * n, "steps*dof (shared_controls)");
  } else {
    checkLength(req.u(), "u", in.steps * n, "count*steps*dof");
  }
  checkFinite(req.u(), "u", n);
  in.total = K * x;
  in.options.scheme =
      req.scheme() == v1::STEP_SCHEME_SEMI_IMPLICIT_EULER ? StepScheme::SemiImplicitEuler : StepScheme::RK4;
  in.options.step = req.dt();
  in.options.steps = T;
  in.model = modelWithPayload(in.entry->model, req.has_payload(), req.payload());
  return in;
}

}  // namespace denoc::server
