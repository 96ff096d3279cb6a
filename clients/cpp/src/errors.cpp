// Failed calls: the status-code names and denoc::client::Error.
#include "denoc/client/errors.hpp"

#include <utility>

#include "denoc/v1/status_name.hpp"

namespace denoc::client {

std::string codeName(grpc::StatusCode code) { return v1::statusName(code); }

bool wasDeleted(const std::string& message) {
  // the server's NOT_FOUND of a model with a tombstone: "model_id <id> was deleted (DeleteModel); ..."
  return message.find(" was deleted (DeleteModel)") != std::string::npos;
}

Error::Error(grpc::StatusCode code, std::string message, std::string call)
    : std::runtime_error((call.empty() ? std::string() : call + ": ") + codeName(code) + ": " + message),
      code_(code),
      message_(std::move(message)),
      call_(std::move(call)) {}

}  // namespace denoc::client
