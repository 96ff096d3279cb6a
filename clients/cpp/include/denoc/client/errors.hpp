// denoc::client errors: a failed call as an exception with the gRPC status code and the server's message.
#pragma once

#include <grpcpp/support/status.h>

#include <stdexcept>
#include <string>

namespace denoc::client {

/// A failed call: the gRPC status code and the server's message (or the client's, for failures detected
/// before sending, such as an unreadable model file: then code() is INVALID_ARGUMENT or NOT_FOUND).
class Error : public std::runtime_error {
 public:
  Error(grpc::StatusCode code, std::string message, std::string call = {});
  grpc::StatusCode code() const { return code_; }
  /// The status message as the server sent it.
  const std::string& message() const { return message_; }
  /// The RPC that failed, e.g. "InverseDynamics".
  const std::string& call() const { return call_; }

 private:
  grpc::StatusCode code_;
  std::string message_;
  std::string call_;
};

/// Whether a NOT_FOUND message says the model was deleted (DeleteModel) rather than never known: such a
/// model is not registered again behind the caller's back.
bool wasDeleted(const std::string& message);

/// Whether a failed call is RESOURCE_EXHAUSTED naming a limit the client caches from GetServerInfo
/// (max_states, which it splits batches by): the server that refused it takes less than the cached limit
/// said, e.g. a replica started with a smaller --max-states during a rolling upgrade. Such a refusal makes
/// a batch call read the limits again, once (docs/clients.md); any other RESOURCE_EXHAUSTED is thrown as it
/// is.
bool namesCachedLimit(const Error& error);

/// Name of a status code, e.g. "NOT_FOUND".
std::string codeName(grpc::StatusCode code);

}  // namespace denoc::client
