// Argument checks at the boundary of every public algorithm: a wrong size or a non-finite entry throws
// std::invalid_argument naming the function, the argument and what was expected.
#pragma once

#include <cmath>
#include <stdexcept>
#include <string>
#include <type_traits>

#include "denoc/model.hpp"

namespace denoc::detail {

template <typename S, typename Vec>
void checkVector(const ModelTpl<S>& model, const Vec& v, const char* function, const char* name) {
  if (v.size() != model.n) {
    throw std::invalid_argument(std::string(function) + ": " + name + " has " + std::to_string(v.size()) +
                                " entries, expected " + std::to_string(model.n) +
                                " (one per joint)");
  }
  if constexpr (std::is_floating_point_v<S>) {
    // x - x is 0 for a finite x and NaN for an infinite or NaN one: one branch for the whole vector
    S acc = S(0);
    const S* x = v.data();
    for (Eigen::Index i = 0; i < v.size(); ++i) acc += x[i] - x[i];
    if (acc == S(0)) return;
    for (Eigen::Index i = 0; i < v.size(); ++i) {
      if (!std::isfinite(x[i])) {
        throw std::invalid_argument(std::string(function) + ": " + name + "[" + std::to_string(i) +
                                    "] is " + std::to_string(x[i]) + ", expected a finite number");
      }
    }
  }
}

}  // namespace denoc::detail
