// Local `denoc simulate` and `denoc torques`, and the pieces the remote `simulate` shares with them.
#include "denoc/simulate.hpp"

#include <unistd.h>

#include <cmath>
#include <fstream>
#include <iostream>
#include <nlohmann/json.hpp>
#include <numbers>
#include <optional>
#include <sstream>

#include "commands.hpp"
#include "denoc/configuration.hpp"
#include "denoc/trajectory.hpp"
#include "dynamics.hpp"

namespace denoc::cli {

Progress::Progress(std::string what, double total, bool enabled)
    : what_(std::move(what)), total_(total), enabled_(enabled && ::isatty(STDERR_FILENO) == 1) {}

Progress::~Progress() {
  if (shown_) std::fprintf(stderr, "\r%*s\r", 60, "");
}

void Progress::update(double done) {
  if (!enabled_) return;
  const auto now = std::chrono::steady_clock::now();
  if (shown_ && now - last_ < std::chrono::milliseconds(100)) return;
  last_ = now;
  shown_ = true;
  std::fprintf(stderr, "\r%s: t = %.4g of %.4g s (%3.0f%%)", what_.c_str(), done, total_,
               total_ > 0 ? 100.0 * done / total_ : 100.0);
  std::fflush(stderr);
}

void writeSampleHeader(std::ostream& out, int n) { writeSampleHeader(out, n, n); }

void writeSampleHeader(std::ostream& out, int nq, int nv) {
  out << "t";
  for (int i = 0; i < nq; ++i) out << ",q" << i;
  for (int i = 0; i < nv; ++i) out << ",qd" << i;
  out << ",energy\n";
}

void writeSample(std::ostream& out, double t, const double* q, const double* qd, int n, double energy) {
  writeSample(out, t, q, qd, n, n, energy);
}

void writeSample(std::ostream& out, double t, const double* q, const double* qd, int nq, int nv,
                 double energy) {
  std::string line = full(t);
  const auto cell = [&](double x) {
    line += ',';
    line += full(x);
  };
  for (int i = 0; i < nq; ++i) cell(q[i]);
  for (int i = 0; i < nv; ++i) cell(qd[i]);
  cell(energy);
  line += '\n';
  out << line;
}

namespace {

// A piecewise-linear torque schedule from a CSV file: header t,tau0..tau{n-1}, one knot per line.
TorqueInput readSchedule(const std::string& path, int n) {
  std::ifstream in(path);
  if (!in) throw InputError(path + ": cannot open");
  std::string line;
  int line_no = 0;
  bool header = false;
  std::vector<double> times;
  std::vector<Eigen::VectorXd> values;
  std::string expected = "t";
  for (int i = 0; i < n; ++i) expected += ",tau" + std::to_string(i);
  while (std::getline(in, line)) {
    ++line_no;
    std::string t;
    for (char c : line) {
      if (c != ' ' && c != '\t' && c != '\r') t += c;
    }
    if (t.empty() || t[0] == '#') continue;
    if (!header) {
      if (t != expected)
        throw InputError(path + ":" + std::to_string(line_no) + ": expected the header " + expected);
      header = true;
      continue;
    }
    const std::vector<double> v = parseList(t, path + ":" + std::to_string(line_no));
    if (static_cast<int>(v.size()) != n + 1) {
      throw InputError(path + ":" + std::to_string(line_no) + ": " + std::to_string(v.size()) +
                       " values, expected " + std::to_string(n + 1));
    }
    times.push_back(v[0]);
    values.emplace_back(Eigen::Map<const Eigen::VectorXd>(v.data() + 1, n));
  }
  if (times.empty()) throw InputError(path + ": no knots");
  try {
    return TorqueInput::piecewiseLinear(times, values);
  } catch (const std::invalid_argument& e) {
    throw InputError(path + ": " + e.what());
  }
}

}  // namespace

SimulationOptions simulationOptions(const Options& o, int n);

SimulationOptions simulationOptions(const Options& o, int n) {
  SimulationOptions s;
  s.integrator = o.integrator == "rk4" ? Integrator::RK4 : Integrator::DormandPrince45;
  s.route = forwardRouteOf(o.route);
  s.t_end = o.t_end;
  s.dt_out = o.dt_out;
  s.step = o.step;
  s.rtol = o.rtol;
  s.atol = o.atol;
  if (!o.tau.empty() && !o.tau_schedule.empty())
    throw InputError("--tau cannot be combined with --tau-schedule");
  if (!o.tau.empty()) s.torque = TorqueInput::constant(vectorOption(o.tau, n, "--tau"));
  if (!o.tau_schedule.empty()) s.torque = readSchedule(o.tau_schedule, n);
  if (!o.damping.empty()) s.damping = vectorOption(o.damping, n, "--damping");
  return s;
}

int runSimulate(const Options& o) {
  const Model model = loadModel(o);
  const int n = model.n;
  if (o.route == "fixman") throw InputError("--route: simulate uses saha or cholesky");
  const SimulationOptions s = simulationOptions(o, n);
  // a tree: q0 of nq (a moving root upright at the origin when not given), qd0 of nv; torques and damping
  // of the nu = n actuated joints
  Eigen::VectorXd q0 = Eigen::VectorXd::Zero(model.nq);
  if (model.root != RootJoint::Fixed) q0.head(model.nqr) = neutralConfiguration(model).head(model.nqr);
  if (!o.q0.empty()) q0 = vectorOption(o.q0, model.nq, "--q0", model.nq == n ? "one per joint" : "nq");
  const Eigen::VectorXd qd0 = vectorOption(o.qd0, model.nv, "--qd0", model.nv == n ? "one per joint" : "nv");
  validateSimulation(model, q0, qd0, s);  // std::invalid_argument naming the option's field
  Simulator sim(model);
  std::ostream& out = std::cout;
  writeSampleHeader(out, model.nq, model.nv);
  std::optional<Progress> progress(std::in_place, "simulate", s.t_end, o.progress);
  const SimulationStats stats = sim.run(q0, qd0, s, [&](const Sample& x) {
    writeSample(out, x.t, x.q.data(), x.qd.data(), model.nq, model.nv, x.energy);
    progress->update(x.t);
    return static_cast<bool>(out);
  });
  progress.reset();  // the progress line cleared before the summary is printed on its own line
  if (::isatty(STDERR_FILENO) == 1) {
    std::fprintf(stderr, "%zu samples, %lld steps (%lld rejected), %lld evaluations\n", stats.samples,
                 static_cast<long long>(stats.steps), static_cast<long long>(stats.rejected),
                 static_cast<long long>(stats.evaluations));
  }
  return 0;
}

namespace {

// The eq. 39 trajectory for any model, by the rule docs/design.md gives for the Stanford arm: revolute joints
// from 0 to 60 deg (joint 2 from 90 deg), prismatic joints from 0 to 0.1 m, T = 10 s. For the Stanford arm it
// is stanfordEq39Trajectory().
CycloidalTrajectory eq39For(const Model& model) {
  constexpr double deg = std::numbers::pi / 180.0;
  Eigen::VectorXd start = Eigen::VectorXd::Zero(model.n), end(model.n);
  for (int i = 0; i < model.n; ++i) {
    const bool revolute = model.type[static_cast<std::size_t>(i)] == JointType::Revolute;
    if (revolute && i == 1) start[i] = 90.0 * deg;
    end[i] = revolute ? 60.0 * deg : 0.1;
  }
  return CycloidalTrajectory(start, end, 10.0);
}

// {"duration": T, "start": [...], "end": [...]} (SI units: rad, m, s).
CycloidalTrajectory trajectoryFile(const std::string& path, int n) {
  std::ifstream in(path);
  if (!in) throw InputError(path + ": no such file (expected eq39 or a trajectory JSON file)");
  nlohmann::json doc;
  try {
    in >> doc;
  } catch (const std::exception& e) {
    throw InputError(path + ": invalid JSON: " + e.what());
  }
  const auto vec = [&](const char* key) {
    if (!doc.is_object() || !doc.contains(key) || !doc[key].is_array() ||
        static_cast<int>(doc[key].size()) != n) {
      throw InputError(path + ": " + key + ": expected an array of " + std::to_string(n) + " numbers");
    }
    Eigen::VectorXd v(n);
    for (int i = 0; i < n; ++i) {
      const auto& x = doc[key][static_cast<std::size_t>(i)];
      if (!x.is_number())
        throw InputError(path + ": " + key + "[" + std::to_string(i) + "]: expected a number");
      v[i] = x.get<double>();
    }
    return v;
  };
  if (!doc.is_object() || !doc.contains("duration") || !doc["duration"].is_number()) {
    throw InputError(path + ": duration: expected a number of seconds");
  }
  try {
    Eigen::VectorXd start = vec("start");  // in this order, so that errors name the first bad field
    Eigen::VectorXd end = vec("end");
    return CycloidalTrajectory(std::move(start), std::move(end), doc["duration"].get<double>());
  } catch (const std::invalid_argument& e) {
    throw InputError(path + ": " + e.what());
  }
}

}  // namespace

int runTorques(const Options& o) {
  const Model model = loadModel(o);
  const int n = model.n;
  const CycloidalTrajectory traj = o.trajectory == "eq39" ? eq39For(model) : trajectoryFile(o.trajectory, n);
  const double t_end = o.torques_t_end < 0 ? traj.duration() : o.torques_t_end;
  std::vector<double> times;
  try {
    times = uniformTimes(t_end, o.dt);
  } catch (const std::invalid_argument& e) {
    throw InputError(std::string("--dt/--t-end: ") + e.what());
  }
  const TorqueHistory h = computeTorqueHistory(model, traj, times);
  std::ostream& out = std::cout;
  out << "t";
  for (const char* g : {"q", "qd", "qdd", "tau"}) {
    for (int i = 0; i < n; ++i) out << ',' << g << i;
  }
  out << '\n';
  for (Eigen::Index k = 0; k < h.t.size(); ++k) {
    std::string line = full(h.t[k]);
    for (const Eigen::MatrixXd* m : {&h.q, &h.qd, &h.qdd, &h.tau}) {
      for (int i = 0; i < n; ++i) {
        line += ',';
        line += full((*m)(k, i));
      }
    }
    out << line << '\n';
  }
  return 0;
}

}  // namespace denoc::cli
