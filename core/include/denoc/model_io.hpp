// Model files: the JSON format "denoc-dh/1" for Denavit-Hartenberg models (docs/model-format.md), and one
// entry point that loads any supported model file by its extension (.json: DH; .urdf: URDF).
#pragma once

#include <string>

#include "denoc/dh.hpp"
#include "denoc/model.hpp"
#include "denoc/urdf.hpp"

namespace denoc {

/// The value of the "format" field of a DH model file.
inline constexpr const char* kDHJsonFormat = "denoc-dh/1";

/// Parses a "denoc-dh/1" document. Angles given in degrees ("angle_unit": "deg") are converted to radians.
/// Throws ModelError naming the field at fault, e.g. "links[2] ('link3').mass: expected a number, got a
/// string", for invalid JSON (with line and column), missing, wrong-typed, non-finite or unknown fields.
/// It checks the file's structure only: physical validity (positive masses, physical inertias, limits) is
/// checked by buildModelFromDH.
DHSpec parseDHJson(const std::string& text);

/// Writes a "denoc-dh/1" document (angles in radians) from which parseDHJson gives back exactly the same
/// DHSpec: every number is written in the shortest form that reads back to the same double. Infinite
/// limits are left out (the format's way of saying "none"). Throws ModelError if the spec cannot be
/// represented: a non-finite number other than an infinite limit, or an inertia that is not symmetric.
std::string toDHJson(const DHSpec& dh);

/// Reads a file and parses it with parseDHJson; errors are prefixed with the path.
DHSpec loadDHJsonFile(const std::string& path);

/// Loads and builds the model in a file, chosen by the extension (case-insensitive): ".json" is a
/// "denoc-dh/1" DH model, ".urdf" a URDF robot description (urdf_options apply to it only). Throws
/// ModelError, prefixed with the path, for an unreadable file, an unknown extension or an invalid model.
Model loadModelFile(const std::string& path, const UrdfOptions& urdf_options = {});

}  // namespace denoc
