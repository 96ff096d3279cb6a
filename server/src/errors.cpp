#include "errors.hpp"

#include <array>
#include <new>
#include <string>

#include "denoc/integrator.hpp"
#include "denoc/model.hpp"
#include "denoc/stop.hpp"
#include "denoc/v1/status_name.hpp"
#include "log.hpp"

namespace denoc::server {

namespace {

grpc::Status mapException(std::exception_ptr error) {
  try {
    std::rethrow_exception(error);
  } catch (const RequestError& e) {
    switch (e.code()) {
      case ErrorCode::InvalidArgument:
        return {grpc::StatusCode::INVALID_ARGUMENT, e.what()};
      case ErrorCode::NotFound:
        return {grpc::StatusCode::NOT_FOUND, e.what()};
      case ErrorCode::ResourceExhausted:
        return {grpc::StatusCode::RESOURCE_EXHAUSTED, e.what()};
      case ErrorCode::FailedPrecondition:
        return {grpc::StatusCode::FAILED_PRECONDITION, e.what()};
      case ErrorCode::Unauthenticated:
        return {grpc::StatusCode::UNAUTHENTICATED, e.what()};
      case ErrorCode::PermissionDenied:
        return {grpc::StatusCode::PERMISSION_DENIED, e.what()};
      case ErrorCode::Unavailable:
        return {grpc::StatusCode::UNAVAILABLE, e.what()};
      case ErrorCode::Cancelled:
        return {grpc::StatusCode::CANCELLED, e.what()};
      case ErrorCode::DeadlineExceeded:
        return {grpc::StatusCode::DEADLINE_EXCEEDED, e.what()};
      case ErrorCode::Internal:
        return {grpc::StatusCode::INTERNAL, e.what()};
    }
    return {grpc::StatusCode::INTERNAL, e.what()};
  } catch (const ModelError& e) {
    return {grpc::StatusCode::INVALID_ARGUMENT, std::string("invalid model: ") + e.what()};
  } catch (const std::invalid_argument& e) {
    return {grpc::StatusCode::INVALID_ARGUMENT, e.what()};
  } catch (const DivergenceError& e) {
    return {grpc::StatusCode::ABORTED, std::string("the integration stopped part way: ") + e.what()};
  } catch (const NumericalError& e) {
    return {grpc::StatusCode::INVALID_ARGUMENT,
            std::string("the state or the model is beyond double precision: ") + e.what()};
  } catch (const Stopped& e) {
    return {e.reason() == StopReason::Deadline ? grpc::StatusCode::DEADLINE_EXCEEDED
                                               : grpc::StatusCode::CANCELLED,
            e.what()};
  } catch (const std::bad_alloc&) {
    return {grpc::StatusCode::RESOURCE_EXHAUSTED, "out of memory while serving the request"};
  } catch (const std::exception& e) {
    return {grpc::StatusCode::INTERNAL, std::string("internal error: ") + e.what()};
  } catch (...) {
    return {grpc::StatusCode::INTERNAL, "internal error: unknown exception"};
  }
}

}  // namespace

grpc::Status toStatus(std::exception_ptr error) {
  const grpc::Status status = mapException(error);
  return {status.error_code(), safeMessage(status.error_message())};
}

grpc::Status toStatus(ErrorCode code, const std::string& message) {
  return toStatus(std::make_exception_ptr(RequestError(code, message)));
}

std::string safeMessage(std::string_view message) { return escaped(message, kMaxStatusMessage); }

const char* codeName(grpc::StatusCode code) {
  // the wire's names (denoc/v1/status_name.hpp), kept for the life of the process: the log limiter and the
  // metrics keep the pointers
  static const std::array<std::string, 17> names = [] {
    std::array<std::string, 17> n;
    for (int c = 0; c < 17; ++c)
      n[static_cast<std::size_t>(c)] = v1::statusName(static_cast<grpc::StatusCode>(c));
    return n;
  }();
  const int c = static_cast<int>(code);
  return c >= 0 && c < 17 ? names[static_cast<std::size_t>(c)].c_str() : "UNKNOWN";
}

}  // namespace denoc::server
