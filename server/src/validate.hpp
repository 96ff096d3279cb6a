// Validation of dynamics requests, in one place: every check runs before any computation, and every failure
// throws RequestError with a message naming the field and what was expected.
#pragma once

#include <google/protobuf/repeated_field.h>

#include <cstdint>
#include <memory>
#include <string>

#include "limits.hpp"
#include "registry.hpp"

namespace denoc::server {

using Doubles = google::protobuf::RepeatedField<double>;

/// The model for id: INVALID_ARGUMENT when id is not 64 lower-case hex digits, NOT_FOUND when unknown.
std::shared_ptr<const Entry> requireModel(Registry& registry, const std::string& id);

/// Checks count (1..max_states: RESOURCE_EXHAUSTED above) and dof (equal to the model's) and returns
/// count * dof, checked against overflow.
std::uint64_t checkBatch(std::uint32_t count, std::uint32_t dof, const Model& model, const Limits& limits);

/// a * b, INVALID_ARGUMENT naming what when it overflows 64 bits.
std::uint64_t checkedProduct(std::uint64_t a, std::uint64_t b, const char* what);

/// INVALID_ARGUMENT "q has 13 values, expected count*dof = 14" unless values.size() == expected.
void checkLength(const Doubles& values, const char* name, std::uint64_t expected, const char* expected_text);

/// INVALID_ARGUMENT "qd[5] (state 0, joint 5) is nan, expected a finite number" at the first non-finite
/// entry; row is the number of values per state (the state and column are named when row > 0).
void checkFinite(const Doubles& values, const char* name, std::uint64_t row);

/// RESOURCE_EXHAUSTED when an answer of this many doubles would exceed max_message_bytes.
void checkAnswerSize(std::uint64_t doubles, const Limits& limits);

/// INVALID_ARGUMENT unless v is finite and > 0 (strictly) or >= 0 (allow_zero).
void checkPositive(double v, const char* name, bool allow_zero);

}  // namespace denoc::server
