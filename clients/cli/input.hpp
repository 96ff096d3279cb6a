// Input of the `denoc` tool: option values (number lists, the output format), text files, and states from
// options or from CSV and JSON files. Bad input is an InputError naming the option, file, line or column.
#pragma once

#include <Eigen/Core>
#include <iosfwd>
#include <stdexcept>
#include <string>
#include <vector>

namespace denoc::cli {

/// Bad input from the user (options, states files): reported on stderr with exit code 2.
class InputError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

enum class Format { Table, Json, Csv };

/// "table", "json" or "csv"; throws InputError otherwise.
Format parseFormat(const std::string& text);

/// One joint-space state. Vectors not given by the user are zero.
struct State {
  Eigen::VectorXd q, qd, qdd, tau;
};

/// Which of a state's vectors a command reads.
enum Field : unsigned { kQ = 1u, kQd = 2u, kQdd = 4u, kTau = 8u };

/// A comma-separated list of finite numbers ("0, 1.5, -2e-3"). `option` names the source in errors.
std::vector<double> parseList(const std::string& text, const std::string& option);

/// parseList with exactly n entries; an empty text gives n zeros. `what` says what the entries are in the
/// error of a wrong count ("one per joint").
Eigen::VectorXd vectorOption(const std::string& text, int n, const std::string& option,
                             const std::string& what = "one per joint");

/// One external wrench of --wrench LINK:mx,my,mz,fx,fy,fz[:local|:world]: the frame's name as given (empty:
/// the tip frame), [moment; force] with the moment about the frame's origin, and its axes (world by default).
struct WrenchOption {
  std::string link;
  Eigen::Matrix<double, 6, 1> wrench = Eigen::Matrix<double, 6, 1>::Zero();
  bool local = false;
};

/// Parses one --wrench value; InputError naming `option` and what is wrong.
WrenchOption parseWrench(const std::string& text, const std::string& option);

/// A text file's contents; InputError "PATH: no such file", "is a directory" or "cannot open" otherwise.
std::string readText(const std::string& path);

/// States from a file: JSON (".json": an array of objects {"q": [...], "qd": [...], "qdd": [...],
/// "tau": [...]}) or CSV (anything else: a header naming columns q0..q{nq-1}, qd0..qd{nv-1}, qdd0..,
/// tau0.., then one state per line; '#' starts a comment line). q has nq entries (a tree's configuration
/// coordinates, a floating root's 7 first), qd, qdd and tau nv (for a fixed root nq = nv = the joints). A
/// field not given is zero (q: zero joints, and a moving root at the origin with the identity quaternion);
/// a field that is given must be complete. Fields the command does not use (not in `used`) are ignored with
/// a note on `notes`. Throws InputError naming the file, line or state and column at fault.
std::vector<State> readStates(const std::string& path, int nq, int nv, unsigned used, std::ostream& notes,
                              const Eigen::VectorXd& q_default = Eigen::VectorXd());
inline std::vector<State> readStates(const std::string& path, int n, unsigned used, std::ostream& notes) {
  return readStates(path, n, n, used, notes);
}

}  // namespace denoc::cli
