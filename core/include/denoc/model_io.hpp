// Model files: the JSON format "denoc-dh/1" for Denavit-Hartenberg models (docs/model-format.md), one entry
// point that loads any supported model file by its extension (.json: DH; .urdf: URDF), and the canonical
// text of a validated model, whose SHA-256 is the service's model id (docs/service.md, "Models and ids").
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

/// The first line of canonicalForm: changing the form changes every model id, so bump it when doing so.
inline constexpr const char* kCanonicalFormat = "denoc-model-v1";

/// The canonical form of a validated model (Model::spec, the ModelSpec after buildModel): text, one item per
/// line (kCanonicalFormat; gravity; the tip frame; per joint base to tip: name, link, type, rotation,
/// origin, axis, mass, centre of mass, inertia, limits, armature; for a tree, then, "tree", the parent of
/// every joint, the root joint, the root link's name and inertial data); doubles as C99 hexadecimal floats
/// (%a: exact) with -0 written as 0, matrices row-major, names length-prefixed. The display name is not part
/// of it. Two models have the same form exactly when their validated specs are equal.
std::string canonicalForm(const ModelSpec& spec);

/// Reads a file and parses it with parseDHJson; errors are prefixed with the path.
DHSpec loadDHJsonFile(const std::string& path);

/// Loads and builds the model in a file, chosen by the extension (case-insensitive): ".json" is a
/// "denoc-dh/1" DH model, ".urdf" a URDF robot description (urdf_options apply to it only). Throws
/// ModelError, prefixed with the path, for an unreadable file, an unknown extension or an invalid model.
Model loadModelFile(const std::string& path, const UrdfOptions& urdf_options = {});

}  // namespace denoc
