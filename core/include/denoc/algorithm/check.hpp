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
    for (Eigen::Index i = 0; i < v.size(); ++i) {
      if (!std::isfinite(v[i])) {
        throw std::invalid_argument(std::string(function) + ": " + name + "[" + std::to_string(i) +
                                    "] is " + std::to_string(v[i]) + ", expected a finite number");
      }
    }
  }
}

}  // namespace denoc::detail
