// The robots the planning tests run on: random chains of 1 to 60 joints mixing revolute and prismatic
// joints, the Stanford arm (Saha 1999 Table 3), and the example models of the repository (the Franka Panda
// URDF, the planar 3R and Stanford arm model files).
#pragma once

#include <cctype>
#include <string>
#include <vector>

#include "denoc/denoc.hpp"
#include "support/random_chain.hpp"

namespace denoc::testing {

struct Robot {
  std::string name;
  Model model;
};

/// Random chains of the given sizes (seeded by size), with armature on every other joint.
inline std::vector<Robot> randomRobots(const std::vector<int>& sizes, std::uint32_t seed = 7u) {
  std::vector<Robot> robots;
  for (int n : sizes) {
    ModelSpec spec = randomChainSpec(n, seed * 1000u + static_cast<std::uint32_t>(n), 0.35);
    for (std::size_t i = 0; i < spec.joints.size(); i += 2) spec.joints[i].armature = 0.05;
    robots.push_back({"random" + std::to_string(n), buildModel(spec)});
  }
  return robots;
}

/// The Stanford arm and the repository's example models.
inline std::vector<Robot> namedRobots() {
  const std::string dir = std::string(DENOC_SOURCE_DIR) + "/examples/models/";
  return {{"stanford", buildModelFromDH(stanfordArmDH())},
          {"panda.urdf", loadModelFile(dir + "panda.urdf")},
          {"planar_3r.json", loadModelFile(dir + "planar_3r.json")},
          {"stanford_arm.json", loadModelFile(dir + "stanford_arm.json")}};
}

/// Both lists: random chains of 1, 2, 3, 6, 7, 12, 25 and 60 joints, then the named robots.
inline std::vector<Robot> allRobots() {
  std::vector<Robot> robots = randomRobots({1, 2, 3, 6, 7, 12, 25, 60});
  for (Robot& r : namedRobots()) robots.push_back(std::move(r));
  return robots;
}

/// A robot's name as a GoogleTest parameter name: every character other than a letter or a digit made '_'.
inline std::string parameterName(std::string name) {
  for (char& c : name) {
    if (!std::isalnum(static_cast<unsigned char>(c))) c = '_';
  }
  return name;
}

/// A random state for a robot: revolute joints within +-pi, prismatic within +-0.3 m.
inline Eigen::VectorXd randomConfiguration(const Model& model, std::mt19937& rng) {
  std::uniform_real_distribution<double> u(-1.0, 1.0);
  Eigen::VectorXd q(model.n);
  for (int i = 0; i < model.n; ++i) q[i] = (model.type[i] == JointType::Revolute ? 3.14159 : 0.3) * u(rng);
  return q;
}

}  // namespace denoc::testing
