// denoc::client and the `denoc` tool against real denocd processes started with TLS, mutual TLS and a token
// file, with certificates made by openssl at test time (test_certs.hpp): answers over TLS equal the core in
// this process; the server-name override is what lets a certificate for localhost pass at 127.0.0.1; a
// missing or foreign client certificate, a missing or unknown token, and a deletion by another token fail
// with the status the server gives, as denoc::client::Error (the tool: its exit code and message).
#include <atomic>
#include <fstream>
#include <nlohmann/json.hpp>

#include "client_support.hpp"
#include "denoc/client/client.hpp"
#include "denoc/denoc.hpp"
#include "server/server_process.hpp"
#include "server/test_support.hpp"
#include "support/run_process.hpp"
#include "test_certs.hpp"

namespace denoc {
namespace {

using client::Client;
using client::ClientOptions;
using client::Error;
using nlohmann::json;
using test::ChannelSetup;
using test::close;
using test::fromFlat;
using test::kPanda;
using test::kTip;
using test::pandaModel;
using test::ServerProcess;
using test::TempDir;
using test::TestCerts;
using namespace std::chrono_literals;

/// The status code of what f throws (OK when it throws nothing); other exceptions fail the test.
template <typename F>
grpc::StatusCode codeOf(F&& f, std::string* message = nullptr) {
  try {
    f();
  } catch (const Error& e) {
    if (message) *message = e.what();
    return e.code();
  }
  return grpc::StatusCode::OK;
}

class ClientSecurity : public ::testing::Test {
 protected:
  // one set of certificates for every test of the process
  static void SetUpTestSuite() {
    certs_dir_ = new TempDir();
    certs_ = new TestCerts(certs_dir_->str());
  }
  static void TearDownTestSuite() {
    delete certs_;
    delete certs_dir_;
    certs_ = nullptr;
    certs_dir_ = nullptr;
  }

  /// The test harness's own channel to a TLS server (it waits for the server with it).
  static ChannelSetup harness(bool with_client_cert) {
    grpc::SslCredentialsOptions o;
    o.pem_root_certs = test::readText(certs_->ca);
    if (with_client_cert) {
      o.pem_cert_chain = test::readText(certs_->client_cert);
      o.pem_private_key = test::readText(certs_->client_key);
    }
    ChannelSetup s;
    s.credentials = grpc::SslCredentials(o);
    s.tls_name = "localhost";
    return s;
  }

  /// Client options for target: TLS trusting root (default: the test CA), short bounded retries.
  static ClientOptions tls(const std::string& target, const std::string& root = "") {
    ClientOptions o;
    o.target = target;
    o.deadline = 20s;
    o.retry.max_attempts = 2;
    o.retry.initial_backoff = 20ms;
    o.tls = client::TlsOptions{};
    o.tls->root_certs = root.empty() ? certs_->ca : root;
    return o;
  }

  static ClientOptions mutual(const std::string& target, const std::string& token = "") {
    ClientOptions o = tls(target);
    o.tls->client_cert = certs_->client_cert;
    o.tls->client_key = certs_->client_key;
    o.bearer_token = token;
    return o;
  }

  std::vector<std::string> serverTls(const std::string& cert = "", const std::string& key = "") const {
    return {"--tls-cert", cert.empty() ? certs_->server_cert : cert, "--tls-key",
            key.empty() ? certs_->server_key : key};
  }

  static TempDir* certs_dir_;
  static TestCerts* certs_;
  TempDir dir_;
};

TempDir* ClientSecurity::certs_dir_ = nullptr;
TestCerts* ClientSecurity::certs_ = nullptr;

// ------------------------------------------------------------------------------------------------- TLS

TEST_F(ClientSecurity, OverTlsEveryCallEqualsTheCore) {
  ServerProcess server(dir_.str(), dir_.str("store"), serverTls(), "server", harness(false));
  Client c(tls(server.address()));
  const client::Registration reg = c.registerModelFile(kPanda, "", kTip);
  const Model model = pandaModel();
  const int n = model.n, count = 20;
  ASSERT_EQ(reg.model.dof, n);

  const std::vector<double> q = test::randomStates(count, n, 21, 2.0), qd = test::randomStates(count, n, 22),
                            qdd = test::randomStates(count, n, 23, 3.0),
                            tau = test::randomStates(count, n, 24, 20.0);
  const Eigen::MatrixXd Q = fromFlat(q, count, n), Qd = fromFlat(qd, count, n);
  const auto id = c.inverseDynamics(reg.model_id, Q, Qd, fromFlat(qdd, count, n));
  EXPECT_TRUE(close(id.tau, fromFlat(test::coreID(model, q, qd, qdd), count, n)));
  const auto fd = c.forwardDynamics(reg.model_id, Q, Qd, fromFlat(tau, count, n));
  EXPECT_TRUE(close(fd.qdd, fromFlat(test::coreFD(model, q, qd, tau, test::Route::Saha), count, n)));

  client::FactorFlags flags;
  flags.inverse = true;
  const auto factor = c.fullFactor(reg.model_id, Q, flags);
  Data data(model);
  ASSERT_EQ(factor.inertia.size(), static_cast<std::size_t>(count));
  for (int k = 0; k < count; ++k) {
    const Eigen::VectorXd qk = Q.row(k).transpose();
    const Eigen::MatrixXd I = computeInertiaMatrix(model, data, qk);
    EXPECT_TRUE(close(factor.inertia[static_cast<std::size_t>(k)], I)) << k;
    EXPECT_TRUE(close(factor.inverse[static_cast<std::size_t>(k)] * I, Eigen::MatrixXd::Identity(n, n), 1e-9))
        << k;
  }

  // a streamed simulation and a Stream session travel the same channel
  const DHSpec dh = stanfordArmDH();
  const Model arm = buildModelFromDH(dh);
  const std::string arm_id = c.registerDH(dh).model_id;
  Eigen::VectorXd q0(6), qd0(6);
  q0 << 0.1, 1.2, 0.05, -0.4, 0.3, 0.2;
  qd0 << 0.5, -0.2, 0.01, 0.3, 0.0, -0.6;
  client::SimulateOptions so;
  so.t_end = 0.2;
  so.dt_out = 0.01;
  const client::SimulationResult run = c.simulate(arm_id, q0, qd0, so);
  SimulationOptions core_so;
  core_so.t_end = 0.2;
  core_so.dt_out = 0.01;
  const SimulationResult want = simulate(arm, q0, qd0, core_so);
  EXPECT_TRUE(run.summary.complete);
  EXPECT_TRUE(close(run.q, want.q));
  EXPECT_TRUE(close(run.qd, want.qd));

  auto stream = c.openStream();
  for (int k = 0; k < 5; ++k) {
    const Eigen::VectorXd qk = Q.row(k).transpose(), qdk = Qd.row(k).transpose();
    const Eigen::VectorXd qddk = fromFlat(qdd, count, n).row(k).transpose();
    EXPECT_TRUE(close(stream->inverseDynamics(reg.model_id, qk, qdk, qddk),
                      inverseDynamics(model, data, qk, qdk, qddk)));
  }
  EXPECT_NO_THROW(stream->close());
}

TEST_F(ClientSecurity, ATlsServerRefusesPlaintextAndAnUntrustedCertificate) {
  ServerProcess server(dir_.str(), dir_.str("store"), serverTls(), "server", harness(false));
  // plaintext to a TLS server
  ClientOptions plain = tls(server.address());
  plain.tls.reset();
  std::string message;
  EXPECT_EQ(codeOf([&] { Client(plain).listModels(); }, &message), grpc::StatusCode::UNAVAILABLE) << message;
  // a client that trusts another CA does not accept the server's certificate
  EXPECT_EQ(codeOf([&] { Client(tls(server.address(), certs_->other_ca)).listModels(); }, &message),
            grpc::StatusCode::UNAVAILABLE)
      << message;
  // the right CA: answered
  EXPECT_EQ(codeOf([&] { Client(tls(server.address())).listModels(); }), grpc::StatusCode::OK);
}

TEST_F(ClientSecurity, ServerNameOverrideAcceptsACertificateForLocalhostAt127001) {
  // this certificate names DNS:localhost only, and the client dials 127.0.0.1
  ServerProcess server(dir_.str(), dir_.str("store"), serverTls(certs_->dns_only_cert, certs_->dns_only_key),
                       "server", harness(false));
  std::string message;
  EXPECT_EQ(codeOf([&] { Client(tls(server.address())).listModels(); }, &message),
            grpc::StatusCode::UNAVAILABLE)
      << "a certificate without 127.0.0.1 was accepted for 127.0.0.1: " << message;
  ClientOptions named = tls(server.address());
  named.tls->server_name = "localhost";
  EXPECT_EQ(codeOf([&] { Client(named).listModels(); }, &message), grpc::StatusCode::OK) << message;
  named.tls->server_name = "denoc.invalid";
  EXPECT_EQ(codeOf([&] { Client(named).listModels(); }, &message), grpc::StatusCode::UNAVAILABLE)
      << "a name the certificate does not carry was accepted: " << message;
}

// ------------------------------------------------------------------------------------------ mutual TLS

TEST_F(ClientSecurity, MutualTlsNeedsAClientCertificateFromTheServersCa) {
  std::vector<std::string> args = serverTls();
  args.insert(args.end(), {"--tls-client-ca", certs_->ca});
  ServerProcess server(dir_.str(), dir_.str("store"), args, "server", harness(true));

  // the right certificate: answers equal the core
  Client good(mutual(server.address()));
  const DHSpec dh = stanfordArmDH();
  const Model arm = buildModelFromDH(dh);
  const std::string id = good.registerDH(dh).model_id;
  const std::vector<double> q = test::randomStates(4, 6, 31), qd = test::randomStates(4, 6, 32),
                            qdd = test::randomStates(4, 6, 33);
  EXPECT_TRUE(close(good.inverseDynamics(id, fromFlat(q, 4, 6), fromFlat(qd, 4, 6), fromFlat(qdd, 4, 6)).tau,
                    fromFlat(test::coreID(arm, q, qd, qdd), 4, 6)));

  // no client certificate: the handshake fails, UNAVAILABLE after the (bounded) retries
  int retries = 0;
  ClientOptions none = tls(server.address());
  none.on_retry = [&](const client::RetryEvent& e) {
    ++retries;
    EXPECT_EQ(e.code, grpc::StatusCode::UNAVAILABLE);
  };
  std::string message;
  EXPECT_EQ(codeOf([&] { Client(none).listModels(); }, &message), grpc::StatusCode::UNAVAILABLE) << message;
  EXPECT_EQ(retries, 1);  // max_attempts = 2
  EXPECT_EQ(codeOf([&] {
              Client(none).inverseDynamics(id, fromFlat(q, 4, 6), fromFlat(qd, 4, 6), fromFlat(qdd, 4, 6));
            }),
            grpc::StatusCode::UNAVAILABLE);

  // a certificate from another CA
  ClientOptions other = tls(server.address());
  other.tls->client_cert = certs_->other_cert;
  other.tls->client_key = certs_->other_key;
  EXPECT_EQ(codeOf([&] { Client(other).listModels(); }, &message), grpc::StatusCode::UNAVAILABLE) << message;

  // the client checks its own material before connecting
  ClientOptions half = tls(server.address());
  half.tls->client_cert = certs_->client_cert;  // without its key
  EXPECT_EQ(codeOf([&] { Client{half}; }, &message), grpc::StatusCode::INVALID_ARGUMENT);
  EXPECT_NE(message.find("client_key"), std::string::npos) << message;
  ClientOptions missing = mutual(server.address());
  missing.tls->client_key = dir_.str("no-such.key");
  EXPECT_EQ(codeOf([&] { Client{missing}; }, &message), grpc::StatusCode::NOT_FOUND);
  EXPECT_NE(message.find("no-such.key"), std::string::npos) << message;
}

// -------------------------------------------------------------------------------------------- tokens

class ClientTokens : public ClientSecurity {
 protected:
  /// A server with mutual TLS and two principals, alice and bob.
  std::unique_ptr<ServerProcess> start() {
    std::ofstream(dir_.str("tokens")) << "# test tokens\nalice token-of-alice\nbob token-of-bob\n";
    std::vector<std::string> args = serverTls();
    args.insert(args.end(), {"--tls-client-ca", certs_->ca, "--token-file", dir_.str("tokens")});
    return std::make_unique<ServerProcess>(dir_.str(), dir_.str("store"), args, "server", harness(true));
  }
};

TEST_F(ClientTokens, WithoutAKnownTokenEveryCallIsUnauthenticated) {
  const auto server = start();
  Client alice(mutual(server->address(), "token-of-alice"));
  const std::string id = alice.registerModelFile(kPanda, "", kTip).model_id;
  const Eigen::MatrixXd Z = Eigen::MatrixXd::Zero(1, 7);

  for (const std::string token : {"", "token-of-mallory", "token-of-alic"}) {
    SCOPED_TRACE("token '" + token + "'");
    int retries = 0;
    ClientOptions o = mutual(server->address(), token);
    o.on_retry = [&](const client::RetryEvent&) { ++retries; };
    Client c(o);
    std::string message;
    EXPECT_EQ(codeOf([&] { c.listModels(); }, &message), grpc::StatusCode::UNAUTHENTICATED) << message;
    EXPECT_EQ(codeOf([&] { c.registerModelFile(kPanda, "", kTip); }), grpc::StatusCode::UNAUTHENTICATED);
    EXPECT_EQ(codeOf([&] { c.getModel(id); }), grpc::StatusCode::UNAUTHENTICATED);
    EXPECT_EQ(codeOf([&] { c.inverseDynamics(id, Z, Z, Z); }), grpc::StatusCode::UNAUTHENTICATED);
    EXPECT_EQ(codeOf([&] { c.forwardDynamics(id, Z, Z, Z); }), grpc::StatusCode::UNAUTHENTICATED);
    EXPECT_EQ(codeOf([&] { c.fullFactor(id, Z); }), grpc::StatusCode::UNAUTHENTICATED);
    client::SimulateOptions so;
    so.t_end = 0.05;
    EXPECT_EQ(codeOf([&] { c.simulate(id, Eigen::VectorXd::Zero(7), Eigen::VectorXd::Zero(7), so); }),
              grpc::StatusCode::UNAUTHENTICATED);
    EXPECT_EQ(codeOf([&] {
                auto s = c.openStream();
                s->inverseDynamics(id, Eigen::VectorXd::Zero(7), Eigen::VectorXd::Zero(7),
                                   Eigen::VectorXd::Zero(7));
              }),
              grpc::StatusCode::UNAUTHENTICATED);
    EXPECT_EQ(codeOf([&] { c.deleteModel(id); }), grpc::StatusCode::UNAUTHENTICATED);
    EXPECT_EQ(retries, 0);  // not retried: only UNAVAILABLE is
    try {
      c.inverseDynamics(id, Z, Z, Z);
    } catch (const Error& e) {
      EXPECT_EQ(e.call(), "InverseDynamics");
      EXPECT_FALSE(e.message().empty());
      EXPECT_EQ(std::string(e.what()).rfind("InverseDynamics: UNAUTHENTICATED: ", 0), 0u) << e.what();
    }
  }
  // the model is still there for its owner
  EXPECT_EQ(alice.getModel(id).model_id, id);
}

TEST_F(ClientTokens, ModelsAreSharedButOnlyTheOwnerDeletes) {
  const auto server = start();
  Client alice(mutual(server->address(), "token-of-alice"));
  Client bob(mutual(server->address(), "token-of-bob"));
  const Model model = pandaModel();
  const client::Registration reg = alice.registerModelFile(kPanda, "", kTip);
  EXPECT_TRUE(reg.created);

  // bob computes with alice's model, and registering it again changes nothing
  const std::vector<double> q = test::randomStates(5, 7, 41), qd = test::randomStates(5, 7, 42),
                            qdd = test::randomStates(5, 7, 43);
  const Eigen::MatrixXd want = fromFlat(test::coreID(model, q, qd, qdd), 5, 7);
  EXPECT_TRUE(
      close(bob.inverseDynamics(reg.model_id, fromFlat(q, 5, 7), fromFlat(qd, 5, 7), fromFlat(qdd, 5, 7)).tau,
            want));
  const client::Registration again = bob.registerModelFile(kPanda, "", kTip);
  EXPECT_EQ(again.model_id, reg.model_id);
  EXPECT_FALSE(again.created);

  // bob may not delete it: PERMISSION_DENIED, the model stays, and bob still knows its source
  try {
    bob.deleteModel(reg.model_id);
    ADD_FAILURE() << "another token deleted the model";
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), grpc::StatusCode::PERMISSION_DENIED) << e.what();
    EXPECT_EQ(e.call(), "DeleteModel");
    EXPECT_NE(e.message().find("another token"), std::string::npos) << e.message();
  }
  EXPECT_TRUE(bob.sources()->contains(reg.model_id));
  EXPECT_EQ(alice.getModel(reg.model_id).model_id, reg.model_id);

  // the owner deletes it
  alice.deleteModel(reg.model_id);
  EXPECT_EQ(codeOf([&] { alice.getModel(reg.model_id); }), grpc::StatusCode::NOT_FOUND);
  EXPECT_FALSE(alice.sources()->contains(reg.model_id));
}

TEST_F(ClientTokens, ATokenMustBeVisibleAscii) {
  const std::vector<std::string> bad_tokens = {"two words", "line\nbreak", "tab\t", std::string("nul\0x", 5),
                                               "caf\xc3\xa9"};
  for (const std::string& bad : bad_tokens) {
    std::string message;
    EXPECT_EQ(codeOf([&] { Client{mutual("127.0.0.1:1", bad)}; }, &message),
              grpc::StatusCode::INVALID_ARGUMENT)
        << bad;
    EXPECT_NE(message.find("bearer token"), std::string::npos) << message;
    EXPECT_EQ(message.find(bad), std::string::npos) << "the token was echoed: " << message;
  }
}

// ---------------------------------------------------------------------------------------------- the tool

using Outcome = testing::ProcessOutcome;
using test::runDenoc;

TEST_F(ClientTokens, TheToolTakesTlsAndTokenFlags) {
  const auto server = start();
  const std::vector<std::string> tls_flags = {"--server",  server->address(), "--tls-ca",
                                              certs_->ca,  "--tls-cert",      certs_->client_cert,
                                              "--tls-key", certs_->client_key};
  const auto with = [&](std::vector<std::string> extra, const std::vector<std::string>& flags) {
    std::vector<std::string> args = flags;
    args.insert(args.end(), extra.begin(), extra.end());
    return args;
  };
  const std::vector<std::string> alice = with({"--token", "token-of-alice"}, tls_flags);

  // register, then inverse dynamics of a states file: equal to the core
  const Outcome reg = runDenoc(dir_, with({"register", kPanda, "--tip-link", kTip, "-q"}, alice));
  ASSERT_EQ(reg.code, 0) << reg.err;
  const std::string id = reg.out.substr(0, reg.out.find('\n'));
  ASSERT_EQ(id.size(), 64u) << reg.out;
  const Model model = pandaModel();
  const std::vector<double> q = test::randomStates(3, 7, 51), qd = test::randomStates(3, 7, 52),
                            qdd = test::randomStates(3, 7, 53);
  json states = json::array();
  for (int k = 0; k < 3; ++k) {
    const auto part = [&](const std::vector<double>& v) {
      return std::vector<double>(v.begin() + k * 7, v.begin() + (k + 1) * 7);
    };
    states.push_back({{"q", part(q)}, {"qd", part(qd)}, {"qdd", part(qdd)}});
  }
  std::ofstream(dir_.str("states.json")) << states.dump();
  const Outcome idr =
      runDenoc(dir_, with({"id", id, "--states", dir_.str("states.json"), "--format", "json"}, alice));
  ASSERT_EQ(idr.code, 0) << idr.err;
  const json answer = json::parse(idr.out);
  EXPECT_EQ(answer.at("model_id"), id);
  const Eigen::MatrixXd want = fromFlat(test::coreID(model, q, qd, qdd), 3, 7);
  ASSERT_EQ(answer.at("states").size(), 3u);
  for (int k = 0; k < 3; ++k) {
    const std::vector<double> tau = answer.at("states")[static_cast<std::size_t>(k)].at("tau");
    EXPECT_TRUE(close(Eigen::Map<const Eigen::RowVectorXd>(tau.data(), 7), want.row(k))) << k;
  }

  // the token from a file (kept out of the process list)
  std::ofstream(dir_.str("alice.token")) << "token-of-alice\n";
  const Outcome listed = runDenoc(dir_, with({"--token-file", dir_.str("alice.token"), "list"}, tls_flags));
  EXPECT_EQ(listed.code, 0) << listed.err;
  EXPECT_NE(listed.out.find(id), std::string::npos) << listed.out;

  // no token, an unknown one: UNAUTHENTICATED, exit 1
  for (const auto& args :
       {with({"list"}, tls_flags), with({"--token", "token-of-mallory", "get", id}, tls_flags)}) {
    const Outcome r = runDenoc(dir_, args);
    EXPECT_EQ(r.code, 1) << r.err;
    EXPECT_NE(r.err.find("UNAUTHENTICATED"), std::string::npos) << r.err;
    EXPECT_EQ(r.err.find("token-of-mallory"), std::string::npos) << "the token was echoed: " << r.err;
  }

  // bob may not delete alice's model: PERMISSION_DENIED, exit 1; alice may
  const Outcome denied = runDenoc(dir_, with({"--token", "token-of-bob", "delete", id}, tls_flags));
  EXPECT_EQ(denied.code, 1) << denied.err;
  EXPECT_NE(denied.err.find("DeleteModel: PERMISSION_DENIED"), std::string::npos) << denied.err;
  const Outcome deleted = runDenoc(dir_, with({"delete", id}, alice));
  EXPECT_EQ(deleted.code, 0) << deleted.err;

  // without the client certificate: the handshake fails, UNAVAILABLE, exit 1
  const Outcome nocert = runDenoc(
      dir_, {"--server", server->address(), "--tls-ca", certs_->ca, "--token", "token-of-alice", "list"});
  EXPECT_EQ(nocert.code, 1) << nocert.err;
  EXPECT_NE(nocert.err.find("UNAVAILABLE"), std::string::npos) << nocert.err;

  // bad flags: exit 2 with a message naming them
  const Outcome half = runDenoc(dir_, {"--server", server->address(), "--tls-ca", certs_->ca, "--tls-cert",
                                       certs_->client_cert, "list"});
  EXPECT_EQ(half.code, 2) << half.err;
  EXPECT_NE(half.err.find("--tls-key"), std::string::npos) << half.err;
  std::ofstream(dir_.str("server-style.token")) << "alice token-of-alice\n";
  const Outcome two =
      runDenoc(dir_, with({"--token-file", dir_.str("server-style.token"), "list"}, tls_flags));
  EXPECT_EQ(two.code, 2) << two.err;
  EXPECT_NE(two.err.find("--token-file"), std::string::npos) << two.err;
  EXPECT_EQ(two.err.find("token-of-alice"), std::string::npos) << "the token was echoed: " << two.err;
  const Outcome both = runDenoc(dir_, with({"--token-file", dir_.str("alice.token"), "list"}, alice));
  EXPECT_EQ(both.code, 2) << both.err;
  EXPECT_NE(both.err.find("not both"), std::string::npos) << both.err;
}

TEST_F(ClientSecurity, TheToolsServerNameOverride) {
  ServerProcess server(dir_.str(), dir_.str("store"), serverTls(certs_->dns_only_cert, certs_->dns_only_key),
                       "server", harness(false));
  const Outcome plain = runDenoc(dir_, {"--server", server.address(), "--tls-ca", certs_->ca, "list"});
  EXPECT_EQ(plain.code, 1) << plain.err;
  EXPECT_NE(plain.err.find("UNAVAILABLE"), std::string::npos) << plain.err;
  const Outcome named = runDenoc(
      dir_, {"--server", server.address(), "--tls-ca", certs_->ca, "--tls-server-name", "localhost", "list"});
  EXPECT_EQ(named.code, 0) << named.err;
  EXPECT_NE(named.out.find("stanford_arm"), std::string::npos) << named.out;
}

}  // namespace
}  // namespace denoc
