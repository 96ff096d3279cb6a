// The core's integrators of the state x = [q; qd], xdot = [qd; qdd], share two things: the fixed-step schemes
// (the Simulator's fixed-step runs and the rollouts take their steps from one implementation, so a
// zero-torque RK4 rollout is the Simulator's RK4 run bit for bit), and the one error any integration throws
// when it stops part way (DivergenceError, fixed-step or adaptive).
#pragma once

#include <Eigen/Core>
#include <cstdint>

#include "denoc/model.hpp"

namespace denoc {

/// A fixed-step scheme: one step of length h from x = [q; qd], the applied torque held over the step.
enum class StepScheme : std::uint8_t {
  SemiImplicitEuler,  // qd+ = qd + h qdd(x), q+ = q + h qd+ (one evaluation)
  RK4,                // classical 4th-order Runge-Kutta (four evaluations)
};

/// Thrown by an integration (Simulator, rollout, rolloutBatch) that stops part way: its state diverged (an
/// entry stopped being finite or left the range the dynamics accept, kMaxPosition and kMaxStateValue in
/// algorithm/check.hpp; or a dynamics evaluation inside it failed with NumericalError), the adaptive step
/// fell below SimulationOptions::min_step, or a run reached SimulationOptions::max_steps (a stiff or
/// diverging run). What the integration delivered before it stays delivered; the message names the time
/// or the step, and the entry where one is at fault. The inputs, not the library, are at fault: a shorter
/// step, a tighter tolerance or other torques may help.
class DivergenceError : public NumericalError {
 public:
  using NumericalError::NumericalError;
};

/// The stage vectors of a fixed step for a model of n joints, allocated once (no allocation while stepping).
struct FixedStepWork {
  explicit FixedStepWork(int n = 0)
      : xs(Eigen::VectorXd::Zero(2 * n)),
        k(Eigen::VectorXd::Zero(2 * n)),
        ksum(Eigen::VectorXd::Zero(2 * n)) {}
  Eigen::VectorXd xs;    // [2n] the state of a stage (RK4 stages 2 to 4)
  Eigen::VectorXd k;     // [2n] the slope [qd; qdd] of a stage
  Eigen::VectorXd ksum;  // [2n] RK4: k1 + 2 k2 + 2 k3 + k4
};

}  // namespace denoc
