// Certificates for the client tests, made with the openssl command at test time (never committed): a CA;
// a server certificate for DNS:localhost and IP:127.0.0.1 signed by it; a second server certificate for
// DNS:localhost only (a client dialling 127.0.0.1 needs the server-name override to accept it); a client
// certificate signed by the CA; and an unrelated CA with a client certificate of its own, which a
// mutual-TLS server must refuse. EC P-256 keys, valid for two days.
#pragma once

#include <cstdlib>
#include <fstream>
#include <sstream>
#include <stdexcept>
#include <string>

namespace denoc::test {

struct TestCerts {
  std::string ca, server_cert, server_key, dns_only_cert, dns_only_key, client_cert, client_key, other_ca,
      other_cert, other_key;

  /// Generates every file into dir (which must exist). Throws with openssl's output when it fails.
  explicit TestCerts(const std::string& dir) {
    const std::string script = R"(set -e
cd ")" + dir + R"("
key() { openssl genpkey -algorithm EC -pkeyopt ec_paramgen_curve:P-256 -out "$1"; }
# sign NAME CA SUBJECT EXTENSIONS: NAME.key and NAME.pem, signed by CA.pem/CA.key
sign() {
  key "$1.key"
  openssl req -new -key "$1.key" -out "$1.csr" -subj "$3"
  printf "$4" > "$1.ext"
  openssl x509 -req -in "$1.csr" -CA "$2.pem" -CAkey "$2.key" -CAcreateserial -out "$1.pem" -days 2 -extfile "$1.ext"
}
key ca.key
openssl req -x509 -new -key ca.key -out ca.pem -days 2 -subj "/CN=denoc client test CA"
sign server ca "/CN=localhost" 'subjectAltName=DNS:localhost,IP:127.0.0.1\nextendedKeyUsage=serverAuth\n'
sign dns-only ca "/CN=localhost" 'subjectAltName=DNS:localhost\nextendedKeyUsage=serverAuth\n'
sign client ca "/CN=denoc test client" 'extendedKeyUsage=clientAuth\n'
key other-ca.key
openssl req -x509 -new -key other-ca.key -out other-ca.pem -days 2 -subj "/CN=another CA"
sign other other-ca "/CN=client of another CA" 'extendedKeyUsage=clientAuth\n'
)";
    const std::string path = dir + "/make-certs.sh";
    std::ofstream(path) << script;
    const std::string log = dir + "/make-certs.log";
    if (std::system(("bash '" + path + "' >'" + log + "' 2>&1").c_str()) != 0) {
      std::ifstream in(log);
      std::stringstream ss;
      ss << in.rdbuf();
      throw std::runtime_error("openssl failed to make the test certificates:\n" + ss.str());
    }
    const auto at = [&](const std::string& name) { return dir + "/" + name; };
    ca = at("ca.pem");
    server_cert = at("server.pem");
    server_key = at("server.key");
    dns_only_cert = at("dns-only.pem");
    dns_only_key = at("dns-only.key");
    client_cert = at("client.pem");
    client_key = at("client.key");
    other_ca = at("other-ca.pem");
    other_cert = at("other.pem");
    other_key = at("other.key");
  }
};

}  // namespace denoc::test
