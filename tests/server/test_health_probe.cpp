// denoc-health against real denocd processes on 127.0.0.1: exit 0 only on SERVING; 4 while a server drains
// (NOT_SERVING during its grace period); 2 when nothing listens or the handshake fails; 3 for an unknown
// service; 1 for bad arguments; options from the environment alone; TLS, server-name override and mutual
// TLS with certificates from deploy/gen-certs.sh.
#include <gtest/gtest.h>

#include <chrono>
#include <string>
#include <vector>

#include "server_process.hpp"

namespace denoc::test {
namespace {

struct Result {
  int code = -1;  // exit code, -1 when it did not exit normally in time
  std::string output;
};

// runs a program with exactly the given environment, stdout and stderr captured; at most 30 s
Result run(const std::vector<std::string>& args, const std::vector<std::string>& env = {}) {
  static int counter = 0;
  TempDir dir;
  const std::string out = dir.str("out" + std::to_string(counter++));
  std::vector<std::string> a = args, e = env;
  std::vector<char*> argv, envp;
  for (auto& s : a) argv.push_back(s.data());
  argv.push_back(nullptr);
  for (auto& s : e) envp.push_back(s.data());
  envp.push_back(nullptr);
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_addopen(&actions, 1, out.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
  posix_spawn_file_actions_adddup2(&actions, 1, 2);
  pid_t pid = -1;
  const int rc = posix_spawn(&pid, argv[0], &actions, nullptr, argv.data(), envp.data());
  posix_spawn_file_actions_destroy(&actions);
  if (rc != 0) return {-1, "posix_spawn " + args[0] + " failed"};
  const auto deadline = std::chrono::steady_clock::now() + 30s;
  int status = 0;
  while (::waitpid(pid, &status, WNOHANG) != pid) {
    if (std::chrono::steady_clock::now() > deadline) {
      ::kill(pid, SIGKILL);
      ::waitpid(pid, &status, 0);
      return {-1, "timed out: " + readText(out)};
    }
    std::this_thread::sleep_for(2ms);
  }
  return {WIFEXITED(status) ? WEXITSTATUS(status) : -1, readText(out)};
}

Result probe(std::vector<std::string> args, const std::vector<std::string>& env = {}) {
  args.insert(args.begin(), DENOC_HEALTH);
  return run(args, env);
}

// a port nothing listens on: one a server listened on and gave back
int closedPort() {
  TempDir dir;
  int port = 0;
  {
    ServerProcess server(dir.str(), dir.str("store"));
    port = server.port();
    server.signal(SIGTERM);
    EXPECT_NE(server.wait(20s), -1);
  }
  return port;
}

TEST(HealthProbe, ServingServerExitsZero) {
  TempDir dir;
  ServerProcess server(dir.str(), dir.str("store"));
  const Result r = probe({"--address", server.address()});
  EXPECT_EQ(r.code, 0) << r.output;
  EXPECT_NE(r.output.find("SERVING"), std::string::npos) << r.output;
  EXPECT_NE(r.output.find(server.address()), std::string::npos) << r.output;
  // --quiet: nothing printed on success
  const Result q = probe({"--address=" + server.address(), "--quiet"});
  EXPECT_EQ(q.code, 0) << q.output;
  EXPECT_EQ(q.output, "");
}

TEST(HealthProbe, NamedServices) {
  TempDir dir;
  ServerProcess server(dir.str(), dir.str("store"));
  const Result dynamics = probe({"--address", server.address(), "--service", "denoc.v1.Dynamics"});
  EXPECT_EQ(dynamics.code, 0) << dynamics.output;
  // the default health service answers NOT_FOUND for a service it does not know
  const Result unknown = probe({"--address", server.address(), "--service", "no.such.Service"});
  EXPECT_EQ(unknown.code, 3) << unknown.output;
  EXPECT_NE(unknown.output.find("NOT_FOUND"), std::string::npos) << unknown.output;
  EXPECT_NE(unknown.output.find("no.such.Service"), std::string::npos) << unknown.output;
}

TEST(HealthProbe, OptionsFromTheEnvironmentAlone) {
  TempDir dir;
  ServerProcess server(dir.str(), dir.str("store"));
  const std::string port = std::to_string(server.port());
  const Result by_address =
      probe({}, {"DENOC_HEALTH_ADDRESS=" + server.address(), "DENOC_HEALTH_SERVICE=denoc.v1.Dynamics",
                 "DENOC_HEALTH_TIMEOUT_MS=5000"});
  EXPECT_EQ(by_address.code, 0) << by_address.output;
  // the server's own DENOC_LISTEN: a wildcard host becomes 127.0.0.1, the port is kept
  for (const std::string& listen : {"0.0.0.0:" + port, "[::]:" + port, "127.0.0.1:" + port}) {
    const Result by_listen = probe({}, {"DENOC_LISTEN=" + listen});
    EXPECT_EQ(by_listen.code, 0) << listen << ": " << by_listen.output;
    EXPECT_NE(by_listen.output.find("127.0.0.1:" + port), std::string::npos) << by_listen.output;
  }
  // the command line wins over the environment
  const Result flag_wins = probe({"--service", "no.such.Service"},
                                 {"DENOC_HEALTH_ADDRESS=" + server.address(), "DENOC_HEALTH_SERVICE="});
  EXPECT_EQ(flag_wins.code, 3) << flag_wins.output;
  // the environment is read: a wrong service there fails
  const Result env_read =
      probe({}, {"DENOC_HEALTH_ADDRESS=" + server.address(), "DENOC_HEALTH_SERVICE=no.such.Service"});
  EXPECT_EQ(env_read.code, 3) << env_read.output;
}

TEST(HealthProbe, NotServingWhileDrainingThenCannotConnect) {
  TempDir dir;
  ServerProcess server(dir.str(), dir.str("store"), {"--shutdown-grace-ms", "4000"});
  ASSERT_EQ(probe({"--address", server.address()}).code, 0);
  server.signal(SIGTERM);
  // during the grace period the server still answers, NOT_SERVING
  Result r;
  const auto deadline = std::chrono::steady_clock::now() + 3s;
  do {
    r = probe({"--address", server.address(), "--timeout-ms", "1000"});
  } while (r.code == 0 && std::chrono::steady_clock::now() < deadline);
  EXPECT_EQ(r.code, 4) << r.output;
  EXPECT_NE(r.output.find("NOT_SERVING"), std::string::npos) << r.output;
  const Result named = probe({"--address", server.address(), "--service", "denoc.v1.Dynamics"});
  EXPECT_EQ(named.code, 4) << named.output;
  // then it drains and exits 0; nothing listens any more
  const int status = server.wait(20s);
  ASSERT_NE(status, -1) << server.log();
  EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0) << server.log();
  const Result gone = probe({"--address", server.address(), "--timeout-ms", "2000"});
  EXPECT_EQ(gone.code, 2) << gone.output;
  EXPECT_NE(gone.output.find("cannot connect"), std::string::npos) << gone.output;
}

TEST(HealthProbe, NothingListening) {
  const std::string address = "127.0.0.1:" + std::to_string(closedPort());
  const Result r = probe({"--address", address, "--timeout-ms", "3000"});
  EXPECT_EQ(r.code, 2) << r.output;
  EXPECT_NE(r.output.find("cannot connect"), std::string::npos) << r.output;
  EXPECT_NE(r.output.find(address), std::string::npos) << r.output;
}

TEST(HealthProbe, BadArguments) {
  const std::vector<std::vector<std::string>> bad = {
      {"--timeout-ms", "soon"},
      {"--timeout-ms", "0"},
      {"--tls-cert", "/nonexistent/c.pem"},  // a certificate without its key
      {"--tls-ca", "/nonexistent/ca.pem"},   // an unreadable file
      {"--address"},                         // a missing value
      {"--no-such-option"},
      {"--tls=maybe"},
  };
  for (const auto& args : bad) {
    const Result r = probe(args);
    EXPECT_EQ(r.code, 1) << args[0] << ": " << r.output;
    EXPECT_NE(r.output.find("denoc-health:"), std::string::npos) << r.output;
  }
  EXPECT_EQ(probe({}, {"DENOC_HEALTH_TIMEOUT_MS=x"}).code, 1);
  EXPECT_EQ(probe({}, {"DENOC_LISTEN=0.0.0.0:0"}).code, 1);  // no fixed port to derive an address from
  const Result help = probe({"--help"});
  EXPECT_EQ(help.code, 0);
  EXPECT_NE(help.output.find("DENOC_HEALTH_ADDRESS"), std::string::npos) << help.output;
}

TEST(HealthProbe, TlsToAPlaintextServerFails) {
  TempDir dir;
  ServerProcess server(dir.str(), dir.str("store"));
  const Result r = probe({"--address", server.address(), "--tls", "--timeout-ms", "3000"});
  EXPECT_EQ(r.code, 2) << r.output;
  EXPECT_NE(r.output.find("(TLS)"), std::string::npos) << r.output;
  // the server's own DENOC_TLS_CERT in the environment turns TLS on
  const Result implied = probe({"--address", server.address()}, {"DENOC_TLS_CERT=/etc/denoc/tls.crt"});
  EXPECT_EQ(implied.code, 2) << implied.output;
  EXPECT_EQ(probe({"--address", server.address(), "--tls=false"}, {"DENOC_TLS_CERT=/x"}).code, 0);
}

// a denocd with TLS options (a port file in dir), not waited on through a plaintext channel
class RawServer {
 public:
  RawServer(const TempDir& dir, std::vector<std::string> extra) {
    std::vector<std::string> args = {DENOC_DENOCD,
                                     "--listen",
                                     "127.0.0.1:0",
                                     "--port-file",
                                     dir.str("port"),
                                     "--store-dir",
                                     dir.str("store"),
                                     "--shutdown-grace-ms",
                                     "0"};
    args.insert(args.end(), extra.begin(), extra.end());
    log_ = dir.str("denocd.log");
    std::vector<char*> argv;
    for (auto& a : args) argv.push_back(a.data());
    argv.push_back(nullptr);
    posix_spawn_file_actions_t actions;
    posix_spawn_file_actions_init(&actions);
    posix_spawn_file_actions_addopen(&actions, 1, log_.c_str(), O_WRONLY | O_CREAT | O_APPEND, 0644);
    posix_spawn_file_actions_adddup2(&actions, 1, 2);
    if (posix_spawn(&pid_, DENOC_DENOCD, &actions, nullptr, argv.data(), environ) != 0) pid_ = -1;
    posix_spawn_file_actions_destroy(&actions);
    const auto deadline = std::chrono::steady_clock::now() + 30s;
    while (pid_ > 0 && port_ <= 0 && std::chrono::steady_clock::now() < deadline) {
      int status = 0;
      if (::waitpid(pid_, &status, WNOHANG) == pid_) {
        pid_ = -1;
        break;
      }
      std::ifstream f(dir.str("port"));
      f >> port_;
      std::this_thread::sleep_for(10ms);
    }
  }
  ~RawServer() {
    if (pid_ > 0) {
      ::kill(pid_, SIGKILL);
      int status = 0;
      ::waitpid(pid_, &status, 0);
    }
  }
  bool ok() const { return pid_ > 0 && port_ > 0; }
  std::string address() const { return "127.0.0.1:" + std::to_string(port_); }
  std::string log() const { return readText(log_); }

 private:
  std::string log_;
  pid_t pid_ = -1;
  int port_ = 0;
};

class HealthProbeTls : public ::testing::Test {
 protected:
  void SetUp() override {
    const Result certs =
        run({"/bin/bash", DENOC_SOURCE_DIR "/deploy/gen-certs.sh", pki_.str(), "denocd.test"},
            {"PATH=/usr/bin:/bin"});
    ASSERT_EQ(certs.code, 0) << certs.output;
  }
  std::string pem(const std::string& name) const { return pki_.str(name); }
  TempDir pki_;
};

TEST_F(HealthProbeTls, ServerCertificateVerifiedByName) {
  TempDir dir;
  RawServer server(dir, {"--tls-cert", pem("tls.crt"), "--tls-key", pem("tls.key")});
  ASSERT_TRUE(server.ok()) << server.log();
  const std::string a = server.address();
  // plaintext to a TLS server, and TLS without the private CA, fail to connect
  EXPECT_EQ(probe({"--address", a, "--tls=false"}).code, 2);
  EXPECT_EQ(probe({"--address", a, "--tls"}).code, 2);
  // the CA and the address's IP (in the certificate)
  const Result ok = probe({"--address", a, "--tls-ca", pem("ca.crt")});
  EXPECT_EQ(ok.code, 0) << ok.output;
  // a name the certificate has, and one it has not
  EXPECT_EQ(probe({"--address", a, "--tls-ca", pem("ca.crt"), "--tls-server-name", "denocd.test"}).code, 0);
  EXPECT_EQ(probe({"--address", a, "--tls-ca", pem("ca.crt"), "--tls-server-name", "other.test"}).code, 2);
  // what a container's probe sees: the server's variables and the probe's CA, no argument
  const std::string port = a.substr(a.rfind(':') + 1);
  const Result env =
      probe({}, {"DENOC_LISTEN=0.0.0.0:" + port, "DENOC_TLS_CERT=" + pem("tls.crt"),
                 "DENOC_HEALTH_TLS_CA=" + pem("ca.crt"), "DENOC_HEALTH_TLS_SERVER_NAME=denocd"});
  EXPECT_EQ(env.code, 0) << env.output;
}

TEST_F(HealthProbeTls, MutualTlsNeedsTheClientCertificate) {
  TempDir dir;
  RawServer server(
      dir, {"--tls-cert", pem("tls.crt"), "--tls-key", pem("tls.key"), "--tls-client-ca", pem("ca.crt")});
  ASSERT_TRUE(server.ok()) << server.log();
  const std::string a = server.address();
  const Result without = probe({"--address", a, "--tls-ca", pem("ca.crt")});
  EXPECT_NE(without.code, 0) << without.output;
  const Result with = probe({"--address", a, "--tls-ca", pem("ca.crt"), "--tls-cert", pem("client.crt"),
                             "--tls-key", pem("client.key")});
  EXPECT_EQ(with.code, 0) << with.output;
  // the same from the environment
  const Result env =
      probe({}, {"DENOC_HEALTH_ADDRESS=" + a, "DENOC_HEALTH_TLS_CA=" + pem("ca.crt"),
                 "DENOC_HEALTH_TLS_CERT=" + pem("client.crt"), "DENOC_HEALTH_TLS_KEY=" + pem("client.key")});
  EXPECT_EQ(env.code, 0) << env.output;
}

}  // namespace
}  // namespace denoc::test
