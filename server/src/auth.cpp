#include "auth.hpp"

#include <openssl/crypto.h>
#include <openssl/sha.h>

#include <fstream>
#include <sstream>
#include <stdexcept>

#include "errors.hpp"

namespace denoc::server {

namespace {

TokenAuth::Digest digestOf(std::string_view token) {
  TokenAuth::Digest d{};
  SHA256(reinterpret_cast<const unsigned char*>(token.data()), token.size(), d.data());
  return d;
}

std::string hexPrefix(const TokenAuth::Digest& d, std::size_t bytes) {
  static const char* hex = "0123456789abcdef";
  std::string out;
  for (std::size_t i = 0; i < bytes; ++i) {
    out += hex[d[i] >> 4];
    out += hex[d[i] & 15];
  }
  return out;
}

}  // namespace

TokenAuth TokenAuth::fromFile(const std::string& path) {
  std::ifstream f(path);
  if (!f) throw std::runtime_error("cannot read the token file " + path);
  std::vector<std::pair<std::string, std::string>> tokens;
  std::string line;
  for (int number = 1; std::getline(f, line); ++number) {
    std::istringstream fields(line);
    std::vector<std::string> words;
    for (std::string w; fields >> w;) words.push_back(w);
    if (words.empty() || words[0][0] == '#') continue;
    if (words.size() > 2) {
      throw std::runtime_error("token file " + path + " line " + std::to_string(number) + " has " +
                               std::to_string(words.size()) + " fields, expected TOKEN or NAME TOKEN");
    }
    tokens.emplace_back(words.size() == 2 ? words[0] : std::string(), words.back());
  }
  if (tokens.empty()) throw std::runtime_error("the token file " + path + " holds no token");
  return TokenAuth(tokens);
}

TokenAuth::TokenAuth(const std::vector<std::pair<std::string, std::string>>& tokens) {
  auto entries = std::make_shared<std::vector<Known>>();
  for (const auto& [name, token] : tokens) {
    Known k{digestOf(token), name};
    for (const Known& other : *entries) {
      if (CRYPTO_memcmp(other.digest.data(), k.digest.data(), k.digest.size()) == 0)
        throw std::runtime_error("the token of '" + (name.empty() ? other.name : name) + "' appears twice");
    }
    if (k.name.empty()) k.name = "token-" + hexPrefix(k.digest, 6);
    entries->push_back(std::move(k));
  }
  entries_ = std::move(entries);
}

void TokenAuth::replace(TokenAuth&& fresh) {
  std::shared_ptr<const std::vector<Known>> entries = fresh.current();
  std::lock_guard lock(mutex_);
  entries_.swap(entries);
}

std::string TokenAuth::principal(std::string_view token) const {
  if (token.empty()) return {};
  const Digest d = digestOf(token);
  // every digest is compared, whatever matched before
  const Known* match = nullptr;
  const std::shared_ptr<const std::vector<Known>> entries = current();
  for (const Known& k : *entries) {
    const bool same = CRYPTO_memcmp(k.digest.data(), d.data(), d.size()) == 0;
    match = same ? &k : match;
  }
  return match ? match->name : std::string();
}

std::string_view bearerToken(std::string_view value) {
  constexpr std::string_view scheme = "bearer ";
  if (value.size() <= scheme.size()) return {};
  for (std::size_t i = 0; i < scheme.size(); ++i) {
    const char c = value[i];
    if ((c >= 'A' && c <= 'Z' ? static_cast<char>(c - 'A' + 'a') : c) != scheme[i]) return {};
  }
  std::string_view token = value.substr(scheme.size());
  while (!token.empty() && token.front() == ' ') token.remove_prefix(1);
  while (!token.empty() && (token.back() == ' ' || token.back() == '\r')) token.remove_suffix(1);
  return token;
}

std::string authenticate(const TokenAuth& auth, const std::string_view* authorization) {
  if (!authorization) {
    fail(ErrorCode::Unauthenticated,
         "this server requires a bearer token: send the metadata 'authorization: Bearer <token>'");
  }
  const std::string_view token = bearerToken(*authorization);
  if (token.empty())
    fail(ErrorCode::Unauthenticated, "the authorization metadata is not of the form 'Bearer <token>'");
  std::string who = auth.principal(token);
  if (who.empty()) fail(ErrorCode::Unauthenticated, "the bearer token is not known to this server");
  return who;
}

bool needsToken(std::string_view path) {
  for (const std::string_view open : {std::string_view("/grpc.health.v1.Health/"),
                                      std::string_view("/grpc.reflection.v1alpha.ServerReflection/")}) {
    if (path.substr(0, open.size()) == open) return false;
  }
  return true;
}

}  // namespace denoc::server
