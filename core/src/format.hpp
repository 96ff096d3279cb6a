// Numbers in the core's messages, written in one place (an internal header of the core, not installed).
// Two forms, each kept where the messages have always used it:
//  - the shortest text that reads back to the same double (detail::formatNumber of algorithm/check.hpp,
//    which the public headers' checks use too): model building and URDF import;
//  - 17 significant digits (printf's %.17g): simulation, rollouts and payloads.
#pragma once

#include <cstdio>
#include <string>

#include "denoc/algorithm/check.hpp"

namespace denoc::detail {

/// x with 17 significant digits, as printf's %.17g writes it ("0.10000000000000001", "inf", "nan").
inline std::string formatNumber17(double x) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.17g", x);
  return buf;
}

}  // namespace denoc::detail
