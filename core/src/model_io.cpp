#include "denoc/model_io.hpp"

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <initializer_list>
#include <nlohmann/json.hpp>
#include <numbers>
#include <set>
#include <sstream>
#include <vector>

namespace denoc {

namespace {

using nlohmann::json;

constexpr double kDeg = std::numbers::pi / 180.0;

[[noreturn]] void fail(const std::string& where, const std::string& what) {
  throw ModelError(where.empty() ? what : where + ": " + what);
}

std::string field(const std::string& prefix, const std::string& key) {
  return prefix.empty() ? key : prefix + "." + key;
}

std::string describe(const json& v) {
  switch (v.type()) {
    case json::value_t::null:
      return "null";
    case json::value_t::boolean:
      return "a boolean";
    case json::value_t::string:
      return "a string";
    case json::value_t::array:
      return "an array";
    case json::value_t::object:
      return "an object";
    case json::value_t::number_integer:
    case json::value_t::number_unsigned:
    case json::value_t::number_float:
      return "a number";
    default:
      return "a value of another type";
  }
}

// Rejects keys of obj that are not in allowed.
void checkKeys(const json& obj, const std::string& prefix, std::initializer_list<const char*> allowed) {
  for (const auto& item : obj.items()) {
    const std::string& key = item.key();
    const bool known = std::any_of(allowed.begin(), allowed.end(), [&](const char* a) { return key == a; });
    if (!known) {
      std::string list;
      for (const char* a : allowed) list += (list.empty() ? "" : ", ") + std::string(a);
      fail(field(prefix, key), "unknown field (expected one of: " + list + ")");
    }
  }
}

const json* find(const json& obj, const char* key) {
  const auto it = obj.find(key);
  return it == obj.end() ? nullptr : &*it;
}

const json& require(const json& obj, const std::string& prefix, const char* key) {
  const json* v = find(obj, key);
  if (v == nullptr) fail(field(prefix, key), "missing (a required field)");
  return *v;
}

double number(const json& v, const std::string& where) {
  if (!v.is_number()) fail(where, "expected a number, got " + describe(v));
  const double x = v.get<double>();
  if (!std::isfinite(x)) fail(where, "expected a finite number");
  return x;
}

std::string string(const json& v, const std::string& where) {
  if (!v.is_string()) fail(where, "expected a string, got " + describe(v));
  return v.get<std::string>();
}

Eigen::Vector3d vector3(const json& v, const std::string& where) {
  if (!v.is_array() || v.size() != 3) {
    fail(where, "expected an array of 3 numbers, got " +
                    (v.is_array() ? "an array of " + std::to_string(v.size()) + " entries" : describe(v)));
  }
  Eigen::Vector3d x;
  for (int i = 0; i < 3; ++i)
    x[i] = number(v[static_cast<std::size_t>(i)], where + "[" + std::to_string(i) + "]");
  return x;
}

const json& object(const json& v, const std::string& where) {
  if (!v.is_object()) fail(where, "expected an object, got " + describe(v));
  return v;
}

Eigen::Matrix3d inertia(const json& v, const std::string& where) {
  object(v, where);
  Eigen::Matrix3d I = Eigen::Matrix3d::Zero();
  if (v.contains("principal")) {
    if (v.size() != 1) {
      fail(where, "give either \"principal\" or the six entries ixx, iyy, izz, ixy, ixz, iyz, not both");
    }
    I = vector3(v["principal"], field(where, "principal")).asDiagonal();
    return I;
  }
  checkKeys(v, where, {"principal", "ixx", "iyy", "izz", "ixy", "ixz", "iyz"});
  if (v.empty()) fail(where, "expected {\"principal\": [Ixx, Iyy, Izz]} or the six entries ixx..iyz");
  I(0, 0) = number(require(v, where, "ixx"), field(where, "ixx"));
  I(1, 1) = number(require(v, where, "iyy"), field(where, "iyy"));
  I(2, 2) = number(require(v, where, "izz"), field(where, "izz"));
  I(0, 1) = I(1, 0) = number(require(v, where, "ixy"), field(where, "ixy"));
  I(0, 2) = I(2, 0) = number(require(v, where, "ixz"), field(where, "ixz"));
  I(1, 2) = I(2, 1) = number(require(v, where, "iyz"), field(where, "iyz"));
  return I;
}

DHLink parseLink(const json& v, std::size_t k, double angle) {
  const std::string index = "links[" + std::to_string(k) + "]";
  object(v, index);
  std::string label = "link" + std::to_string(k + 1);
  if (const json* name = find(v, "link"); name != nullptr && name->is_string())
    label = name->get<std::string>();
  const std::string where = index + " ('" + label + "')";
  checkKeys(
      v, where,
      {"joint", "link", "type", "a", "b", "alpha", "theta", "mass", "com", "inertia", "limits", "armature"});

  DHLink l;
  if (const json* x = find(v, "joint")) l.joint = string(*x, field(where, "joint"));
  if (const json* x = find(v, "link")) l.link = string(*x, field(where, "link"));
  const std::string type = string(require(v, where, "type"), field(where, "type"));
  if (type == "revolute") {
    l.type = JointType::Revolute;
  } else if (type == "prismatic") {
    l.type = JointType::Prismatic;
  } else {
    fail(field(where, "type"), "expected \"revolute\" or \"prismatic\", got \"" + type + "\"");
  }
  l.a = number(require(v, where, "a"), field(where, "a"));
  l.b = number(require(v, where, "b"), field(where, "b"));
  l.alpha = number(require(v, where, "alpha"), field(where, "alpha")) * angle;
  l.theta = number(require(v, where, "theta"), field(where, "theta")) * angle;
  l.mass = number(require(v, where, "mass"), field(where, "mass"));
  l.com = vector3(require(v, where, "com"), field(where, "com"));
  l.inertia = inertia(require(v, where, "inertia"), field(where, "inertia"));
  if (const json* lim = find(v, "limits")) {
    const std::string lw = field(where, "limits");
    object(*lim, lw);
    checkKeys(*lim, lw, {"lower", "upper", "velocity", "effort"});
    // the joint variable is an angle for a revolute joint, a length for a prismatic one
    const double unit = l.type == JointType::Revolute ? angle : 1.0;
    if (const json* x = find(*lim, "lower")) l.lower = number(*x, field(lw, "lower")) * unit;
    if (const json* x = find(*lim, "upper")) l.upper = number(*x, field(lw, "upper")) * unit;
    if (const json* x = find(*lim, "velocity")) l.velocity_limit = number(*x, field(lw, "velocity")) * unit;
    if (const json* x = find(*lim, "effort")) l.effort_limit = number(*x, field(lw, "effort"));
  }
  if (const json* x = find(v, "armature")) l.armature = number(*x, field(where, "armature"));
  return l;
}

// Parses text, rejecting repeated keys in one object (nlohmann would silently keep the last one).
json parseStrict(const std::string& text) {
  std::vector<std::set<std::string>> keys;
  std::string repeated;
  const json::parser_callback_t callback = [&](int, json::parse_event_t event, json& parsed) {
    switch (event) {
      case json::parse_event_t::object_start:
        keys.emplace_back();
        break;
      case json::parse_event_t::object_end:
        if (!keys.empty()) keys.pop_back();
        break;
      case json::parse_event_t::key:
        if (!keys.empty() && parsed.is_string() && !keys.back().insert(parsed.get<std::string>()).second &&
            repeated.empty()) {
          repeated = parsed.get<std::string>();
        }
        break;
      default:
        break;
    }
    return true;
  };
  json doc;
  try {
    doc = json::parse(text, callback);
  } catch (const json::exception& e) {
    // "[json.exception.parse_error.101] parse error at line 3, column 7: syntax error ...", or
    // "[json.exception.out_of_range.406] number overflow parsing '1e999'"
    std::string what = e.what();
    if (const auto pos = what.find("] "); what.rfind("[json.exception", 0) == 0 && pos != std::string::npos) {
      what = what.substr(pos + 2);
    }
    throw ModelError("invalid JSON: " + what);
  }
  if (!repeated.empty()) throw ModelError(repeated + ": field appears twice in the same object");
  return doc;
}

// ---- writing ----

std::string jsonNumber(double x, const std::string& where) {
  if (!std::isfinite(x)) fail(where, "is not finite, cannot be written");
  return json(x).dump();  // shortest representation that reads back to the same double
}

std::string vec(const Eigen::Vector3d& v, const std::string& where) {
  std::string s = "[";  // built by appending (GCC 12 warns falsely on "literal" + std::string&&)
  s += jsonNumber(v[0], where);
  s += ", ";
  s += jsonNumber(v[1], where);
  s += ", ";
  s += jsonNumber(v[2], where);
  s += "]";
  return s;
}

std::string str(const std::string& s) {
  try {
    return json(s).dump();
  } catch (const json::exception&) {  // invalid UTF-8
    throw ModelError("name '" + s + "' is not valid UTF-8, cannot be written");
  }
}

// ---- the canonical form ----

void appendDouble(std::string& out, double v) {
  char buf[64];
  if (v == 0.0) v = 0.0;  // -0 and +0 are the same model
  std::snprintf(buf, sizeof buf, " %a", v);
  out += buf;
}

template <typename M>
void appendMatrix(std::string& out, const char* key, const M& m) {
  out += key;
  for (Eigen::Index r = 0; r < m.rows(); ++r) {
    for (Eigen::Index c = 0; c < m.cols(); ++c) appendDouble(out, m(r, c));
  }
  out += '\n';
}

void appendScalar(std::string& out, const char* key, double v) {
  out += key;
  appendDouble(out, v);
  out += '\n';
}

void appendName(std::string& out, const char* key, const std::string& s) {
  out += key;
  out += ' ';
  out += std::to_string(s.size());
  out += ':';
  out += s;
  out += '\n';
}

}  // namespace

std::string canonicalForm(const ModelSpec& spec) {
  std::string out = std::string(kCanonicalFormat) + "\n";
  appendMatrix(out, "gravity", spec.gravity.transpose());
  appendMatrix(out, "tip_rotation", spec.tip_rotation);
  appendMatrix(out, "tip_origin", spec.tip_origin.transpose());
  out += "joints " + std::to_string(spec.joints.size()) + "\n";
  for (const JointSpec& j : spec.joints) {
    appendName(out, "joint", j.name);
    appendName(out, "link", j.link);
    out += j.type == JointType::Revolute ? "type revolute\n" : "type prismatic\n";
    appendMatrix(out, "rotation", j.rotation);
    appendMatrix(out, "origin", j.origin.transpose());
    appendMatrix(out, "axis", j.axis.transpose());
    appendScalar(out, "mass", j.mass);
    appendMatrix(out, "com", j.com.transpose());
    appendMatrix(out, "inertia", j.inertia);
    appendScalar(out, "lower", j.lower);
    appendScalar(out, "upper", j.upper);
    appendScalar(out, "velocity_limit", j.velocity_limit);
    appendScalar(out, "effort_limit", j.effort_limit);
    appendScalar(out, "armature", j.armature);
  }
  // a tree (docs/trees.md) adds its structure; a serial chain's form, and so its id, is as before
  bool chain = spec.root == RootJoint::Fixed && !spec.force_tree;
  for (std::size_t i = 0; i < spec.joints.size(); ++i) {
    const int p = spec.joints[i].parent;
    chain = chain && (p == kPreviousJoint || p == static_cast<int>(i) - 1);
  }
  if (!chain) {
    out += "tree\n";
    for (std::size_t i = 0; i < spec.joints.size(); ++i) {
      const int p = spec.joints[i].parent;
      out += "parent " + std::to_string(p == kPreviousJoint ? static_cast<int>(i) - 1 : p) + "\n";
    }
    out += spec.root == RootJoint::Floating ? "root floating\n"
           : spec.root == RootJoint::Planar ? "root planar\n"
                                            : "root fixed\n";
    appendName(out, "root_link", spec.root_link);
    appendScalar(out, "root_mass", spec.root_mass);
    appendMatrix(out, "root_com", spec.root_com.transpose());
    appendMatrix(out, "root_inertia", spec.root_inertia);
    if (spec.force_tree) out += "force_tree\n";
  }
  return out;
}

DHSpec parseDHJson(const std::string& text) {
  const json doc = parseStrict(text);
  if (!doc.is_object()) fail("", "expected a JSON object at the top level, got " + describe(doc));
  checkKeys(doc, "", {"format", "name", "description", "gravity", "angle_unit", "links"});
  const std::string format = string(require(doc, "", "format"), "format");
  if (format != kDHJsonFormat) {
    fail("format", "expected \"" + std::string(kDHJsonFormat) + "\", got \"" + format + "\"");
  }
  DHSpec dh;
  if (const json* x = find(doc, "name")) dh.name = string(*x, "name");
  if (const json* x = find(doc, "description")) string(*x, "description");
  dh.gravity = vector3(require(doc, "", "gravity"), "gravity");
  double angle = 1.0;
  if (const json* x = find(doc, "angle_unit")) {
    const std::string unit = string(*x, "angle_unit");
    if (unit == "deg") {
      angle = kDeg;
    } else if (unit != "rad") {
      fail("angle_unit", "expected \"deg\" or \"rad\", got \"" + unit + "\"");
    }
  }
  const json& links = require(doc, "", "links");
  if (!links.is_array()) fail("links", "expected an array of links, got " + describe(links));
  if (links.empty()) fail("links", "expected at least one link");
  for (std::size_t k = 0; k < links.size(); ++k) dh.links.push_back(parseLink(links[k], k, angle));
  return dh;
}

std::string toDHJson(const DHSpec& dh) {
  std::ostringstream out;
  out << "{\n";
  out << "  \"format\": " << str(kDHJsonFormat) << ",\n";
  out << "  \"name\": " << str(dh.name) << ",\n";
  out << "  \"gravity\": " << vec(dh.gravity, "gravity") << ",\n";
  out << "  \"angle_unit\": \"rad\",\n";
  out << "  \"links\": [";
  for (std::size_t k = 0; k < dh.links.size(); ++k) {
    const DHLink& l = dh.links[k];
    const std::string w = "links[" + std::to_string(k) + "]";
    out << (k == 0 ? "\n" : ",\n") << "    {\n      ";
    if (!l.joint.empty()) out << "\"joint\": " << str(l.joint) << ", ";
    if (!l.link.empty()) out << "\"link\": " << str(l.link) << ", ";
    out << "\"type\": " << (l.type == JointType::Revolute ? "\"revolute\"" : "\"prismatic\"") << ",\n";
    out << "      \"a\": " << jsonNumber(l.a, w + ".a") << ", \"b\": " << jsonNumber(l.b, w + ".b")
        << ", \"alpha\": " << jsonNumber(l.alpha, w + ".alpha")
        << ", \"theta\": " << jsonNumber(l.theta, w + ".theta") << ",\n";
    out << "      \"mass\": " << jsonNumber(l.mass, w + ".mass") << ", \"com\": " << vec(l.com, w + ".com")
        << ",\n";
    const Eigen::Matrix3d& I = l.inertia;
    if (I(0, 1) != I(1, 0) || I(0, 2) != I(2, 0) || I(1, 2) != I(2, 1)) {
      fail(w + ".inertia", "is not symmetric, cannot be written");
    }
    out << "      \"inertia\": ";
    if (I(0, 1) == 0.0 && I(0, 2) == 0.0 && I(1, 2) == 0.0) {
      out << "{\"principal\": " << vec(I.diagonal(), w + ".inertia") << "}";
    } else {
      const std::string iw = w + ".inertia";
      out << "{\"ixx\": " << jsonNumber(I(0, 0), iw) << ", \"iyy\": " << jsonNumber(I(1, 1), iw)
          << ", \"izz\": " << jsonNumber(I(2, 2), iw) << ", \"ixy\": " << jsonNumber(I(0, 1), iw)
          << ", \"ixz\": " << jsonNumber(I(0, 2), iw) << ", \"iyz\": " << jsonNumber(I(1, 2), iw) << "}";
    }
    std::string limits;
    const auto limit = [&](const char* key, double x, double absent) {
      if (x == absent) return;  // infinite: no limit
      limits += (limits.empty() ? "" : ", ") + std::string("\"") + key +
                "\": " + jsonNumber(x, w + ".limits." + key);
    };
    const double inf = std::numeric_limits<double>::infinity();
    limit("lower", l.lower, -inf);
    limit("upper", l.upper, inf);
    limit("velocity", l.velocity_limit, inf);
    limit("effort", l.effort_limit, inf);
    if (!limits.empty()) out << ",\n      \"limits\": {" << limits << "}";
    // -0.0 == 0.0, and the default is 0: a zero armature (of either sign) reads back equal
    if (l.armature != 0.0 || std::isnan(l.armature))
      out << ",\n      \"armature\": " << jsonNumber(l.armature, w + ".armature");
    out << "\n    }";
  }
  out << (dh.links.empty() ? "]\n" : "\n  ]\n");
  out << "}\n";
  return out.str();
}

DHSpec loadDHJsonFile(const std::string& path) {
  std::error_code ec;
  if (!std::filesystem::exists(path, ec)) throw ModelError(path + ": no such file");
  if (std::filesystem::is_directory(path, ec)) throw ModelError(path + ": is a directory, expected a file");
  std::ifstream in(path, std::ios::binary);
  if (!in) throw ModelError(path + ": cannot open: " + std::strerror(errno));
  std::ostringstream buffer;
  buffer << in.rdbuf();
  if (in.bad()) throw ModelError(path + ": read error");
  try {
    return parseDHJson(buffer.str());
  } catch (const ModelError& e) {
    throw ModelError(path + ": " + e.what());
  }
}

Model loadModelFile(const std::string& path, const UrdfOptions& urdf_options) {
  std::string ext = std::filesystem::path(path).extension().string();
  std::transform(ext.begin(), ext.end(), ext.begin(), [](unsigned char c) { return std::tolower(c); });
  if (ext == ".json") {
    const DHSpec dh = loadDHJsonFile(path);
    try {
      return buildModelFromDH(dh);
    } catch (const ModelError& e) {
      throw ModelError(path + ": " + e.what());
    }
  }
  if (ext == ".urdf") {
    std::error_code ec;
    if (!std::filesystem::exists(path, ec)) throw ModelError(path + ": no such file");
    try {
      return buildModelFromUrdfFile(path, urdf_options);
    } catch (const ModelError& e) {
      const std::string what = e.what();
      // avoid naming the file twice if the URDF builder already did
      throw ModelError(what.rfind(path, 0) == 0 ? what : path + ": " + what);
    }
  }
  throw ModelError(path + ": unknown model file extension '" + ext +
                   "', expected .json (denoc-dh/1) or .urdf");
}

}  // namespace denoc
