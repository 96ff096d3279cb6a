// Simulation (the papers' RFDSIM, docs/design.md algorithm 8): integrates
//   qdd = I(q)^-1 (tau(t) - damping .* qd - C(q, qd) qd - g(q))
// from t = 0 with fixed-step classical Runge-Kutta (RK4) or the adaptive embedded Dormand-Prince 5(4) pair
// (FSAL, error control on (q, qd) with rtol/atol), and reports t, q, qd and the mechanical energy at the
// requested output times. Output times are hit exactly: steps are shortened to land on them. A tree model
// (docs/trees.md) takes both on its configuration manifold: each step in the chart at the step's start,
// Dormand-Prince's error control on the chart's coordinates (dq, v) (docs/simulation.md, "Tree models").
//
// A Simulator owns its integrator state and a denoc::Data; create one per model (and per thread) and reuse
// it: after the checks at the start of a run, stepping performs no heap allocation.
#pragma once

#include <Eigen/Core>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <limits>
#include <memory>
#include <vector>

#include "denoc/data.hpp"
#include "denoc/integrator.hpp"
#include "denoc/model.hpp"
#include "denoc/stop.hpp"

namespace denoc {

/// Time integration scheme.
enum class Integrator : std::uint8_t {
  RK4,              // classical 4th-order Runge-Kutta, fixed step SimulationOptions::step
  DormandPrince45,  // adaptive embedded Dormand-Prince 5(4), local extrapolation, FSAL
};

/// Joint torque input tau(t): zero, a constant vector, or a piecewise-linear schedule through knots
/// (t_k, tau_k), held at tau_0 before the first knot and at the last value after the last knot.
class TorqueInput {
 public:
  enum class Kind : std::uint8_t { Zero, Constant, PiecewiseLinear };

  /// Zero torque.
  TorqueInput() = default;
  static TorqueInput zero() { return {}; }
  /// A constant torque vector. Throws std::invalid_argument if it is empty or has a non-finite entry.
  static TorqueInput constant(Eigen::VectorXd tau);
  /// A piecewise-linear schedule. Throws std::invalid_argument (naming "torque.times" or "torque.values")
  /// if there is no knot, the counts differ, the times are not strictly increasing and finite, or the
  /// vectors differ in size, are empty or have a non-finite entry.
  static TorqueInput piecewiseLinear(std::vector<double> times, std::vector<Eigen::VectorXd> values);

  Kind kind() const { return kind_; }
  const std::vector<double>& times() const { return times_; }
  const std::vector<Eigen::VectorXd>& values() const { return values_; }  // one entry for Constant
  /// Number of joints it is for (0 for Zero, which fits any model).
  int size() const { return kind_ == Kind::Zero ? 0 : static_cast<int>(values_.front().size()); }

  /// tau(t) into out, which must have the model's size (size() unless Zero). No allocation; a binary
  /// search over the knots.
  void evaluate(double t, Eigen::Ref<Eigen::VectorXd> out) const;

 private:
  Kind kind_ = Kind::Zero;
  std::vector<double> times_;
  std::vector<Eigen::VectorXd> values_;
};

/// Options of a simulation run. Time starts at 0.
struct SimulationOptions {
  Integrator integrator = Integrator::DormandPrince45;
  ForwardRoute route = ForwardRoute::Saha;  // how qdd is evaluated (forward_route.hpp)

  // output times: the grid 0, dt_out, 2 dt_out, ..., t_end (t_end always included; each time computed as
  // k * dt_out), or, when sample_times is not empty, exactly those times (strictly increasing, in
  // [0, t_end]). The run stops at the last output time.
  double t_end = 1.0;                // s, > 0
  double dt_out = 0.01;              // s, > 0 (ignored when sample_times is given)
  std::vector<double> sample_times;  // s

  // RK4 (the fixed-step scheme of integrator.hpp): the step; each interval between output times is split
  // into equal steps no longer than this.
  double step = 1e-3;  // s, > 0

  // Dormand-Prince: error control on every component of (q, qd) (a tree model: of (dq, v) in the chart at
  // the step's start) with the weights atol + rtol * |y_i|, root-mean-square norm; step factor
  // safety * err^(-1/5) clamped to [min_factor, max_factor] (max 1 right after a rejection).
  double rtol = 1e-8;         // > 0
  double atol = 1e-10;        // > 0
  double initial_step = 0.0;  // s; 0: chosen automatically (Hairer, Norsett and Wanner II.4)
  double min_step = 1e-12;    // s, > 0: a rejected step shrinking below it is an error
  double max_step = std::numeric_limits<double>::infinity();  // s, > 0
  double safety = 0.9;                                        // in (0, 1]
  double min_factor = 0.2;                                    // in (0, 1)
  double max_factor = 5.0;                                    // > 1

  // limit on the steps (accepted and rejected) of one run: exceeding it is an error (DivergenceError)
  std::int64_t max_steps = 10'000'000;

  // polled before the first step and every kSimulationStopPoll steps (accepted and rejected) after it, also
  // between two output samples; when set, the run ends with denoc::Stopped counting the samples delivered
  // (stats().stopped_early is set). Null: never stops. It must outlive the run.
  const StopCondition* stop = nullptr;

  TorqueInput torque;       // applied joint torques/forces
  Eigen::VectorXd damping;  // viscous joint damping (N m s/rad or N s/m), >= 0; empty: none
};

/// Steps between two polls of SimulationOptions::stop.
inline constexpr std::int64_t kSimulationStopPoll = 64;

/// One output sample. q and qd refer to the simulator's state: copy them to keep them.
struct Sample {
  std::size_t index;  // 0, 1, ... in time order
  double t;           // exactly the requested output time
  Eigen::Ref<const Eigen::VectorXd> q;
  Eigen::Ref<const Eigen::VectorXd> qd;
  double kinetic;    // 1/2 qd^T I(q) qd (armature included)
  double potential;  // -sum m_i g . C_i(q)
  double energy;     // kinetic + potential
};

/// Called once per output sample, in time order; return false to stop the run early.
using SampleCallback = std::function<bool(const Sample&)>;

/// What a run did.
struct SimulationStats {
  std::int64_t steps = 0;        // accepted steps
  std::int64_t rejected = 0;     // rejected steps (Dormand-Prince)
  std::int64_t evaluations = 0;  // forward-dynamics evaluations
  std::size_t samples = 0;       // samples delivered
  double t_final = 0.0;          // time of the last sample delivered
  bool stopped_early = false;    // the callback returned false, or options.stop stopped the run
};

/// All samples of a run, one row per sample.
struct SimulationResult {
  Eigen::VectorXd t;
  Eigen::MatrixXd q;   // samples x n
  Eigen::MatrixXd qd;  // samples x n
  Eigen::VectorXd kinetic;
  Eigen::VectorXd potential;
  Eigen::VectorXd energy;
  SimulationStats stats;
};

/// Checks a run's inputs against a model; throws std::invalid_argument naming the field ("q0", "qd0",
/// "t_end", "dt_out", "sample_times", "step", "rtol", "atol", "initial_step", "min_step", "max_step",
/// "safety", "min_factor", "max_factor", "max_steps", "torque", "damping").
void validateSimulation(const Model& model, const Eigen::Ref<const Eigen::VectorXd>& q0,
                        const Eigen::Ref<const Eigen::VectorXd>& qd0, const SimulationOptions& options);

/// Number of output samples the options request (after validation).
std::size_t sampleCount(const SimulationOptions& options);

/// The integrator state, its work vectors and a Data for one model.
class Simulator {
 public:
  /// Shares ownership of the model.
  explicit Simulator(std::shared_ptr<const Model> model);
  /// Refers to the model, which must outlive the simulator.
  explicit Simulator(const Model& model);

  const Model& model() const { return *model_; }

  /// Runs from (q0, qd0) at t = 0, calling on_sample at every output time. Throws std::invalid_argument
  /// on bad inputs (before any sample), DivergenceError (integrator.hpp) if max_steps is exceeded, a step
  /// falls below min_step, or the state stops being finite, and Stopped when options.stop is set (samples
  /// already delivered stay delivered).
  SimulationStats run(const Eigen::Ref<const Eigen::VectorXd>& q0,
                      const Eigen::Ref<const Eigen::VectorXd>& qd0, const SimulationOptions& options,
                      const SampleCallback& on_sample);

  /// Starts a run from (q0, qd0) at t = 0 to be delivered piecewise by advance(): the same run as run()
  /// gives, so a caller can stop between samples and go on later (a server streaming the samples as its
  /// client reads them). `options` must outlive the run. Throws as run() does on bad inputs.
  void start(const Eigen::Ref<const Eigen::VectorXd>& q0, const Eigen::Ref<const Eigen::VectorXd>& qd0,
             const SimulationOptions& options);

  /// Integrates on from where the run stands, calling on_sample at each of at most `max_samples` further
  /// output times. Returns true while samples remain. The run ends (false) after its last sample or when
  /// on_sample returns false (stats().stopped_early), or with the exceptions of run() (Stopped when
  /// options.stop is set); advance() after the end returns false and does nothing.
  bool advance(std::size_t max_samples, const SampleCallback& on_sample);

  /// What the current (or last) run did so far.
  const SimulationStats& stats() const { return stats_; }

  /// Runs and collects every sample.
  SimulationResult simulate(const Eigen::Ref<const Eigen::VectorXd>& q0,
                            const Eigen::Ref<const Eigen::VectorXd>& qd0, const SimulationOptions& options);

 private:
  bool rhs(double t, const Eigen::Ref<const Eigen::VectorXd>& y, Eigen::VectorXd& dy);
  bool accelTree(double t, const Eigen::Ref<const Eigen::VectorXd>& q,
                 const Eigen::Ref<const Eigen::VectorXd>& v, Eigen::VectorXd& a);
  /// Dormand-Prince's right side at its coordinates z: rhs() for a serial chain; for a tree z = (dq, v) in
  /// the chart at y_'s configuration, k = (the chart velocity of v, the acceleration at G(q, dq)).
  bool dopriSlope(double t, const Eigen::Ref<const Eigen::VectorXd>& z, Eigen::VectorXd& k);
  /// A tree, after an accepted Dormand-Prince step: y_ to the step's end and the chart moved there.
  void moveChart();
  /// Dormand-Prince's coordinates: y_ (q, qd) for a serial chain, z_ (dq, v) for a tree.
  Eigen::VectorXd& dopriState() { return model_->serial ? y_ : z_; }
  void advanceRK4(double t_target);
  void advanceDOPRI(double t_target);
  void initialStepDOPRI();
  void countStep();
  double errorNorm(const Eigen::VectorXd& z) const;

  std::shared_ptr<const Model> owner_;
  const Model* model_;
  Data data_;
  const SimulationOptions* opt_ = nullptr;  // during a run
  std::size_t next_sample_ = 0;             // index of the next output time of a run (start, advance)
  std::size_t sample_count_ = 0;            // output times of the run
  bool has_damping_ = false;
  int n_ = 0, nq_ = 0, nv_ = 0;  // joints, configuration and velocity coordinates
  double t_ = 0.0;
  double h_ = 0.0;  // Dormand-Prince: the proposed next step
  bool last_rejected_ = false;
  SimulationStats stats_;
  Eigen::VectorXd y_, tau_;  // the state (q, v)
  // Dormand-Prince: a tree's coordinates (dq, v) in the chart at y_'s configuration (a serial chain's are
  // y_), the trial, stage and error vectors in them, and the stages' slopes
  Eigen::VectorXd z_, z_new_, z_tmp_, z_err_;
  Eigen::VectorXd k1_, k2_, k3_, k4_, k5_, k6_, k7_;
  FixedStepWork fixed_;        // RK4 stages (a serial chain)
  ManifoldStepWork manifold_;  // stages on the manifold (a tree model)
};

/// Convenience: a Simulator for one run.
SimulationResult simulate(const Model& model, const Eigen::Ref<const Eigen::VectorXd>& q0,
                          const Eigen::Ref<const Eigen::VectorXd>& qd0, const SimulationOptions& options);

}  // namespace denoc
