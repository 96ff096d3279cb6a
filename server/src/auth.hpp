// Bearer-token access control of denocd. The token file holds one token per line, optionally preceded by a
// principal name (`NAME TOKEN`; blank lines and lines starting with '#' are skipped). Tokens are kept only
// as SHA-256 digests; a presented token is hashed and compared with every known digest in constant time
// (CRYPTO_memcmp, no early exit), so neither the comparison nor its timing reveals a token. No gRPC here: the
// server runs these checks on a call's headers (identity.hpp).
#pragma once

#include <array>
#include <memory>
#include <mutex>
#include <string>
#include <string_view>
#include <vector>

namespace denoc::server {

class TokenAuth {
 public:
  using Digest = std::array<unsigned char, 32>;

  /// Reads a token file. Throws std::runtime_error naming the file and line when it cannot be read, holds
  /// no token, repeats a token, or has a line of more than two fields.
  static TokenAuth fromFile(const std::string& path);

  /// From (name, token) pairs; an empty name becomes "token-<first 12 hex digits of its SHA-256>".
  explicit TokenAuth(const std::vector<std::pair<std::string, std::string>>& tokens);
  TokenAuth(TokenAuth&& other) noexcept : entries_(other.current()) {}
  TokenAuth& operator=(TokenAuth&&) = delete;

  /// The principal a token belongs to, or empty when the token is unknown.
  std::string principal(std::string_view token) const;

  std::size_t size() const { return current()->size(); }

  /// From now on the tokens of `fresh` (a rotated token file: SIGHUP); checks in progress finish with the
  /// tokens they began with. Thread-safe.
  void replace(TokenAuth&& fresh);

 private:
  struct Known {
    Digest digest;
    std::string name;
  };
  std::shared_ptr<const std::vector<Known>> current() const {
    std::lock_guard lock(mutex_);
    return entries_;
  }
  mutable std::mutex mutex_;
  std::shared_ptr<const std::vector<Known>> entries_;
};

/// The token of an `authorization` metadata value ("Bearer <token>", scheme case-insensitive), or empty.
std::string_view bearerToken(std::string_view authorization);

/// The principal of a call's `authorization` metadata value (null: the call has none), or throws
/// RequestError(Unauthenticated) saying which of these it is: none, not "Bearer <token>", an unknown token.
/// The token itself is never part of the message.
std::string authenticate(const TokenAuth& auth, const std::string_view* authorization);

/// Whether calls of a method (its HTTP/2 :path, "/package.Service/Method") need a token: every method but
/// those of the health (grpc.health.v1.Health) and reflection (grpc.reflection.v1alpha.ServerReflection)
/// services, which load balancers, probes and tools call without one.
bool needsToken(std::string_view path);

}  // namespace denoc::server
