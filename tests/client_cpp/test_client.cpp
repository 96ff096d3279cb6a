// denoc::client against real denocd processes on 127.0.0.1: answers equal the core computed in this process,
// errors carry the server's status and message, models are re-registered on a server that does not know
// them, UNAVAILABLE is retried (bounded), and streams arrive in order and complete.
#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <sys/wait.h>

#include <atomic>
#include <future>

#include "client_support.hpp"
#include "denoc/client/client.hpp"
#include "denoc/denoc.hpp"
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
namespace fs = std::filesystem;
using test::ServerProcess;
using test::TempDir;
using namespace std::chrono_literals;

std::string slurp(const std::string& path) { return test::readText(path); }

ClientOptions options(const std::string& target) {
  ClientOptions o;
  o.target = target;
  o.deadline = 30s;
  return o;
}

int freePort() {
  const int fd = ::socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in a{};
  a.sin_family = AF_INET;
  a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  a.sin_port = 0;
  socklen_t len = sizeof a;
  if (::bind(fd, reinterpret_cast<sockaddr*>(&a), sizeof a) != 0 ||
      ::getsockname(fd, reinterpret_cast<sockaddr*>(&a), &len) != 0) {
    ::close(fd);
    throw std::runtime_error("no free port");
  }
  ::close(fd);
  return ntohs(a.sin_port);
}

// ------------------------------------------------------------------------------------- the core's answers

TEST(ClientCpp, PandaIdFdAndFullFactorEqualTheCore) {
  TempDir dir;
  ServerProcess server(dir.str(), dir.str("store"));
  Client c(options(server.address()));
  const client::Registration reg = c.registerModelFile(kPanda, "", kTip);
  const Model model = pandaModel();
  const int n = model.n, count = 100;
  ASSERT_EQ(reg.model.dof, n);
  EXPECT_EQ(reg.model.model_id, reg.model_id);
  EXPECT_EQ(reg.model.joint_names.size(), 7u);
  EXPECT_TRUE(c.sources()->contains(reg.model_id));

  const std::vector<double> q = test::randomStates(count, n, 1, 2.0),
                            qd = test::randomStates(count, n, 2, 1.5),
                            qdd = test::randomStates(count, n, 3, 3.0),
                            tau = test::randomStates(count, n, 4, 20.0);
  const Eigen::MatrixXd Q = fromFlat(q, count, n), Qd = fromFlat(qd, count, n), Qdd = fromFlat(qdd, count, n),
                        Tau = fromFlat(tau, count, n);

  const client::InverseDynamicsResult id = c.inverseDynamics(reg.model_id, Q, Qd, Qdd);
  EXPECT_EQ(id.model_id, reg.model_id);
  EXPECT_EQ(id.gravity, Eigen::Vector3d(0, 0, -9.81));
  EXPECT_GT(id.compute_time.count(), 0);
  EXPECT_TRUE(close(id.tau, fromFlat(test::coreID(model, q, qd, qdd), count, n)));

  const std::pair<client::Route, test::Route> routes[] = {{client::Route::Saha, test::Route::Saha},
                                                          {client::Route::Fixman, test::Route::Fixman},
                                                          {client::Route::Cholesky, test::Route::Cholesky}};
  for (const auto& [route, core_route] : routes) {
    const client::ForwardDynamicsResult fd = c.forwardDynamics(reg.model_id, Q, Qd, Tau, route);
    EXPECT_EQ(fd.route, route);
    EXPECT_TRUE(close(fd.qdd, fromFlat(test::coreFD(model, q, qd, tau, core_route), count, n)))
        << static_cast<int>(route);
  }

  client::FactorFlags all;
  all.convective = all.bias = all.gravity_torque = all.inverse = true;
  const client::FullFactorResult f = c.fullFactor(reg.model_id, Q, all, Qd);
  ASSERT_EQ(f.inertia.size(), 100u);
  ASSERT_EQ(f.inverse.size(), 100u);
  ASSERT_EQ(f.convective.size(), 100u);
  Data data(model);
  for (int k = 0; k < count; ++k) {
    SCOPED_TRACE("state " + std::to_string(k));
    const Eigen::VectorXd qk = Q.row(k).transpose(), qdk = Qd.row(k).transpose();
    computeFullFactor(model, data, qk);
    EXPECT_TRUE(close(f.inertia[k], data.M));
    EXPECT_TRUE(close(f.u[k], data.U));
    EXPECT_TRUE(close(f.d.row(k).transpose(), data.D));
    EXPECT_NEAR(f.log_det[k], data.log_det, 1e-12 * std::max(1.0, std::abs(data.log_det)));
    EXPECT_TRUE(close(f.inverse[k], computeInverseInertia(model, data, qk)));
    EXPECT_TRUE(close(f.convective[k], computeConvectiveMatrix(model, data, qk, qdk)));
    EXPECT_TRUE(close(f.bias.row(k).transpose(), computeBias(model, data, qk, qdk)));
    EXPECT_TRUE(close(f.gravity_torque.row(k).transpose(), computeGravity(model, data, qk)));
  }

  // single states as vectors
  const Eigen::VectorXd q0 = Q.row(5).transpose(), qd0 = Qd.row(5).transpose(), qdd0 = Qdd.row(5).transpose();
  const client::InverseDynamicsResult one = c.inverseDynamics(reg.model_id, q0, qd0, qdd0);
  ASSERT_EQ(one.tau.rows(), 1);
  EXPECT_TRUE(close(one.tau.row(0).transpose(), inverseDynamics(model, data, q0, qd0, qdd0)));

  // the same URDF again: the same id, not created
  const client::Registration again = c.registerUrdf(slurp(kPanda), "", kTip);
  EXPECT_EQ(again.model_id, reg.model_id);
  EXPECT_FALSE(again.created);
  const client::ModelInfo info = c.getModel(reg.model_id);
  EXPECT_EQ(info.dof, 7);
  EXPECT_EQ(info.source, "urdf");
  const auto models = c.listModels();
  EXPECT_TRUE(
      std::any_of(models.begin(), models.end(), [&](const auto& m) { return m.model_id == reg.model_id; }));
}

// ------------------------------------------------------------------------------------------ error mapping

TEST(ClientCpp, ErrorsCarryTheStatusCodeAndTheServersMessage) {
  TempDir dir;
  ServerProcess server(dir.str(), dir.str("store"));
  Client c(options(server.address()));
  const std::string id = c.registerModelFile(kPanda, "", kTip).model_id;
  auto stub = server.stub();

  // unknown model: NOT_FOUND, the same message the server gives a raw stub
  const std::string unknown(64, 'a');
  try {
    c.inverseDynamics(unknown, Eigen::VectorXd::Zero(7), Eigen::VectorXd::Zero(7), Eigen::VectorXd::Zero(7));
    ADD_FAILURE() << "no error";
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), grpc::StatusCode::NOT_FOUND);
    EXPECT_EQ(e.call(), "InverseDynamics");
    v1::InverseDynamicsRequest r;
    r.set_model_id(unknown);
    r.set_count(1);
    r.set_dof(7);
    for (int i = 0; i < 7; ++i) {
      r.add_q(0);
      r.add_qd(0);
      r.add_qdd(0);
    }
    v1::InverseDynamicsResponse resp;
    const grpc::Status s = stub->InverseDynamics(test::context().get(), r, &resp);
    EXPECT_EQ(e.message(), s.error_message());
    EXPECT_NE(e.message().find(unknown), std::string::npos) << e.message();
    EXPECT_NE(std::string(e.what()).find("NOT_FOUND"), std::string::npos) << e.what();
  }

  // bad shapes: qd with 6 columns for a 7-joint model; q of the wrong dof
  try {
    c.inverseDynamics(id, Eigen::MatrixXd::Zero(2, 7), Eigen::MatrixXd::Zero(2, 6),
                      Eigen::MatrixXd::Zero(2, 7));
    ADD_FAILURE() << "no error";
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), grpc::StatusCode::INVALID_ARGUMENT);
    EXPECT_NE(e.message().find("qd"), std::string::npos) << e.message();
    EXPECT_NE(e.message().find("14"), std::string::npos) << e.message();  // count*dof expected
  }
  try {
    c.forwardDynamics(id, Eigen::VectorXd::Zero(6), Eigen::VectorXd::Zero(6), Eigen::VectorXd::Zero(6));
    ADD_FAILURE() << "no error";
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), grpc::StatusCode::INVALID_ARGUMENT);
    EXPECT_NE(e.message().find("dof"), std::string::npos) << e.message();
  }
  // a NaN in q
  try {
    Eigen::VectorXd q = Eigen::VectorXd::Zero(7);
    q[3] = std::nan("");
    c.fullFactor(id, q);
    ADD_FAILURE() << "no error";
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), grpc::StatusCode::INVALID_ARGUMENT);
    EXPECT_NE(e.message().find("q"), std::string::npos) << e.message();
  }

  // a bad URDF: INVALID_ARGUMENT with the server's message, and nothing remembered
  const std::string bad = "<robot name='broken'><link name='a'/><joint name='j' type='revolute'>";
  try {
    c.registerUrdf(bad);
    ADD_FAILURE() << "no error";
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), grpc::StatusCode::INVALID_ARGUMENT);
    v1::RegisterModelRequest r;
    r.mutable_urdf()->set_text(bad);
    v1::RegisterModelResponse resp;
    const grpc::Status s = stub->RegisterModel(test::context().get(), r, &resp);
    EXPECT_EQ(e.message(), s.error_message());
    EXPECT_FALSE(e.message().empty());
  }
  EXPECT_EQ(c.sources()->size(), 1u);
  // a tip link that does not exist: the server names it
  try {
    c.registerModelFile(kPanda, "", "no_such_link");
    ADD_FAILURE() << "no error";
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), grpc::StatusCode::INVALID_ARGUMENT);
    EXPECT_NE(e.message().find("no_such_link"), std::string::npos) << e.message();
  }
  // a missing model file: detected by the client
  try {
    c.registerModelFile(dir.str("none.urdf"));
    ADD_FAILURE() << "no error";
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), grpc::StatusCode::NOT_FOUND);
  }
  // deleting a built-in model is refused; deleting an unknown one is NOT_FOUND (no re-registration)
  try {
    c.deleteModel(unknown);
    ADD_FAILURE() << "no error";
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), grpc::StatusCode::NOT_FOUND);
  }
}

// ------------------------------------------------------------------------------------- re-registration

TEST(ClientCpp, ReregistersOnAServerWithAnEmptyStore) {
  TempDir dir;
  ServerProcess a(dir.str(), dir.str("store_a"), {}, "a");
  ServerProcess b(dir.str(), dir.str("store_b"), {}, "b");
  const Model model = pandaModel();
  const std::vector<double> q = test::randomStates(10, 7, 7), z(70, 0.0);
  const Eigen::MatrixXd Q = fromFlat(q, 10, 7), Z = Eigen::MatrixXd::Zero(10, 7);
  const Eigen::MatrixXd want = fromFlat(test::coreID(model, q, z, z), 10, 7);

  Client c(options(a.address()));
  const std::string id = c.registerModelFile(kPanda, "", kTip).model_id;
  EXPECT_TRUE(close(c.inverseDynamics(id, Q, Z, Z).tau, want));

  // B has never seen the model: a client without the source gets NOT_FOUND
  {
    Client stranger(options(b.address()));
    try {
      stranger.inverseDynamics(id, Q, Z, Z);
      ADD_FAILURE() << "B knows the model already";
    } catch (const Error& e) {
      EXPECT_EQ(e.code(), grpc::StatusCode::NOT_FOUND) << e.what();
    }
  }
  // the same client object pointed at B: re-registers and answers
  c.retarget(b.address());
  EXPECT_TRUE(close(c.inverseDynamics(id, Q, Z, Z).tau, want));
  v1::GetModelRequest get;
  get.set_model_id(id);
  v1::GetModelResponse got;
  EXPECT_TRUE(b.stub()->GetModel(test::context().get(), get, &got).ok()) << "B should hold the model now";

  // a second client given A's sources, at a third server: forward dynamics, full factor, simulate, stream
  ServerProcess s3(dir.str(), dir.str("store_c"), {}, "c");
  ClientOptions o = options(s3.address());
  o.sources = c.sources();
  Client other(o);
  EXPECT_EQ(other.sources(), c.sources());
  const auto fd = other.forwardDynamics(id, Q, Z, fromFlat(test::coreID(model, q, z, z), 10, 7));
  EXPECT_TRUE(close(fd.qdd, Z, 1e-9));
  // the server loses it (its record removed from the store by hand, not deleted: no tombstone) before each
  // of the other kinds of call
  const auto drop = [&] { ASSERT_TRUE(fs::remove(fs::path(dir.str("store_c")) / "v1" / (id + ".pb"))); };
  drop();
  EXPECT_EQ(other.fullFactor(id, Q).inertia.size(), 10u);
  drop();
  client::SimulateOptions so;
  so.t_end = 0.1;
  EXPECT_TRUE(other.simulate(id, Q.row(0).transpose(), Eigen::VectorXd::Zero(7), so).summary.complete);
  drop();
  auto stream = other.openStream();
  const Eigen::VectorXd tau =
      stream->inverseDynamics(id, Q.row(1).transpose(), Eigen::VectorXd::Zero(7), Eigen::VectorXd::Zero(7));
  EXPECT_TRUE(close(tau.transpose(), want.row(1)));
  stream->close();

  // re-registration can be turned off
  drop();
  ClientOptions off = options(s3.address());
  off.sources = c.sources();
  off.reregister = false;
  Client strict(off);
  try {
    strict.inverseDynamics(id, Q, Z, Z);
    ADD_FAILURE() << "no error";
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), grpc::StatusCode::NOT_FOUND);
  }
}

// A model deleted with DeleteModel, by this client or any other, on any replica sharing the store, is not
// registered again behind the caller's back: the server says it "was deleted", the client throws NOT_FOUND
// and forgets the source.
TEST(ClientCpp, DoesNotBringBackAModelDeletedByAnyClient) {
  TempDir dir;
  ServerProcess a(dir.str(), dir.str("store"), {}, "a");
  ServerProcess b(dir.str(), dir.str("store"), {}, "b");
  const std::vector<double> q = test::randomStates(2, 7, 9);
  const Eigen::MatrixXd Q = fromFlat(q, 2, 7), Z = Eigen::MatrixXd::Zero(2, 7);
  const fs::path record = fs::path(dir.str("store")) / "v1";
  const auto expectDeleted = [&](Client& c, const std::string& id, const std::string& what) {
    try {
      c.inverseDynamics(id, Q, Z, Z);
      ADD_FAILURE() << what << ": the deleted model answered";
    } catch (const Error& e) {
      EXPECT_EQ(e.code(), grpc::StatusCode::NOT_FOUND) << what;
      EXPECT_TRUE(client::wasDeleted(e.message())) << what << ": " << e.what();
    }
    EXPECT_FALSE(fs::exists(record / (id + ".pb"))) << what << ": registered again";
    EXPECT_FALSE(c.sources()->find(id)) << what << ": the source is kept";
  };

  // deleted by the same client (on A), then called through B
  Client c(options(a.address()));
  const std::string id = c.registerModelFile(kPanda, "", kTip).model_id;
  c.inverseDynamics(id, Q, Z, Z);
  c.deleteModel(id);
  c.retarget(b.address());
  expectDeleted(c, id, "deleted by the same client");

  // deleted by another client on another replica: a client that registered it and still holds its source
  Client holder(options(a.address()));
  ASSERT_EQ(holder.registerModelFile(kPanda, "", kTip).model_id, id);
  ASSERT_TRUE(holder.sources()->find(id));
  holder.inverseDynamics(id, Q, Z, Z);  // A holds it in memory
  {
    Client other(options(b.address()));
    other.deleteModel(id);
  }
  expectDeleted(holder, id, "deleted by another client on B");
  // the control-loop stream and simulate do not bring it back either
  ASSERT_EQ(holder.registerModelFile(kPanda, "", kTip).model_id, id);
  Client(options(b.address())).deleteModel(id);
  auto stream = holder.openStream();
  EXPECT_THROW(
      stream->inverseDynamics(id, Q.row(0).transpose(), Eigen::VectorXd::Zero(7), Eigen::VectorXd::Zero(7)),
      Error);
  EXPECT_FALSE(fs::exists(record / (id + ".pb"))) << "the stream registered it again";
  ASSERT_EQ(holder.registerModelFile(kPanda, "", kTip).model_id, id);
  Client(options(b.address())).deleteModel(id);
  client::SimulateOptions so;
  so.t_end = 0.05;
  EXPECT_THROW(holder.simulate(id, Q.row(0).transpose(), Eigen::VectorXd::Zero(7), so), Error);
  EXPECT_FALSE(fs::exists(record / (id + ".pb"))) << "simulate registered it again";

  // registered explicitly again: served again (a tombstone does not refuse a registration)
  EXPECT_TRUE(holder.registerModelFile(kPanda, "", kTip).created);
  EXPECT_EQ(holder.inverseDynamics(id, Q, Z, Z).tau.rows(), 2);
}

// ------------------------------------------------------------------------------------------- retries

TEST(ClientCpp, RetriesUntilAServerStartsLater) {
  TempDir dir;
  const int port = freePort();
  const std::string address = "127.0.0.1:" + std::to_string(port);
  ClientOptions o = options(address);
  o.retry.max_attempts = 60;
  o.retry.initial_backoff = 50ms;
  o.retry.multiplier = 1.5;
  o.retry.max_backoff = 250ms;
  std::atomic<int> retries{0};
  o.on_retry = [&](const client::RetryEvent& e) {
    EXPECT_EQ(e.code, grpc::StatusCode::UNAVAILABLE);
    EXPECT_EQ(e.attempt, retries.load() + 1);
    ++retries;
  };
  Client c(o);
  std::unique_ptr<ServerProcess> server;
  std::thread starter([&] {
    std::this_thread::sleep_for(500ms);
    server = std::make_unique<ServerProcess>(dir.str(), dir.str("store"),
                                             std::vector<std::string>{"--listen", address});
  });
  std::vector<client::ModelInfo> models;
  EXPECT_NO_THROW(models = c.listModels());
  starter.join();
  EXPECT_GE(retries.load(), 1);
  EXPECT_EQ(models.size(), 2u);  // the built-in examples
}

TEST(ClientCpp, RetriesAreBounded) {
  const int port = freePort();
  ClientOptions o = options("127.0.0.1:" + std::to_string(port));
  o.retry.max_attempts = 4;
  o.retry.initial_backoff = 20ms;
  int retries = 0;
  o.on_retry = [&](const client::RetryEvent&) { ++retries; };
  Client c(o);
  const auto start = std::chrono::steady_clock::now();
  try {
    c.listModels();
    ADD_FAILURE() << "no error without a server";
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), grpc::StatusCode::UNAVAILABLE);
  }
  EXPECT_EQ(retries, 3);  // 4 attempts
  EXPECT_LT(std::chrono::steady_clock::now() - start, 10s);
  // DeleteModel is not retried
  retries = 0;
  EXPECT_THROW(c.deleteModel(std::string(64, 'b')), Error);
  EXPECT_EQ(retries, 0);
}

TEST(ClientCpp, RetriesAcrossAServerRestart) {
  TempDir dir;
  const std::string address = "127.0.0.1:" + std::to_string(freePort());
  const std::vector<std::string> listen = {"--listen", address};
  auto server = std::make_unique<ServerProcess>(dir.str(), dir.str("store"), listen);
  ClientOptions o = options(address);
  o.retry.max_attempts = 60;
  o.retry.initial_backoff = 50ms;
  o.retry.max_backoff = 250ms;
  std::atomic<int> retries{0};
  o.on_retry = [&](const client::RetryEvent&) { ++retries; };
  Client c(o);
  const DHSpec dh = stanfordArmDH();
  const Model model = buildModelFromDH(dh);
  const std::string id = c.registerDH(dh).model_id;
  const Eigen::VectorXd q = Eigen::VectorXd::LinSpaced(6, -0.5, 0.7), z = Eigen::VectorXd::Zero(6);
  Data data(model);
  const Eigen::VectorXd want = inverseDynamics(model, data, q, z, z);
  EXPECT_TRUE(close(c.inverseDynamics(id, q, z, z).tau.row(0).transpose(), want));
  EXPECT_EQ(retries.load(), 0);

  server.reset();  // SIGKILL
  std::thread restarter([&] {
    std::this_thread::sleep_for(400ms);
    server = std::make_unique<ServerProcess>(dir.str(), dir.str("store"), listen);
  });
  client::InverseDynamicsResult r;
  EXPECT_NO_THROW(r = c.inverseDynamics(id, q, z, z));
  restarter.join();
  EXPECT_GE(retries.load(), 1);
  EXPECT_TRUE(close(r.tau.row(0).transpose(), want));
}

// -------------------------------------------------------------------------------------------- streams

TEST(ClientCpp, StreamedSimulationArrivesInOrderAndComplete) {
  TempDir dir;
  ServerProcess server(dir.str(), dir.str("store"));
  Client c(options(server.address()));
  const DHSpec dh = stanfordArmDH();
  const Model model = buildModelFromDH(dh);
  const std::string id = c.registerDH(dh).model_id;
  Eigen::VectorXd q0(6), qd0(6);
  q0 << 0.1, 1.2, 0.05, -0.4, 0.3, 0.2;
  qd0 << 0.5, -0.2, 0.01, 0.3, 0.0, -0.6;

  client::SimulateOptions o;
  o.t_end = 1.0;
  o.dt_out = 0.01;
  o.batch_size = 7;
  std::vector<client::SimulationBatch> batches;
  const client::SimulationSummary sum = c.simulate(id, q0, qd0, o, [&](const client::SimulationBatch& b) {
    batches.push_back(b);
    return true;
  });
  EXPECT_TRUE(sum.complete);
  EXPECT_EQ(sum.samples, 101u);
  EXPECT_EQ(sum.batches, 15u);  // ceil(101 / 7)
  EXPECT_GT(sum.steps, 0u);
  ASSERT_EQ(batches.size(), 15u);

  SimulationOptions so;
  so.t_end = 1.0;
  so.dt_out = 0.01;
  const SimulationResult want = simulate(model, q0, qd0, so);
  ASSERT_EQ(want.t.size(), 101);
  EXPECT_EQ(sum.steps, static_cast<std::uint64_t>(want.stats.steps));
  Eigen::Index k = 0;
  for (std::size_t b = 0; b < batches.size(); ++b) {
    EXPECT_EQ(batches[b].last, b + 1 == batches.size()) << b;
    EXPECT_EQ(batches[b].model_id, id);
    for (Eigen::Index i = 0; i < batches[b].t.size(); ++i, ++k) {
      ASSERT_LT(k, 101);
      EXPECT_EQ(batches[b].t[i], want.t[k]) << k;  // in order, none missing
      EXPECT_TRUE(close(batches[b].q.row(i), want.q.row(k)));
      EXPECT_TRUE(close(batches[b].qd.row(i), want.qd.row(k)));
      EXPECT_NEAR(batches[b].energy[i], want.energy[k], 1e-12 * std::max(1.0, std::abs(want.energy[k])));
    }
  }
  EXPECT_EQ(k, 101);

  // gathered, and with RK4 and a constant torque
  o.integrator = client::Integrator::RK4;
  o.step = 1e-3;
  o.torque = Eigen::VectorXd::Constant(6, 0.5);
  so.integrator = Integrator::RK4;
  so.step = 1e-3;
  so.torque = TorqueInput::constant(Eigen::VectorXd::Constant(6, 0.5));
  const client::SimulationResult all = c.simulate(id, q0, qd0, o);
  const SimulationResult want4 = simulate(model, q0, qd0, so);
  EXPECT_TRUE(close(all.q, want4.q));
  EXPECT_TRUE(close(all.energy, want4.energy));
  EXPECT_EQ(all.info.model_id, id);

  // the callback can stop the run
  int seen = 0;
  const client::SimulationSummary stopped =
      c.simulate(id, q0, qd0, o, [&](const client::SimulationBatch&) { return ++seen < 2; });
  EXPECT_FALSE(stopped.complete);
  EXPECT_EQ(seen, 2);

  // a bad run: the server's message
  o.t_end = -1.0;
  try {
    c.simulate(id, q0, qd0, o);
    ADD_FAILURE() << "no error";
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), grpc::StatusCode::INVALID_ARGUMENT);
    EXPECT_NE(e.message().find("t_end"), std::string::npos) << e.message();
  }
}

TEST(ClientCpp, StreamSessionAnswersInOrder) {
  TempDir dir;
  ServerProcess server(dir.str(), dir.str("store"));
  Client c(options(server.address()));
  const std::string id = c.registerModelFile(kPanda, "", kTip).model_id;
  const Model model = pandaModel();
  Data data(model);
  auto stream = c.openStream();
  const std::vector<double> q = test::randomStates(50, 7, 11), qd = test::randomStates(50, 7, 12),
                            x = test::randomStates(50, 7, 13, 5.0);
  for (int k = 0; k < 50; ++k) {
    const Eigen::Map<const Eigen::VectorXd> qk(&q[k * 7], 7), qdk(&qd[k * 7], 7), xk(&x[k * 7], 7);
    client::AnswerInfo info;
    if (k % 2 == 0) {
      const Eigen::VectorXd tau = stream->inverseDynamics(id, qk, qdk, xk, &info);
      EXPECT_TRUE(close(tau, inverseDynamics(model, data, qk, qdk, xk))) << k;
    } else {
      const Eigen::VectorXd qdd = stream->forwardDynamics(id, qk, qdk, xk, client::Route::Saha, &info);
      EXPECT_TRUE(close(qdd, forwardDynamics(model, data, qk, qdk, xk))) << k;
    }
    EXPECT_EQ(info.model_id, id);
    EXPECT_EQ(info.gravity, model.gravity);
  }
  EXPECT_EQ(stream->answered(), 50u);
  EXPECT_NO_THROW(stream->close());

  // a bad message ends the session with the server's status
  auto bad = c.openStream();
  try {
    bad->inverseDynamics(id, Eigen::VectorXd::Zero(3), Eigen::VectorXd::Zero(3), Eigen::VectorXd::Zero(3));
    ADD_FAILURE() << "no error";
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), grpc::StatusCode::INVALID_ARGUMENT);
    EXPECT_EQ(e.call(), "Stream");
  }
}

// ------------------------------------------------------------------------------------------------ TLS

TEST(ClientCpp, TlsOptionsGoThroughSslCredentials) {
  // (handshakes with real certificates are tested with a TLS-enabled server; here: the wiring)
  ClientOptions o = options("127.0.0.1:1");
  o.tls = client::TlsOptions{};
  o.tls->root_certs = "/nonexistent/ca.pem";
  try {
    Client c(o);
    ADD_FAILURE() << "a missing CA file was accepted";
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), grpc::StatusCode::NOT_FOUND);
    EXPECT_NE(e.message().find("/nonexistent/ca.pem"), std::string::npos) << e.message();
  }
  o.tls->root_certs.clear();
  o.tls->client_cert = "/nonexistent/client.pem";  // without its key
  EXPECT_THROW(Client{o}, Error);

  // TLS against a plaintext server: the handshake fails, the call is UNAVAILABLE (not answered in clear)
  TempDir dir;
  ServerProcess server(dir.str(), dir.str("store"));
  ClientOptions t = options(server.address());
  t.tls = client::TlsOptions{};
  t.retry.max_attempts = 1;
  Client c(t);
  try {
    c.listModels();
    ADD_FAILURE() << "a TLS client talked to a plaintext server";
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), grpc::StatusCode::UNAVAILABLE) << e.what();
  }
}

// ----------------------------------------------------------------------------------- the README example

TEST(ClientCpp, ReadmeExampleIsTheCompiledExampleAndRuns) {
  const std::string readme = slurp(std::string(DENOC_SOURCE_DIR) + "/clients/cpp/README.md");
  const std::string example =
      slurp(std::string(DENOC_SOURCE_DIR) + "/clients/cpp/examples/readme_example.cpp");
  ASSERT_FALSE(example.empty());
  EXPECT_NE(readme.find("```cpp\n" + example + "```"), std::string::npos)
      << "clients/cpp/README.md must show examples/readme_example.cpp as it is";

  TempDir dir;
  ServerProcess server(dir.str(), dir.str("store"));
  const std::string out = dir.str("example.out");
  const std::string cmd =
      std::string(DENOC_CLIENT_EXAMPLE) + " " + server.address() + " " + kPanda + " > " + out + " 2>&1";
  const int status = std::system(cmd.c_str());
  const std::string text = slurp(out);
  EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0) << text;
  EXPECT_NE(text.find("tau ="), std::string::npos) << text;
  EXPECT_NE(text.find("qdd error = "), std::string::npos) << text;
  const auto pos = text.find("qdd error = ");
  EXPECT_LT(std::stod(text.substr(pos + 12)), 1e-9) << text;
}

}  // namespace
}  // namespace denoc
