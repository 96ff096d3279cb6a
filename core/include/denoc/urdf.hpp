// Models from URDF robot descriptions (through urdfdom).
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "denoc/model.hpp"

namespace denoc {

struct UrdfOptions {
  std::string base_link;  // empty: the root link
  std::string tip_link;   // empty: the single leaf (an error listing the leaves when there are several)
  std::optional<Eigen::Vector3d> gravity;  // in the base link's frame; default (0, 0, -9.81)
  std::vector<double> armature;            // per moving joint, base to tip; empty: none
};

/// Builds a model from URDF text. Throws ModelError with a message naming the joint or link at fault.
Model buildModelFromUrdf(const std::string& urdf_xml, const UrdfOptions& options = {});

/// The same from a file.
Model buildModelFromUrdfFile(const std::string& path, const UrdfOptions& options = {});

/// The validated description (before buildModel) for the same inputs: used for canonical forms.
ModelSpec specFromUrdf(const std::string& urdf_xml, const UrdfOptions& options = {});

}  // namespace denoc
