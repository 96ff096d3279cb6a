#include "identity.hpp"

#include "errors.hpp"
#include "front.hpp"

namespace denoc::server {

grpc::Status TokenProcessor::Process(const InputMetadata& auth_metadata, grpc::AuthContext*, OutputMetadata*,
                                     OutputMetadata*) {
  const auto path = auth_metadata.find(":path");
  if (path != auth_metadata.end() && !needsToken(std::string_view(path->second.data(), path->second.size())))
    return grpc::Status::OK;
  const auto header = auth_metadata.find("authorization");
  std::string_view value;
  if (header != auth_metadata.end()) value = std::string_view(header->second.data(), header->second.size());
  try {
    authenticate(auth_, header == auth_metadata.end() ? nullptr : &value);
    return grpc::Status::OK;
  } catch (const RequestError& e) {
    return {grpc::StatusCode::UNAUTHENTICATED, e.what()};
  }
}

namespace {

// the value of a header in a call's metadata, or null
const std::string_view* header(const std::multimap<grpc::string_ref, grpc::string_ref>& md,
                               std::string_view name, std::string_view& value) {
  const auto it = md.find(grpc::string_ref(name.data(), name.size()));
  if (it == md.end()) return nullptr;
  value = std::string_view(it->second.data(), it->second.size());
  return &value;
}

}  // namespace

std::string identify(const grpc::CallbackServerContext& ctx, const Identity& identity) {
  const auto& md = ctx.client_metadata();
  if (!identity.auth) {
    if (identity.trust_front) {
      std::string_view verify, subject, address;
      std::string principal =
          frontPrincipal(header(md, kFrontVerifyHeader, verify), header(md, kFrontSubjectHeader, subject),
                         header(md, kFrontAddressHeader, address));
      if (!principal.empty()) return principal;
    }
    return peerPrincipal(ctx.peer());
  }
  const auto it = md.find("authorization");
  std::string_view value;
  if (it != md.end()) value = std::string_view(it->second.data(), it->second.size());
  return authenticate(*identity.auth, it == md.end() ? nullptr : &value);
}

std::string peerPrincipal(const std::string& peer) {
  if (peer.rfind("ipv4:", 0) == 0 || peer.rfind("ipv6:", 0) == 0) {
    const std::size_t colon = peer.rfind(':');
    if (colon > 4) return peer.substr(0, colon);
  }
  return peer;
}

}  // namespace denoc::server
