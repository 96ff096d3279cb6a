// Transport security and access control against real denocd processes on 127.0.0.1: TLS with certificates
// made by openssl at test time, mutual TLS, the plaintext policy, bearer tokens and model ownership.
#include <gtest/gtest.h>

#include <fstream>

#include "grpc/health/v1/health.grpc.pb.h"
#include "server_process.hpp"
#include "support/run_process.hpp"
#include "test_support.hpp"
#include "tls_material.hpp"

namespace denoc::test {
namespace {

/// The test's channel setup for a TLS server whose certificate names `name`.
ChannelSetup tlsSetup(std::shared_ptr<grpc::ChannelCredentials> credentials,
                      const std::string& name = "localhost") {
  ChannelSetup s;
  s.credentials = std::move(credentials);
  s.tls_name = name;
  return s;
}

/// A context with a deadline and, when given, a bearer token.
std::unique_ptr<grpc::ClientContext> ctxWith(const std::string& token = "",
                                             std::chrono::milliseconds t = 10s) {
  auto ctx = context(t);
  if (!token.empty()) ctx->AddMetadata("authorization", "Bearer " + token);
  return ctx;
}

/// Every RPC of denoc.v1.Dynamics once on a valid request for model id; their status codes by RPC name.
std::map<std::string, grpc::StatusCode> callEveryRpc(v1::Dynamics::Stub& stub, const std::string& token,
                                                     const std::string& id, int n) {
  std::map<std::string, grpc::StatusCode> out;
  const std::vector<double> zeros(static_cast<std::size_t>(n), 0.0);
  {
    v1::RegisterModelResponse r;
    out["RegisterModel"] =
        stub.RegisterModel(ctxWith(token).get(), dhRequest(stanfordArmDH()), &r).error_code();
  }
  {
    v1::GetModelRequest q;
    q.set_model_id(id);
    v1::GetModelResponse r;
    out["GetModel"] = stub.GetModel(ctxWith(token).get(), q, &r).error_code();
  }
  {
    v1::ListModelsResponse r;
    out["ListModels"] = stub.ListModels(ctxWith(token).get(), {}, &r).error_code();
  }
  {
    v1::InverseDynamicsRequest q;
    q.set_model_id(id);
    q.set_count(1);
    q.set_dof(static_cast<std::uint32_t>(n));
    for (double v : zeros) q.add_q(v), q.add_qd(v), q.add_qdd(v);
    v1::InverseDynamicsResponse r;
    out["InverseDynamics"] = stub.InverseDynamics(ctxWith(token).get(), q, &r).error_code();
  }
  {
    v1::ForwardDynamicsRequest q;
    q.set_model_id(id);
    q.set_count(1);
    q.set_dof(static_cast<std::uint32_t>(n));
    for (double v : zeros) q.add_q(v), q.add_qd(v), q.add_tau(v);
    v1::ForwardDynamicsResponse r;
    out["ForwardDynamics"] = stub.ForwardDynamics(ctxWith(token).get(), q, &r).error_code();
  }
  {
    v1::FullFactorRequest q;
    q.set_model_id(id);
    q.set_count(1);
    q.set_dof(static_cast<std::uint32_t>(n));
    for (double v : zeros) q.add_q(v);
    v1::FullFactorResponse r;
    out["FullFactor"] = stub.FullFactor(ctxWith(token).get(), q, &r).error_code();
  }
  {
    v1::SimulateRequest q;
    q.set_model_id(id);
    q.set_dof(static_cast<std::uint32_t>(n));
    for (double v : zeros) q.add_q0(v), q.add_qd0(v);
    q.set_t_end(0.01);
    q.set_dt_out(0.01);
    auto ctx = ctxWith(token);
    auto reader = stub.Simulate(ctx.get(), q);
    v1::SimulateResponse r;
    while (reader->Read(&r)) {
    }
    out["Simulate"] = reader->Finish().error_code();
  }
  {
    auto ctx = ctxWith(token);
    auto stream = stub.Stream(ctx.get());
    v1::StreamRequest q;
    q.set_model_id(id);
    q.set_computation(v1::COMPUTATION_INVERSE_DYNAMICS);
    for (double v : zeros) q.add_q(v), q.add_qd(v), q.add_qdd(v);
    stream->Write(q);
    stream->WritesDone();
    v1::StreamResponse r;
    while (stream->Read(&r)) {
    }
    out["Stream"] = stream->Finish().error_code();
  }
  {
    v1::DeleteModelRequest q;
    q.set_model_id(id);
    v1::DeleteModelResponse r;
    out["DeleteModel"] = stub.DeleteModel(ctxWith(token).get(), q, &r).error_code();
  }
  return out;
}

grpc::health::v1::HealthCheckResponse::ServingStatus health(const std::shared_ptr<grpc::Channel>& ch,
                                                            grpc::Status* st = nullptr) {
  auto stub = grpc::health::v1::Health::NewStub(ch);
  grpc::health::v1::HealthCheckResponse resp;
  const grpc::Status s = stub->Check(context(5s).get(), {}, &resp);
  if (st) *st = s;
  return resp.status();
}

std::string registerModel(v1::Dynamics::Stub& stub, const v1::RegisterModelRequest& req,
                          const std::string& token, bool* created = nullptr) {
  v1::RegisterModelResponse r;
  const grpc::Status s = stub.RegisterModel(ctxWith(token).get(), req, &r);
  EXPECT_TRUE(s.ok()) << s.error_message();
  if (created) *created = r.created();
  return r.model_id();
}

grpc::Status deleteModel(v1::Dynamics::Stub& stub, const std::string& id, const std::string& token) {
  v1::DeleteModelRequest q;
  q.set_model_id(id);
  v1::DeleteModelResponse r;
  return stub.DeleteModel(ctxWith(token).get(), q, &r);
}

TEST(ServerTls, AnswersOverTlsAndRefusesPlaintextAndUntrustedClients) {
  TempDir dir;
  TlsMaterial tls(dir.str());
  const ChannelSetup setup = tlsSetup(TlsMaterial::credentials(tls.ca), "localhost");
  ServerProcess server(dir.str(), dir.str("store"),
                       {"--tls-cert", tls.server_cert, "--tls-key", tls.server_key}, "tls", setup);
  EXPECT_NE(server.log().find("TLS), SERVING"), std::string::npos) << server.log();
  // every RPC works over TLS (the last deletes the model), with the right answers
  auto stub = server.stub();
  const DHSpec dh = randomChain(6, 3);
  const Model m = buildModelFromDH(dh);
  const std::string id = registerModel(*stub, dhRequest(dh), "");
  const auto codes = callEveryRpc(*stub, "", id, m.n);
  ASSERT_EQ(codes.size(), 9u);
  for (const auto& [rpc, code] : codes) EXPECT_EQ(code, grpc::StatusCode::OK) << rpc;
  const auto q = randomStates(3, m.n, 1), qd = randomStates(3, m.n, 2), qdd = randomStates(3, m.n, 3);
  v1::InverseDynamicsRequest req;
  req.set_model_id(registerModel(*stub, dhRequest(dh), ""));
  req.set_count(3);
  req.set_dof(static_cast<std::uint32_t>(m.n));
  for (std::size_t i = 0; i < q.size(); ++i) req.add_q(q[i]), req.add_qd(qd[i]), req.add_qdd(qdd[i]);
  v1::InverseDynamicsResponse resp;
  ASSERT_TRUE(stub->InverseDynamics(context().get(), req, &resp).ok());
  expectCloseField(resp.tau(), coreID(m, q, qd, qdd), "tau over TLS");
  // a plaintext client cannot talk to it
  auto plain = v1::Dynamics::NewStub(makeChannel(server.address()));
  v1::ListModelsResponse list;
  EXPECT_EQ(plain->ListModels(context(3s).get(), {}, &list).error_code(), grpc::StatusCode::UNAVAILABLE);
  // a client trusting another CA refuses the server's certificate
  auto wrong_ca = v1::Dynamics::NewStub(
      makeChannel(server.address(), tlsSetup(TlsMaterial::credentials(tls.rogue_ca), "localhost")));
  EXPECT_EQ(wrong_ca->ListModels(context(3s).get(), {}, &list).error_code(), grpc::StatusCode::UNAVAILABLE);
  // a client expecting another name refuses it too
  auto wrong_name = v1::Dynamics::NewStub(
      makeChannel(server.address(), tlsSetup(TlsMaterial::credentials(tls.ca), "denoc.example")));
  EXPECT_EQ(wrong_name->ListModels(context(3s).get(), {}, &list).error_code(), grpc::StatusCode::UNAVAILABLE);
}

TEST(ServerTls, MutualTlsRequiresAClientCertificateFromTheConfiguredCa) {
  TempDir dir;
  TlsMaterial tls(dir.str());
  const ChannelSetup good =
      tlsSetup(TlsMaterial::credentials(tls.ca, tls.client_cert, tls.client_key), "localhost");
  ServerProcess server(
      dir.str(), dir.str("store"),
      {"--tls-cert", tls.server_cert, "--tls-key", tls.server_key, "--tls-client-ca", tls.ca}, "mtls", good);
  EXPECT_NE(server.log().find("mutual TLS), SERVING"), std::string::npos);
  v1::ListModelsResponse list;
  ASSERT_TRUE(server.stub()->ListModels(context().get(), {}, &list).ok());
  EXPECT_GE(list.models_size(), 2);
  // no client certificate
  auto anonymous = v1::Dynamics::NewStub(
      makeChannel(server.address(), tlsSetup(TlsMaterial::credentials(tls.ca), "localhost")));
  EXPECT_EQ(anonymous->ListModels(context(3s).get(), {}, &list).error_code(), grpc::StatusCode::UNAVAILABLE);
  // a certificate from another CA
  auto rogue = v1::Dynamics::NewStub(
      makeChannel(server.address(),
                  tlsSetup(TlsMaterial::credentials(tls.ca, tls.rogue_cert, tls.rogue_key), "localhost")));
  EXPECT_EQ(rogue->ListModels(context(3s).get(), {}, &list).error_code(), grpc::StatusCode::UNAVAILABLE);
  // the health service is behind the same TLS
  EXPECT_EQ(health(server.channel()), grpc::health::v1::HealthCheckResponse::SERVING);
}

TEST(ServerTls, RotatedCertificatesServeNewConnectionsWithoutARestart) {
  TempDir dir;
  TlsMaterial tls(dir.str());
  // denocd reads current/tls.crt, current/tls.key and current/ca.crt; the rotation swaps `current` from one
  // directory to the other in one rename, so that key and certificate change together
  const std::string current = dir.str("current");
  TlsMaterial::swapLink(
      TlsMaterial::secretDirectory(dir.str("tls-1"), tls.server_cert, tls.server_key, tls.ca), current);
  const std::string next = TlsMaterial::secretDirectory(dir.str("tls-2"), tls.rogue_server_cert,
                                                        tls.rogue_server_key, tls.rogue_ca);
  const std::string cert = current + "/tls.crt", key = current + "/tls.key", client_ca = current + "/ca.crt";
  const ChannelSetup before =
      tlsSetup(TlsMaterial::credentials(tls.ca, tls.client_cert, tls.client_key), "localhost");
  const ChannelSetup after =
      tlsSetup(TlsMaterial::credentials(tls.rogue_ca, tls.rogue_cert, tls.rogue_key), "localhost");
  ServerProcess server(
      dir.str(), dir.str("store"),
      {"--tls-cert", cert, "--tls-key", key, "--tls-client-ca", client_ca, "--tls-reload-s", "1"}, "rotated",
      before);
  auto established = server.stub();
  v1::ListModelsResponse list;
  ASSERT_TRUE(established->ListModels(context().get(), {}, &list).ok());
  ASSERT_FALSE(newConnectionServed(server.address(), after));

  // the rotation: the new key, certificate and client CA serve the new connections within seconds
  TlsMaterial::swapLink(next, current);
  const double seconds = secondsUntilServed(server.address(), after, 60s);
  ASSERT_GE(seconds, 0) << "the rotated certificates were not served within 60 s\n" << server.log();
  std::printf("rotated certificates served to a new connection after %.1f s (reload interval 1 s)\n",
              seconds);
  // new connections trusting the old CA, or presenting a client certificate of the old CA, are refused
  EXPECT_FALSE(newConnectionServed(server.address(), before));
  EXPECT_FALSE(newConnectionServed(
      server.address(), tlsSetup(TlsMaterial::credentials(tls.rogue_ca, tls.client_cert, tls.client_key))));
  // the connection made before the rotation keeps serving its calls
  EXPECT_TRUE(established->ListModels(context().get(), {}, &list).ok());
}

TEST(ServerTls, RefusesToStartWithoutWhatItNeeds) {
  TempDir dir;
  TlsMaterial tls(dir.str());
  struct Case {
    std::vector<std::string> args;
    std::string message;
  };
  const std::vector<Case> cases = {
      // plaintext on an address other hosts can reach (refused before anything listens)
      {{"--listen", "0.0.0.0:0"}, "refusing plaintext on 0.0.0.0:0"},
      {{"--listen", "[::]:0"}, "refusing plaintext on [::]:0"},
      // TLS on a reachable address: still not without the front, unless asked for
      {{"--listen", "0.0.0.0:0", "--tls-cert", tls.server_cert, "--tls-key", tls.server_key},
       "refusing to serve 0.0.0.0:0 directly"},
      {{"--tls-cert", tls.server_cert}, "--tls-cert and --tls-key"},
      {{"--tls-key", tls.server_key}, "--tls-cert and --tls-key"},
      {{"--tls-client-ca", tls.ca}, "--tls-client-ca"},
      {{"--tls-cert", dir.str("missing.pem"), "--tls-key", tls.server_key}, "cannot read"},
      {{"--token-file", dir.str("missing-tokens")}, "cannot read the token file"},
  };
  for (const Case& c : cases) {
    std::vector<std::string> args = {"--store-dir", dir.str("store"), "--port-file", dir.str("p")};
    args.insert(args.end(), c.args.begin(), c.args.end());
    const auto r = testing::runProcess(DENOC_DENOCD, args, dir.str("refused"));
    EXPECT_NE(r.code, 0) << c.message;
    EXPECT_NE((r.out + r.err).find(c.message), std::string::npos) << c.message << "\n" << r.err;
    EXPECT_FALSE(fs::exists(dir.str("p"))) << "it listened: " << c.message;
  }
}

class ServerTokens : public ::testing::Test {
 protected:
  void SetUp() override {
    std::ofstream(dir.str("tokens"))
        << "# test tokens\nalice token-of-alice\nbob token-of-bob\ntoken-without-name\n";
  }
  std::vector<std::string> args() const { return {"--token-file", dir.str("tokens")}; }
  TempDir dir;
};

TEST_F(ServerTokens, EveryRpcNeedsAKnownTokenButHealthDoesNot) {
  ServerProcess server(dir.str(), dir.str("store"), args());
  EXPECT_NE(server.log().find("access control on: 3 bearer tokens"), std::string::npos);
  auto stub = server.stub();
  const Model m = buildModelFromDH(stanfordArmDH());
  const std::string id = registerModel(*stub, dhRequest(stanfordArmDH()), "token-of-alice");
  for (const std::string& token :
       {std::string(), std::string("token-of-mallory"), std::string("token-of-alic")}) {
    const auto codes = callEveryRpc(*stub, token, id, m.n);
    ASSERT_EQ(codes.size(), 9u);
    for (const auto& [rpc, code] : codes)
      EXPECT_EQ(code, grpc::StatusCode::UNAUTHENTICATED) << rpc << " " << token;
  }
  // a scheme other than Bearer
  auto ctx = context();
  ctx->AddMetadata("authorization", "Basic token-of-alice");
  v1::ListModelsResponse list;
  const grpc::Status basic = stub->ListModels(ctx.get(), {}, &list);
  EXPECT_EQ(basic.error_code(), grpc::StatusCode::UNAUTHENTICATED);
  EXPECT_NE(basic.error_message().find("Bearer <token>"), std::string::npos) << basic.error_message();
  // health answers without a token
  EXPECT_EQ(health(server.channel()), grpc::health::v1::HealthCheckResponse::SERVING);
  // each known token can call every RPC (the unnamed one too)
  for (const std::string token : {"token-of-alice", "token-of-bob", "token-without-name"}) {
    const std::string own = registerModel(*stub, dhRequest(randomChain(3, 7)), token);
    const auto codes = callEveryRpc(*stub, token, own, 3);
    for (const auto& [rpc, code] : codes) EXPECT_EQ(code, grpc::StatusCode::OK) << rpc << " " << token;
  }
  // the failures were logged without the token's value
  EXPECT_EQ(server.log().find("token-of-mallory"), std::string::npos);
}

TEST_F(ServerTokens, ModelsAreSharedReadOnlyAndOnlyTheirOwnerDeletesThem) {
  const DHSpec dh = randomChain(4, 11);
  const Model m = buildModelFromDH(dh);
  std::string id, bobs;
  {
    ServerProcess server(dir.str(), dir.str("store"), args());
    auto stub = server.stub();
    bool created = false;
    id = registerModel(*stub, dhRequest(dh), "token-of-alice", &created);
    EXPECT_TRUE(created);
    // bob registers the same model: same id, not created, and not his
    EXPECT_EQ(registerModel(*stub, dhRequest(dh), "token-of-bob", &created), id);
    EXPECT_FALSE(created);
    // bob sees and uses it
    v1::ListModelsResponse list;
    ASSERT_TRUE(stub->ListModels(ctxWith("token-of-bob").get(), {}, &list).ok());
    EXPECT_TRUE(std::any_of(list.models().begin(), list.models().end(),
                            [&](const v1::ModelInfo& i) { return i.model_id() == id; }));
    const auto q = randomStates(2, m.n, 4), qd = randomStates(2, m.n, 5), qdd = randomStates(2, m.n, 6);
    v1::InverseDynamicsRequest req;
    req.set_model_id(id);
    req.set_count(2);
    req.set_dof(static_cast<std::uint32_t>(m.n));
    for (std::size_t i = 0; i < q.size(); ++i) req.add_q(q[i]), req.add_qd(qd[i]), req.add_qdd(qdd[i]);
    v1::InverseDynamicsResponse resp;
    ASSERT_TRUE(stub->InverseDynamics(ctxWith("token-of-bob").get(), req, &resp).ok());
    expectCloseField(resp.tau(), coreID(m, q, qd, qdd), "bob's answer on alice's model");
    // but cannot delete it
    const grpc::Status denied = deleteModel(*stub, id, "token-of-bob");
    EXPECT_EQ(denied.error_code(), grpc::StatusCode::PERMISSION_DENIED);
    EXPECT_NE(denied.error_message().find("registered by another token"), std::string::npos);
    EXPECT_EQ(deleteModel(*stub, id, "token-without-name").error_code(), grpc::StatusCode::PERMISSION_DENIED);
    EXPECT_TRUE(fs::exists(dir.str("store/v1/" + id + ".pb")));
    // pinned examples: nobody
    for (const auto& info : list.models()) {
      if (info.pinned()) {
        EXPECT_EQ(deleteModel(*stub, info.model_id(), "token-of-alice").error_code(),
                  grpc::StatusCode::FAILED_PRECONDITION);
      }
    }
    // bob's own model, registered with a smuggled owner field naming alice
    v1::RegisterModelRequest smuggled = dhRequest(randomChain(5, 12));
    smuggled.GetReflection()->MutableUnknownFields(&smuggled)->AddLengthDelimited(1000, "alice");
    bobs = registerModel(*stub, smuggled, "token-of-bob");
  }
  // ownership survives a restart (it is in the store)
  ServerProcess server(dir.str(), dir.str("store"), args(), "restarted");
  auto stub = server.stub();
  EXPECT_EQ(deleteModel(*stub, bobs, "token-of-alice").error_code(), grpc::StatusCode::PERMISSION_DENIED);
  EXPECT_EQ(deleteModel(*stub, id, "token-of-bob").error_code(), grpc::StatusCode::PERMISSION_DENIED);
  EXPECT_TRUE(deleteModel(*stub, bobs, "token-of-bob").ok());
  EXPECT_TRUE(deleteModel(*stub, id, "token-of-alice").ok());
  EXPECT_FALSE(fs::exists(dir.str("store/v1/" + id + ".pb")));
  EXPECT_FALSE(fs::exists(dir.str("store/v1/" + bobs + ".pb")));
  // gone for everyone: bob re-registers it and now owns it
  bool created = false;
  EXPECT_EQ(registerModel(*stub, dhRequest(dh), "token-of-bob", &created), id);
  EXPECT_TRUE(created);
  EXPECT_EQ(deleteModel(*stub, id, "token-of-alice").error_code(), grpc::StatusCode::PERMISSION_DENIED);
  EXPECT_TRUE(deleteModel(*stub, id, "token-of-bob").ok());
}

TEST_F(ServerTokens, ARotatedTokenFileIsReadAgainOnSighup) {
  // alice's token rotated in the file, then SIGHUP: the new one works, the old one is refused, alice still
  // owns what she registered; a broken file on the next SIGHUP keeps the tokens in use
  ServerProcess server(dir.str(), dir.str("store"), args());
  auto stub = server.stub();
  const std::string id = registerModel(*stub, dhRequest(randomChain(3, 77)), "token-of-alice");
  const auto listWith = [&](const std::string& token) {
    v1::ListModelsResponse r;
    return stub->ListModels(ctxWith(token).get(), {}, &r).error_code();
  };
  ASSERT_EQ(listWith("token-of-alice"), grpc::StatusCode::OK);
  ASSERT_EQ(listWith("new-token-of-alice"), grpc::StatusCode::UNAUTHENTICATED);
  std::ofstream(dir.str("tokens")) << "alice new-token-of-alice\nbob token-of-bob\n";
  server.signal(SIGHUP);
  EXPECT_TRUE(eventually([&] { return listWith("new-token-of-alice") == grpc::StatusCode::OK; }, 10s))
      << server.log();
  EXPECT_EQ(listWith("token-of-alice"), grpc::StatusCode::UNAUTHENTICATED);
  EXPECT_NE(server.log().find("SIGHUP received: 2 bearer tokens read again"), std::string::npos)
      << server.log();
  // alice (by her new token) still owns her model: bob may not delete it, she may
  v1::DeleteModelRequest del;
  del.set_model_id(id);
  v1::DeleteModelResponse r;
  EXPECT_EQ(stub->DeleteModel(ctxWith("token-of-bob").get(), del, &r).error_code(),
            grpc::StatusCode::PERMISSION_DENIED);
  // a file that does not read (the same token twice): the tokens in use stay, the server says why
  std::ofstream(dir.str("tokens")) << "alice twice\nbob twice\n";
  server.signal(SIGHUP);
  EXPECT_TRUE(eventually(
      [&] { return server.log().find("kept the 2 bearer tokens in use") != std::string::npos; }, 10s))
      << server.log();
  EXPECT_EQ(listWith("new-token-of-alice"), grpc::StatusCode::OK);
  EXPECT_EQ(listWith("twice"), grpc::StatusCode::UNAUTHENTICATED);
  EXPECT_TRUE(stub->DeleteModel(ctxWith("new-token-of-alice").get(), del, &r).ok());
}

TEST_F(ServerTokens, ModelsStoredWithoutAccessControlCanBeDeletedByAnyToken) {
  const DHSpec dh = randomChain(3, 21);
  std::string id;
  {
    ServerProcess open(dir.str(), dir.str("store"));
    id = registerModel(*open.stub(), dhRequest(dh), "");
  }
  ServerProcess server(dir.str(), dir.str("store"), args(), "guarded");
  EXPECT_TRUE(deleteModel(*server.stub(), id, "token-of-bob").ok());
}

TEST_F(ServerTokens, TokensAndMutualTlsTogether) {
  TlsMaterial tls(dir.str());
  const ChannelSetup setup =
      tlsSetup(TlsMaterial::credentials(tls.ca, tls.client_cert, tls.client_key), "localhost");
  std::vector<std::string> a = args();
  for (const std::string s : {"--tls-cert", tls.server_cert.c_str(), "--tls-key", tls.server_key.c_str(),
                              "--tls-client-ca", tls.ca.c_str()})
    a.push_back(s);
  ServerProcess server(dir.str(), dir.str("store"), a, "both", setup);
  auto stub = server.stub();
  v1::ListModelsResponse list;
  EXPECT_EQ(stub->ListModels(context().get(), {}, &list).error_code(), grpc::StatusCode::UNAUTHENTICATED);
  EXPECT_TRUE(stub->ListModels(ctxWith("token-of-bob").get(), {}, &list).ok());
}

}  // namespace
}  // namespace denoc::test
