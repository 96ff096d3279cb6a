// The `denoc` tool's options and its commands beyond the single-state ones of main.cpp: the states and model
// the options name (options.cpp), local simulation and torque histories (simulate.cpp) and the remote front
// end through denoc::client (remote.cpp).
#pragma once

#include <chrono>
#include <cstdio>
#include <ostream>
#include <string>
#include <vector>

#include "denoc/model.hpp"
#include "dynamics.hpp"
#include "input.hpp"
#include "output.hpp"

namespace denoc::cli {

struct Options {
  std::string model;
  std::string format = "table";
  std::string base_link, tip_link;
  std::string root = "fixed";  // URDF files: fixed, floating or planar (--root, --floating)
  bool floating = false;
  std::vector<std::string> wrenches;  // --wrench LINK:mx,my,mz,fx,fy,fz[:local|:world], repeatable
  std::string q, qd, qdd, tau, states;
  std::string route = "saha";
  bool inverse = false;
  std::string demo_model;
  double demo_t = 2.5;

  // simulate
  double t_end = 1.0;
  double dt_out = 0.01;
  std::string integrator = "dopri";
  double step = 1e-3;
  double rtol = 1e-8, atol = 1e-10;
  std::string damping, q0, qd0;
  std::string tau_schedule;  // CSV file t,tau0..: piecewise-linear torque
  std::uint32_t batch_size = 0;
  bool progress = true;

  // torques
  std::string trajectory = "eq39";
  double dt = 0.1;
  double torques_t_end = -1.0;  // < 0: the trajectory's duration

  // remote
  std::string server;
  double deadline_s = 30.0;
  std::string lb_policy;  // --lb-policy: ClientOptions::load_balancing
  std::string tls_ca, tls_cert, tls_key, tls_server_name, token, token_file;
  bool tls = false;
  std::string name, gravity;
  bool quiet = false;

  // planning (remote): fk, jacobian, derivatives, rollout
  std::string link, point;
  std::vector<std::string> links;  // fk: --link, repeatable
  bool com = false;                // fk: also the centre of mass; jacobian: also its Jacobian and A_G
  bool local = false;
  std::string of = "id";
  std::uint32_t steps = 100;
  std::string scheme = "rk4";
  bool linearize = false;

  // bench (remote)
  int bench_calls = 1000;
  int bench_batch = 1;
  std::string bench_computation = "id";
};

/// States from --states or the vector options: q of nq entries, qd, qdd and tau of nv (nq = nv = n for a
/// fixed root). A q not given is q_default when it has nq entries (a moving root's identity quaternion),
/// else zeros.
std::vector<State> readStateOptions(const Options& o, int nq, int nv, unsigned fields,
                                    const Eigen::VectorXd& q_default = Eigen::VectorXd(),
                                    RootJoint root = RootJoint::Fixed);
inline std::vector<State> readStateOptions(const Options& o, int n, unsigned fields) {
  return readStateOptions(o, n, n, fields);
}
/// The same for a model in this process (its nq, nv and neutral configuration).
std::vector<State> readStateOptions(const Options& o, const Model& model, unsigned fields);

/// The root joint of --root and --floating (InputError when they disagree).
RootJoint rootOption(const Options& o);

/// The model file MODEL: a URDF's whole tree below --base-link (or the chain to --tip-link) under the root
/// joint of --root, or a DH file (a fixed root only).
Model loadModel(const Options& o);

/// The external wrenches of --wrench on a model in this process: LINK (a link name, the root link's, "tip"
/// or empty for the tip frame), six numbers [mx, my, mz, fx, fy, fz] (the moment about the frame's
/// origin), and optionally ":local" (the frame's axes) or ":world" (the default: the world's axes).
std::vector<ExternalWrench> wrenchOptions(const Options& o, const Model& model);

/// Progress of a long run on stderr, only when stderr is a terminal; at most ten updates a second.
class Progress {
 public:
  Progress(std::string what, double total, bool enabled);
  ~Progress();
  void update(double done);

 private:
  std::string what_;
  double total_;
  bool enabled_;
  bool shown_ = false;
  std::chrono::steady_clock::time_point last_{};
};

/// CSV of a simulation: t, q0.., qd0.., energy.
void writeSampleHeader(std::ostream& out, int n);
void writeSample(std::ostream& out, double t, const double* q, const double* qd, int n, double energy);
/// The same for a tree: q of nq entries, qd of nv.
void writeSampleHeader(std::ostream& out, int nq, int nv);
void writeSample(std::ostream& out, double t, const double* q, const double* qd, int nq, int nv,
                 double energy);

/// denoc simulate MODEL (local).
int runSimulate(const Options& o);
/// denoc torques MODEL --trajectory eq39|FILE (local).
int runTorques(const Options& o);
/// denoc --server HOST:PORT <command> ...
int runRemote(const Options& o, const std::string& command);

}  // namespace denoc::cli
