// Helpers shared by the service tools (denoc_probe, denoc_load): percentiles, the server's resident size, a
// 7-DOF test arm as a DH table and as a registration request.
#pragma once

#include <Eigen/Geometry>
#include <algorithm>
#include <chrono>
#include <fstream>
#include <string>
#include <vector>

#include "denoc/dh.hpp"
#include "denoc/v1/dynamics.pb.h"

namespace denoc::tools {

using Clock = std::chrono::steady_clock;
using namespace std::chrono_literals;

inline double micros(Clock::duration d) { return std::chrono::duration<double, std::micro>(d).count(); }

struct Stats {
  double p50, p99, mean, p999, max;
};

inline Stats stats(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  double sum = 0;
  for (double x : v) sum += x;
  auto at = [&](double p) {
    return v[std::min(v.size() - 1, static_cast<std::size_t>(p * static_cast<double>(v.size())))];
  };
  if (v.empty()) return {0, 0, 0, 0, 0};
  return {at(0.50), at(0.99), sum / static_cast<double>(v.size()), at(0.999), v.back()};
}

// a 7-DOF revolute arm (Panda-like proportions) when no URDF is given
inline denoc::DHSpec sevenDof(unsigned variant) {
  denoc::DHSpec dh;
  dh.name = "probe_7dof_" + std::to_string(variant);
  const double a[7] = {0, 0, 0.0825, -0.0825, 0, 0.088, 0};
  const double b[7] = {0.333, 0, 0.316, 0, 0.384, 0, 0.107};
  const double alpha[7] = {-1.5708, 1.5708, 1.5708, -1.5708, 1.5708, 1.5708, 0};
  for (int i = 0; i < 7; ++i) {
    denoc::DHLink l;
    l.a = a[i];
    l.b = b[i];
    l.alpha = alpha[i];
    l.mass = 1.0 + 0.5 * i + 1e-6 * variant;  // variant: distinct models of the same size
    l.com = Eigen::Vector3d(0.01, 0.02, 0.03);
    l.inertia = Eigen::Vector3d(0.02, 0.025, 0.03).asDiagonal();
    dh.links.push_back(l);
  }
  return dh;
}

inline denoc::v1::RegisterModelRequest dhRequest(const denoc::DHSpec& dh) {
  denoc::v1::RegisterModelRequest r;
  r.set_name(dh.name);
  for (const auto& l : dh.links) {
    auto* m = r.mutable_dh()->add_links();
    m->set_type(denoc::v1::JOINT_TYPE_REVOLUTE);
    m->set_a(l.a);
    m->set_b(l.b);
    m->set_alpha(l.alpha);
    m->set_mass(l.mass);
    m->mutable_com()->set_x(l.com.x());
    m->mutable_com()->set_y(l.com.y());
    m->mutable_com()->set_z(l.com.z());
    m->mutable_inertia()->set_ixx(l.inertia(0, 0));
    m->mutable_inertia()->set_iyy(l.inertia(1, 1));
    m->mutable_inertia()->set_izz(l.inertia(2, 2));
  }
  return r;
}

inline long rssKiB(int pid) {
  std::ifstream f("/proc/" + std::to_string(pid) + "/status");
  std::string line;
  while (std::getline(f, line)) {
    if (line.rfind("VmRSS:", 0) == 0) return std::stol(line.substr(6));
  }
  return -1;
}

}  // namespace denoc::tools
