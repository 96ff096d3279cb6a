// GetServerInfo through denoc::client and `denoc info` against real denocd processes started with chosen
// limits (the values must be the flags'), batches above the server's --max-states split by the client and
// joined in order (equal to the core computed in this process, and to one-state calls), and lookup by name
// that refuses ambiguity.
#include <fstream>
#include <nlohmann/json.hpp>

#include "client_support.hpp"
#include "denoc/client/client.hpp"
#include "denoc/denoc.hpp"
#include "denoc/version.hpp"
#include "server/server_process.hpp"
#include "server/test_support.hpp"

namespace denoc {
namespace {

using client::Client;
using client::ClientOptions;
using client::Error;
using test::close;
using test::fromFlat;
using test::kPanda;
using test::kTip;
using test::pandaModel;
using test::ServerProcess;
using test::TempDir;
using namespace std::chrono_literals;

ClientOptions options(const std::string& target, const std::string& token = {}) {
  ClientOptions o;
  o.target = target;
  o.bearer_token = token;
  return o;
}

TEST(ClientInfo, ServerInfoIsTheFlagsTheServerWasStartedWith) {
  TempDir dir;
  ServerProcess server(
      dir.str(), dir.str("store"),
      {"--max-dof", "12", "--max-states", "7", "--max-message-bytes", "3000000", "--max-streams", "5"});
  Client c(options(server.address()));
  EXPECT_EQ(c.options().deadline, 30s);  // the documented default of every client
  const client::ServerInfo s = c.serverInfo();
  EXPECT_EQ(s.version, DENOC_VERSION_STRING);
  EXPECT_EQ(s.proto_package, "denoc.v1");
  EXPECT_EQ(s.max_dof, 12u);
  EXPECT_EQ(s.max_states, 7u);
  EXPECT_EQ(s.max_receive_message_bytes, 3000000u);
  EXPECT_EQ(s.max_send_message_bytes, 3000000u);
  EXPECT_EQ(s.max_streams, 5u);
  EXPECT_FALSE(s.tokens_required);
  EXPECT_EQ(c.maxStates(), 7u);

  // the CLI prints the same values
  const auto out = test::runDenoc(dir, {"--server", server.address(), "info", "--format", "json"});
  ASSERT_EQ(out.code, 0) << out.err;
  const auto doc = nlohmann::json::parse(out.out);
  EXPECT_EQ(doc.at("version"), DENOC_VERSION_STRING);
  EXPECT_EQ(doc.at("max_states"), 7);
  EXPECT_EQ(doc.at("max_dof"), 12);
  EXPECT_EQ(doc.at("max_receive_message_bytes"), 3000000);
  EXPECT_EQ(doc.at("max_streams"), 5);
  EXPECT_EQ(doc.at("tokens_required"), false);
  // info without MODEL and without a server is an input error
  EXPECT_EQ(test::runDenoc(dir, {"info"}).code, 2);
}

TEST(ClientInfo, ServerInfoNeedsATokenWhenTokensAreOn) {
  TempDir dir;
  std::ofstream(dir.str("tokens")) << "alice token-of-alice\n";
  ServerProcess server(dir.str(), dir.str("store"), {"--token-file", dir.str("tokens")});
  try {
    Client(options(server.address())).serverInfo();
    ADD_FAILURE() << "GetServerInfo answered without a token";
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), grpc::StatusCode::UNAUTHENTICATED) << e.what();
  }
  EXPECT_TRUE(Client(options(server.address(), "token-of-alice")).serverInfo().tokens_required);
}

TEST(ClientInfo, BatchesAboveMaxStatesAreSplitAndJoinedInOrder) {
  TempDir dir;
  ServerProcess server(dir.str(), dir.str("store"), {"--max-states", "4"});
  Client c(options(server.address()));
  const std::string id = c.registerModelFile(kPanda, "", kTip).model_id;
  const Model model = pandaModel();
  const int n = model.n, count = 11;  // 4 + 4 + 3
  const std::vector<double> q = test::randomStates(count, n, 11, 2.0),
                            qd = test::randomStates(count, n, 12, 1.5),
                            qdd = test::randomStates(count, n, 13, 3.0),
                            tau = test::randomStates(count, n, 14, 20.0);
  const Eigen::MatrixXd Q = fromFlat(q, count, n), Qd = fromFlat(qd, count, n), Qdd = fromFlat(qdd, count, n),
                        Tau = fromFlat(tau, count, n);

  // the raw RPC refuses the batch: the split is the client's
  {
    auto channel = grpc::CreateChannel(server.address(), grpc::InsecureChannelCredentials());
    auto stub = v1::Dynamics::NewStub(channel);
    v1::InverseDynamicsRequest req;
    req.set_model_id(id);
    req.set_count(count);
    req.set_dof(n);
    for (int i = 0; i < count * n; ++i) {
      req.add_q(q[i]);
      req.add_qd(qd[i]);
      req.add_qdd(qdd[i]);
    }
    grpc::ClientContext ctx;
    v1::InverseDynamicsResponse resp;
    EXPECT_EQ(stub->InverseDynamics(&ctx, req, &resp).error_code(), grpc::StatusCode::RESOURCE_EXHAUSTED);
  }

  const client::InverseDynamicsResult ir = c.inverseDynamics(id, Q, Qd, Qdd);
  EXPECT_EQ(ir.model_id, id);
  EXPECT_TRUE(close(ir.tau, fromFlat(test::coreID(model, q, qd, qdd), count, n)));
  const client::ForwardDynamicsResult fr = c.forwardDynamics(id, Q, Qd, Tau, client::Route::Fixman);
  EXPECT_EQ(fr.route, client::Route::Fixman);
  EXPECT_TRUE(close(fr.qdd, fromFlat(test::coreFD(model, q, qd, tau, test::Route::Fixman), count, n)));

  // a wrench per state travels with its state
  Eigen::MatrixXd W(count, 6);
  for (int k = 0; k < count; ++k)
    for (int j = 0; j < 6; ++j) W(k, j) = 0.1 * (k + 1) - 0.05 * j;
  const Eigen::MatrixXd tw = c.inverseDynamics(id, Q, Qd, Qdd, W).tau;
  ASSERT_EQ(tw.rows(), count);
  for (int k = 0; k < count; ++k) {
    const Eigen::VectorXd qk = Q.row(k).transpose(), qdk = Qd.row(k).transpose(),
                          qddk = Qdd.row(k).transpose(), wk = W.row(k).transpose();
    EXPECT_TRUE(close(tw.row(k), c.inverseDynamics(id, qk, qdk, qddk, wk).tau)) << "state " << k;
  }

  // full factor with every term: each state equals its one-state call
  client::FactorFlags all;
  all.convective = all.bias = all.gravity_torque = all.inverse = true;
  const client::FullFactorResult f = c.fullFactor(id, Q, all, Qd);
  ASSERT_EQ(f.inertia.size(), static_cast<std::size_t>(count));
  ASSERT_EQ(f.convective.size(), static_cast<std::size_t>(count));
  ASSERT_EQ(f.inverse.size(), static_cast<std::size_t>(count));
  ASSERT_EQ(f.d.rows(), count);
  ASSERT_EQ(f.log_det.size(), count);
  ASSERT_EQ(f.bias.rows(), count);
  ASSERT_EQ(f.gravity_torque.rows(), count);
  for (int k = 0; k < count; ++k) {
    const Eigen::VectorXd qk = Q.row(k).transpose(), qdk = Qd.row(k).transpose();
    const client::FullFactorResult one = c.fullFactor(id, qk, all, qdk);
    const auto ku = static_cast<std::size_t>(k);
    EXPECT_TRUE(close(f.inertia[ku], one.inertia[0])) << k;
    EXPECT_TRUE(close(f.u[ku], one.u[0])) << k;
    EXPECT_TRUE(close(f.convective[ku], one.convective[0])) << k;
    EXPECT_TRUE(close(f.inverse[ku], one.inverse[0])) << k;
    EXPECT_TRUE(close(f.d.row(k), one.d)) << k;
    EXPECT_TRUE(close(f.bias.row(k), one.bias)) << k;
    EXPECT_TRUE(close(f.gravity_torque.row(k), one.gravity_torque)) << k;
    EXPECT_NEAR(f.log_det[k], one.log_det[0], 1e-12 * std::max(1.0, std::abs(one.log_det[0])));
  }
  // and without the optional terms (no Qd)
  const client::FullFactorResult plain = c.fullFactor(id, Q);
  EXPECT_EQ(plain.inertia.size(), static_cast<std::size_t>(count));
  EXPECT_TRUE(plain.inverse.empty());
  EXPECT_EQ(plain.bias.size(), 0);
}

TEST(ClientInfo, FindModelRefusesAmbiguity) {
  TempDir dir;
  ServerProcess server(dir.str(), dir.str("store"), {"--examples=false"});
  Client c(options(server.address()));
  DHSpec a = planarArmDH(), b = planarArmDH();
  a.name = b.name = "twin";
  b.gravity = Eigen::Vector3d(0, 0, -9.81);  // another model (gravity is part of the id), the same name
  const std::string ia = c.registerDH(a).model_id, ib = c.registerDH(b).model_id;
  ASSERT_NE(ia, ib);
  try {
    c.findModel("twin");
    ADD_FAILURE() << "an ambiguous name was resolved";
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), grpc::StatusCode::FAILED_PRECONDITION);
    EXPECT_NE(e.message().find(ia), std::string::npos) << e.message();
    EXPECT_NE(e.message().find(ib), std::string::npos) << e.message();
  }
  try {
    c.findModel("nobody");
    ADD_FAILURE() << "a missing name was resolved";
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), grpc::StatusCode::NOT_FOUND);
  }
  c.deleteModel(ib);
  EXPECT_EQ(c.findModel("twin").model_id, ia);
}

}  // namespace
}  // namespace denoc
