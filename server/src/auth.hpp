// Bearer-token access control of denocd. The token file holds one token per line, optionally preceded by a
// principal name (`NAME TOKEN`; blank lines and lines starting with '#' are skipped). Tokens are kept only
// as SHA-256 digests; a presented token is hashed and compared with every known digest in constant time
// (CRYPTO_memcmp, no early exit), so neither the comparison nor its timing reveals a token.
#pragma once

#include <array>
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

  /// The principal a token belongs to, or empty when the token is unknown.
  std::string principal(std::string_view token) const;

  std::size_t size() const { return entries_.size(); }

 private:
  struct Known {
    Digest digest;
    std::string name;
  };
  std::vector<Known> entries_;
};

/// The token of an `authorization` metadata value ("Bearer <token>", scheme case-insensitive), or empty.
std::string_view bearerToken(std::string_view authorization);

}  // namespace denoc::server
