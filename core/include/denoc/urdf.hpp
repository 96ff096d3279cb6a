// Models from URDF robot descriptions (through urdfdom).
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "denoc/model.hpp"
#include "denoc/xml_scan.hpp"

namespace denoc {

/// What to import and how (docs/urdf.md). New fields go at the end: callers initialise it as an aggregate.
struct UrdfOptions {
  std::string base_link;  // empty: the URDF's root link. The model's root link: fixed, or moved by `root`
  // empty: the whole tree below the base (a serial robot under a fixed root: its chain, as with the tip found
  // below its last moving joint); given: the chain from the base to this link, other moving joints locked
  std::string tip_link;
  std::optional<Eigen::Vector3d> gravity;  // in the base link's frame (the world); default (0, 0, -9.81)
  std::vector<double> armature;            // per moving joint of the model, in its order; empty: none
  XmlLimits xml_limits;                    // the text's size, nesting, elements, ... (docs/urdf.md, "Limits")
  // the most joints on a path down the tree: urdfdom frees its tree recursively, about 32 bytes of stack per
  // level (docs/urdf.md, "Limits")
  std::size_t max_tree_depth = 1024;
  // the joint between the world and the base link (ModelSpec::root): fixed, floating (6 coordinates) or
  // planar (3); a floating or planar base link carries the mass of the links fixed to it
  RootJoint root = RootJoint::Fixed;
  // if given, a successful import appends a sentence for each liberty it took with the file: a mimic joint
  // loaded as an independent joint ("joint 'a' mimics 'b': loaded as an independent joint")
  std::vector<std::string>* notes = nullptr;
};

/// Builds a model from URDF text. The text is first checked against options.xml_limits in one bounded pass
/// (scanXml) before any XML tree is built, and its joints for cycles and a tree deeper than
/// options.max_tree_depth. Throws ModelError with a message naming the limit (and line), or
/// the joint or link at fault; names longer than kMaxNameLength and numbers outside the model ranges
/// (model.hpp) are refused naming the link or joint and the field. `stop`, if given, is polled through the
/// pre-scan, the import and the build (denoc::Stopped); the XML parse by urdfdom in between cannot be
/// interrupted, and is bounded by the limits.
Model buildModelFromUrdf(const std::string& urdf_xml, const UrdfOptions& options = {},
                         const StopCondition* stop = nullptr);

/// The same from a file.
Model buildModelFromUrdfFile(const std::string& path, const UrdfOptions& options = {},
                             const StopCondition* stop = nullptr);

/// The validated description (before buildModel) for the same inputs: used for canonical forms.
ModelSpec specFromUrdf(const std::string& urdf_xml, const UrdfOptions& options = {},
                       const StopCondition* stop = nullptr);

}  // namespace denoc
