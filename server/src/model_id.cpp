#include "model_id.hpp"

#include <openssl/evp.h>

#include "denoc/model_io.hpp"
#include "errors.hpp"

namespace denoc::server {

std::string sha256Hex(const std::string& bytes) {
  unsigned char md[EVP_MAX_MD_SIZE];
  unsigned int len = 0;
  if (EVP_Digest(bytes.data(), bytes.size(), md, &len, EVP_sha256(), nullptr) != 1 || len != 32) {
    fail(ErrorCode::Internal, "SHA-256 failed");
  }
  static const char* hex = "0123456789abcdef";
  std::string s(64, '0');
  for (unsigned i = 0; i < 32; ++i) {
    s[2 * i] = hex[md[i] >> 4];
    s[2 * i + 1] = hex[md[i] & 15];
  }
  return s;
}

std::string modelId(const ModelSpec& spec) { return sha256Hex(canonicalForm(spec)); }

bool isModelId(const std::string& s) {
  if (s.size() != 64) return false;
  for (char c : s) {
    if (!((c >= '0' && c <= '9') || (c >= 'a' && c <= 'f'))) return false;
  }
  return true;
}

}  // namespace denoc::server
