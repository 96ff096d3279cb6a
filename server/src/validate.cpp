#include "validate.hpp"

#include <cmath>
#include <string>

#include "errors.hpp"

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

}  // namespace denoc::server
