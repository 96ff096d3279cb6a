// The fleet as a robot outside the cluster sees it, through the C++ client library (denoc::client::Client):
// three denocd replicas sharing one store, each behind its own front, and the L7 balancer over them
// (fleet_process.hpp), all real processes. A model registered through the balancer is listed by every replica
// (asked directly on its socket); deleted on one, every replica answers NOT_FOUND "was deleted" (the time is
// printed); registrations racing deletions on other replicas leave every replica's listing equal to the store
// directory. A client calling inverse dynamics throughout, each answer checked against the core, has no
// failed call while one replica is killed (SIGKILL) and started again on its socket (the library's retries
// are counted); a replica added to a balancer gets calls after the reload; calls spread over the three
// replicas. The Python and Node clients run the same scenario (clients/python/tests/test_fleet.py,
// clients/node/test/fleet.test.ts).
#include <gtest/gtest.h>

#include <atomic>
#include <barrier>
#include <cstdio>
#include <mutex>
#include <set>
#include <thread>

#include "denoc/client/client.hpp"
#include "fleet_process.hpp"
#include "test_support.hpp"

namespace denoc::test {
namespace {

using Clock = std::chrono::steady_clock;
constexpr int kReplicas = BalancedFleet::kReplicas;

double secondsSince(Clock::time_point t) { return std::chrono::duration<double>(Clock::now() - t).count(); }

class FleetCppClient : public ::testing::Test {
 protected:
  static void SetUpTestSuite() { fleet_ = new BalancedFleet(); }
  static void TearDownTestSuite() { delete fleet_; }

  /// A robot's client through a balancer on `port` (mutual TLS), counting its retries in `retries`.
  static client::Client robot(int port, std::atomic<int>* retries = nullptr) {
    client::ClientOptions o;
    o.target = "127.0.0.1:" + std::to_string(port);
    o.tls = client::TlsOptions{fleet_->tls().ca, fleet_->tls().client_cert, fleet_->tls().client_key,
                               "localhost"};
    if (retries) o.on_retry = [retries](const client::RetryEvent&) { ++*retries; };
    return client::Client(o);
  }
  /// A client of replica r alone, on its socket (not through a front).
  static client::Client direct(int r) { return client::Client("unix:" + fleet_->socket(r)); }

  /// The unpinned models replica r lists.
  static std::set<std::string> listed(int r) {
    std::set<std::string> ids;
    for (const auto& m : direct(r).listModels())
      if (!m.pinned) ids.insert(m.model_id);
    return ids;
  }
  /// The models the store directory holds records of (<store>/v1/<id>.pb).
  static std::set<std::string> onDisk() {
    std::set<std::string> ids;
    for (const auto& e : fs::directory_iterator(fs::path(fleet_->store()) / "v1")) {
      const std::string name = e.path().filename().string();
      if (name.size() == 67 && name.ends_with(".pb")) ids.insert(name.substr(0, 64));
    }
    return ids;
  }

  /// A client calling inverse dynamics on one model through `c` every 5 ms until stopped, each answer
  /// compared with the core's; counts calls, failures, wrong answers and the slowest call.
  struct Caller {
    Caller(client::Client& c, const DHSpec& dh) : client(c), model(buildModelFromDH(dh)) {
      id = c.registerDH(dh).model_id;
      for (unsigned k = 0; k < 16; ++k) {
        states.push_back({randomStates(1, model.n, 500 + 3 * k), randomStates(1, model.n, 501 + 3 * k),
                          randomStates(1, model.n, 502 + 3 * k)});
        expected.push_back(coreID(model, states.back()[0], states.back()[1], states.back()[2]));
      }
      thread = std::thread([this] { run(); });
    }
    ~Caller() { stop(); }
    void stop() {
      done = true;
      if (thread.joinable()) thread.join();
    }
    void run() {
      const auto row = [](const std::vector<double>& v) {
        return Eigen::Map<const Eigen::RowVectorXd>(v.data(), static_cast<Eigen::Index>(v.size())).eval();
      };
      for (std::size_t k = 0; !done; ++k) {
        const auto& s = states[k % states.size()];
        const auto t0 = Clock::now();
        try {
          const Eigen::MatrixXd tau = client.inverseDynamics(id, row(s[0]), row(s[1]), row(s[2])).tau;
          const std::vector<double>& want = expected[k % states.size()];
          for (int j = 0; j < model.n; ++j)
            if (!(std::abs(tau(0, j) - want[j]) <= 1e-12 * std::max(1.0, std::abs(want[j])))) ++wrong;
        } catch (const client::Error& e) {
          std::lock_guard lock(mu);
          if (failed++ == 0) first_failure = e.what();
        }
        slowest_ms = std::max(slowest_ms.load(), 1e3 * secondsSince(t0));
        ++calls;
        std::this_thread::sleep_for(5ms);
      }
    }
    client::Client& client;
    Model model;
    std::string id;
    std::vector<std::array<std::vector<double>, 3>> states;
    std::vector<std::vector<double>> expected;
    std::atomic<bool> done{false};
    std::atomic<int> calls{0}, failed{0}, wrong{0};
    std::atomic<double> slowest_ms{0};
    std::mutex mu;
    std::string first_failure;
    std::thread thread;
  };

  static BalancedFleet* fleet_;
};

BalancedFleet* FleetCppClient::fleet_ = nullptr;

TEST_F(FleetCppClient, EveryReplicaSeesTheRegistrationTheDeletionAndTheStoreAfterRaces) {
  client::Client c = robot(fleet_->balancerPort());
  const DHSpec dh = randomChain(5, 61);
  const std::string id = c.registerDH(dh).model_id;
  for (int r = 0; r < kReplicas; ++r) EXPECT_TRUE(listed(r).count(id)) << "replica " << r;

  // deleted on replica 0: every replica answers NOT_FOUND "was deleted"
  const auto deleted = Clock::now();
  direct(0).deleteModel(id);
  double seen_s = 0;
  for (int r = 0; r < kReplicas; ++r) {
    client::Client replica = direct(r);
    std::string message;
    const bool gone = eventually(
        [&] {
          try {
            replica.getModel(id);
            return false;
          } catch (const client::Error& e) {
            message = e.message();
            return e.code() == grpc::StatusCode::NOT_FOUND;
          }
        },
        10s);
    seen_s = std::max(seen_s, secondsSince(deleted));
    EXPECT_TRUE(gone) << "replica " << r << " still serves the deleted model";
    EXPECT_NE(message.find("was deleted"), std::string::npos) << "replica " << r << ": " << message;
  }
  std::printf("[ figures  ] C++ client: a deletion on one replica was seen by all three after %.3f s\n",
              seen_s);

  // a registration on one replica racing a deletion on another, round after round
  constexpr int kRounds = 30;
  std::vector<std::unique_ptr<client::Client>> clients;
  for (int r = 0; r < kReplicas; ++r)
    clients.push_back(std::make_unique<client::Client>("unix:" + fleet_->socket(r)));
  for (int round = 0; round < kRounds; ++round) {
    const DHSpec raced = randomChain(4, 800u + static_cast<unsigned>(round % 4));
    const std::string raced_id = c.registerDH(raced).model_id;
    std::barrier go(2);
    std::thread registrant([&] {
      go.arrive_and_wait();
      clients[static_cast<std::size_t>(round % kReplicas)]->registerDH(raced);
    });
    std::thread deleter([&] {
      go.arrive_and_wait();
      try {
        clients[static_cast<std::size_t>((round + 1) % kReplicas)]->deleteModel(raced_id);
      } catch (const client::Error& e) {
        EXPECT_EQ(e.code(), grpc::StatusCode::NOT_FOUND) << e.what();  // deleted in an earlier round
      }
    });
    registrant.join();
    deleter.join();
  }
  const auto raced = Clock::now();
  const std::set<std::string> disk = onDisk();
  for (int r = 0; r < kReplicas; ++r)
    EXPECT_TRUE(eventually([&] { return listed(r) == disk; }, 10s)) << "replica " << r;
  std::printf(
      "[ figures  ] C++ client: after %d rounds of a registration racing a deletion, every replica listed "
      "the "
      "store's %zu models within %.3f s\n",
      kRounds, disk.size(), secondsSince(raced));
}

TEST_F(FleetCppClient, NoCallFailsWhileAReplicaIsKilledAndStartedAgain) {
  std::atomic<int> retries{0};
  client::Client c = robot(fleet_->balancerPort(), &retries);
  Caller caller(c, randomChain(6, 62));
  std::this_thread::sleep_for(1s);
  const auto killed = Clock::now();
  fleet_->killReplica(1);
  std::this_thread::sleep_for(500ms);
  fleet_->startReplica(1);
  const double down_s = secondsSince(killed);
  const auto back = Clock::now();
  const double first_call = fleet_->secondsUntilCalled(1, fleet_->perReplica()[1], back, 30s);
  std::this_thread::sleep_for(1s);
  caller.stop();
  std::printf(
      "[ figures  ] C++ client: %d calls, replica 1 down %.2f s, %d retries, %d failed, %d wrong, "
      "slowest %.1f ms; the restarted replica's first call %.2f s after it was back\n",
      caller.calls.load(), down_s, retries.load(), caller.failed.load(), caller.wrong.load(),
      caller.slowest_ms.load(), first_call);
  EXPECT_EQ(caller.failed.load(), 0) << caller.first_failure;
  EXPECT_EQ(caller.wrong.load(), 0);
  EXPECT_GE(first_call, 0) << "the restarted replica got no call within 30 s";
}

TEST_F(FleetCppClient, AReplicaAddedToTheBalancerGetsCallsWithoutAFailure) {
  int port = 0;
  auto balancer = fleet_->startBalancer("scaled", port, 2);
  client::Client c = robot(port);
  Caller caller(c, randomChain(6, 63));
  std::this_thread::sleep_for(500ms);
  const int on2 = fleet_->perReplica()[2];
  const auto reloaded = fleet_->scaleBalancer(*balancer, "scaled", port, 3);
  const double first_call = fleet_->secondsUntilCalled(2, on2, reloaded, 30s);
  std::this_thread::sleep_for(1s);
  caller.stop();
  std::printf(
      "[ figures  ] C++ client: the third replica's first call %.2f s after the balancer's reload; %d calls, "
      "%d "
      "failed\n",
      first_call, caller.calls.load(), caller.failed.load());
  EXPECT_GE(first_call, 0) << "the added replica got no call within 30 s\n" << balancer->log();
  EXPECT_EQ(caller.failed.load(), 0) << caller.first_failure;
  EXPECT_EQ(caller.wrong.load(), 0);
}

TEST_F(FleetCppClient, CallsSpreadOverEveryReplica) {
  client::Client c = robot(fleet_->balancerPort());
  const std::string id = c.registerDH(randomChain(3, 64)).model_id;
  const Eigen::MatrixXd q = Eigen::MatrixXd::Constant(1, 3, 0.2), zero = Eigen::MatrixXd::Zero(1, 3);
  const auto before = fleet_->settledPerReplica();
  constexpr int kCalls = 90;
  for (int k = 0; k < kCalls; ++k) c.inverseDynamics(id, q, zero, zero);
  const auto after = fleet_->settledPerReplica();
  std::printf("[ figures  ] C++ client: %d calls through the balancer: %d, %d, %d on replicas 0, 1, 2\n",
              kCalls, after[0] - before[0], after[1] - before[1], after[2] - before[2]);
  EXPECT_EQ(after[0] + after[1] + after[2] - before[0] - before[1] - before[2], kCalls);
  for (int r = 0; r < kReplicas; ++r) EXPECT_GE(after[r] - before[r], kCalls / 5) << "replica " << r;
}

}  // namespace
}  // namespace denoc::test
