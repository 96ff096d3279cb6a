// Input of the `denoc` tool: number lists, the output format, text files, and state files (CSV and JSON).
#include "input.hpp"

#include <algorithm>
#include <cctype>
#include <charconv>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <map>
#include <nlohmann/json.hpp>
#include <ostream>
#include <set>
#include <sstream>

namespace denoc::cli {

namespace {

using nlohmann::json;

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

}  // namespace

Format parseFormat(const std::string& text) {
  if (text == "table") return Format::Table;
  if (text == "json") return Format::Json;
  if (text == "csv") return Format::Csv;
  throw InputError("--format: '" + text + "' is not one of table, json, csv");
}

std::vector<double> parseList(const std::string& text, const std::string& option) {
  std::vector<double> values;
  const std::vector<std::string> parts = split(text, ',');
  for (std::size_t i = 0; i < parts.size(); ++i) {
    values.push_back(parseNumber(parts[i], option + " entry " + std::to_string(i)));
  }
  return values;
}

Eigen::VectorXd vectorOption(const std::string& text, int n, const std::string& option,
                             const std::string& what) {
  if (trim(text).empty()) return Eigen::VectorXd::Zero(n);
  const std::vector<double> v = parseList(text, option);
  if (static_cast<int>(v.size()) != n) {
    throw InputError(option + ": " + std::to_string(v.size()) + " entries, expected " + std::to_string(n) +
                     " (" + what + ")");
  }
  return Eigen::Map<const Eigen::VectorXd>(v.data(), n);
}

WrenchOption parseWrench(const std::string& text, const std::string& option) {
  WrenchOption w;
  std::string rest = trim(text);
  const std::string expected = " (expected LINK:mx,my,mz,fx,fy,fz, optionally followed by :local or :world)";
  for (const char* suffix : {":local", ":world", ":base"}) {
    const std::string s(suffix);
    if (rest.size() >= s.size() && rest.compare(rest.size() - s.size(), s.size(), s) == 0) {
      w.local = s == ":local";
      rest = rest.substr(0, rest.size() - s.size());
      break;
    }
  }
  const auto colon = rest.rfind(':');
  if (colon == std::string::npos) throw InputError(option + ": '" + text + "' names no link" + expected);
  w.link = trim(rest.substr(0, colon));
  const std::vector<double> v = parseList(rest.substr(colon + 1), option + " '" + text + "'");
  if (v.size() != 6) {
    throw InputError(option + ": '" + text + "' has " + std::to_string(v.size()) + " numbers, expected 6" +
                     expected);
  }
  for (int k = 0; k < 6; ++k) w.wrench[k] = v[static_cast<std::size_t>(k)];
  return w;
}

namespace {

struct FieldInfo {
  const char* name;
  Field field;
  Eigen::VectorXd State::*member;
};
const FieldInfo kFields[] = {
    {"q", kQ, &State::q}, {"qd", kQd, &State::qd}, {"qdd", kQdd, &State::qdd}, {"tau", kTau, &State::tau}};

// A state of zeros; q is q_default when it has nq entries (a moving root's identity quaternion).
State zeroState(int nq, int nv, const Eigen::VectorXd& q_default) {
  State s;
  s.q = q_default.size() == nq ? q_default : Eigen::VectorXd::Zero(nq);
  s.qd = s.qdd = s.tau = Eigen::VectorXd::Zero(nv);
  return s;
}

// The entries of field f: nq for q, nv for the others.
int widthOf(int f, int nq, int nv) { return f == 0 ? nq : nv; }

// What the entries of field f are, for errors: "joints" for a fixed root, else coordinates.
std::string entriesOf(int f, int nq, int nv) {
  if (nq == nv) return "joints";
  return f == 0 ? "configuration coordinates (nq)" : "velocity coordinates (nv)";
}

std::string fieldRange(const std::string& name, int n) { return name + "0.." + name + std::to_string(n - 1); }

std::vector<State> readCsvStates(const std::string& path, const std::string& text, int nq, int nv,
                                 unsigned used, std::ostream& notes, const Eigen::VectorXd& q_default) {
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
                       fieldRange("q", nq) + ", " + fieldRange("qd", nv) + ", " + fieldRange("qdd", nv) +
                       ", " + fieldRange("tau", nv));
    }
    const int j = std::stoi(digits);
    const int n = widthOf(f, nq, nv);
    if (j >= n) {
      throw InputError(path + ":" + std::to_string(header_line) + ": column '" + name + "': the model has " +
                       std::to_string(n) + " " + entriesOf(f, nq, nv) + " (" + fieldRange(prefix, n) + ")");
    }
    if (!seen[f].insert(j).second) {
      throw InputError(path + ":" + std::to_string(header_line) + ": column '" + name + "' appears twice");
    }
    columns.emplace_back(f, j);
  }
  for (const auto& [f, joints] : seen) {
    const int n = widthOf(f, nq, nv);
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
    State s = zeroState(nq, nv, q_default);
    for (std::size_t c = 0; c < cells.size(); ++c) {
      const auto [f, j] = columns[c];
      (s.*kFields[f].member)[j] = parseNumber(cells[c], where + ", column '" + header[c] + "'");
    }
    states.push_back(std::move(s));
  }
  if (states.empty()) throw InputError(path + ": no states after the header");
  return states;
}

std::vector<State> readJsonStates(const std::string& path, const std::string& text, int nq, int nv,
                                  unsigned used, std::ostream& notes, const Eigen::VectorXd& q_default) {
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
    State s = zeroState(nq, nv, q_default);
    for (const auto& [key, value] : item.items()) {
      int f = -1;
      for (int i = 0; i < 4; ++i) {
        if (key == kFields[i].name) f = i;
      }
      if (f < 0) throw InputError(where + "." + key + ": unknown field (expected q, qd, qdd, tau)");
      const int n = widthOf(f, nq, nv);
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

std::string readText(const std::string& path) {
  std::error_code ec;
  if (!std::filesystem::exists(path, ec)) throw InputError(path + ": no such file");
  if (std::filesystem::is_directory(path, ec)) throw InputError(path + ": is a directory, expected a file");
  std::ifstream in(path, std::ios::binary);
  if (!in) throw InputError(path + ": cannot open");
  std::ostringstream buffer;
  buffer << in.rdbuf();
  return buffer.str();
}

std::vector<State> readStates(const std::string& path, int nq, int nv, unsigned used, std::ostream& notes,
                              const Eigen::VectorXd& q_default) {
  const std::string text = readText(path);
  std::string ext = std::filesystem::path(path).extension().string();
  std::transform(ext.begin(), ext.end(), ext.begin(), [](unsigned char c) { return std::tolower(c); });
  if (ext == ".json") return readJsonStates(path, text, nq, nv, used, notes, q_default);
  return readCsvStates(path, text, nq, nv, used, notes, q_default);
}

}  // namespace denoc::cli
