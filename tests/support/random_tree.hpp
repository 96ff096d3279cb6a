// Random but physically valid kinematic trees for tests: a random chain's joints given random earlier
// parents, under a fixed, floating or planar root (docs/trees.md).
#pragma once

#include <random>

#include "denoc/model.hpp"
#include "support/random_chain.hpp"

namespace denoc::testing {

/// A random tree of n joints: the joints of randomChainSpec(n, seed) given random earlier parents (or the
/// root link), under `root`; the root link gets a mass and an inertia.
inline ModelSpec randomTreeSpec(int n, std::uint32_t seed, RootJoint root) {
  ModelSpec spec = randomChainSpec(n, seed);
  std::mt19937 rng(seed + 1000);
  for (int i = 0; i < n; ++i) {
    std::uniform_int_distribution<int> pick(-1, i - 1);
    spec.joints[static_cast<std::size_t>(i)].parent = (i > 0 && rng() % 3 == 0) ? i - 1 : pick(rng);
  }
  spec.root = root;
  spec.root_link = "trunk";
  spec.root_mass = 3.0;
  spec.root_com = randomVector(rng, 0.1);
  spec.root_inertia = randomInertia(rng);
  return spec;
}

}  // namespace denoc::testing
