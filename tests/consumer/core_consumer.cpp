// A program outside the project that uses the installed core (find_package(denoc) or pkg-config denoc):
// inverse dynamics of a two-link arm from URDF text, against the closed form. Prints the versions and the
// largest difference; exit 0 only when they agree to 1e-12.
#include <denoc/denoc.hpp>
#include <iostream>

#include "two_link.hpp"

int main() {
  const denoc::Model model = denoc::buildModelFromUrdf(consumer::urdf());
  denoc::Data data(model);
  double worst = 0.0;
  for (int k = 0; k < 20; ++k) {
    const double q[2] = {0.3 * k - 2.0, 1.1 - 0.17 * k}, qd[2] = {0.5 - 0.05 * k, 0.09 * k - 0.7},
                 qdd[2] = {1.3 - 0.2 * k, 0.4 + 0.11 * k};
    double want[2];
    consumer::closedForm(q, qd, qdd, want);
    const Eigen::VectorXd tau =
        denoc::inverseDynamics(model, data, Eigen::Vector2d(q[0], q[1]), Eigen::Vector2d(qd[0], qd[1]),
                               Eigen::Vector2d(qdd[0], qdd[1]));
    for (int i = 0; i < 2; ++i)
      worst = std::max(worst, std::abs(tau[i] - want[i]) / std::max(1.0, std::abs(want[i])));
  }
  std::cout << "core " << DENOC_VERSION_STRING << ": " << model.n
            << " joints, inverse dynamics against the closed form: max relative error " << worst << "\n";
  return model.n == 2 && worst <= 1e-12 ? 0 : 1;
}
