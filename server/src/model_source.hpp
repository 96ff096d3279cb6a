// Models from registration requests: validation of the request's shape, building through the core, and the
// content-addressed id (SHA-256 of the canonical form of the validated model).
#pragma once

#include <chrono>
#include <functional>
#include <memory>
#include <string>

#include "denoc/dh.hpp"
#include "denoc/model.hpp"
#include "denoc/stop.hpp"
#include "denoc/v1/dynamics.pb.h"
#include "limits.hpp"

namespace denoc::server {

/// A validated, built model with its id.
struct BuiltModel {
  std::shared_ptr<const Model> model;
  std::string id;      // 64 lower-case hex digits
  std::string name;    // display name
  std::string source;  // "urdf", "dh" or "builtin"
};

/// Validates a registration request and builds its model. Throws RequestError (shape, limits) or
/// ModelError (the core's verdict on the model); never touches the registry or the store. The build polls
/// `cancelled` (asked at most once per millisecond; e.g. the call's IsCancelled) and `deadline` (the call's)
/// through the core's parsing and building, and throws denoc::Stopped when either fires (toStatus: CANCELLED
/// or DEADLINE_EXCEEDED).
BuiltModel buildFromRequest(
    const v1::RegisterModelRequest& request, const Limits& limits, std::function<bool()> cancelled = {},
    std::chrono::system_clock::time_point deadline = std::chrono::system_clock::time_point::max());

/// The same, polling `stop` (the RPC layer's stop condition of the call).
BuiltModel buildFromRequest(const v1::RegisterModelRequest& request, const Limits& limits,
                            const StopCondition& stop);

/// A built-in model from a DH table (source "builtin").
BuiltModel buildBuiltin(const DHSpec& dh);

/// The canonical form of a validated model (ModelSpec after buildModel): one line per item, doubles as
/// C99 hex floats (%a, with -0 written as 0), names length-prefixed. The display name is not part of it.
std::string canonicalForm(const ModelSpec& spec);

/// The store's record of a registration: the request (its unknown fields dropped) with the registering
/// principal in field 1000, which RegisterModelRequest does not define (readers of the plain request skip
/// it). An empty owner (no access control) adds nothing.
std::string storeRecord(const v1::RegisterModelRequest& request, const std::string& owner);

/// The owner a parsed store record names ("" when none).
std::string recordOwner(const v1::RegisterModelRequest& record);

/// Lower-case hex SHA-256 of bytes (OpenSSL).
std::string sha256Hex(const std::string& bytes);

/// True when s is 64 lower-case hex digits.
bool isModelId(const std::string& s);

/// Whether this build's core has the URDF builder.
bool haveUrdf();

}  // namespace denoc::server
