// Registration: a RegisterModelRequest checked by its validator (validateRegisterModel), converted
// (convert.hpp) and built by the core into a model with its content-addressed id (model_id.hpp). Nothing
// here touches the registry or the store.
#pragma once

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

/// The model of a registration request (a call's, or a store record's): validateRegisterModel, then the
/// core's builder, polling `stop` (when not null: the call's cancellation and deadline) through the parsing
/// and the building. Throws RequestError (the request's shape, the limits), ModelError (the core's verdict on
/// the model) or denoc::Stopped (toStatus: CANCELLED or DEADLINE_EXCEEDED).
BuiltModel buildFromRequest(const v1::RegisterModelRequest& request, const Limits& limits,
                            const StopCondition* stop = nullptr);

/// A built-in model from a DH table (source "builtin").
BuiltModel buildBuiltin(const DHSpec& dh);

}  // namespace denoc::server
