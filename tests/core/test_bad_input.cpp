// Bad input: model building must throw denoc::ModelError naming the joint and link at fault (and why); the
// algorithms must throw std::invalid_argument naming the function and the argument for a wrong length or a
// non-finite entry, and a rejected call must leave the workspace usable.
// Oracle: the documented messages (gmock matchers on each part they must name).
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <Eigen/Geometry>
#include <cmath>
#include <functional>
#include <limits>
#include <string>
#include <vector>

#include "denoc/denoc.hpp"

namespace denoc {
namespace {

using ::testing::AllOf;
using ::testing::HasSubstr;

constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();
constexpr double kInf = std::numeric_limits<double>::infinity();

/// The message of the exception of type E that f throws; a test failure (and a marker string that matches
/// nothing expected) if f throws nothing or something else.
template <typename E, typename F>
std::string messageOf(F&& f) {
  try {
    f();
  } catch (const E& e) {
    return e.what();
  } catch (const std::exception& e) {
    ADD_FAILURE() << "threw the wrong exception type: " << e.what();
    return "<wrong exception type>";
  }
  ADD_FAILURE() << "threw nothing";
  return "<no exception>";
}

/// A valid 3-joint chain: shoulder/upper_arm, elbow/forearm, wrist/hand.
ModelSpec validSpec() {
  ModelSpec spec;
  spec.name = "arm";
  const char* joints[3] = {"shoulder", "elbow", "wrist"};
  const char* links[3] = {"upper_arm", "forearm", "hand"};
  for (int i = 0; i < 3; ++i) {
    JointSpec j;
    j.name = joints[i];
    j.link = links[i];
    j.type = i == 1 ? JointType::Prismatic : JointType::Revolute;
    j.origin = Eigen::Vector3d(0.1, 0.0, 0.3);
    j.axis = Eigen::Vector3d(0.0, 1.0, 1.0);
    j.mass = 1.5;
    j.com = Eigen::Vector3d(0.05, 0.0, 0.1);
    j.inertia = Eigen::Vector3d(0.02, 0.03, 0.04).asDiagonal();
    j.lower = -1.0;
    j.upper = 1.0;
    spec.joints.push_back(j);
  }
  return spec;
}

struct JointCase {
  const char* what;
  std::function<void(JointSpec&)> mutate;
  const char* reason;  // expected in the message besides the joint and link names
};

TEST(BadModel, EachJointFieldIsValidatedAndTheJointIsNamed) {
  ASSERT_NO_THROW(buildModel(validSpec()));
  Eigen::Matrix3d asymmetric = Eigen::Vector3d(0.1, 0.1, 0.1).asDiagonal();
  asymmetric(0, 1) = 0.02;
  Eigen::Matrix3d scaled = 1.1 * Eigen::Matrix3d::Identity();
  Eigen::Matrix3d sheared = Eigen::Matrix3d::Identity();
  sheared(0, 1) = 0.2;
  Eigen::Matrix3d reflection = Eigen::Vector3d(1.0, 1.0, -1.0).asDiagonal();
  Eigen::Matrix3d indefinite = Eigen::Vector3d(0.1, 0.1, -0.05).asDiagonal();
  const std::vector<JointCase> cases = {
      {"negative mass", [](JointSpec& j) { j.mass = -2.5; }, "mass is -2.5"},
      {"NaN mass", [](JointSpec& j) { j.mass = kNaN; }, "expected a finite number >= 0"},
      {"infinite mass", [](JointSpec& j) { j.mass = kInf; }, "expected a finite number >= 0"},
      {"subnormal-small mass", [](JointSpec& j) { j.mass = 1e-12; }, "mass is 1e-12"},
      {"indefinite inertia", [&](JointSpec& j) { j.inertia = indefinite; }, "not positive semidefinite"},
      {"negative definite inertia", [](JointSpec& j) { j.inertia = -0.1 * Eigen::Matrix3d::Identity(); },
       "not positive semidefinite"},
      {"triangle inequality", [](JointSpec& j) { j.inertia = Eigen::Vector3d(0.1, 0.1, 0.3).asDiagonal(); },
       "triangle inequality"},
      {"triangle inequality, rotated",
       [](JointSpec& j) {
         const Eigen::Matrix3d R =
             Eigen::AngleAxisd(0.7, Eigen::Vector3d(1, 2, 3).normalized()).toRotationMatrix();
         j.inertia = R * Eigen::Vector3d(0.5, 0.1, 0.1).asDiagonal() * R.transpose();
       },
       "triangle inequality"},
      {"asymmetric inertia", [&](JointSpec& j) { j.inertia = asymmetric; }, "not symmetric"},
      {"NaN inertia", [](JointSpec& j) { j.inertia(2, 2) = kNaN; }, "inertia has a non-finite entry"},
      {"NaN com", [](JointSpec& j) { j.com.y() = kNaN; }, "mass center has a non-finite entry"},
      {"Inf com", [](JointSpec& j) { j.com.x() = -kInf; }, "mass center has a non-finite entry"},
      {"NaN origin", [](JointSpec& j) { j.origin.z() = kNaN; }, "joint origin has a non-finite entry"},
      {"Inf origin", [](JointSpec& j) { j.origin.x() = kInf; }, "joint origin has a non-finite entry"},
      {"NaN axis", [](JointSpec& j) { j.axis.x() = kNaN; }, "axis has a non-finite entry"},
      {"Inf axis", [](JointSpec& j) { j.axis.z() = kInf; }, "axis has a non-finite entry"},
      {"zero axis", [](JointSpec& j) { j.axis.setZero(); }, "axis is zero"},
      {"NaN rotation", [](JointSpec& j) { j.rotation(1, 2) = kNaN; },
       "joint rotation has a non-finite entry"},
      {"Inf rotation", [](JointSpec& j) { j.rotation(0, 0) = kInf; },
       "joint rotation has a non-finite entry"},
      {"scaled rotation", [&](JointSpec& j) { j.rotation = scaled; }, "not a proper rotation"},
      {"sheared rotation", [&](JointSpec& j) { j.rotation = sheared; }, "not a proper rotation"},
      {"reflection", [&](JointSpec& j) { j.rotation = reflection; }, "not a proper rotation"},
      {"inverted limits",
       [](JointSpec& j) {
         j.lower = 0.5;
         j.upper = -0.5;
       },
       "position limits"},
      {"NaN limit", [](JointSpec& j) { j.upper = kNaN; }, "position limits"},
      {"negative velocity limit", [](JointSpec& j) { j.velocity_limit = -1.0; }, "velocity limit"},
      {"zero effort limit", [](JointSpec& j) { j.effort_limit = 0.0; }, "effort limit"},
      {"negative armature", [](JointSpec& j) { j.armature = -0.1; }, "armature"},
  };
  {
    // a mass of 0 and a semi-definite inertia are accepted while the inertia matrix stays positive
    // definite (docs/trees.md); a last link that then moves nothing is refused by name
    ModelSpec spec = validSpec();
    spec.joints[1].mass = 0.0;
    spec.joints[1].inertia = Eigen::Vector3d(0.1, 0.1, 0.0).asDiagonal();
    EXPECT_FALSE(buildModel(spec).serial);
    spec.joints.back().mass = 0.0;
    spec.joints.back().inertia.setZero();
    EXPECT_THAT(messageOf<ModelError>([&] { buildModel(spec); }),
                AllOf(HasSubstr("joint '" + spec.joints.back().name + "'"),
                      HasSubstr("singular at the neutral configuration")));
  }
  for (const JointCase& c : cases) {
    ModelSpec spec = validSpec();
    c.mutate(spec.joints[1]);
    const std::string msg = messageOf<ModelError>([&] { buildModel(spec); });
    EXPECT_THAT(msg, AllOf(HasSubstr("joint 'elbow'"), HasSubstr("link 'forearm'"), HasSubstr(c.reason)))
        << c.what;
  }
  EXPECT_EQ(cases.size(), 27u);  // mass 0 and singular inertias are no longer refused one link at a time
}

TEST(BadModel, WholeChainProblems) {
  {
    ModelSpec spec = validSpec();
    spec.joints[2].name = "shoulder";
    EXPECT_THAT(messageOf<ModelError>([&] { buildModel(spec); }),
                AllOf(HasSubstr("joint 'shoulder'"), HasSubstr("link 'hand'"), HasSubstr("used twice")));
  }
  {
    ModelSpec spec = validSpec();
    spec.joints.clear();
    EXPECT_THAT(messageOf<ModelError>([&] { buildModel(spec); }),
                AllOf(HasSubstr("'arm'"), HasSubstr("no joints")));
  }
  for (const double bad : {kNaN, kInf, -kInf}) {
    ModelSpec spec = validSpec();
    spec.gravity.y() = bad;
    EXPECT_THAT(messageOf<ModelError>([&] { buildModel(spec); }),
                AllOf(HasSubstr("gravity"), HasSubstr("non-finite")));
  }
  {
    ModelSpec spec = validSpec();
    spec.tip_rotation(0, 0) = 2.0;
    EXPECT_THAT(messageOf<ModelError>([&] { buildModel(spec); }),
                AllOf(HasSubstr("tip frame"), HasSubstr("not a proper rotation")));
  }
  {
    ModelSpec spec = validSpec();
    spec.tip_origin.z() = kNaN;
    EXPECT_THAT(messageOf<ModelError>([&] { buildModel(spec); }),
                AllOf(HasSubstr("tip frame"), HasSubstr("origin"), HasSubstr("non-finite")));
  }
  {
    // unnamed joints get default names, and those are what the message uses
    ModelSpec spec = validSpec();
    for (JointSpec& j : spec.joints) j.name = j.link = "";
    spec.joints[2].mass = -1.0;
    EXPECT_THAT(messageOf<ModelError>([&] { buildModel(spec); }),
                AllOf(HasSubstr("joint 'joint3'"), HasSubstr("link 'link3'"), HasSubstr("mass")));
  }
}

DHSpec validDH() {
  DHSpec dh;
  dh.name = "dh_arm";
  for (int i = 0; i < 3; ++i) {
    DHLink l;
    l.joint = "j" + std::to_string(i + 1);
    l.link = "l" + std::to_string(i + 1);
    l.type = i == 2 ? JointType::Prismatic : JointType::Revolute;
    l.a = 0.2;
    l.b = 0.1;
    l.alpha = 0.5;
    l.theta = 0.3;
    l.mass = 1.0;
    l.com = Eigen::Vector3d(-0.1, 0.0, 0.0);
    l.inertia = Eigen::Vector3d(0.01, 0.02, 0.02).asDiagonal();
    dh.links.push_back(l);
  }
  return dh;
}

TEST(BadModel, DenavitHartenberg) {
  ASSERT_NO_THROW(buildModelFromDH(validDH()));
  struct DHCase {
    const char* what;
    std::function<void(DHLink&)> mutate;
    const char* reason;
  };
  const std::vector<DHCase> cases = {
      {"negative mass", [](DHLink& l) { l.mass = -1.0; }, "mass"},
      {"triangle inequality", [](DHLink& l) { l.inertia = Eigen::Vector3d(0.01, 0.01, 0.05).asDiagonal(); },
       "triangle inequality"},
      {"not positive definite",
       [](DHLink& l) { l.inertia = Eigen::Vector3d(0.01, 0.01, -0.01).asDiagonal(); },
       "not positive semidefinite"},
      {"NaN com", [](DHLink& l) { l.com.z() = kNaN; }, "DH com[2] is nan"},
      {"NaN a", [](DHLink& l) { l.a = kNaN; }, "DH a is nan"},
      {"NaN alpha", [](DHLink& l) { l.alpha = kNaN; }, "DH alpha is nan"},
      {"NaN b", [](DHLink& l) { l.b = kNaN; }, "DH b is nan"},
      {"Inf theta", [](DHLink& l) { l.theta = kInf; }, "DH theta is inf"},
      {"inverted limits",
       [](DHLink& l) {
         l.lower = 2.0;
         l.upper = 1.0;
       },
       "position limits"},
  };
  for (const DHCase& c : cases) {
    DHSpec dh = validDH();
    c.mutate(dh.links[1]);
    EXPECT_THAT(messageOf<ModelError>([&] { buildModelFromDH(dh); }),
                AllOf(HasSubstr("joint 'j2'"), HasSubstr("link 'l2'"), HasSubstr(c.reason)))
        << c.what;
  }
  {
    DHSpec dh = validDH();
    dh.links[2].joint = "j1";
    EXPECT_THAT(messageOf<ModelError>([&] { buildModelFromDH(dh); }),
                AllOf(HasSubstr("joint 'j1'"), HasSubstr("link 'l3'"), HasSubstr("used twice")));
  }
  {
    DHSpec dh = validDH();
    dh.links.clear();
    EXPECT_THAT(messageOf<ModelError>([&] { buildModelFromDH(dh); }), HasSubstr("no joints"));
  }
  {
    DHSpec dh = validDH();
    dh.gravity.x() = kNaN;
    EXPECT_THAT(messageOf<ModelError>([&] { buildModelFromDH(dh); }), HasSubstr("gravity"));
  }
}

// ---------------------------------------------------------------------------------------------------------
// ranges (model.hpp, docs/model-format.md "Ranges"): each field at its bound builds, beyond it is refused
// naming the field

struct RangeCase {
  const char* what;
  std::function<void(JointSpec&)> at;      // at the bound: builds
  std::function<void(JointSpec&)> beyond;  // beyond it: refused
  const char* reason;
};

TEST(ModelRanges, EachJointFieldAtItsBoundBuildsAndBeyondItIsRefused) {
  const double above_length = std::nextafter(kMaxLength, kInf);
  // an inertia whose entries are within kMaxInertia but whose largest principal moment is above it
  const Eigen::Matrix3d R45 = Eigen::AngleAxisd(0.25 * M_PI, Eigen::Vector3d::UnitZ()).toRotationMatrix();
  const Eigen::Matrix3d wide = R45 * Eigen::Vector3d(1.3e21, 0.7e21, 0.7e21).asDiagonal() * R45.transpose();
  const std::vector<RangeCase> cases = {
      {"origin", [](JointSpec& j) { j.origin.y() = -kMaxLength; },
       [&](JointSpec& j) { j.origin.y() = -above_length; }, "joint origin[1] is -1000000.0000000001"},
      {"mass center", [](JointSpec& j) { j.com.z() = kMaxLength; },
       [&](JointSpec& j) { j.com.z() = above_length; }, "mass center[2] is 1000000.0000000001"},
      {"lightest mass", [](JointSpec& j) { j.mass = kMinMass; }, [](JointSpec& j) { j.mass = 0.99e-9; },
       "mass is 9.9e-10, expected a number in [1e-09, 1e+09] kg"},
      {"heaviest mass", [](JointSpec& j) { j.mass = kMaxMass; }, [](JointSpec& j) { j.mass = 1.01e9; },
       "mass is 1.01e+09, expected a number in [1e-09, 1e+09] kg"},
      {"subnormal mass", [](JointSpec& j) { j.mass = kMinMass; }, [](JointSpec& j) { j.mass = 1e-310; },
       "mass is 1e-310"},
      {"least principal moment", [](JointSpec& j) { j.inertia = Eigen::Matrix3d::Identity() * kMinInertia; },
       [](JointSpec& j) { j.inertia = Eigen::Matrix3d::Identity() * 0.9e-18; },
       "least principal moment is below the limit of 1e-18 kg m^2"},
      {"largest inertia entry", [](JointSpec& j) { j.inertia = Eigen::Matrix3d::Identity() * kMaxInertia; },
       [](JointSpec& j) { j.inertia = Eigen::Matrix3d::Identity() * 1.1e21; },
       "inertia entry (1, 1) is 1.1e+21, expected a number in [-1e+21, 1e+21] kg m^2"},
      {"largest principal moment",
       [](JointSpec& j) { j.inertia = Eigen::Matrix3d::Identity() * kMaxInertia; },
       [&](JointSpec& j) { j.inertia = wide; }, "largest principal moment is above the limit of 1e+21"},
      {"subnormal inertia entry", [](JointSpec& j) { j.inertia(0, 1) = j.inertia(1, 0) = 0.0; },
       [](JointSpec& j) { j.inertia(0, 1) = j.inertia(1, 0) = 1e-310; },
       "inertia entry (1, 2) is 1e-310, expected 0 or a normal number"},
      {"armature", [](JointSpec& j) { j.armature = kMaxArmature; }, [](JointSpec& j) { j.armature = 1.1e21; },
       "armature is 1.1e+21, expected a number in [0, 1e+21]"},
      {"subnormal armature", [](JointSpec& j) { j.armature = 0.0; },
       [](JointSpec& j) { j.armature = 1e-310; }, "armature is 1e-310, expected 0 or a normal number"},
      {"no position limits", [](JointSpec& j) { j.lower = -kInf, j.upper = kInf; },
       [](JointSpec& j) { j.lower = kInf, j.upper = kInf; }, "position limits [inf, inf] are invalid"},
      {"upper limit -inf", [](JointSpec& j) { j.lower = -kInf, j.upper = 0.0; },
       [](JointSpec& j) { j.lower = -kInf, j.upper = -kInf; }, "position limits [-inf, -inf] are invalid"},
      {"joint name", [](JointSpec& j) { j.name = std::string(256, 'j'); },
       [](JointSpec& j) { j.name = std::string(257, 'j'); }, "joint name of 257 bytes"},
  };
  for (const RangeCase& c : cases) {
    ModelSpec spec = validSpec();
    c.at(spec.joints[1]);
    EXPECT_NO_THROW(buildModel(spec)) << c.what;
    spec = validSpec();
    c.beyond(spec.joints[1]);
    const std::string msg = messageOf<ModelError>([&] { buildModel(spec); });
    EXPECT_THAT(msg, HasSubstr(c.reason)) << c.what;
    if (std::string(c.what) != "joint name") {
      EXPECT_THAT(msg, AllOf(HasSubstr("joint 'elbow'"), HasSubstr("link 'forearm'"))) << c.what;
    }
  }
  // the whole chain's numbers
  ModelSpec spec = validSpec();
  spec.gravity.y() = kMaxGravity;
  spec.tip_origin.x() = kMaxLength;
  EXPECT_NO_THROW(buildModel(spec));
  spec.gravity.y() = 10001.0;
  EXPECT_THAT(messageOf<ModelError>([&] { buildModel(spec); }),
              HasSubstr("gravity[1] is 10001, expected a number in [-10000, 10000] m/s^2"));
  spec = validSpec();
  spec.tip_origin.x() = above_length;
  EXPECT_THAT(messageOf<ModelError>([&] { buildModel(spec); }),
              HasSubstr("tip frame: origin[0] is 1000000.0000000001"));
  spec = validSpec();
  spec.name = std::string(257, 'r');
  EXPECT_THAT(messageOf<ModelError>([&] { buildModel(spec); }), HasSubstr("model name of 257 bytes"));
  // an axis of huge entries is a direction like any other (its norm would overflow)
  spec = validSpec();
  spec.joints[0].axis = Eigen::Vector3d(1e300, 1e300, 0.0);
  EXPECT_TRUE(buildModel(spec).spec.joints[0].axis.isApprox(Eigen::Vector3d(1.0, 1.0, 0.0).normalized()));
}

TEST(ModelRanges, EachDenavitHartenbergFieldAtItsBoundBuildsAndBeyondItIsRefused) {
  const double above = std::nextafter(1e6, kInf);
  struct DHRange {
    const char* what;
    std::function<void(DHLink&, double)> set;
    const char* field;
  };
  const std::vector<DHRange> cases = {
      {"a", [](DHLink& l, double x) { l.a = x, l.com.setZero(); }, "DH a"},
      {"b", [](DHLink& l, double x) { l.b = x; }, "DH b"},
      {"alpha", [](DHLink& l, double x) { l.alpha = x; }, "DH alpha"},
      {"theta", [](DHLink& l, double x) { l.theta = x; }, "DH theta"},
      {"com", [](DHLink& l, double x) { l.com = Eigen::Vector3d(0.0, x, 0.0); }, "DH com[1]"},
  };
  for (const DHRange& c : cases) {
    for (const double sign : {1.0, -1.0}) {
      DHSpec dh = validDH();
      c.set(dh.links[1], sign * 1e6);
      EXPECT_NO_THROW(buildModelFromDH(dh)) << c.what << " at " << sign * 1e6;
      c.set(dh.links[1], sign * above);
      EXPECT_THAT(messageOf<ModelError>([&] { buildModelFromDH(dh); }),
                  AllOf(HasSubstr("joint 'j2' (link 'l2')"), HasSubstr(std::string(c.field) + " is "),
                        HasSubstr("expected a number in [-1e+06, 1e+06]")))
          << c.what;
      c.set(dh.links[1], sign * 1e-310);  // subnormal
      EXPECT_THAT(messageOf<ModelError>([&] { buildModelFromDH(dh); }),
                  AllOf(HasSubstr(std::string(c.field) + " is "), HasSubstr("0 or a normal number")))
          << c.what;
    }
  }
  // the lengths of the attack: a DH length and a mass center at 1e308
  DHSpec dh = validDH();
  dh.links[0].a = 1e308;
  EXPECT_THAT(messageOf<ModelError>([&] { buildModelFromDH(dh); }), HasSubstr("DH a is 1e+308"));
  dh = validDH();
  dh.links[2].com.x() = -1e308;
  EXPECT_THAT(messageOf<ModelError>([&] { buildModelFromDH(dh); }), HasSubstr("DH com[0] is -1e+308"));
  dh = validDH();
  dh.links[2].mass = 1e308;
  EXPECT_THAT(messageOf<ModelError>([&] { buildModelFromDH(dh); }), HasSubstr("mass is 1e+308"));
  dh = validDH();
  dh.links[2].mass = 5e-324;
  dh.links[2].inertia = Eigen::Matrix3d::Identity() * 5e-324;
  EXPECT_THAT(messageOf<ModelError>([&] { buildModelFromDH(dh); }), HasSubstr("mass is 5e-324"));
  // joint limits: lower = +inf and upper = -inf refused, infinite limits on the outside accepted
  dh = validDH();
  dh.links[1].lower = -kInf;
  dh.links[1].upper = kInf;
  EXPECT_NO_THROW(buildModelFromDH(dh));
  dh.links[1].lower = kInf;
  EXPECT_THAT(messageOf<ModelError>([&] { buildModelFromDH(dh); }),
              AllOf(HasSubstr("joint 'j2'"), HasSubstr("position limits [inf, inf] are invalid")));
  dh.links[1].lower = -kInf;
  dh.links[1].upper = -kInf;
  EXPECT_THAT(messageOf<ModelError>([&] { buildModelFromDH(dh); }),
              HasSubstr("position limits [-inf, -inf] are invalid"));
}

TEST(ModelRanges, UrdfFieldsAreNamedByLinkOrJoint) {
  const auto urdf = [](const std::string& origin, const std::string& mass, const std::string& inertial_origin,
                       const std::string& limit) {
    return "<robot name=\"r\"><link name=\"base\"/><link name=\"l1\"><inertial><origin xyz=\"" +
           inertial_origin + "\"/><mass value=\"" + mass +
           "\"/><inertia ixx=\"0.01\" ixy=\"0\" ixz=\"0\" iyy=\"0.01\" iyz=\"0\" "
           "izz=\"0.01\"/></inertial></link>"
           "<joint name=\"j1\" type=\"revolute\"><parent link=\"base\"/><child link=\"l1\"/><origin xyz=\"" +
           origin + "\"/><axis xyz=\"0 0 1\"/><limit " + limit +
           " effort=\"1\" velocity=\"1\"/></joint></robot>";
  };
  const std::string ok_limit = "lower=\"-1\" upper=\"1\"";
  EXPECT_NO_THROW(buildModelFromUrdf(urdf("0 0 1e6", "1", "0 0 0", ok_limit)));
  EXPECT_NO_THROW(buildModelFromUrdf(urdf("0 0 0", "1e9", "0 -1e6 0", ok_limit)));
  EXPECT_NO_THROW(buildModelFromUrdf(urdf("0 0 0", "1e-9", "0 0 0", ok_limit)));
  EXPECT_THAT(
      messageOf<ModelError>([&] { buildModelFromUrdf(urdf("0 0 1.000001e6", "1", "0 0 0", ok_limit)); }),
      AllOf(HasSubstr("joint 'j1'"), HasSubstr("origin xyz entry is 1000001")));
  EXPECT_THAT(messageOf<ModelError>([&] { buildModelFromUrdf(urdf("0 0 0", "1", "0 -2e6 0", ok_limit)); }),
              AllOf(HasSubstr("link 'l1'"), HasSubstr("inertial origin xyz entry is -2e+06")));
  EXPECT_THAT(messageOf<ModelError>([&] { buildModelFromUrdf(urdf("0 0 0", "2e9", "0 0 0", ok_limit)); }),
              AllOf(HasSubstr("link 'l1'"), HasSubstr("mass is 2e+09, expected a number in [1e-09, 1e+09]")));
  EXPECT_THAT(messageOf<ModelError>([&] { buildModelFromUrdf(urdf("0 0 0", "1e-12", "0 0 0", ok_limit)); }),
              AllOf(HasSubstr("link 'l1'"), HasSubstr("mass is 1e-12")));
  // limits that are not numbers urdfdom can read, or upside down: refused naming the joint
  EXPECT_THAT(messageOf<ModelError>(
                  [&] { buildModelFromUrdf(urdf("0 0 0", "1", "0 0 0", "lower=\"2\" upper=\"1\"")); }),
              AllOf(HasSubstr("joint 'j1'"), HasSubstr("lower limit 2 is above upper limit 1")));
  EXPECT_THROW(buildModelFromUrdf(urdf("0 0 0", "1", "0 0 0", "lower=\"inf\" upper=\"inf\"")), ModelError);
}

// ---------------------------------------------------------------------------------------------------------
// algorithms

struct Algorithm {
  std::string name;
  std::vector<std::string> args;
  std::function<void(const Model&, Data&, const std::vector<Eigen::VectorXd>&)> call;
};

std::vector<Algorithm> algorithms() {
  using V = std::vector<Eigen::VectorXd>;
  return {
      {"inverseDynamics",
       {"q", "qd", "qdd"},
       [](const Model& m, Data& d, const V& a) { inverseDynamics(m, d, a[0], a[1], a[2]); }},
      {"inverseDynamics",
       {"q", "qd", "qdd"},
       [](const Model& m, Data& d, const V& a) {
         inverseDynamics(m, d, a[0], a[1], a[2], Eigen::Matrix<double, 6, 1>::Ones());
       }},
      {"forwardDynamics",
       {"q", "qd", "tau"},
       [](const Model& m, Data& d, const V& a) { forwardDynamics(m, d, a[0], a[1], a[2]); }},
      {"forwardDynamicsCholesky",
       {"q", "qd", "tau"},
       [](const Model& m, Data& d, const V& a) { forwardDynamicsCholesky(m, d, a[0], a[1], a[2]); }},
      {"computeInertiaMatrix",
       {"q"},
       [](const Model& m, Data& d, const V& a) { computeInertiaMatrix(m, d, a[0]); }},
      {"computeUDU", {"q"}, [](const Model& m, Data& d, const V& a) { computeUDU(m, d, a[0]); }},
      {"computeFullFactor",
       {"q"},
       [](const Model& m, Data& d, const V& a) { computeFullFactor(m, d, a[0]); }},
      {"computeInverseInertia",
       {"q"},
       [](const Model& m, Data& d, const V& a) { computeInverseInertia(m, d, a[0]); }},
  };
}

TEST(BadArguments, WrongLengthsAreRejectedNamingTheArgument) {
  const Model model = buildModel(validSpec());
  Data data(model);
  const Eigen::VectorXd good = Eigen::VectorXd::Constant(3, 0.3);
  int cases = 0;
  for (const Algorithm& alg : algorithms()) {
    std::vector<Eigen::VectorXd> args(alg.args.size(), good);
    ASSERT_NO_THROW(alg.call(model, data, args)) << alg.name;
    for (std::size_t k = 0; k < alg.args.size(); ++k) {
      for (const int len : {0, 2, 4}) {
        std::vector<Eigen::VectorXd> bad = args;
        bad[k] = Eigen::VectorXd::Constant(len, 0.3);
        EXPECT_THAT(
            messageOf<std::invalid_argument>([&] { alg.call(model, data, bad); }),
            AllOf(HasSubstr(alg.name + ": "), HasSubstr(": " + alg.args[k] + " has " + std::to_string(len)),
                  HasSubstr("expected 3")))
            << alg.name << " " << alg.args[k] << " of length " << len;
        ++cases;
      }
    }
  }
  EXPECT_EQ(cases, 3 * (3 + 3 + 3 + 3 + 1 + 1 + 1 + 1));
}

TEST(BadArguments, NonFiniteEntriesAreRejectedNamingTheArgument) {
  const Model model = buildModel(validSpec());
  Data data(model);
  const Eigen::VectorXd good = Eigen::VectorXd::Constant(3, 0.3);
  int cases = 0;
  for (const Algorithm& alg : algorithms()) {
    std::vector<Eigen::VectorXd> args(alg.args.size(), good);
    for (std::size_t k = 0; k < alg.args.size(); ++k) {
      for (const double value : {kNaN, kInf, -kInf}) {
        for (const Eigen::Index at : {Eigen::Index(0), Eigen::Index(2)}) {
          std::vector<Eigen::VectorXd> bad = args;
          bad[k][at] = value;
          EXPECT_THAT(messageOf<std::invalid_argument>([&] { alg.call(model, data, bad); }),
                      AllOf(HasSubstr(alg.name + ": "),
                            HasSubstr(alg.args[k] + "[" + std::to_string(at) + "]"), HasSubstr("finite")))
              << alg.name << " " << alg.args[k] << "[" << at << "] = " << value;
          ++cases;
        }
      }
    }
  }
  EXPECT_EQ(cases, 6 * 16);
}

TEST(BadArguments, NonFiniteTipWrench) {
  const Model model = buildModel(validSpec());
  Data data(model);
  const Eigen::VectorXd x = Eigen::VectorXd::Constant(3, 0.3);
  for (int i = 0; i < 6; ++i) {
    Eigen::Matrix<double, 6, 1> w = Eigen::Matrix<double, 6, 1>::Zero();
    w[i] = i % 2 == 0 ? kNaN : kInf;
    EXPECT_THAT(messageOf<std::invalid_argument>([&] { inverseDynamics(model, data, x, x, x, w); }),
                AllOf(HasSubstr("inverseDynamics"), HasSubstr("tip_wrench")));
  }
}

TEST(BadArguments, RejectedCallsLeaveTheWorkspaceUsable) {
  const Model model = buildModel(validSpec());
  Data data(model);
  const Eigen::VectorXd q = Eigen::VectorXd::LinSpaced(3, -0.4, 0.7);
  const Eigen::VectorXd qd = Eigen::VectorXd::LinSpaced(3, 0.5, -0.2);
  const Eigen::VectorXd qdd = Eigen::VectorXd::LinSpaced(3, 1.0, 2.0);
  const Eigen::VectorXd tau = inverseDynamics(model, data, q, qd, qdd);
  const Eigen::MatrixXd M = computeInertiaMatrix(model, data, q);
  Eigen::VectorXd bad = q;
  bad[1] = kNaN;
  for (const Algorithm& alg : algorithms()) {
    std::vector<Eigen::VectorXd> args(alg.args.size(), bad);
    EXPECT_THROW(alg.call(model, data, args), std::invalid_argument) << alg.name;
  }
  EXPECT_EQ(inverseDynamics(model, data, q, qd, qdd), tau);
  EXPECT_EQ(computeInertiaMatrix(model, data, q), M);
  EXPECT_TRUE(forwardDynamics(model, data, q, qd, tau).isApprox(qdd, 1e-10));
}

TEST(BadArguments, AWorkspaceOfAnotherModelIsRefusedBeforeAnyRead) {
  // a Data made for a 4-joint model, used with a 3-joint one (and the other way round): every public
  // algorithm names the mismatch instead of reading or writing out of bounds
  const Model model = buildModel(validSpec());
  ModelSpec four = validSpec();
  four.joints.push_back(four.joints.back());
  four.joints.back().name = "flange";
  four.joints.back().link = "tool";
  const Model bigger = buildModel(four);
  Data wrong(bigger);
  const Eigen::VectorXd x = Eigen::VectorXd::Constant(3, 0.3);
  const auto expectRefused = [&](const std::string& name, const std::function<void()>& call) {
    EXPECT_THAT(messageOf<std::invalid_argument>(call),
                AllOf(HasSubstr(name + ": the Data was made for a model of 4 joints, this model has 3")))
        << name;
  };
  int cases = 0;
  for (const Algorithm& alg : algorithms()) {
    const std::vector<Eigen::VectorXd> args(alg.args.size(), x);
    expectRefused(alg.name, [&] { alg.call(model, wrong, args); });
    ++cases;
  }
  EXPECT_EQ(cases, 8);
  Eigen::Matrix3d R;
  Eigen::Vector3d p;
  const Eigen::Vector3d o = Eigen::Vector3d::Zero();
  expectRefused("computeLocalPlacements", [&] { computeLocalPlacements(model, wrong, x); });
  expectRefused("computeCommonPlacements", [&] { computeCommonPlacements(model, wrong); });
  expectRefused("forwardKinematics", [&] { forwardKinematics(model, wrong, x); });
  expectRefused("framePlacement", [&] { framePlacement(model, wrong, x, 3, R, p); });
  expectRefused("computeFrameJacobian", [&] { computeFrameJacobian(model, wrong, x, 3, o); });
  expectRefused("computeFrameJdotQd", [&] { computeFrameJdotQd(model, wrong, x, x, 3, o); });
  expectRefused("computeOperationalSpaceInertia",
                [&] { computeOperationalSpaceInertia(model, wrong, x, 3, o); });
  expectRefused("computeInverseDynamicsDerivatives",
                [&] { computeInverseDynamicsDerivatives(model, wrong, x, x, x); });
  expectRefused("computeForwardDynamicsDerivatives",
                [&] { computeForwardDynamicsDerivatives(model, wrong, x, x, x); });
  RolloutOptions ro;
  ro.steps = 1;
  std::vector<double> x0(6, 0.1), u(3, 0.0), states(12);
  RolloutWorkspace wrong_rollout(bigger);
  expectRefused("rollout", [&] { rollout(model, wrong_rollout, ro, x0.data(), u.data(), states.data()); });
  // and a smaller workspace for a larger model
  Data small(model);
  const Eigen::VectorXd y = Eigen::VectorXd::Constant(4, 0.3);
  EXPECT_THAT(messageOf<std::invalid_argument>([&] { inverseDynamics(bigger, small, y, y, y); }),
              HasSubstr("inverseDynamics: the Data was made for a model of 3 joints, this model has 4"));
}

}  // namespace
}  // namespace denoc
