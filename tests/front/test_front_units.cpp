// The trusted front's identity headers in denocd, without a process: which principal they name
// (frontPrincipal), and that --trusted-front-header is refused on any listener but a unix socket.
#include <gtest/gtest.h>

#include <string>
#include <string_view>

#include "front.hpp"
#include "options.hpp"

namespace denoc::server {
namespace {

std::string principalOf(const char* verify, const char* subject, const char* address) {
  std::string_view v = verify ? verify : "", s = subject ? subject : "", a = address ? address : "";
  return frontPrincipal(verify ? &v : nullptr, subject ? &s : nullptr, address ? &a : nullptr);
}

TEST(FrontPrincipal, VerifiedCertificateSubjectFirst) {
  EXPECT_EQ(principalOf("SUCCESS", "CN=robot-7,O=plant", "10.1.2.3"), "cert:CN=robot-7,O=plant");
  EXPECT_EQ(principalOf("SUCCESS", "CN=robot-7", nullptr), "cert:CN=robot-7");
}

TEST(FrontPrincipal, UnverifiedOrMissingSubjectFallsBackToTheAddress) {
  // nginx's $ssl_client_verify: NONE (no certificate), FAILED:reason; an empty subject names nobody
  EXPECT_EQ(principalOf("NONE", "CN=robot-7", "10.1.2.3"), "addr:10.1.2.3");
  EXPECT_EQ(principalOf("FAILED:certificate has expired", "CN=robot-7", "10.1.2.3"), "addr:10.1.2.3");
  EXPECT_EQ(principalOf("success", "CN=robot-7", "10.1.2.3"), "addr:10.1.2.3");  // exactly SUCCESS
  EXPECT_EQ(principalOf("SUCCESS", "", "10.1.2.3"), "addr:10.1.2.3");
  EXPECT_EQ(principalOf("SUCCESS", nullptr, "::1"), "addr:::1");
  EXPECT_EQ(principalOf(nullptr, "CN=robot-7", "10.1.2.3"), "addr:10.1.2.3");
}

TEST(FrontPrincipal, NothingUsableNamesNobody) {
  EXPECT_EQ(principalOf(nullptr, nullptr, nullptr), "");
  EXPECT_EQ(principalOf("NONE", nullptr, ""), "");
}

TEST(FrontPrincipal, ControlCharactersAndOversizedValuesAreNotIdentities) {
  EXPECT_EQ(principalOf("SUCCESS", "CN=a\nCN=b", "10.1.2.3"), "addr:10.1.2.3");
  EXPECT_EQ(principalOf("SUCCESS", "CN=a\x7f", "10.1.2.3"), "addr:10.1.2.3");
  const std::string longest(kMaxFrontIdentityBytes - 3, 'x'), over(kMaxFrontIdentityBytes - 2, 'x');
  EXPECT_EQ(principalOf("SUCCESS", ("CN=" + longest).c_str(), nullptr), "cert:CN=" + longest);
  EXPECT_EQ(principalOf("SUCCESS", ("CN=" + over).c_str(), nullptr), "");
  EXPECT_EQ(principalOf("NONE", nullptr, "10.0.0.1\r\nx"), "");
}

TEST(FrontOptions, TrustedFrontHeaderOnlyOnAUnixSocket) {
  ServerOptions o;
  o.security.trusted_front_header = true;
  for (const char* reachable : {"127.0.0.1:50051", "0.0.0.0:50051", "[::1]:50051", "unix-abstract:denocd"}) {
    o.listen.address = reachable;
    o.security.plaintext = true;
    o.listen.without_front = true;  // past the refusal of a reachable address without the front
    EXPECT_NE(checkOptions(o).find("refusing --trusted-front-header"), std::string::npos) << reachable;
  }
  o.listen.address = "unix:/run/denoc/denocd.sock";
  o.listen.without_front = false;
  EXPECT_EQ(checkOptions(o), "");
  o.security.trusted_front_header = false;
  o.listen.address = "127.0.0.1:50051";
  EXPECT_EQ(checkOptions(o), "");
}

}  // namespace
}  // namespace denoc::server
