// Request errors of denocd and their mapping to gRPC status codes. Validation throws RequestError with a
// code of its own; toStatus() is the one place where any exception becomes a grpc::Status.
#pragma once

#include <grpcpp/support/status.h>

#include <cstddef>
#include <exception>
#include <stdexcept>
#include <string>
#include <string_view>

namespace denoc::server {

/// What went wrong, independent of gRPC.
enum class ErrorCode {
  InvalidArgument,     // malformed request: shapes, NaN/Inf, bad model description, unknown enum value
  NotFound,            // unknown model id
  ResourceExhausted,   // a configured limit (the message names the flag and the environment variable)
  FailedPrecondition,  // the request is well formed but the server state forbids it (pinned model)
  Unauthenticated,     // no bearer token, or an unknown one (access control on)
  PermissionDenied,    // the caller's token may not do this (delete another token's model)
  Unavailable,         // the model store could not be written
  Cancelled,           // the client went away (a stream's write failed, or it read nothing for too long)
  DeadlineExceeded,    // a Stream without a message for --idle-stream-timeout-ms, a call past its deadline
  Internal,            // a bug
};

/// Thrown by validation and handlers; the message says what is wrong and where.
class RequestError : public std::runtime_error {
 public:
  RequestError(ErrorCode code, const std::string& message) : std::runtime_error(message), code_(code) {}
  ErrorCode code() const { return code_; }

 private:
  ErrorCode code_;
};

[[noreturn]] inline void fail(ErrorCode code, const std::string& message) {
  throw RequestError(code, message);
}

/// The one mapping of errors to statuses (docs/service.md, "Requests and validation"): RequestError by its
/// code; denoc::ModelError and std::invalid_argument (the core's argument checks) to INVALID_ARGUMENT;
/// denoc::DivergenceError (an integration that stopped part way: Simulate, Rollout) to ABORTED; any other
/// denoc::NumericalError (a state beyond double precision) to INVALID_ARGUMENT; denoc::Stopped to
/// DEADLINE_EXCEEDED or CANCELLED by its reason; std::bad_alloc to RESOURCE_EXHAUSTED; anything else to
/// INTERNAL. The message is made safe by safeMessage().
grpc::Status toStatus(std::exception_ptr error);

/// The status of a RequestError(code, message), by the same mapping.
grpc::Status toStatus(ErrorCode code, const std::string& message);

/// Longest message a status carries (characters, after escaping): well inside gRPC's 8 KiB of metadata
/// even when every character is percent-encoded, so a long name cannot turn an INVALID_ARGUMENT into the
/// client's RESOURCE_EXHAUSTED.
inline constexpr std::size_t kMaxStatusMessage = 1024;

/// A message fit for a client and a log line: control characters and non-ASCII bytes escaped (\n, \x1b),
/// cut to kMaxStatusMessage characters with its full length named ("... (5000 bytes)").
std::string safeMessage(std::string_view message);

/// The canonical name of a status code ("INVALID_ARGUMENT").
const char* codeName(grpc::StatusCode code);

}  // namespace denoc::server
