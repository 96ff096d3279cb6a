// Calls spread over a fleet by default: three denocd replicas on 127.0.0.1 sharing one store, reached through
// one ipv4: target naming the three. The C++ client with no policy given (round_robin for such targets) and
// the CLI (the same client) send calls to every replica, counted by each replica's own metrics; with
// load_balancing "pick_first" (or the CLI's --lb-policy pick_first) every call goes to one.
#include <gtest/gtest.h>

#include <fstream>

#include "denoc/client/client.hpp"
#include "server/metrics_scrape.hpp"
#include "server/server_process.hpp"
#include "server/test_support.hpp"
#include "support/run_process.hpp"

namespace denoc {
namespace {

using test::ServerProcess;
using test::TempDir;

struct Fleet {
  TempDir dir;
  std::vector<std::unique_ptr<ServerProcess>> replicas;
  std::vector<int> metrics_ports;
  std::string target = "ipv4:";

  Fleet() {
    for (int i = 0; i < 3; ++i) {
      const std::string tag = "r" + std::to_string(i), port_file = dir.str(tag + ".metrics");
      replicas.push_back(std::make_unique<ServerProcess>(
          dir.str(), dir.str("store"),
          std::vector<std::string>{"--metrics-listen", "127.0.0.1:0", "--metrics-port-file", port_file},
          tag));
      int port = 0;
      std::ifstream(port_file) >> port;
      metrics_ports.push_back(port);
      target += (i ? "," : "") + replicas.back()->address();
    }
  }

  // InverseDynamics calls answered OK by each replica
  std::vector<double> calls() const {
    std::vector<double> out;
    for (int port : metrics_ports) {
      out.push_back(test::metric(test::scrapeMetrics(port),
                                 "denoc_requests_total{code=\"OK\",rpc=\"InverseDynamics\"}"));
    }
    return out;
  }
};

std::vector<double> minus(const std::vector<double>& a, const std::vector<double>& b) {
  std::vector<double> d;
  for (std::size_t i = 0; i < a.size(); ++i) d.push_back(a[i] - b[i]);
  return d;
}

TEST(ClientSpread, CallsSpreadOverEveryReplicaByDefaultAndPickFirstKeepsOne) {
  Fleet fleet;
  const DHSpec dh = test::randomChain(6, 3);
  const Eigen::MatrixXd q = Eigen::MatrixXd::Constant(1, 6, 0.3), zero = Eigen::MatrixXd::Zero(1, 6);
  for (const std::string policy : {"", "pick_first"}) {
    SCOPED_TRACE("load_balancing '" + policy + "'");
    client::ClientOptions o;
    o.target = fleet.target;
    o.load_balancing = policy;
    client::Client c(o);
    const std::string id = c.registerDH(dh).model_id;
    const std::vector<double> before = fleet.calls();
    for (int k = 0; k < 30; ++k) c.inverseDynamics(id, q, zero, zero);
    const std::vector<double> spread = minus(fleet.calls(), before);
    EXPECT_EQ(spread[0] + spread[1] + spread[2], 30.0);
    int used = 0;
    for (double n : spread) used += n > 0 ? 1 : 0;
    if (policy.empty()) {
      EXPECT_EQ(used, 3) << spread[0] << " " << spread[1] << " " << spread[2];
      for (double n : spread) EXPECT_GE(n, 5.0) << "round_robin gives each replica about 10 of 30";
    } else {
      EXPECT_EQ(used, 1) << spread[0] << " " << spread[1] << " " << spread[2];
    }
  }
  // the CLI: bench sends its calls on one channel, spread by default like the library's
  const std::vector<double> before = fleet.calls();
  const auto r = testing::runProcess(
      DENOC_CLI, {"--server", fleet.target, "bench", "planar_3r", "--calls", "30", "--batch", "1"},
      fleet.dir.str("cli"));
  ASSERT_EQ(r.code, 0) << r.out << r.err;
  const std::vector<double> spread = minus(fleet.calls(), before);
  int used = 0;
  for (double n : spread) used += n > 0 ? 1 : 0;
  EXPECT_EQ(used, 3) << "the CLI's calls: " << spread[0] << " " << spread[1] << " " << spread[2];
}

}  // namespace
}  // namespace denoc
