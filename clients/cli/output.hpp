// Output of the `denoc` tool: the results of a command for every state (of the local core or of a server,
// described by a ModelView) and a model's description, as a table, JSON or CSV.
#pragma once

#include <Eigen/Core>
#include <iosfwd>
#include <string>
#include <vector>

#include "denoc/model.hpp"
#include "format.hpp"
#include "input.hpp"

namespace denoc::cli {

/// What one command gives for one state: per-joint vectors, matrices and scalars, in output order.
struct Result {
  struct Vector {
    std::string key;    // JSON key / CSV column prefix, e.g. "tau"
    std::string title;  // table heading, e.g. "tau"
    Quantity quantity;
    Eigen::VectorXd value;
  };
  struct Matrix {
    std::string key;    // e.g. "I"
    std::string title;  // e.g. "I(q): joint-space inertia matrix"
    std::string units;  // a note on the entries' units for the table output, may be empty
    Eigen::MatrixXd value;
  };
  struct Scalar {
    std::string key;
    std::string title;
    double value;
  };
  std::vector<Vector> vectors;
  std::vector<Matrix> matrices;
  std::vector<Scalar> scalars;
};

/// What the output needs to know of a model: a local Model, or a model on a server.
struct ModelView {
  std::string name;
  int n = 0;  // the joints besides the root (nu)
  std::vector<std::string> joint_names;
  std::vector<JointType> type;
  // a tree's sizes: q has nq entries and qd, qdd, tau nv, the root's first (0: n, a fixed root)
  int nq = 0, nv = 0;
  RootJoint root = RootJoint::Fixed;
  Eigen::Vector3d gravity = Eigen::Vector3d::Zero();
  std::string model_id;            // a server's id (shown when not empty)
  long long compute_time_ns = -1;  // a server's compute time (shown when >= 0)
};
/// The view of a model in this process.
ModelView view(const Model& model);

/// "fixed", "floating" or "planar"; the root's coordinates in q and in qd ("x", ..., "qw"; "wx", ..., "vz").
const char* rootName(RootJoint root);
std::vector<std::string> rootQNames(RootJoint root);
std::vector<std::string> rootVNames(RootJoint root);

/// The results of one state, computed here or by a server: inverse dynamics (q, qd, qdd, tau), forward
/// dynamics (q, qd, tau, qdd) and the full factor at q (q, D; I and U; log det I), to which addInverse adds
/// I^-1. The units of I follow the model's joints.
Result inverseDynamicsResult(const State& state, const Eigen::VectorXd& tau);
Result forwardDynamicsResult(const State& state, const Eigen::VectorXd& qdd);
Result factorResult(const ModelView& model, const Eigen::VectorXd& q, const Eigen::VectorXd& D,
                    const Eigen::MatrixXd& I, const Eigen::MatrixXd& U, double log_det);
void addInverse(Result& result, const ModelView& model, const Eigen::MatrixXd& inverse);

/// Writes the results of one command for every state. `command` heads the table output.
void writeResults(std::ostream& out, const Model& model, const std::string& command,
                  const std::vector<Result>& results, Format format);
void writeResults(std::ostream& out, const ModelView& model, const std::string& command,
                  const std::vector<Result>& results, Format format);

/// Writes a model's joints, types, masses and limits.
void writeInfo(std::ostream& out, const Model& model, const std::string& source, Format format);

/// Table pieces (used by `denoc demo`): a per-joint table of vectors, and a labelled matrix.
void writeJointTable(std::ostream& out, const Model& model, const std::vector<Result::Vector>& vectors);
void writeJointTable(std::ostream& out, const ModelView& model, const std::vector<Result::Vector>& vectors);
void writeMatrix(std::ostream& out, const Result::Matrix& matrix);

/// The units note of an inertia matrix (or its inverse) for a model's joint types.
std::string inertiaUnits(const ModelView& model, bool inverse);

}  // namespace denoc::cli
