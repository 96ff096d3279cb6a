#include "cli_common.hpp"

#include <Eigen/Geometry>
#include <algorithm>
#include <charconv>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <limits>
#include <map>
#include <nlohmann/json.hpp>
#include <ostream>
#include <set>
#include <sstream>

#include "denoc/algorithm/fixman.hpp"
#include "denoc/algorithm/forward_dynamics.hpp"
#include "denoc/algorithm/inverse_dynamics.hpp"
#include "denoc/algorithm/udu.hpp"
#include "denoc/model_io.hpp"

namespace denoc::cli {

namespace {

using nlohmann::json;
using ojson = nlohmann::ordered_json;

std::string trim(const std::string& s) {
  const auto b = s.find_first_not_of(" \t\r\n");
  if (b == std::string::npos) return "";
  const auto e = s.find_last_not_of(" \t\r\n");
  return s.substr(b, e - b + 1);
}

std::vector<std::string> split(const std::string& s, char sep) {
  std::vector<std::string> parts;
  std::string::size_type start = 0;
  while (true) {
    const auto pos = s.find(sep, start);
    parts.push_back(trim(s.substr(start, pos == std::string::npos ? std::string::npos : pos - start)));
    if (pos == std::string::npos) break;
    start = pos + 1;
  }
  return parts;
}

// A finite number, the whole token. `where` names it in errors.
double parseNumber(const std::string& token, const std::string& where) {
  std::string t = trim(token);
  if (t.empty()) throw InputError(where + ": empty entry, expected a number");
  const char* begin = t.data();
  const char* end = t.data() + t.size();
  if (*begin == '+') ++begin;
  double x = 0.0;
  const auto [ptr, ec] = std::from_chars(begin, end, x);
  if (ec == std::errc::result_out_of_range) throw InputError(where + ": '" + t + "' is out of range");
  if (ec != std::errc() || ptr != end) throw InputError(where + ": '" + t + "' is not a number");
  if (!std::isfinite(x)) throw InputError(where + ": '" + t + "' is not a finite number");
  return x;
}

std::string fmt(double x, int digits = 6) {
  if (std::isinf(x)) return x > 0 ? "inf" : "-inf";
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.*g", digits, x == 0.0 ? 0.0 : x);  // no "-0"
  return buf;
}

}  // namespace

std::string full(double x) {
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.17g", x);
  return buf;
}

namespace {

std::string padLeft(const std::string& s, std::size_t w) {
  return s.size() >= w ? s : std::string(w - s.size(), ' ') + s;
}
std::string padRight(const std::string& s, std::size_t w) {
  return s.size() >= w ? s : s + std::string(w - s.size(), ' ');
}

// Prints rows of cells, each column as wide as its widest cell, two spaces apart, left-aligned (cells that
// should align right are padded beforehand).
void printGrid(std::ostream& out, const std::vector<std::vector<std::string>>& rows) {
  std::vector<std::size_t> width;
  for (const auto& r : rows) {
    if (width.size() < r.size()) width.resize(r.size(), 0);
    for (std::size_t c = 0; c < r.size(); ++c) width[c] = std::max(width[c], r[c].size());
  }
  for (const auto& r : rows) {
    std::string line;
    for (std::size_t c = 0; c < r.size(); ++c) line += (c == 0 ? "" : "  ") + padRight(r[c], width[c]);
    line.erase(line.find_last_not_of(' ') + 1);  // no trailing blanks
    out << line << '\n';
  }
}

const char* typeName(JointType t) { return t == JointType::Revolute ? "revolute" : "prismatic"; }

std::vector<std::string> jointNames(const ModelView& model) { return model.joint_names; }

ojson toJson(const Eigen::VectorXd& v) {
  ojson a = ojson::array();
  for (Eigen::Index i = 0; i < v.size(); ++i) a.push_back(v[i]);
  return a;
}

ojson toJson(const Eigen::MatrixXd& m) {
  ojson a = ojson::array();
  for (Eigen::Index i = 0; i < m.rows(); ++i) {
    ojson row = ojson::array();
    for (Eigen::Index j = 0; j < m.cols(); ++j) row.push_back(m(i, j));
    a.push_back(row);
  }
  return a;
}

ojson limitJson(double x) { return std::isfinite(x) ? ojson(x) : ojson(nullptr); }

}  // namespace

std::string inertiaUnits(const ModelView& model, bool inverse) {
  const bool prismatic = std::any_of(model.type.begin(), model.type.end(),
                                     [](JointType t) { return t == JointType::Prismatic; });
  const bool revolute =
      std::any_of(model.type.begin(), model.type.end(), [](JointType t) { return t == JointType::Revolute; });
  const std::string rr = inverse ? "1/(kg m^2)" : "kg m^2";
  const std::string rp = inverse ? "1/(kg m)" : "kg m";
  const std::string pp = inverse ? "1/kg" : "kg";
  if (prismatic && revolute) {
    return "units: " + rr + " between revolute joints, " + rp + " between a revolute and a prismatic one, " +
           pp + " between prismatic joints";
  }
  return "units: " + (prismatic ? pp : rr);
}

namespace {}  // namespace

Format parseFormat(const std::string& text) {
  if (text == "table") return Format::Table;
  if (text == "json") return Format::Json;
  if (text == "csv") return Format::Csv;
  throw InputError("--format: '" + text + "' is not one of table, json, csv");
}

std::string unit(Quantity quantity, JointType type) {
  const bool r = type == JointType::Revolute;
  switch (quantity) {
    case Quantity::Position:
      return r ? "rad" : "m";
    case Quantity::Velocity:
      return r ? "rad/s" : "m/s";
    case Quantity::Acceleration:
      return r ? "rad/s^2" : "m/s^2";
    case Quantity::Force:
      return r ? "N m" : "N";
    case Quantity::Inertia:
      return r ? "kg m^2" : "kg";
  }
  return "";
}

std::vector<double> parseList(const std::string& text, const std::string& option) {
  std::vector<double> values;
  const std::vector<std::string> parts = split(text, ',');
  for (std::size_t i = 0; i < parts.size(); ++i) {
    values.push_back(parseNumber(parts[i], option + " entry " + std::to_string(i)));
  }
  return values;
}

Eigen::VectorXd vectorOption(const std::string& text, int n, const std::string& option) {
  if (trim(text).empty()) return Eigen::VectorXd::Zero(n);
  const std::vector<double> v = parseList(text, option);
  if (static_cast<int>(v.size()) != n) {
    throw InputError(option + ": " + std::to_string(v.size()) + " entries, expected " + std::to_string(n) +
                     " (one per joint)");
  }
  return Eigen::Map<const Eigen::VectorXd>(v.data(), n);
}

namespace {

struct FieldInfo {
  const char* name;
  Field field;
  Eigen::VectorXd State::*member;
};
const FieldInfo kFields[] = {
    {"q", kQ, &State::q}, {"qd", kQd, &State::qd}, {"qdd", kQdd, &State::qdd}, {"tau", kTau, &State::tau}};

State zeroState(int n) {
  State s;
  s.q = s.qd = s.qdd = s.tau = Eigen::VectorXd::Zero(n);
  return s;
}

std::string fieldRange(const std::string& name, int n) { return name + "0.." + name + std::to_string(n - 1); }

std::vector<State> readCsvStates(const std::string& path, const std::string& text, int n, unsigned used,
                                 std::ostream& notes) {
  std::istringstream in(text);
  std::string line;
  int line_no = 0;
  // header
  std::vector<std::string> header;
  while (std::getline(in, line)) {
    ++line_no;
    const std::string t = trim(line);
    if (t.empty() || t[0] == '#') continue;
    header = split(t, ',');
    break;
  }
  if (header.empty()) throw InputError(path + ": empty file, expected a header line naming the columns");
  const int header_line = line_no;
  // column -> (field index, joint index); -1 field: ignored
  std::vector<std::pair<int, int>> columns;
  std::map<int, std::set<int>> seen;
  for (const std::string& name : header) {
    std::size_t letters = 0;
    while (letters < name.size() && std::isalpha(static_cast<unsigned char>(name[letters]))) ++letters;
    const std::string prefix = name.substr(0, letters);
    const std::string digits = name.substr(letters);
    int f = -1;
    for (int k = 0; k < 4; ++k) {
      if (prefix == kFields[k].name) f = k;
    }
    const bool numeric =
        !digits.empty() && digits.size() < 6 &&
        std::all_of(digits.begin(), digits.end(), [](unsigned char c) { return std::isdigit(c); });
    if (f < 0 || !numeric) {
      throw InputError(path + ":" + std::to_string(header_line) + ": column '" + name + "' is not one of " +
                       fieldRange("q", n) + ", " + fieldRange("qd", n) + ", " + fieldRange("qdd", n) + ", " +
                       fieldRange("tau", n));
    }
    const int j = std::stoi(digits);
    if (j >= n) {
      throw InputError(path + ":" + std::to_string(header_line) + ": column '" + name + "': the model has " +
                       std::to_string(n) + " joints (" + fieldRange(prefix, n) + ")");
    }
    if (!seen[f].insert(j).second) {
      throw InputError(path + ":" + std::to_string(header_line) + ": column '" + name + "' appears twice");
    }
    columns.emplace_back(f, j);
  }
  for (const auto& [f, joints] : seen) {
    if (static_cast<int>(joints.size()) != n) {
      int missing = 0;
      while (joints.count(missing) != 0u) ++missing;
      throw InputError(path + ":" + std::to_string(header_line) + ": columns " +
                       fieldRange(kFields[f].name, n) + " are incomplete: '" + kFields[f].name +
                       std::to_string(missing) + "' is missing");
    }
    if ((used & kFields[f].field) == 0u) {
      notes << "note: " << path << ": columns " << fieldRange(kFields[f].name, n)
            << " are not used by this command, ignored\n";
    }
  }
  std::vector<State> states;
  while (std::getline(in, line)) {
    ++line_no;
    const std::string t = trim(line);
    if (t.empty() || t[0] == '#') continue;
    const std::vector<std::string> cells = split(t, ',');
    const std::string where = path + ":" + std::to_string(line_no);
    if (cells.size() != columns.size()) {
      throw InputError(where + ": " + std::to_string(cells.size()) + " values, expected " +
                       std::to_string(columns.size()) + " (one per column of the header)");
    }
    State s = zeroState(n);
    for (std::size_t c = 0; c < cells.size(); ++c) {
      const auto [f, j] = columns[c];
      (s.*kFields[f].member)[j] = parseNumber(cells[c], where + ", column '" + header[c] + "'");
    }
    states.push_back(std::move(s));
  }
  if (states.empty()) throw InputError(path + ": no states after the header");
  return states;
}

std::vector<State> readJsonStates(const std::string& path, const std::string& text, int n, unsigned used,
                                  std::ostream& notes) {
  json doc;
  try {
    doc = json::parse(text);
  } catch (const json::exception& e) {
    std::string what = e.what();
    if (const auto pos = what.find("] "); pos != std::string::npos) what = what.substr(pos + 2);
    throw InputError(path + ": invalid JSON: " + what);
  }
  if (doc.is_object()) doc = json::array({doc});
  if (!doc.is_array()) throw InputError(path + ": expected an array of states {\"q\": [...], ...}");
  if (doc.empty()) throw InputError(path + ": no states");
  std::set<std::string> ignored;
  std::vector<State> states;
  for (std::size_t k = 0; k < doc.size(); ++k) {
    const std::string where = path + ": states[" + std::to_string(k) + "]";
    const json& item = doc[k];
    if (!item.is_object()) throw InputError(where + ": expected an object {\"q\": [...], ...}");
    State s = zeroState(n);
    for (const auto& [key, value] : item.items()) {
      int f = -1;
      for (int i = 0; i < 4; ++i) {
        if (key == kFields[i].name) f = i;
      }
      if (f < 0) throw InputError(where + "." + key + ": unknown field (expected q, qd, qdd, tau)");
      if (!value.is_array() || static_cast<int>(value.size()) != n) {
        throw InputError(where + "." + key + ": expected an array of " + std::to_string(n) + " numbers" +
                         (value.is_array() ? ", got " + std::to_string(value.size()) : std::string()));
      }
      for (int j = 0; j < n; ++j) {
        const json& x = value[static_cast<std::size_t>(j)];
        if (!x.is_number() || !std::isfinite(x.get<double>())) {
          throw InputError(where + "." + key + "[" + std::to_string(j) + "]: expected a finite number");
        }
        (s.*kFields[f].member)[j] = x.get<double>();
      }
      if ((used & kFields[f].field) == 0u && ignored.insert(key).second) {
        notes << "note: " << path << ": field '" << key << "' is not used by this command, ignored\n";
      }
    }
    states.push_back(std::move(s));
  }
  return states;
}

}  // namespace

std::vector<State> readStates(const std::string& path, int n, unsigned used, std::ostream& notes) {
  std::error_code ec;
  if (!std::filesystem::exists(path, ec)) throw InputError(path + ": no such file");
  if (std::filesystem::is_directory(path, ec)) throw InputError(path + ": is a directory, expected a file");
  std::ifstream in(path, std::ios::binary);
  if (!in) throw InputError(path + ": cannot open");
  std::ostringstream buffer;
  buffer << in.rdbuf();
  std::string ext = std::filesystem::path(path).extension().string();
  std::transform(ext.begin(), ext.end(), ext.begin(), [](unsigned char c) { return std::tolower(c); });
  if (ext == ".json") return readJsonStates(path, buffer.str(), n, used, notes);
  return readCsvStates(path, buffer.str(), n, used, notes);
}

Model loadModel(const std::string& path, const UrdfOptions& urdf_options) {
  return loadModelFile(path, urdf_options);
}

Result computeInverseDynamics(const Model& model, Data& data, const State& state) {
  Result r;
  r.vectors.push_back({"q", "q", Quantity::Position, state.q});
  r.vectors.push_back({"qd", "qd", Quantity::Velocity, state.qd});
  r.vectors.push_back({"qdd", "qdd", Quantity::Acceleration, state.qdd});
  r.vectors.push_back(
      {"tau", "tau", Quantity::Force, inverseDynamics(model, data, state.q, state.qd, state.qdd)});
  return r;
}

Result computeForwardDynamics(const Model& model, Data& data, const State& state, const std::string& route) {
  Result r;
  r.vectors.push_back({"q", "q", Quantity::Position, state.q});
  r.vectors.push_back({"qd", "qd", Quantity::Velocity, state.qd});
  r.vectors.push_back({"tau", "tau", Quantity::Force, state.tau});
  const Eigen::VectorXd qdd =
      route == "cholesky" ? forwardDynamicsCholesky(model, data, state.q, state.qd, state.tau)
      : route == "fixman" ? forwardDynamicsFixman(model, data, state.q, state.qd, state.tau)
                          : forwardDynamics(model, data, state.q, state.qd, state.tau);
  r.vectors.push_back({"qdd", "qdd", Quantity::Acceleration, qdd});
  return r;
}

Result computeFactor(const Model& model, Data& data, const State& state, bool inverse) {
  Result r;
  computeFullFactor(model, data, state.q);
  r.vectors.push_back({"q", "q", Quantity::Position, state.q});
  r.vectors.push_back({"D", "D", Quantity::Inertia, data.D});
  r.matrices.push_back({"I", "I(q): joint-space inertia matrix", inertiaUnits(view(model), false), data.M});
  r.matrices.push_back({"U", "U: unit upper triangular factor, I = U D U^T", "", data.U});
  r.scalars.push_back({"log_det", "log det I", data.log_det});
  if (inverse) {
    r.matrices.push_back(
        {"I_inv", "I(q)^-1", inertiaUnits(view(model), true), computeInverseInertia(model, data, state.q)});
  }
  return r;
}

ModelView view(const Model& model) {
  ModelView v;
  v.name = model.spec.name;
  v.n = model.n;
  for (const JointSpec& j : model.spec.joints) v.joint_names.push_back(j.name);
  v.type = model.type;
  v.gravity = model.gravity;
  return v;
}

void writeJointTable(std::ostream& out, const Model& model, const std::vector<Result::Vector>& vectors) {
  writeJointTable(out, view(model), vectors);
}

void writeJointTable(std::ostream& out, const ModelView& model, const std::vector<Result::Vector>& vectors) {
  std::vector<std::vector<std::string>> rows(static_cast<std::size_t>(model.n) + 1);
  rows[0] = {"#", "joint", "type"};
  for (int i = 0; i < model.n; ++i) {
    const auto ui = static_cast<std::size_t>(i);
    rows[ui + 1] = {std::to_string(i + 1), model.joint_names[ui], typeName(model.type[ui])};
  }
  const std::size_t index_width = rows.back()[0].size();
  for (auto& r : rows) r[0] = padLeft(r[0], index_width);
  for (const Result::Vector& v : vectors) {
    std::size_t wn = v.title.size();
    std::size_t wu = 0;
    for (int i = 0; i < model.n; ++i) {
      wn = std::max(wn, fmt(v.value[i]).size());
      wu = std::max(wu, unit(v.quantity, model.type[static_cast<std::size_t>(i)]).size());
    }
    rows[0].push_back(padLeft(v.title, wn));
    for (int i = 0; i < model.n; ++i) {
      const auto ui = static_cast<std::size_t>(i);
      rows[ui + 1].push_back(padLeft(fmt(v.value[i]), wn) + " " +
                             padRight(unit(v.quantity, model.type[ui]), wu));
    }
  }
  printGrid(out, rows);
}

void writeMatrix(std::ostream& out, const Result::Matrix& matrix) {
  out << matrix.title << (matrix.units.empty() ? "" : " (" + matrix.units + ")") << '\n';
  const Eigen::MatrixXd& m = matrix.value;
  std::size_t w = 0;
  for (Eigen::Index i = 0; i < m.size(); ++i) w = std::max(w, fmt(m.data()[i]).size());
  w = std::max(w, std::to_string(m.cols()).size());
  std::vector<std::vector<std::string>> rows;
  std::vector<std::string> head = {""};
  for (Eigen::Index j = 0; j < m.cols(); ++j) head.push_back(padLeft(std::to_string(j + 1), w));
  rows.push_back(head);
  for (Eigen::Index i = 0; i < m.rows(); ++i) {
    std::vector<std::string> row = {"  " + std::to_string(i + 1)};
    for (Eigen::Index j = 0; j < m.cols(); ++j) row.push_back(padLeft(fmt(m(i, j)), w));
    rows.push_back(row);
  }
  printGrid(out, rows);
}

void writeResults(std::ostream& out, const Model& model, const std::string& command,
                  const std::vector<Result>& results, Format format) {
  writeResults(out, view(model), command, results, format);
}

void writeResults(std::ostream& out, const ModelView& model, const std::string& command,
                  const std::vector<Result>& results, Format format) {
  switch (format) {
    case Format::Table: {
      for (std::size_t k = 0; k < results.size(); ++k) {
        const Result& r = results[k];
        if (k > 0) out << '\n';
        out << "denoc " << command << ": model '" << model.name << "', " << model.n << " joints";
        if (results.size() > 1) out << ", state " << k + 1 << " of " << results.size();
        if (!model.model_id.empty()) {
          out << "\nmodel id: " << model.model_id;
          if (model.compute_time_ns >= 0) out << " (server compute time " << model.compute_time_ns << " ns)";
        }
        out << "\ngravity: [" << fmt(model.gravity[0]) << ", " << fmt(model.gravity[1]) << ", "
            << fmt(model.gravity[2]) << "] m/s^2 in the base frame\n\n";
        writeJointTable(out, model, r.vectors);
        for (const Result::Matrix& m : r.matrices) {
          out << '\n';
          writeMatrix(out, m);
        }
        if (!r.scalars.empty()) out << '\n';
        for (const Result::Scalar& s : r.scalars) out << s.title << " = " << fmt(s.value, 10) << '\n';
      }
      break;
    }
    case Format::Json: {
      // one state per line; numbers in the shortest form that reads back to the same double
      out << "{\"command\": " << ojson(command).dump() << ", \"model\": " << ojson(model.name).dump();
      if (!model.model_id.empty()) {
        out << ", \"model_id\": " << ojson(model.model_id).dump();
        if (model.compute_time_ns >= 0) out << ", \"compute_time_ns\": " << model.compute_time_ns;
      }
      out << ", \"dof\": " << model.n << ",\n \"gravity\": " << toJson(Eigen::VectorXd(model.gravity)).dump()
          << ", \"joints\": " << ojson(jointNames(model)).dump() << ",\n \"states\": [";
      for (std::size_t k = 0; k < results.size(); ++k) {
        const Result& r = results[k];
        ojson s = ojson::object();
        for (const auto& v : r.vectors) s[v.key] = toJson(v.value);
        for (const auto& m : r.matrices) s[m.key] = toJson(m.value);
        for (const auto& x : r.scalars) s[x.key] = x.value;
        out << (k == 0 ? "\n  " : ",\n  ") << s.dump();
      }
      out << "\n ]}\n";
      break;
    }
    case Format::Csv: {
      if (results.empty()) break;
      const Result& first = results.front();
      std::vector<std::string> header;
      for (const auto& v : first.vectors) {
        for (Eigen::Index i = 0; i < v.value.size(); ++i) header.push_back(v.key + std::to_string(i));
      }
      for (const auto& m : first.matrices) {
        for (Eigen::Index i = 0; i < m.value.rows(); ++i) {
          for (Eigen::Index j = 0; j < m.value.cols(); ++j) {
            header.push_back(m.key + "_" + std::to_string(i) + "_" + std::to_string(j));
          }
        }
      }
      for (const auto& x : first.scalars) header.push_back(x.key);
      for (std::size_t c = 0; c < header.size(); ++c) out << (c ? "," : "") << header[c];
      out << '\n';
      for (const Result& r : results) {
        bool firstCell = true;
        const auto cell = [&](double x) {
          out << (firstCell ? "" : ",") << full(x);
          firstCell = false;
        };
        for (const auto& v : r.vectors) {
          for (Eigen::Index i = 0; i < v.value.size(); ++i) cell(v.value[i]);
        }
        for (const auto& m : r.matrices) {
          for (Eigen::Index i = 0; i < m.value.rows(); ++i) {
            for (Eigen::Index j = 0; j < m.value.cols(); ++j) cell(m.value(i, j));
          }
        }
        for (const auto& x : r.scalars) cell(x.value);
        out << '\n';
      }
      break;
    }
  }
}

void writeInfo(std::ostream& out, const Model& model, const std::string& source, Format format) {
  const ModelSpec& spec = model.spec;
  double total = 0.0;
  int prismatic = 0;
  for (int i = 0; i < model.n; ++i) {
    total += spec.joints[static_cast<std::size_t>(i)].mass;
    prismatic += model.type[static_cast<std::size_t>(i)] == JointType::Prismatic ? 1 : 0;
  }
  switch (format) {
    case Format::Table: {
      out << "model:   '" << spec.name << "' from " << source << '\n';
      out << "joints:  " << model.n << " (" << model.n - prismatic << " revolute, " << prismatic
          << " prismatic), total moving mass " << fmt(total) << " kg\n";
      out << "gravity: [" << fmt(spec.gravity[0]) << ", " << fmt(spec.gravity[1]) << ", "
          << fmt(spec.gravity[2]) << "] m/s^2 in the base frame\n\n";
      std::vector<std::vector<std::string>> rows = {
          {"#", "joint", "link", "type", "mass", "lower", "upper", "max velocity", "max effort", "armature"}};
      for (int i = 0; i < model.n; ++i) {
        const JointSpec& j = spec.joints[static_cast<std::size_t>(i)];
        const JointType t = model.type[static_cast<std::size_t>(i)];
        const auto lim = [&](double x, Quantity q) {
          return std::isinf(x) ? std::string("none") : fmt(x) + " " + unit(q, t);
        };
        rows.push_back(
            {std::to_string(i + 1), j.name, j.link, typeName(t), fmt(j.mass) + " kg",
             lim(j.lower, Quantity::Position), lim(j.upper, Quantity::Position),
             lim(j.velocity_limit, Quantity::Velocity), lim(j.effort_limit, Quantity::Force),
             j.armature == 0.0 ? std::string("0") : fmt(j.armature) + " " + unit(Quantity::Inertia, t)});
      }
      printGrid(out, rows);
      break;
    }
    case Format::Json: {
      ojson doc = ojson::object();
      doc["name"] = spec.name;
      doc["source"] = source;
      doc["dof"] = model.n;
      doc["gravity"] = {spec.gravity[0], spec.gravity[1], spec.gravity[2]};
      doc["total_mass"] = total;
      ojson joints = ojson::array();
      for (int i = 0; i < model.n; ++i) {
        const JointSpec& j = spec.joints[static_cast<std::size_t>(i)];
        ojson o = ojson::object();
        o["name"] = j.name;
        o["link"] = j.link;
        o["type"] = typeName(model.type[static_cast<std::size_t>(i)]);
        o["mass"] = j.mass;
        o["lower"] = limitJson(j.lower);
        o["upper"] = limitJson(j.upper);
        o["velocity_limit"] = limitJson(j.velocity_limit);
        o["effort_limit"] = limitJson(j.effort_limit);
        o["armature"] = j.armature;
        joints.push_back(o);
      }
      doc["joints"] = joints;
      out << doc.dump(2) << '\n';
      break;
    }
    case Format::Csv: {
      out << "index,joint,link,type,mass,lower,upper,velocity_limit,effort_limit,armature\n";
      for (int i = 0; i < model.n; ++i) {
        const JointSpec& j = spec.joints[static_cast<std::size_t>(i)];
        out << i << ',' << j.name << ',' << j.link << ',' << typeName(model.type[static_cast<std::size_t>(i)])
            << ',' << full(j.mass) << ',' << full(j.lower) << ',' << full(j.upper) << ','
            << full(j.velocity_limit) << ',' << full(j.effort_limit) << ',' << full(j.armature) << '\n';
      }
      break;
    }
  }
}

}  // namespace denoc::cli
