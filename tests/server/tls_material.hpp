// Test certificates, made with the openssl command at test time (never committed): a CA, a server
// certificate for localhost and 127.0.0.1 signed by it, two client certificates signed by it (two robots of
// one fleet: subjects "denoc test client" and "denoc test robot 2") and the L7 balancer's client certificate
// (subject "denoc-balancer", which the replicas' fronts trust to name the caller), and a second,
// unrelated CA with a client certificate of its own (which a mutual-TLS server must refuse) and a server
// certificate of its own (a rotation to another CA).
#pragma once

#include <grpcpp/security/credentials.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <stdexcept>
#include <string>

namespace denoc::test {

struct TlsMaterial {
  std::string dir;
  std::string ca, server_cert, server_key, client_cert, client_key, robot2_cert, robot2_key, balancer_cert,
      balancer_key, rogue_ca, rogue_cert, rogue_key, rogue_server_cert, rogue_server_key;

  /// Generates everything into dir (EC P-256 keys, valid for two days). Throws when openssl fails.
  explicit TlsMaterial(const std::string& d) : dir(d) {
    const std::string script = R"(set -e
cd ")" + d + R"("
key() { openssl genpkey -algorithm EC -pkeyopt ec_paramgen_curve:P-256 -out "$1" 2>/dev/null; }
key ca.key
openssl req -x509 -new -key ca.key -out ca.pem -days 2 -subj "/CN=denoc test CA"
key server.key
openssl req -new -key server.key -out server.csr -subj "/CN=localhost"
printf 'subjectAltName=DNS:localhost,IP:127.0.0.1\nextendedKeyUsage=serverAuth\n' > server.ext
openssl x509 -req -in server.csr -CA ca.pem -CAkey ca.key -CAcreateserial -out server.pem -days 2 -extfile server.ext 2>/dev/null
key client.key
openssl req -new -key client.key -out client.csr -subj "/CN=denoc test client"
printf 'extendedKeyUsage=clientAuth\n' > client.ext
openssl x509 -req -in client.csr -CA ca.pem -CAkey ca.key -CAcreateserial -out client.pem -days 2 -extfile client.ext 2>/dev/null
key robot2.key
openssl req -new -key robot2.key -out robot2.csr -subj "/CN=denoc test robot 2"
openssl x509 -req -in robot2.csr -CA ca.pem -CAkey ca.key -CAcreateserial -out robot2.pem -days 2 -extfile client.ext 2>/dev/null
key balancer.key
openssl req -new -key balancer.key -out balancer.csr -subj "/CN=denoc-balancer"
openssl x509 -req -in balancer.csr -CA ca.pem -CAkey ca.key -CAcreateserial -out balancer.pem -days 2 -extfile client.ext 2>/dev/null
key rogue-ca.key
openssl req -x509 -new -key rogue-ca.key -out rogue-ca.pem -days 2 -subj "/CN=rogue CA"
key rogue.key
openssl req -new -key rogue.key -out rogue.csr -subj "/CN=rogue client"
openssl x509 -req -in rogue.csr -CA rogue-ca.pem -CAkey rogue-ca.key -CAcreateserial -out rogue.pem -days 2 -extfile client.ext 2>/dev/null
key rogue-server.key
openssl req -new -key rogue-server.key -out rogue-server.csr -subj "/CN=localhost"
openssl x509 -req -in rogue-server.csr -CA rogue-ca.pem -CAkey rogue-ca.key -CAcreateserial -out rogue-server.pem -days 2 -extfile server.ext 2>/dev/null
)";
    const std::string path = d + "/make-certs.sh";
    std::ofstream(path) << script;
    if (std::system(("bash " + path + " >" + d + "/make-certs.log 2>&1").c_str()) != 0) {
      std::ifstream log(d + "/make-certs.log");
      std::stringstream ss;
      ss << log.rdbuf();
      throw std::runtime_error("openssl failed to make the test certificates:\n" + ss.str());
    }
    ca = d + "/ca.pem";
    server_cert = d + "/server.pem";
    server_key = d + "/server.key";
    client_cert = d + "/client.pem";
    client_key = d + "/client.key";
    robot2_cert = d + "/robot2.pem";
    robot2_key = d + "/robot2.key";
    balancer_cert = d + "/balancer.pem";
    balancer_key = d + "/balancer.key";
    rogue_ca = d + "/rogue-ca.pem";
    rogue_cert = d + "/rogue.pem";
    rogue_key = d + "/rogue.key";
    rogue_server_cert = d + "/rogue-server.pem";
    rogue_server_key = d + "/rogue-server.key";
  }

  static std::string read(const std::string& path) {
    std::ifstream f(path);
    std::stringstream ss;
    ss << f.rdbuf();
    return ss.str();
  }

  /// Channel credentials trusting root_ca, presenting cert/key when given.
  static std::shared_ptr<grpc::ChannelCredentials> credentials(const std::string& root_ca,
                                                               const std::string& cert = "",
                                                               const std::string& key = "") {
    grpc::SslCredentialsOptions o;
    o.pem_root_certs = read(root_ca);
    if (!cert.empty()) {
      o.pem_cert_chain = read(cert);
      o.pem_private_key = read(key);
    }
    return grpc::SslCredentials(o);
  }

  /// A directory `dir` holding tls.crt, tls.key and ca.crt (a Kubernetes TLS secret's names) copied from the
  /// given files.
  static std::string secretDirectory(const std::string& dir, const std::string& cert, const std::string& key,
                                     const std::string& ca) {
    std::filesystem::create_directories(dir);
    std::filesystem::copy_file(cert, dir + "/tls.crt");
    std::filesystem::copy_file(key, dir + "/tls.key");
    std::filesystem::copy_file(ca, dir + "/ca.crt");
    return dir;
  }

  /// Points the symbolic link `link` at `target` in one rename, as Kubernetes swaps a secret volume's files:
  /// key and certificate change together.
  static void swapLink(const std::string& target, const std::string& link) {
    std::filesystem::create_directory_symlink(target, link + ".new");
    std::filesystem::rename(link + ".new", link);
  }
};

}  // namespace denoc::test
