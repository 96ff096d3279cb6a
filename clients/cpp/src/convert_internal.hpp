// The conversions between messages and client types that the client's calls share (not public): vectors,
// payloads, routes, the fields every answer carries, and answer arrays checked against the sizes their
// count and dof announce.
#pragma once

#include <Eigen/Core>
#include <chrono>
#include <cstdint>
#include <vector>

#include "denoc/client/types.hpp"
#include "denoc/v1/dynamics.pb.h"

namespace denoc::client::convert {

using Field = google::protobuf::RepeatedField<double>;

Eigen::Vector3d vec3(const v1::Vec3& v);
v1::Vec3 vec3(const Eigen::Vector3d& v);
/// The six entries of a symmetric 3 x 3 inertia (its upper triangle).
v1::Inertia inertia(const Eigen::Matrix3d& m);
/// The one conversion of a Payload to its message (every call that carries one).
void writePayload(v1::Payload* out, const Payload& p);
/// External wrenches appended to a request's repeated LinkWrench field (row-major values).
void appendWrenches(google::protobuf::RepeatedPtrField<v1::LinkWrench>* out,
                    const std::vector<LinkWrench>& wrenches);
v1::RootJoint wireRoot(RootJoint root);

v1::ForwardRoute wireRoute(Route r);
Route route(v1::ForwardRoute r);

/// The model id, gravity and compute time of an answer.
template <typename Response>
void fillInfo(AnswerInfo& info, const Response& r) {
  info.model_id = r.model_id();
  info.gravity = vec3(r.gravity());
  info.compute_time = std::chrono::nanoseconds(r.compute_time_ns());
}

/// Checks that an answer's array has the size its count and dof announce (a corrupt answer is an error
/// INTERNAL naming field and call, never an out-of-bounds read).
void expectSize(int got, std::int64_t want, const char* field, const char* call);

/// A repeated field as a vector (empty when the field is).
Eigen::VectorXd vector(const Field& f);
/// count x cols from a row-major field of count * cols values, checked; empty when the field is.
Eigen::MatrixXd checkedRows(const Field& f, int count, int cols, const char* field, const char* call);
/// count matrices rows x cols from a row-major field, checked; empty when the field is.
std::vector<Eigen::MatrixXd> checkedBlocks(const Field& f, std::int64_t count, int rows, int cols,
                                           const char* field, const char* call);

}  // namespace denoc::client::convert
