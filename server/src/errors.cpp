#include "errors.hpp"

#include <new>

#include "denoc/integrator.hpp"
#include "denoc/model.hpp"
#include "denoc/stop.hpp"
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
  switch (code) {
    case grpc::StatusCode::OK:
      return "OK";
    case grpc::StatusCode::CANCELLED:
      return "CANCELLED";
    case grpc::StatusCode::UNKNOWN:
      return "UNKNOWN";
    case grpc::StatusCode::INVALID_ARGUMENT:
      return "INVALID_ARGUMENT";
    case grpc::StatusCode::DEADLINE_EXCEEDED:
      return "DEADLINE_EXCEEDED";
    case grpc::StatusCode::NOT_FOUND:
      return "NOT_FOUND";
    case grpc::StatusCode::ALREADY_EXISTS:
      return "ALREADY_EXISTS";
    case grpc::StatusCode::PERMISSION_DENIED:
      return "PERMISSION_DENIED";
    case grpc::StatusCode::UNAUTHENTICATED:
      return "UNAUTHENTICATED";
    case grpc::StatusCode::RESOURCE_EXHAUSTED:
      return "RESOURCE_EXHAUSTED";
    case grpc::StatusCode::FAILED_PRECONDITION:
      return "FAILED_PRECONDITION";
    case grpc::StatusCode::ABORTED:
      return "ABORTED";
    case grpc::StatusCode::OUT_OF_RANGE:
      return "OUT_OF_RANGE";
    case grpc::StatusCode::UNIMPLEMENTED:
      return "UNIMPLEMENTED";
    case grpc::StatusCode::INTERNAL:
      return "INTERNAL";
    case grpc::StatusCode::UNAVAILABLE:
      return "UNAVAILABLE";
    case grpc::StatusCode::DATA_LOSS:
      return "DATA_LOSS";
    default:
      return "UNKNOWN";
  }
}

}  // namespace denoc::server
