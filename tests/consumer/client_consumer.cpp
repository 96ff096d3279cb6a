// A program outside the project that uses the installed C++ client (find_package(denoc COMPONENTS client)
// or pkg-config denoc-client): registers the two-link arm on a running denocd (argv[1]) and checks the
// server's inverse dynamics of a batch against the closed form, and the library's version against the
// headers'. Exit 0 only when both agree.
#include <cstring>
#include <denoc/client/client.hpp>
#include <iostream>

#include "two_link.hpp"

int main(int argc, char** argv) {
  if (argc < 2) {
    std::cerr << "usage: client_consumer HOST:PORT\n";
    return 2;
  }
  denoc::client::Client client(argv[1]);
  const std::string id = client.registerUrdf(consumer::urdf()).model_id;
  Eigen::MatrixXd Q(20, 2), Qd(20, 2), Qdd(20, 2);
  for (int k = 0; k < 20; ++k) {
    Q.row(k) << 0.3 * k - 2.0, 1.1 - 0.17 * k;
    Qd.row(k) << 0.5 - 0.05 * k, 0.09 * k - 0.7;
    Qdd.row(k) << 1.3 - 0.2 * k, 0.4 + 0.11 * k;
  }
  const Eigen::MatrixXd tau = client.inverseDynamics(id, Q, Qd, Qdd).tau;
  double worst = 0.0;
  for (int k = 0; k < 20; ++k) {
    const double q[2] = {Q(k, 0), Q(k, 1)}, qd[2] = {Qd(k, 0), Qd(k, 1)}, qdd[2] = {Qdd(k, 0), Qdd(k, 1)};
    double want[2];
    consumer::closedForm(q, qd, qdd, want);
    for (int i = 0; i < 2; ++i)
      worst = std::max(worst, std::abs(tau(k, i) - want[i]) / std::max(1.0, std::abs(want[i])));
  }
  const bool same_version = std::strcmp(denoc::version(), DENOC_VERSION_STRING) == 0;
  std::cout << "client library " << denoc::version() << " (headers " << DENOC_VERSION_STRING << "): model "
            << id.substr(0, 12)
            << "..., 20 states, inverse dynamics against the closed form: max relative error " << worst
            << "\n";
  return tau.rows() == 20 && worst <= 1e-12 && same_version ? 0 : 1;
}
