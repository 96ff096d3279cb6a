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

/// The stage vectors of a fixed step on the configuration manifold of a tree model (nq configuration and nv
/// velocity coordinates; docs/trees.md), allocated once.
struct ManifoldStepWork {
  explicit ManifoldStepWork(int nq = 0, int nv = 0)
      : qs(Eigen::VectorXd::Zero(nq)),
        vs(Eigen::VectorXd::Zero(nv)),
        xi(Eigen::VectorXd::Zero(nv)),
        nu(Eigen::VectorXd::Zero(nv)),
        nusum(Eigen::VectorXd::Zero(nv)),
        a(Eigen::VectorXd::Zero(nv)),
        asum(Eigen::VectorXd::Zero(nv)) {}
  Eigen::VectorXd qs;     // [nq] the configuration of a stage
  Eigen::VectorXd vs;     // [nv] the velocity of a stage
  Eigen::VectorXd xi;     // [nv] a stage's chart coordinates about the step's start; after it, x+'s
  Eigen::VectorXd nu;     // [nv] the chart velocity of a stage
  Eigen::VectorXd nusum;  // [nv] RK4: nu_1 + 2 nu_2 + 2 nu_3 + nu_4
  Eigen::VectorXd a;      // [nv] the acceleration of a stage
  Eigen::VectorXd asum;   // [nv] RK4: a_1 + 2 a_2 + 2 a_3 + a_4
};

}  // namespace denoc
