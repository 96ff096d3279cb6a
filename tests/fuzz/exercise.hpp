// What the fuzz targets do with a model that was accepted: every computation of the core at a few states,
// so that a model the builders let through but the algorithms cannot handle (an overflow, an out-of-range
// index, a cast of a non-finite number) shows up under the sanitizers. The results are not checked here:
// with extreme but finite inputs (masses of 1e300) they may be inf or NaN, which is not a memory error.
#pragma once

#include <Eigen/Core>
#include <cstdint>
#include <stdexcept>
#include <string>

#include "denoc/algorithm/convective.hpp"
#include "denoc/algorithm/energy.hpp"
#include "denoc/algorithm/fixman.hpp"
#include "denoc/algorithm/forward_dynamics.hpp"
#include "denoc/algorithm/inertia_matrix.hpp"
#include "denoc/algorithm/inverse_dynamics.hpp"
#include "denoc/algorithm/udu.hpp"
#include "denoc/configuration.hpp"
#include "denoc/data.hpp"
#include "denoc/model.hpp"

namespace denoc::fuzz {

/// Runs f; a function of the serial recursions refuses a tree model (std::invalid_argument naming itself,
/// algorithm/check.hpp): an answer, not a failure.
template <typename F>
void unlessRefusedForTrees(const Model& model, F&& f) {
  try {
    f();
  } catch (const std::invalid_argument& e) {
    if (model.serial || std::string(e.what()).find("not available for a tree model") == std::string::npos)
      throw;
  }
}

/// Runs every algorithm on model at the neutral state and at one state derived from seed (the joints'
/// coordinates; a floating root stays at its neutral pose).
inline void exerciseModel(const Model& model, std::uint64_t seed) {
  Data data(model);
  Eigen::VectorXd q = neutralConfiguration(model), qd = Eigen::VectorXd::Zero(model.nv),
                  x = Eigen::VectorXd::Zero(model.nv);
  for (int pass = 0; pass < 2; ++pass) {
    volatile double sink = 0.0;
    sink = sink + inverseDynamics(model, data, q, qd, x).sum();
    sink = sink + forwardDynamics(model, data, q, qd, x).sum();
    // the dense routes refuse, with NumericalError, an inertia matrix that is not numerically positive
    // definite (masses of 1e300 overflow it): an answer, not a failure
    unlessRefusedForTrees(model, [&] {
      try {
        sink = sink + forwardDynamicsCholesky(model, data, q, qd, x).sum();
      } catch (const NumericalError&) {
      }
    });
    unlessRefusedForTrees(model, [&] {
      try {
        sink = sink + forwardDynamicsFixman(model, data, q, qd, x).sum();
      } catch (const NumericalError&) {
      }
    });
    unlessRefusedForTrees(model, [&] {
      computeFullFactor(model, data, q);
      sink = sink + data.log_det;
    });
    unlessRefusedForTrees(model, [&] { sink = sink + computeInverseInertia(model, data, q).sum(); });
    unlessRefusedForTrees(model, [&] { sink = sink + computeConvectiveMatrix(model, data, q, qd).sum(); });
    unlessRefusedForTrees(model, [&] { sink = sink + computeBias(model, data, q, qd).sum(); });
    unlessRefusedForTrees(model, [&] { sink = sink + computeGravity(model, data, q).sum(); });
    unlessRefusedForTrees(model, [&] {
      double kinetic = 0.0, potential = 0.0;
      sink = sink + mechanicalEnergy(model, data, q, qd, kinetic, potential);
    });
    (void)sink;
    // a second state: small values from a linear congruential sequence of the seed
    for (int i = 0; i < model.n; ++i) {
      seed = seed * 6364136223846793005ull + 1442695040888963407ull;
      q[model.nqr + i] = static_cast<double>(static_cast<std::int64_t>(seed >> 40) % 2000) / 500.0;
      qd[model.nr + i] =
          static_cast<double>(static_cast<std::int64_t>((seed >> 20) & 0xfffff) % 2000) / 500.0 - 2.0;
      x[model.nr + i] = static_cast<double>(static_cast<std::int64_t>(seed & 0xfffff) % 2000) / 100.0 - 10.0;
    }
  }
}

/// FNV-1a of the input, the seed of exerciseModel's second state.
inline std::uint64_t hashBytes(const std::uint8_t* data, std::size_t size) {
  std::uint64_t h = 1469598103934665603ull;
  for (std::size_t i = 0; i < size; ++i) h = (h ^ data[i]) * 1099511628211ull;
  return h;
}

}  // namespace denoc::fuzz
