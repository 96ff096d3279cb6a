// The fixed-step schemes of integrator.hpp, for the Simulator (simulate.cpp) and the rollouts (rollout.cpp):
// one step of x = [q; qd] with the slope f(t, x) = [qd; qdd] given by the caller.
#pragma once

#include <Eigen/Core>

#include "denoc/integrator.hpp"

namespace denoc::detail {

using StateRef = Eigen::Ref<const Eigen::VectorXd>;

/// One step of length h from x at time t into xn (2n entries; xn may be x). `slope(s, t_s, x_s, k)` writes
/// the slope [qd_s; qdd_s] of stage s (0 to 3 for RK4, 0 for Euler) at time t_s and state x_s into k, and
/// returns false when it cannot (a state out of range, a non-finite slope); the step then returns false at
/// once and xn is left as it was.
///  - RK4: k1 = f(t, x), k2 = f(t + h/2, x + h/2 k1), k3 = f(t + h/2, x + h/2 k2), k4 = f(t + h, x + h k3),
///    xn = x + h/6 (k1 + 2 k2 + 2 k3 + k4), the sum formed left to right;
///  - semi-implicit Euler: qd+ = qd + h qdd(t, x), q+ = q + h qd+.
template <typename Slope>
bool fixedStep(StepScheme scheme, double t, double h, const StateRef& x, Eigen::Ref<Eigen::VectorXd> xn,
               FixedStepWork& w, Slope&& slope) {
  const Eigen::Index n = x.size() / 2;
  if (scheme == StepScheme::SemiImplicitEuler) {
    if (!slope(0, t, x, w.k)) return false;
    xn.tail(n) = x.tail(n) + h * w.k.tail(n);
    xn.head(n) = x.head(n) + h * xn.tail(n);
    return true;
  }
  const double c[4] = {0.0, 0.5 * h, 0.5 * h, h};
  for (int s = 0; s < 4; ++s) {
    if (s == 0) {
      if (!slope(0, t, x, w.k)) return false;
      w.ksum = w.k;
      continue;
    }
    w.xs = x + c[s] * w.k;
    if (!slope(s, t + c[s], w.xs, w.k)) return false;
    if (s < 3) {
      w.ksum = w.ksum + 2.0 * w.k;
    } else {
      w.ksum = w.ksum + w.k;
    }
  }
  xn = x + (h / 6.0) * w.ksum;
  return true;
}

}  // namespace denoc::detail
