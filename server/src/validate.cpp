#include "validate.hpp"

#include <cmath>
#include <string>

#include "convert.hpp"
#include "errors.hpp"
#include "model_source.hpp"

namespace denoc::server {

namespace {
std::string num(double v) {
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.17g", v);
  return buf;
}
}  // namespace

std::shared_ptr<const Entry> requireModel(Registry& registry, const std::string& id) {
  if (id.empty()) fail(ErrorCode::InvalidArgument, "model_id is empty, expected a model id (64 hex digits)");
  if (!isModelId(id)) {
    fail(ErrorCode::InvalidArgument,
         "model_id '" + id.substr(0, 80) + "' is not a model id, expected 64 lower-case hex digits");
  }
  auto entry = registry.find(id);
  if (!entry) fail(ErrorCode::NotFound, "model_id " + id + " is not registered");
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
  if (dof != static_cast<std::uint32_t>(model.n)) {
    fail(ErrorCode::InvalidArgument,
         "dof is " + std::to_string(dof) + ", expected the model's dof = " + std::to_string(model.n));
  }
  return checkedProduct(count, dof, "count*dof");
}

void checkLength(const Doubles& values, const char* name, std::uint64_t expected, const char* expected_text) {
  if (static_cast<std::uint64_t>(values.size()) != expected) {
    fail(ErrorCode::InvalidArgument, std::string(name) + " has " + std::to_string(values.size()) +
                                         " values, expected " + expected_text + " = " +
                                         std::to_string(expected));
  }
}

void checkFinite(const Doubles& values, const char* name, std::uint64_t row) {
  const double* p = values.data();
  const int n = values.size();
  for (int i = 0; i < n; ++i) {
    if (!std::isfinite(p[i])) [[unlikely]] {
      std::string where = std::string(name) + "[" + std::to_string(i) + "]";
      if (row > 0) {
        where += " (state " + std::to_string(static_cast<std::uint64_t>(i) / row) + ", column " +
                 std::to_string(static_cast<std::uint64_t>(i) % row) + ")";
      }
      fail(ErrorCode::InvalidArgument, where + " is " + num(p[i]) + ", expected a finite number");
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
}

void checkRoute(v1::ForwardRoute route, const char* field) {
  if (!v1::ForwardRoute_IsValid(route)) {
    fail(ErrorCode::InvalidArgument,
         std::string(field) + " is " + std::to_string(static_cast<int>(route)) +
             ", expected FORWARD_ROUTE_SAHA, FORWARD_ROUTE_FIXMAN or FORWARD_ROUTE_CHOLESKY");
  }
}

namespace {

/// How the arrays of `count` states are named in messages: a batch's ("count*dof", the state and column of
/// a bad value named) or one stream message's ("dof").
struct Shape {
  std::uint64_t count;
  std::uint64_t dof;
  bool batch;
  std::uint64_t total() const { return count * dof; }
  const char* perState() const { return batch ? "count*dof" : "dof"; }
  std::uint64_t row() const { return batch ? dof : 0; }
};

void checkInverseDynamicsArrays(const Shape& s, const Doubles& q, const Doubles& qd, const Doubles& qdd,
                                const Doubles& tip_wrench) {
  checkLength(q, "q", s.total(), s.perState());
  checkLength(qd, "qd", s.total(), s.perState());
  checkLength(qdd, "qdd", s.total(), s.perState());
  if (tip_wrench.size() != 0) {
    checkLength(tip_wrench, "tip_wrench", checkedProduct(s.count, 6, "count*6"),
                s.batch ? "count*6" : "6 (or 0 for none)");
  }
  checkFinite(q, "q", s.row());
  checkFinite(qd, "qd", s.row());
  checkFinite(qdd, "qdd", s.row());
  checkFinite(tip_wrench, "tip_wrench", s.batch ? 6 : 0);
}

void checkForwardDynamicsArrays(const Shape& s, v1::ForwardRoute route, const Doubles& q, const Doubles& qd,
                                const Doubles& tau) {
  checkRoute(route, "route");
  checkLength(q, "q", s.total(), s.perState());
  checkLength(qd, "qd", s.total(), s.perState());
  checkLength(tau, "tau", s.total(), s.perState());
  checkFinite(q, "q", s.row());
  checkFinite(qd, "qd", s.row());
  checkFinite(tau, "tau", s.row());
}

}  // namespace

BatchInput validateInverseDynamics(Registry& registry, const Limits& limits,
                                   const v1::InverseDynamicsRequest& req) {
  BatchInput in;
  in.entry = requireModel(registry, req.model_id());
  in.total = checkBatch(req.count(), req.dof(), *in.entry->model, limits);
  in.count = req.count();
  checkInverseDynamicsArrays({req.count(), req.dof(), true}, req.q(), req.qd(), req.qdd(), req.tip_wrench());
  checkAnswerSize(in.total, limits);
  return in;
}

BatchInput validateForwardDynamics(Registry& registry, const Limits& limits,
                                   const v1::ForwardDynamicsRequest& req) {
  BatchInput in;
  in.entry = requireModel(registry, req.model_id());
  in.total = checkBatch(req.count(), req.dof(), *in.entry->model, limits);
  in.count = req.count();
  checkForwardDynamicsArrays({req.count(), req.dof(), true}, req.route(), req.q(), req.qd(), req.tau());
  checkAnswerSize(in.total, limits);
  return in;
}

BatchInput validateFullFactor(Registry& registry, const Limits& limits, const v1::FullFactorRequest& req) {
  BatchInput in;
  in.entry = requireModel(registry, req.model_id());
  const Model& m = *in.entry->model;
  in.total = checkBatch(req.count(), req.dof(), m, limits);
  in.count = req.count();
  const std::uint64_t square = checkedProduct(in.total, req.dof(), "count*dof*dof");
  checkLength(req.q(), "q", in.total, "count*dof");
  const bool need_qd = req.convective() || req.bias();
  if (need_qd || req.qd_size() != 0) {
    checkLength(req.qd(), "qd", in.total,
                need_qd ? "count*dof (qd is needed for convective and bias)" : "count*dof (or none)");
  }
  checkFinite(req.q(), "q", m.n);
  checkFinite(req.qd(), "qd", m.n);
  const std::uint64_t squares = 2 + (req.inverse() ? 1 : 0) + (req.convective() ? 1 : 0);
  const std::uint64_t vectors = 1 + (req.bias() ? 1 : 0) + (req.gravity_torque() ? 1 : 0);
  checkAnswerSize(checkedProduct(square, squares, "answer size") +
                      checkedProduct(in.total, vectors, "answer size") + req.count(),
                  limits);
  return in;
}

SimulateInput validateSimulate(Registry& registry, const Limits& limits, const v1::SimulateRequest& req) {
  SimulateInput in;
  in.entry = requireModel(registry, req.model_id());
  const Model& m = *in.entry->model;
  if (req.dof() != static_cast<std::uint32_t>(m.n)) {
    fail(ErrorCode::InvalidArgument,
         "dof is " + std::to_string(req.dof()) + ", expected the model's dof = " + std::to_string(m.n));
  }
  checkLength(req.q0(), "q0", req.dof(), "dof");
  checkLength(req.qd0(), "qd0", req.dof(), "dof");
  checkFinite(req.q0(), "q0", 0);
  checkFinite(req.qd0(), "qd0", 0);
  in.options = toSimulationOptions(req, m.n);
  validateSimulation(m, Eigen::Map<const Eigen::VectorXd>(req.q0().data(), m.n),
                     Eigen::Map<const Eigen::VectorXd>(req.qd0().data(), m.n), in.options);
  in.samples = sampleCount(in.options);
  if (in.samples > limits.max_states) {
    fail(ErrorCode::ResourceExhausted,
         "the run would report " + std::to_string(in.samples) +
             " samples, more than the limit max_states = " + std::to_string(limits.max_states) +
             " (--max-states, DENOC_MAX_STATES)");
  }
  in.batch = req.batch_size() == 0 ? 64u : req.batch_size();
  checkAnswerSize(
      checkedProduct(in.batch, 2ull * static_cast<std::uint64_t>(m.n) + 4, "batch_size*(2*dof+4)"), limits);
  return in;
}

std::shared_ptr<const Entry> validateStreamMessage(Registry& registry, const v1::StreamRequest& req,
                                                   std::shared_ptr<const Entry> previous) {
  switch (req.computation()) {
    case v1::COMPUTATION_ECHO:
      return nullptr;
    case v1::COMPUTATION_INVERSE_DYNAMICS:
    case v1::COMPUTATION_FORWARD_DYNAMICS:
      break;
    default:
      fail(ErrorCode::InvalidArgument, "computation is " +
                                           std::to_string(static_cast<int>(req.computation())) +
                                           ", expected COMPUTATION_INVERSE_DYNAMICS, "
                                           "COMPUTATION_FORWARD_DYNAMICS or COMPUTATION_ECHO");
  }
  std::shared_ptr<const Entry> entry = previous && previous->id == req.model_id()
                                           ? std::move(previous)
                                           : requireModel(registry, req.model_id());
  const Shape one{1, static_cast<std::uint64_t>(entry->model->n), false};
  if (req.computation() == v1::COMPUTATION_INVERSE_DYNAMICS) {
    checkInverseDynamicsArrays(one, req.q(), req.qd(), req.qdd(), req.tip_wrench());
  } else {
    checkForwardDynamicsArrays(one, req.route(), req.q(), req.qd(), req.tau());
  }
  return entry;
}

std::shared_ptr<const Entry> validateGetModel(Registry& registry, const v1::GetModelRequest& req) {
  return requireModel(registry, req.model_id());
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

}  // namespace denoc::server
