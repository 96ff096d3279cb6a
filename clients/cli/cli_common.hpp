// Internals of the `denoc` command-line tool shared by its front ends: reading states (options, CSV and
// JSON files), running the dynamics for one state locally, and writing results (of the local core or of a
// server, described by a ModelView) as a table, JSON or CSV.
#pragma once

#include <Eigen/Core>
#include <iosfwd>
#include <stdexcept>
#include <string>
#include <vector>

#include "denoc/data.hpp"
#include "denoc/model.hpp"
#include "denoc/urdf.hpp"

namespace denoc::cli {

/// Bad input from the user (options, states files): reported on stderr with exit code 2.
class InputError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

enum class Format { Table, Json, Csv };

/// "table", "json" or "csv"; throws InputError otherwise.
Format parseFormat(const std::string& text);

/// Physical quantity of a per-joint vector, for its units (rad or m based).
enum class Quantity { Position, Velocity, Acceleration, Force, Inertia };

/// Unit of a per-joint quantity, e.g. "rad/s^2" for a revolute acceleration, "N" for a prismatic force.
std::string unit(Quantity quantity, JointType type);

/// One joint-space state. Vectors not given by the user are zero.
struct State {
  Eigen::VectorXd q, qd, qdd, tau;
};

/// Which of a state's vectors a command reads.
enum Field : unsigned { kQ = 1u, kQd = 2u, kQdd = 4u, kTau = 8u };

/// A comma-separated list of finite numbers ("0, 1.5, -2e-3"). `option` names the source in errors.
std::vector<double> parseList(const std::string& text, const std::string& option);

/// parseList with exactly n entries; an empty text gives n zeros.
Eigen::VectorXd vectorOption(const std::string& text, int n, const std::string& option);

/// States from a file: JSON (".json": an array of objects {"q": [...], "qd": [...], "qdd": [...],
/// "tau": [...]}) or CSV (anything else: a header naming columns q0..q{n-1}, qd0.., qdd0.., tau0..,
/// then one state per line; '#' starts a comment line). A field not given is zero; a field that is given
/// must be complete (n entries). Fields the command does not use (not in `used`) are ignored with a note
/// on `notes`. Throws InputError naming the file, line or state and column at fault.
std::vector<State> readStates(const std::string& path, int n, unsigned used, std::ostream& notes);

/// Loads a model file (see denoc/model_io.hpp); ModelError passes through.
Model loadModel(const std::string& path, const UrdfOptions& urdf_options = {});

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
  int n = 0;
  std::vector<std::string> joint_names;
  std::vector<JointType> type;
  Eigen::Vector3d gravity = Eigen::Vector3d::Zero();
  std::string model_id;            // a server's id (shown when not empty)
  long long compute_time_ns = -1;  // a server's compute time (shown when >= 0)
};
ModelView view(const Model& model);

/// Inverse dynamics: tau = I(q) qdd + C(q, qd) qd + g(q).
Result computeInverseDynamics(const Model& model, Data& data, const State& state);

/// Forward dynamics: qdd = I(q)^-1 (tau - C qd - g), by the O(n) route ("saha"), Fixman's O(n) inversion
/// ("fixman") or the dense one ("cholesky").
Result computeForwardDynamics(const Model& model, Data& data, const State& state, const std::string& route);

/// The full factor at q: I, U, D, log det I and, with inverse, I^-1.
Result computeFactor(const Model& model, Data& data, const State& state, bool inverse);

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

/// The units note of an inertia matrix (or its inverse) for a model's joint types.
std::string inertiaUnits(const ModelView& model, bool inverse);

/// A number with 17 significant digits (reads back exactly), for CSV output.
std::string full(double x);
void writeMatrix(std::ostream& out, const Result::Matrix& matrix);

}  // namespace denoc::cli
