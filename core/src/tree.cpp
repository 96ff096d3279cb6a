// The check of a tree model's inertia matrix at its neutral configuration (algorithm/tree.hpp).
#include "denoc/algorithm/tree.hpp"

#include <algorithm>
#include <cmath>
#include <string>

#include "denoc/configuration.hpp"
#include "denoc/model.hpp"

namespace denoc::detail {

void checkNeutralInertia(const Model& model) {
  // massless links and semi-definite inertias are accepted while I(q) stays positive definite; a
  // coordinate that moves nothing (a massless leaf, a revolute joint about a point mass's own centre) is
  // refused here, by name, instead of at the first call
  Data data(model);
  const Eigen::VectorXd q = neutralConfiguration(model);
  treePlacements<double>(model, data, q);
  treeCrba<double>(model, data);
  const double scale = std::max(1.0, data.M.diagonal().cwiseAbs().maxCoeff());
  treeFactor<double>(model, data);
  for (int k = model.nv - 1; k >= 0; --k) {
    if (data.D[k] > 1e-12 * scale && std::isfinite(data.D[k])) continue;
    std::string who;
    if (k < model.nr) {
      who = "the root link '" + model.spec.root_link + "' (coordinate " + std::to_string(k) + " of the root)";
    } else {
      const JointSpec& j = model.spec.joints[static_cast<std::size_t>(k - model.nr)];
      who = "joint '" + j.name + "' (link '" + j.link + "')";
    }
    throw ModelError("model '" + model.spec.name +
                     "': the inertia matrix is singular at the neutral configuration: " + who +
                     " moves no mass or inertia (pivot " + formatNumber(data.D[k]) +
                     "); give it, or a link it carries, a mass and an inertia");
  }
}

}  // namespace denoc::detail
