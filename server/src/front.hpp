// The principal of a call that reached denocd through a trusted front (deploy/nginx/denoc.conf), read from
// the headers the front sets on every call it forwards, overwriting any a client sent under those names:
// whether the front verified a client certificate, that certificate's subject, and the client's address.
// Trusted only when denocd is told to (--trusted-front-header) and listens on a unix socket, which only
// the front can reach. No gRPC here.
#pragma once

#include <cstddef>
#include <string>
#include <string_view>

namespace denoc::server {

/// The headers a trusted front sets (nginx: grpc_set_header, see deploy/nginx/denoc.conf).
inline constexpr std::string_view kFrontVerifyHeader = "x-denoc-client-verify";    // $ssl_client_verify
inline constexpr std::string_view kFrontSubjectHeader = "x-denoc-client-subject";  // $ssl_client_s_dn
inline constexpr std::string_view kFrontAddressHeader = "x-denoc-client-addr";     // $remote_addr
/// Longest subject or address taken from a front header; a longer one is not an identity.
inline constexpr std::size_t kMaxFrontIdentityBytes = 1024;

/// The principal named by a trusted front's headers (null: the call has no such header): "cert:<subject>"
/// when verify is "SUCCESS" and the subject is not empty, else "addr:<address>" when the address is not
/// empty, else empty (the caller falls back to the peer). A subject or address longer than
/// kMaxFrontIdentityBytes, or holding a control character, counts as absent.
std::string frontPrincipal(const std::string_view* verify, const std::string_view* subject,
                           const std::string_view* address);

}  // namespace denoc::server
