// The names of gRPC's status codes as the wire documents them (docs/service.md, "Status codes"), in one
// place for the server's logs and metrics, the C++ client's errors and the health probe.
#pragma once

#include <grpcpp/support/status.h>

#include <string>

namespace denoc::v1 {

/// "INVALID_ARGUMENT" for grpc::StatusCode::INVALID_ARGUMENT, ...; "CODE_<n>" for a number gRPC does not
/// define.
std::string statusName(grpc::StatusCode code);

}  // namespace denoc::v1
