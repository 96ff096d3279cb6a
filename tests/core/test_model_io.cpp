// Model files: the "denoc-dh/1" JSON format. The example files must give exactly the built-in DH models,
// writing then reading must give back exactly the same spec, and every malformed file must be rejected
// with a ModelError naming the field at fault. The canonical form of a model (the text whose SHA-256 is the
// service's model id): every number read back with strtod equals the spec's bit for bit, -0 is 0, and the
// display name is not part of it.
// Oracle: the built-in DH models (stanfordArmDH() and the others), docs/design.md's table, and strtod.
#include <gtest/gtest.h>

#include <bit>
#include <cmath>
#include <cstdint>
#include <filesystem>
#include <fstream>
#include <functional>
#include <limits>
#include <nlohmann/json.hpp>
#include <numbers>
#include <random>
#include <sstream>

#include "denoc/denoc.hpp"
#include "denoc/model_io.hpp"
#include "support/read_file.hpp"

namespace denoc {
namespace {

using nlohmann::json;

const std::string kModels = std::string(DENOC_SOURCE_DIR) + "/examples/models/";

using testing::readFile;

// exact equality, -0.0 == 0.0 (the DH builder and the model treat them alike)
void expectSameSpec(const DHSpec& a, const DHSpec& b) {
  EXPECT_EQ(a.name, b.name);
  EXPECT_EQ(a.gravity, b.gravity);
  ASSERT_EQ(a.links.size(), b.links.size());
  for (std::size_t k = 0; k < a.links.size(); ++k) {
    SCOPED_TRACE("link " + std::to_string(k));
    const DHLink& x = a.links[k];
    const DHLink& y = b.links[k];
    EXPECT_EQ(x.joint, y.joint);
    EXPECT_EQ(x.link, y.link);
    EXPECT_EQ(x.type, y.type);
    EXPECT_EQ(x.a, y.a);
    EXPECT_EQ(x.b, y.b);
    EXPECT_EQ(x.alpha, y.alpha);
    EXPECT_EQ(x.theta, y.theta);
    EXPECT_EQ(x.mass, y.mass);
    EXPECT_EQ(x.com, y.com);
    EXPECT_EQ(x.inertia, y.inertia);
    EXPECT_EQ(x.lower, y.lower);
    EXPECT_EQ(x.upper, y.upper);
    EXPECT_EQ(x.velocity_limit, y.velocity_limit);
    EXPECT_EQ(x.effort_limit, y.effort_limit);
    EXPECT_EQ(x.armature, y.armature);
  }
}

// bit-for-bit equality of doubles (also tells -0.0 from 0.0)
bool same(double a, double b) { return std::bit_cast<std::uint64_t>(a) == std::bit_cast<std::uint64_t>(b); }
template <typename M>
bool sameAll(const M& a, const M& b) {
  for (Eigen::Index i = 0; i < a.size(); ++i) {
    if (!same(a.data()[i], b.data()[i])) return false;
  }
  return true;
}

TEST(ModelIo, StanfordArmFileIsTheBuiltInModel) {
  const DHSpec file = parseDHJson(readFile(kModels + "stanford_arm.json"));
  expectSameSpec(file, stanfordArmDH());
  // spot checks against docs/design.md's table, independent of stanfordArmDH(): angles in degrees in the file
  ASSERT_EQ(file.links.size(), 6u);
  EXPECT_EQ(file.links[0].alpha, -90.0 * std::numbers::pi / 180.0);
  EXPECT_EQ(file.links[2].type, JointType::Prismatic);
  EXPECT_EQ(file.links[0].com, Eigen::Vector3d(0, 0.1, 0));   // -r, r = (0, -0.1, 0)
  EXPECT_EQ(file.links[3].com, Eigen::Vector3d(0, -0.1, 0));  // -r, r = (0, 0.1, 0)
  EXPECT_EQ(file.links[3].b, 0.6);
  EXPECT_EQ(file.links[5].inertia.diagonal(), Eigen::Vector3d(0.003, 0.001, 0.002));
  EXPECT_EQ(file.gravity, Eigen::Vector3d(0, 0, -9.81));

  // the built models are the same too
  const Model a = loadModelFile(kModels + "stanford_arm.json");
  const Model b = buildModelFromDH(stanfordArmDH());
  ASSERT_EQ(a.n, b.n);
  for (int i = 0; i < a.n; ++i) {
    EXPECT_EQ(a.E[static_cast<std::size_t>(i)], b.E[static_cast<std::size_t>(i)]);
    EXPECT_EQ(a.s[static_cast<std::size_t>(i)], b.s[static_cast<std::size_t>(i)]);
    EXPECT_EQ(a.com[static_cast<std::size_t>(i)], b.com[static_cast<std::size_t>(i)]);
    EXPECT_EQ(a.inertia[static_cast<std::size_t>(i)], b.inertia[static_cast<std::size_t>(i)]);
    EXPECT_EQ(a.mass[static_cast<std::size_t>(i)], b.mass[static_cast<std::size_t>(i)]);
  }
  EXPECT_EQ(a.gravity, b.gravity);
}

TEST(ModelIo, PlanarArmFileIsTheBuiltInModel) {
  const DHSpec file = parseDHJson(readFile(kModels + "planar_3r.json"));
  expectSameSpec(file, planarArmDH());
  // the documented dimensions, computed here: uniform 0.04 m square bars
  const double len[3] = {0.3, 0.25, 0.2};
  const double m[3] = {1.0, 0.8, 0.5};
  for (int i = 0; i < 3; ++i) {
    const DHLink& l = file.links[static_cast<std::size_t>(i)];
    EXPECT_EQ(l.a, len[i]);
    EXPECT_EQ(l.mass, m[i]);
    EXPECT_NEAR(l.inertia(2, 2), m[i] * (len[i] * len[i] + 0.0016) / 12.0, 1e-18);
    EXPECT_NEAR(l.inertia(0, 0), m[i] * 0.0032 / 12.0, 1e-18);
  }
  EXPECT_EQ(file.gravity, Eigen::Vector3d(0, -9.81, 0));
  EXPECT_NO_THROW(loadModelFile(kModels + "planar_3r.json"));
}

TEST(ModelIo, RoundTripOfTheBuiltInModels) {
  for (const DHSpec& dh : {stanfordArmDH(), planarArmDH()}) {
    const std::string text = toDHJson(dh);
    const DHSpec back = parseDHJson(text);
    expectSameSpec(back, dh);
    EXPECT_EQ(toDHJson(back), text);
  }
}

TEST(ModelIo, RoundTripIsBitExactOnRandomSpecs) {
  std::mt19937_64 rng(12345);
  std::uniform_real_distribution<double> u(-1.0, 1.0);
  std::uniform_int_distribution<int> e(-30, 30);
  // doubles of every magnitude and full precision
  const auto r = [&] { return std::ldexp(u(rng), e(rng)); };
  const double inf = std::numeric_limits<double>::infinity();
  for (int trial = 0; trial < 200; ++trial) {
    DHSpec dh;
    dh.name = trial % 3 == 0 ? "" : "robot \"" + std::to_string(trial) + "\" \xc3\xa9\\/\t";
    dh.gravity = Eigen::Vector3d(r(), r(), -0.0);
    const int n = 1 + trial % 7;
    for (int k = 0; k < n; ++k) {
      DHLink l;
      if ((trial + k) % 2 == 0) {
        l.joint = "j" + std::to_string(k);
        l.link = "l" + std::to_string(k);
      }
      l.type = (trial + k) % 3 == 0 ? JointType::Prismatic : JointType::Revolute;
      l.a = r();
      l.b = r();
      l.alpha = r();
      l.theta = r();
      l.mass = std::abs(r());
      l.com = Eigen::Vector3d(r(), r(), r());
      if (k % 2 == 0) {
        l.inertia = Eigen::Vector3d(r(), r(), r()).asDiagonal();
      } else {
        Eigen::Matrix3d A = Eigen::Matrix3d::NullaryExpr([&] { return r(); });
        l.inertia = A + A.transpose();
      }
      l.lower = k % 3 == 0 ? -inf : -std::abs(r());
      l.upper = k % 4 == 0 ? inf : std::abs(r());
      l.velocity_limit = k % 2 == 0 ? inf : std::abs(r());
      l.effort_limit = k % 3 == 1 ? inf : std::abs(r());
      l.armature = k % 2 == 0 ? 0.0 : std::abs(r());
      dh.links.push_back(l);
    }
    const DHSpec back = parseDHJson(toDHJson(dh));
    ASSERT_EQ(back.name, dh.name);
    ASSERT_TRUE(sameAll(back.gravity, dh.gravity));
    ASSERT_EQ(back.links.size(), dh.links.size());
    for (std::size_t k = 0; k < dh.links.size(); ++k) {
      const DHLink& x = dh.links[k];
      const DHLink& y = back.links[k];
      SCOPED_TRACE("trial " + std::to_string(trial) + " link " + std::to_string(k));
      EXPECT_EQ(x.joint, y.joint);
      EXPECT_EQ(x.link, y.link);
      EXPECT_EQ(x.type, y.type);
      EXPECT_TRUE(same(x.a, y.a) && same(x.b, y.b) && same(x.alpha, y.alpha) && same(x.theta, y.theta));
      EXPECT_TRUE(same(x.mass, y.mass));
      EXPECT_TRUE(sameAll(x.com, y.com));
      EXPECT_TRUE(sameAll(x.inertia, y.inertia));
      EXPECT_TRUE(same(x.lower, y.lower) && same(x.upper, y.upper));
      EXPECT_TRUE(same(x.velocity_limit, y.velocity_limit) && same(x.effort_limit, y.effort_limit));
      EXPECT_TRUE(same(x.armature, y.armature));
    }
  }
}

TEST(ModelIo, DegreesFullInertiaAndLimits) {
  const std::string text = R"({
    "format": "denoc-dh/1", "name": "two", "gravity": [0, 0, -9.81], "angle_unit": "deg",
    "links": [
      {"joint": "shoulder", "link": "upper", "type": "revolute", "a": 0.5, "b": 0.1, "alpha": 30, "theta": -45,
       "mass": 2, "com": [0.1, 0.2, 0.3],
       "inertia": {"ixx": 0.3, "iyy": 0.4, "izz": 0.5, "ixy": -0.01, "ixz": 0.02, "iyz": -0.03},
       "limits": {"lower": -90, "upper": 120, "velocity": 180, "effort": 50}, "armature": 0.25},
      {"type": "prismatic", "a": 0, "b": 0.2, "alpha": 0, "theta": 90,
       "mass": 1, "com": [0, 0, 0], "inertia": {"principal": [0.1, 0.1, 0.1]},
       "limits": {"lower": -0.1, "upper": 0.4}}
    ]})";
  const DHSpec dh = parseDHJson(text);
  const double deg = std::numbers::pi / 180.0;
  ASSERT_EQ(dh.links.size(), 2u);
  const DHLink& l = dh.links[0];
  EXPECT_EQ(l.joint, "shoulder");
  EXPECT_EQ(l.link, "upper");
  EXPECT_EQ(l.alpha, 30 * deg);
  EXPECT_EQ(l.theta, -45 * deg);
  EXPECT_EQ(l.b, 0.1);  // lengths are not scaled
  Eigen::Matrix3d I;
  I << 0.3, -0.01, 0.02, -0.01, 0.4, -0.03, 0.02, -0.03, 0.5;
  EXPECT_EQ(l.inertia, I);
  EXPECT_EQ(l.lower, -90 * deg);
  EXPECT_EQ(l.upper, 120 * deg);
  EXPECT_EQ(l.velocity_limit, 180 * deg);
  EXPECT_EQ(l.effort_limit, 50.0);  // not an angle
  EXPECT_EQ(l.armature, 0.25);
  const DHLink& p = dh.links[1];
  EXPECT_EQ(p.type, JointType::Prismatic);
  EXPECT_EQ(p.theta, 90 * deg);
  EXPECT_EQ(p.lower, -0.1);  // a prismatic joint's limits are lengths
  EXPECT_EQ(p.upper, 0.4);
  EXPECT_EQ(p.velocity_limit, std::numeric_limits<double>::infinity());
  EXPECT_TRUE(p.joint.empty());
  EXPECT_NO_THROW(buildModelFromDH(dh));
}

// A valid document to break one field at a time.
json validDoc() {
  return json::parse(R"({
    "format": "denoc-dh/1", "name": "arm", "gravity": [0, 0, -9.81],
    "links": [
      {"type": "revolute", "a": 0, "b": 0.2, "alpha": 0, "theta": 0, "mass": 1, "com": [0, 0, 0],
       "inertia": {"principal": [0.1, 0.1, 0.1]}},
      {"type": "revolute", "a": 0.3, "b": 0, "alpha": 0, "theta": 0, "mass": 1, "com": [0, 0, 0],
       "inertia": {"principal": [0.1, 0.1, 0.1]}, "limits": {"lower": -1, "upper": 1}},
      {"type": "prismatic", "a": 0, "b": 0, "alpha": 0, "theta": 0, "mass": 1, "com": [0, 0, 0],
       "inertia": {"ixx": 0.1, "iyy": 0.1, "izz": 0.1, "ixy": 0, "ixz": 0, "iyz": 0}}
    ]})");
}

std::string edit(const std::function<void(json&)>& f) {
  json doc = validDoc();
  f(doc);
  return doc.dump();
}

struct BadCase {
  const char* what;
  std::string text;
  std::vector<std::string> message;  // substrings the error message must contain
};

TEST(ModelIo, ValidDocParses) { EXPECT_EQ(parseDHJson(validDoc().dump()).links.size(), 3u); }

TEST(ModelIo, BadFilesAreRejectedNamingTheField) {
  const std::vector<BadCase> cases = {
      {"truncated JSON", "{\"format\": \"denoc-dh/1\",\n  \"links\": [", {"invalid JSON", "line 2"}},
      {"not JSON", "format = denoc", {"invalid JSON", "line 1, column 2"}},
      {"trailing garbage", validDoc().dump() + " x", {"invalid JSON"}},
      {"array at top level", "[1, 2]", {"top level", "an array"}},
      {"missing format", edit([](json& d) { d.erase("format"); }), {"format: missing"}},
      {"wrong format",
       edit([](json& d) { d["format"] = "denoc-dh/2"; }),
       {"format: expected \"denoc-dh/1\"", "denoc-dh/2"}},
      {"unknown top-level field", edit([](json& d) { d["gravty"] = 1; }), {"gravty: unknown field"}},
      {"name not a string", edit([](json& d) { d["name"] = 3; }), {"name: expected a string, got a number"}},
      {"missing gravity", edit([](json& d) { d.erase("gravity"); }), {"gravity: missing"}},
      {"gravity of 2 entries",
       edit([](json& d) {
         d["gravity"] = {0, -9.81};
       }),
       {"gravity: expected an array of 3 numbers", "2 entries"}},
      {"gravity entry a string",
       edit([](json& d) { d["gravity"][1] = "g"; }),
       {"gravity[1]: expected a number, got a string"}},
      {"bad angle unit",
       edit([](json& d) { d["angle_unit"] = "grad"; }),
       {"angle_unit: expected \"deg\" or \"rad\"", "grad"}},
      {"links not an array",
       edit([](json& d) { d["links"] = json::object(); }),
       {"links: expected an array", "an object"}},
      {"no links", edit([](json& d) { d["links"] = json::array(); }), {"links: expected at least one link"}},
      {"link not an object",
       edit([](json& d) { d["links"][1] = 5; }),
       {"links[1]: expected an object, got a number"}},
      {"mass a string",
       edit([](json& d) { d["links"][2]["mass"] = "heavy"; }),
       {"links[2] ('link3').mass: expected a number, got a string"}},
      {"mass missing",
       edit([](json& d) { d["links"][0].erase("mass"); }),
       {"links[0] ('link1').mass: missing"}},
      {"misspelt field",
       edit([](json& d) { d["links"][0]["mas"] = 1; }),
       {"links[0] ('link1').mas: unknown field"}},
      {"named link, a null",
       edit([](json& d) {
         d["links"][1]["link"] = "forearm";
         d["links"][1]["a"] = nullptr;
       }),
       {"links[1] ('forearm').a: expected a number, got null"}},
      {"alpha a boolean",
       edit([](json& d) { d["links"][0]["alpha"] = true; }),
       {"links[0] ('link1').alpha: expected a number, got a boolean"}},
      {"theta missing",
       edit([](json& d) { d["links"][1].erase("theta"); }),
       {"links[1] ('link2').theta: missing"}},
      {"joint type",
       edit([](json& d) { d["links"][0]["type"] = "spherical"; }),
       {"links[0] ('link1').type: expected \"revolute\" or \"prismatic\"", "spherical"}},
      {"joint name not a string",
       edit([](json& d) { d["links"][0]["joint"] = 1; }),
       {"links[0] ('link1').joint: expected a string"}},
      {"com of 4 entries",
       edit([](json& d) {
         d["links"][1]["com"] = {0, 0, 0, 0};
       }),
       {"links[1] ('link2').com: expected an array of 3 numbers"}},
      {"com entry a string",
       edit([](json& d) { d["links"][1]["com"][2] = "0"; }),
       {"links[1] ('link2').com[2]: expected a number"}},
      {"inertia both forms",
       edit([](json& d) { d["links"][0]["inertia"]["ixx"] = 0.1; }),
       {"links[0] ('link1').inertia: give either \"principal\""}},
      {"inertia entry missing",
       edit([](json& d) { d["links"][2]["inertia"].erase("iyz"); }),
       {"links[2] ('link3').inertia.iyz: missing"}},
      {"inertia unknown entry",
       edit([](json& d) { d["links"][2]["inertia"]["iyx"] = 0; }),
       {"links[2] ('link3').inertia.iyx: unknown field"}},
      {"inertia an array",
       edit([](json& d) {
         d["links"][0]["inertia"] = {1, 2, 3};
       }),
       {"links[0] ('link1').inertia: expected an object, got an array"}},
      {"principal of 2",
       edit([](json& d) {
         d["links"][0]["inertia"]["principal"] = {1, 2};
       }),
       {"links[0] ('link1').inertia.principal: expected an array of 3 numbers"}},
      {"limits unknown key",
       edit([](json& d) { d["links"][1]["limits"]["min"] = -1; }),
       {"links[1] ('link2').limits.min: unknown field"}},
      {"limit a string",
       edit([](json& d) { d["links"][1]["limits"]["upper"] = "1"; }),
       {"links[1] ('link2').limits.upper: expected a number, got a string"}},
      {"armature null",
       edit([](json& d) { d["links"][2]["armature"] = nullptr; }),
       {"links[2] ('link3').armature: expected a number, got null"}},
      {"number too large",
       "{\"format\": \"denoc-dh/1\", \"gravity\": [0, 0, -1e999], \"links\": []}",
       {"invalid JSON", "number overflow", "-1e999"}},
      {"repeated field",
       R"({"format": "denoc-dh/1", "format": "denoc-dh/1", "gravity": [0,0,0], "links": []})",
       {"format: field appears twice"}},
  };
  ASSERT_GE(cases.size(), 12u);
  for (const BadCase& c : cases) {
    SCOPED_TRACE(c.what);
    try {
      parseDHJson(c.text);
      ADD_FAILURE() << "accepted: " << c.text;
    } catch (const ModelError& e) {
      for (const std::string& m : c.message) {
        EXPECT_NE(std::string(e.what()).find(m), std::string::npos)
            << "message: " << e.what() << "\nexpected: " << m;
      }
    } catch (const std::exception& e) {
      ADD_FAILURE() << "not a ModelError: " << e.what();
    }
  }
}

TEST(ModelIo, WritingRejectsWhatTheFormatCannotHold) {
  DHSpec dh = planarArmDH();
  dh.links[1].mass = std::numeric_limits<double>::quiet_NaN();
  EXPECT_THROW(toDHJson(dh), ModelError);
  dh = planarArmDH();
  dh.links[0].inertia(0, 1) = 0.001;  // not symmetric
  EXPECT_THROW(toDHJson(dh), ModelError);
  dh = planarArmDH();
  dh.links[2].link = "bad \xff name";  // not UTF-8: JSON cannot hold it
  EXPECT_THROW(toDHJson(dh), ModelError);
}

class TempDir {
 public:
  TempDir() {
    path_ = std::filesystem::temp_directory_path() /
            ("denoc_model_io_" + std::to_string(std::random_device{}()) + "_" +
             ::testing::UnitTest::GetInstance()->current_test_info()->name());
    std::filesystem::create_directories(path_);
  }
  ~TempDir() { std::filesystem::remove_all(path_); }
  std::string write(const std::string& name, const std::string& text) const {
    const std::string p = (path_ / name).string();
    std::ofstream(p) << text;
    return p;
  }
  std::string path(const std::string& name) const { return (path_ / name).string(); }

 private:
  std::filesystem::path path_;
};

std::string loadError(const std::string& path) {
  try {
    loadModelFile(path);
  } catch (const ModelError& e) {
    return e.what();
  }
  return "(no error)";
}

TEST(ModelIo, LoadModelFileErrorsNameTheFile) {
  TempDir dir;
  const std::string missing = dir.path("missing.json");
  EXPECT_NE(loadError(missing).find(missing + ": no such file"), std::string::npos) << loadError(missing);

  const std::string txt = dir.write("arm.txt", validDoc().dump());
  EXPECT_NE(loadError(txt).find("unknown model file extension '.txt'"), std::string::npos) << loadError(txt);

  const std::string upper = dir.write("ARM.JSON", validDoc().dump());  // extension case does not matter
  EXPECT_EQ(loadModelFile(upper).n, 3);

  const std::string bad = dir.write("bad.json", edit([](json& d) { d["links"][2]["mass"] = "x"; }));
  EXPECT_NE(loadError(bad).find(bad + ": links[2] ('link3').mass"), std::string::npos) << loadError(bad);

  // well-formed but not physical: the model builder's error, prefixed with the file
  const std::string massless = dir.write("massless.json", edit([](json& d) { d["links"][1]["mass"] = -1; }));
  const std::string msg = loadError(massless);
  EXPECT_EQ(msg.rfind(massless + ": ", 0), 0u) << msg;
  EXPECT_NE(msg.find("link2"), std::string::npos) << msg;
  EXPECT_NE(msg.find("mass"), std::string::npos) << msg;

  std::filesystem::create_directories(dir.path("folder.json"));
  EXPECT_NE(loadError(dir.path("folder.json")).find("is a directory"), std::string::npos);
}

TEST(ModelIo, LoadModelFileDispatchesUrdf) {
  const std::string ur5 = std::string(DENOC_MODELS_DIR) + "/ur5.urdf";
  const Model a = loadModelFile(ur5);
  const Model b = buildModelFromUrdfFile(ur5);
  ASSERT_EQ(a.n, 6);
  ASSERT_EQ(a.n, b.n);
  for (std::size_t i = 0; i < 6; ++i) {
    EXPECT_EQ(a.spec.joints[i].name, b.spec.joints[i].name);
    EXPECT_EQ(a.mass[i], b.mass[i]);
    EXPECT_EQ(a.s[i], b.s[i]);
  }
  // options reach the URDF builder
  UrdfOptions options;
  options.tip_link = "no_such_link";
  EXPECT_THROW(loadModelFile(ur5, options), ModelError);

  TempDir dir;
  const std::string broken = dir.write("broken.urdf", "<robot name='r'><link name='a'/>");
  const std::string msg = loadError(broken);
  EXPECT_EQ(msg.rfind(broken + ": ", 0), 0u) << msg;
  EXPECT_NE(loadError(dir.path("none.URDF")).find("no such file"), std::string::npos);
}

TEST(CanonicalForm, NumbersReadBackExactlyAndTheDisplayNameIsNotPartOfIt) {
  const Model model = buildModelFromDH(stanfordArmDH());
  const ModelSpec& spec = model.spec;
  const std::string form = canonicalForm(spec);
  // the lines, each "key values..." (names "key <len>:<text>")
  std::vector<std::string> lines;
  std::istringstream in(form);
  for (std::string line; std::getline(in, line);) lines.push_back(line);
  ASSERT_FALSE(lines.empty());
  EXPECT_EQ(lines[0], kCanonicalFormat);
  const auto numbers = [](const std::string& line, const std::string& key) {
    EXPECT_EQ(line.rfind(key + " ", 0), 0u) << line;
    std::vector<double> v;
    std::istringstream words(line.substr(key.size()));
    for (std::string w; words >> w;) v.push_back(std::strtod(w.c_str(), nullptr));
    return v;
  };
  const auto same = [](const std::vector<double>& got, std::initializer_list<double> want,
                       const std::string& what) {
    ASSERT_EQ(got.size(), want.size()) << what;
    std::size_t i = 0;
    for (double w : want) {
      EXPECT_EQ(std::bit_cast<std::uint64_t>(got[i]), std::bit_cast<std::uint64_t>(w == 0.0 ? 0.0 : w))
          << what << "[" << i << "]";
      ++i;
    }
  };
  same(numbers(lines[1], "gravity"), {spec.gravity.x(), spec.gravity.y(), spec.gravity.z()}, "gravity");
  EXPECT_EQ(lines[4], "joints " + std::to_string(spec.joints.size()));
  // each joint: 14 lines from "joint" to "armature"
  ASSERT_EQ(lines.size(), 5 + 14 * spec.joints.size());
  for (std::size_t i = 0; i < spec.joints.size(); ++i) {
    const JointSpec& j = spec.joints[i];
    const std::size_t l = 5 + 14 * i;
    EXPECT_EQ(lines[l], "joint " + std::to_string(j.name.size()) + ":" + j.name);
    EXPECT_EQ(lines[l + 1], "link " + std::to_string(j.link.size()) + ":" + j.link);
    const Eigen::Matrix3d& R = j.rotation;
    same(numbers(lines[l + 3], "rotation"),
         {R(0, 0), R(0, 1), R(0, 2), R(1, 0), R(1, 1), R(1, 2), R(2, 0), R(2, 1), R(2, 2)}, "rotation");
    same(numbers(lines[l + 6], "mass"), {j.mass}, "mass");
    same(numbers(lines[l + 8], "inertia"),
         {j.inertia(0, 0), j.inertia(0, 1), j.inertia(0, 2), j.inertia(1, 0), j.inertia(1, 1),
          j.inertia(1, 2), j.inertia(2, 0), j.inertia(2, 1), j.inertia(2, 2)},
         "inertia");
    same(numbers(lines[l + 13], "armature"), {j.armature}, "armature");
  }
  // the display name is not part of it; -0 is 0; one ulp of one mass is another form
  ModelSpec renamed = spec;
  renamed.name = "another display name";
  EXPECT_EQ(canonicalForm(renamed), form);
  ModelSpec negative_zero = spec;
  negative_zero.gravity.x() = -0.0;
  ModelSpec positive_zero = spec;
  positive_zero.gravity.x() = 0.0;
  EXPECT_EQ(canonicalForm(negative_zero), canonicalForm(positive_zero));
  ModelSpec heavier = spec;
  heavier.joints[2].mass = std::nextafter(heavier.joints[2].mass, 1e9);
  EXPECT_NE(canonicalForm(heavier), form);
}

}  // namespace
}  // namespace denoc
