// The refusal of a tree model by the core's entry points that compute on serial chains only (docs/trees.md,
// "What a tree model can do").
#pragma once

#include <stdexcept>
#include <string>

#include "denoc/model.hpp"

namespace denoc::detail {

inline void requireSerial(const Model& model, const char* function) {
  if (!model.serial) {
    throw std::invalid_argument(
        std::string(function) +
        ": not available for a tree model (branches, a floating or planar root, or a "
        "link with a singular inertia) in this version; docs/trees.md lists the routes "
        "that are");
  }
}

}  // namespace denoc::detail
