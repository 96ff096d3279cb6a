// States per second of batched inverse dynamics through the C++ client: the Panda
// (examples/models/panda.urdf), a 1000-state batch, 20 calls per round. Usage: denoc_client_throughput
// HOST:PORT URDF [ROUNDS] Prints one line per round; bench/client_throughput.sh runs it beside the Python
// client on one server.
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <fstream>
#include <random>
#include <sstream>
#include <string>
#include <vector>

#include "denoc/client/client.hpp"

int main(int argc, char** argv) {
  if (argc < 3) {
    std::fprintf(stderr, "usage: %s HOST:PORT URDF [ROUNDS]\n", argv[0]);
    return 2;
  }
  const int rounds = argc > 3 ? std::atoi(argv[3]) : 3;
  std::ifstream file(argv[2]);
  std::stringstream text;
  text << file.rdbuf();
  denoc::client::Client client(argv[1]);
  const std::string id = client.registerUrdf(text.str()).model_id;
  const int count = 1000, dof = 7, calls = 20;
  std::mt19937 rng(1);
  std::uniform_real_distribution<double> u(-1.0, 1.0);
  Eigen::MatrixXd Q(count, dof), Qd(count, dof), Qdd(count, dof);
  for (Eigen::MatrixXd* m : {&Q, &Qd, &Qdd})
    for (int i = 0; i < count; ++i)
      for (int j = 0; j < dof; ++j) (*m)(i, j) = u(rng);
  double sink = client.inverseDynamics(id, Q, Qd, Qdd).tau(0, 0);  // warm up
  for (int r = 0; r < rounds; ++r) {
    std::vector<double> seconds;
    for (int c = 0; c < calls; ++c) {
      const auto t0 = std::chrono::steady_clock::now();
      sink += client.inverseDynamics(id, Q, Qd, Qdd).tau(0, 0);
      seconds.push_back(std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count());
    }
    std::sort(seconds.begin(), seconds.end());
    const double median = seconds[seconds.size() / 2];
    std::printf("c++    round %d: median %.0f states/s (%.2f ms/call), best %.0f states/s\n", r + 1,
                count / median, median * 1e3, count / seconds.front());
  }
  return sink == 12345.678 ? 1 : 0;
}
