#include "front.hpp"

namespace denoc::server {

namespace {

// a header value usable as (part of) a principal: present, not empty, bounded, no control characters
bool usable(const std::string_view* value) {
  if (!value || value->empty() || value->size() > kMaxFrontIdentityBytes) return false;
  for (const char c : *value) {
    const auto u = static_cast<unsigned char>(c);
    if (u < 0x20 || u == 0x7f) return false;
  }
  return true;
}

}  // namespace

std::string frontPrincipal(const std::string_view* verify, const std::string_view* subject,
                           const std::string_view* address) {
  if (verify && *verify == "SUCCESS" && usable(subject)) return "cert:" + std::string(*subject);
  if (usable(address)) return "addr:" + std::string(*address);
  return {};
}

}  // namespace denoc::server
