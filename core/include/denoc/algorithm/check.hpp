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
                                " entries, expected " + std::to_string(model.n) + " (one per joint)");
  }
  if constexpr (std::is_floating_point_v<S>) {
    // x - x is 0 for a finite x and NaN for an infinite or NaN one: one branch for the whole vector
    S acc = S(0);
    const S* x = v.data();
    for (Eigen::Index i = 0; i < v.size(); ++i) acc += x[i] - x[i];
    if (acc == S(0)) return;
    for (Eigen::Index i = 0; i < v.size(); ++i) {
      if (!std::isfinite(x[i])) {
        throw std::invalid_argument(std::string(function) + ": " + name + "[" + std::to_string(i) + "] is " +
                                    std::to_string(x[i]) + ", expected a finite number");
      }
    }
  }
}

/// The three state vectors of a dynamics call at once (one loop, one branch); on an error the message is
/// checkVector's for the first vector at fault, in argument order.
template <typename S, typename Vec>
void checkVectors(const ModelTpl<S>& model, const char* function, const Vec& a, const char* a_name,
                  const Vec& b, const char* b_name, const Vec& c, const char* c_name) {
  const Eigen::Index n = model.n;
  if constexpr (std::is_floating_point_v<S>) {
    if (a.size() == n && b.size() == n && c.size() == n) {
      const S* x = a.data();
      const S* y = b.data();
      const S* z = c.data();
      S acc = S(0);
      for (Eigen::Index i = 0; i < n; ++i) acc += (x[i] - x[i]) + (y[i] - y[i]) + (z[i] - z[i]);
      if (acc == S(0)) return;
    }
  }
  checkVector(model, a, function, a_name);
  checkVector(model, b, function, b_name);
  checkVector(model, c, function, c_name);
}

}  // namespace denoc::detail
