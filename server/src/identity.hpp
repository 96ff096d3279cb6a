// Who is calling, on gRPC: the bearer-token check run on a call's headers by gRPC's AuthMetadataProcessor
// (so a call without a valid token is refused before any of its message is read), and the principal a call
// is accounted to (per-principal bounds, model ownership, logs).
#pragma once

#include <grpcpp/security/auth_metadata_processor.h>
#include <grpcpp/server_context.h>

#include <string>

#include "auth.hpp"

namespace denoc::server {

/// Checks the `authorization` header of every call that needs a token (needsToken): a known token passes,
/// anything else is refused with UNAUTHENTICATED and the reason. Runs inline on gRPC's thread (a SHA-256
/// and a few constant-time compares). It records nothing: gRPC 1.51 hands the processor the connection's
/// auth context, shared by every call on the connection, so a property set there would name one call's
/// principal for all of them (and grow with each call); identify() maps the call's own token again.
class TokenProcessor final : public grpc::AuthMetadataProcessor {
 public:
  explicit TokenProcessor(const TokenAuth& auth) : auth_(auth) {}
  bool IsBlocking() const override { return false; }
  grpc::Status Process(const InputMetadata& auth_metadata, grpc::AuthContext* context,
                       OutputMetadata* consumed_auth_metadata, OutputMetadata* response_metadata) override;

 private:
  const TokenAuth& auth_;
};

/// How the server identifies callers.
struct Identity {
  const TokenAuth* auth = nullptr;  // access control on when set
  bool trust_front = false;         // --trusted-front-header: the front's identity headers name the caller
};

/// The principal of a call: with access control its token's (RequestError(Unauthenticated) when the
/// metadata has no valid token: possible only where the transport could not run TokenProcessor); without
/// it, with trust_front, the identity the front's headers name (frontPrincipal: "cert:<subject>" or
/// "addr:<address>"); else the peer's address (peerPrincipal).
std::string identify(const grpc::CallbackServerContext& ctx, const Identity& identity);

/// A peer address without its port ("ipv4:127.0.0.1:40312" -> "ipv4:127.0.0.1", "ipv6:[::1]:5" ->
/// "ipv6:[::1]"); other forms (unix sockets) unchanged.
std::string peerPrincipal(const std::string& peer);

}  // namespace denoc::server
