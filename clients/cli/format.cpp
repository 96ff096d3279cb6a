// Formatting in the `denoc` tool: numbers, units, text grids, JSON arrays.
#include "format.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <ostream>

namespace denoc::cli {

using ojson = nlohmann::ordered_json;

std::string fmt(double x, int digits) {
  if (std::isinf(x)) return x > 0 ? "inf" : "-inf";
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.*g", digits, x == 0.0 ? 0.0 : x);  // no "-0"
  return buf;
}

std::string full(double x) {
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.17g", x);
  return buf;
}

std::string padLeft(const std::string& s, std::size_t w) {
  return s.size() >= w ? s : std::string(w - s.size(), ' ') + s;
}
std::string padRight(const std::string& s, std::size_t w) {
  return s.size() >= w ? s : s + std::string(w - s.size(), ' ');
}

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

}  // namespace denoc::cli
