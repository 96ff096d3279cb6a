// The dynamics of one state in the `denoc` tool's process (the local front end): a model file loaded, and
// inverse dynamics, forward dynamics and the full factor as Results for the output.
#pragma once

#include <string>
#include <vector>

#include "denoc/data.hpp"
#include "denoc/model.hpp"
#include "denoc/urdf.hpp"
#include "input.hpp"
#include "output.hpp"

namespace denoc::cli {

/// Loads a model file (see denoc/model_io.hpp); ModelError passes through.
Model loadModel(const std::string& path, const UrdfOptions& urdf_options = {});

/// Inverse dynamics: tau = I(q) qdd + C(q, qd) qd + g(q) (q: nq entries, the others nv), less the joint
/// forces of the external wrenches (sum of J_k^T f_k) when there are any.
Result computeInverseDynamics(const Model& model, Data& data, const State& state,
                              const std::vector<ExternalWrench>& wrenches = {});

/// The route of a --route name ("saha", "fixman", "cholesky"; the option's checker admits no other).
ForwardRoute forwardRouteOf(const std::string& name);

/// Forward dynamics: qdd = I(q)^-1 (tau - C qd - g), by the O(n) route ("saha"), Fixman's O(n) inversion
/// ("fixman") or the dense one ("cholesky"). With external wrenches: the O(n) route by articulated bodies
/// with the wrenches (saha), or the other routes with tau + sum of J_k^T f_k (the wrenches' joint forces,
/// from inverse dynamics with and without them).
Result computeForwardDynamics(const Model& model, Data& data, const State& state, const std::string& route,
                              const std::vector<ExternalWrench>& wrenches = {});

/// The full factor at q: I, U, D, log det I and, with inverse, I^-1.
Result computeFactor(const Model& model, Data& data, const State& state, bool inverse);

}  // namespace denoc::cli
