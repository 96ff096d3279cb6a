// Formatting in the `denoc` tool: numbers, units of joint quantities, aligned text grids and JSON arrays
// (used by the local and the remote front ends alike).
#pragma once

#include <Eigen/Core>
#include <cstddef>
#include <iosfwd>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "denoc/model.hpp"

namespace denoc::cli {

/// A number with `digits` significant digits for tables ("inf", "-inf"; never "-0").
std::string fmt(double x, int digits = 6);

/// A number with 17 significant digits (reads back exactly), for CSV output.
std::string full(double x);

/// s padded with blanks to width w, on the left (right-aligned) or on the right.
std::string padLeft(const std::string& s, std::size_t w);
std::string padRight(const std::string& s, std::size_t w);

/// Prints rows of cells, each column as wide as its widest cell, two spaces apart, left-aligned (cells that
/// should align right are padded beforehand), without trailing blanks.
void printGrid(std::ostream& out, const std::vector<std::vector<std::string>>& rows);

/// "revolute" or "prismatic".
const char* typeName(JointType t);

/// Physical quantity of a per-joint vector, for its units (rad or m based).
enum class Quantity { Position, Velocity, Acceleration, Force, Inertia };

/// Unit of a per-joint quantity, e.g. "rad/s^2" for a revolute acceleration, "N" for a prismatic force.
std::string unit(Quantity quantity, JointType type);

/// JSON arrays of a vector's entries and of a matrix's rows (numbers that read back exactly).
nlohmann::ordered_json toJson(const Eigen::VectorXd& v);
nlohmann::ordered_json toJson(const Eigen::MatrixXd& m);

/// A joint limit: the number, or null when unlimited (infinite).
nlohmann::ordered_json limitJson(double x);

}  // namespace denoc::cli
