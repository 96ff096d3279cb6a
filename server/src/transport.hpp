// How denocd meets the network: its credentials (TLS, or plaintext; with tokens, credentials that run the
// token check on the headers) and the transport's bounds and timers (docs/service.md "Transport").
#pragma once

#include <grpcpp/grpcpp.h>

#include <memory>
#include <string>

#include "auth.hpp"
#include "options.hpp"

namespace denoc::server {

/// The bytes of a file denocd reads (certificates, keys, the preloaded URDF files); std::runtime_error
/// "cannot read PATH" when it cannot be opened.
std::string readFile(const std::string& path);

/// The listening credentials and whether they check tokens on the headers.
struct Credentials {
  std::shared_ptr<grpc::ServerCredentials> credentials;
  bool tokens_on_headers = false;
  const char* kind = "plaintext";  // for the start-up log line
};

/// TLS (mutual when a client CA is given) or plaintext. With tokens the token check runs on the headers
/// (TokenProcessor) wherever the credentials can run it: TLS, and plaintext on a loopback TCP address or a
/// unix socket (gRPC's local credentials: the same bytes on the wire as plaintext, the peer checked to be
/// on this host). Plaintext on an address other hosts reach (--plaintext) cannot: tokens are then checked
/// when the call reaches the service, after a unary call's message arrived (docs/service.md).
Credentials makeCredentials(const ServerOptions& options, const TokenAuth* auth);

/// Keepalive, idle and age limits of connections; HTTP/2 streams per connection; header size; compressed
/// requests refused; message sizes; the resource quota (memory);
/// the --grpc-arg extras.
void configureTransport(grpc::ServerBuilder& builder, const ServerOptions& options,
                        grpc::ResourceQuota& quota);

/// The bound on a call's headers (GRPC_ARG_MAX_METADATA_SIZE): tokens, deadlines and client names fit.
inline constexpr int kMaxMetadataBytes = 16 << 10;

}  // namespace denoc::server
