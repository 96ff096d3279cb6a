// Bounded, linear, cancellable model parsing (core/src/xml_scan.cpp, core/src/urdf.cpp; docs/urdf.md,
// "Limits"):
//  - every limit of the pre-scan at its value accepted and one beyond refused, naming the limit and the line;
//  - deep documents (the 50,000-deep registration that overflowed the stack, and 1,000,000 levels) refused
//    on a thread with a 256 KiB stack, which a recursive parser overflows at a few thousand levels;
//  - DTDs, entities, processing instructions and character references refused;
//  - work linear in the input: the import's own steps (counted through the stop condition, which every loop
//    of the import polls every 256 steps), and the heap held at once and allocated in all by everything
//    (a counting operator new in this binary, Expat's own heap counted by the scan), at sizes n, 2n, 4n;
//  - a long registration stopped through the stop condition, in each phase;
//  - names bounded in URDF and DH models.
// Oracle: the documented limits, the stop condition's step count and a counting operator new.
#include <gtest/gtest.h>
#include <pthread.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdlib>
#include <exception>
#include <functional>
#include <new>
#include <sstream>
#include <string>
#include <vector>

#include "denoc/dh.hpp"
#include "denoc/stop.hpp"
#include "denoc/urdf.hpp"
#include "denoc/xml_scan.hpp"

// ---- a counting heap for this binary: bytes held at once (peak) and allocations in all

namespace {
std::atomic<bool> g_counting{false};
std::atomic<std::size_t> g_live{0}, g_peak{0}, g_allocations{0};
constexpr std::size_t kHeader = 16;
}  // namespace

void* operator new(std::size_t size) {
  auto* p = static_cast<unsigned char*>(std::malloc(size + kHeader));
  if (p == nullptr) throw std::bad_alloc();
  *reinterpret_cast<std::size_t*>(p) = size;
  if (g_counting.load(std::memory_order_relaxed)) {
    const std::size_t live = g_live.fetch_add(size, std::memory_order_relaxed) + size;
    std::size_t peak = g_peak.load(std::memory_order_relaxed);
    while (live > peak && !g_peak.compare_exchange_weak(peak, live, std::memory_order_relaxed)) {
    }
    g_allocations.fetch_add(1, std::memory_order_relaxed);
  }
  return p + kHeader;
}

void operator delete(void* ptr) noexcept {
  if (ptr == nullptr) return;
  unsigned char* p = static_cast<unsigned char*>(ptr) - kHeader;
  const std::size_t size = *reinterpret_cast<std::size_t*>(p);
  // blocks allocated before counting started are not subtracted below zero
  std::size_t live = g_live.load(std::memory_order_relaxed);
  while (!g_live.compare_exchange_weak(live, live >= size ? live - size : 0, std::memory_order_relaxed)) {
  }
  std::free(p);
}
void operator delete(void* ptr, std::size_t) noexcept { operator delete(ptr); }
void* operator new[](std::size_t size) { return operator new(size); }
// the nothrow forms too (std::stable_sort takes its buffer with them): every block carries the header
void* operator new(std::size_t size, const std::nothrow_t&) noexcept {
  try {
    return operator new(size);
  } catch (const std::bad_alloc&) {
    return nullptr;
  }
}
void* operator new[](std::size_t size, const std::nothrow_t&) noexcept {
  return operator new(size, std::nothrow);
}
void operator delete(void* ptr, const std::nothrow_t&) noexcept { operator delete(ptr); }
void operator delete[](void* ptr, const std::nothrow_t&) noexcept { operator delete(ptr); }
void operator delete[](void* ptr) noexcept { operator delete(ptr); }
void operator delete[](void* ptr, std::size_t) noexcept { operator delete(ptr); }

namespace denoc {
namespace {

// ---- documents

constexpr const char* kInertial =
    "<inertial><mass value=\"1\"/><inertia ixx=\"0.01\" ixy=\"0\" ixz=\"0\" iyy=\"0.01\" iyz=\"0\" "
    "izz=\"0.01\"/></inertial>";

// a valid 1-DOF robot whose <robot> element holds `extra` after its links and joints
std::string robot(const std::string& extra = "", const std::string& robot_attributes = "") {
  return std::string("<?xml version=\"1.0\"?>\n<robot name=\"r\"") + robot_attributes +
         ">\n<link name=\"base\"/>\n" + "<link name=\"l1\">" + kInertial + "</link>\n" +
         "<joint name=\"j1\" type=\"continuous\"><parent link=\"base\"/><child link=\"l1\"/>"
         "<axis xyz=\"0 0 1\"/></joint>\n" +
         extra + "</robot>\n";
}

// `levels` nested <a> elements inside <robot> (the attack: <robot name="r"> + levels x <a> + levels x </a>)
std::string nested(std::size_t levels) {
  std::string s = "<robot name=\"r\">";
  s.reserve(s.size() + levels * 7 + 10);
  for (std::size_t i = 0; i < levels; ++i) s += "<a>";
  for (std::size_t i = 0; i < levels; ++i) s += "</a>";
  return s + "</robot>";
}

// A comb: a fixed spine below one revolute joint, each spine link with leaves, `n` leaves in all; the spine
// is n links long up to kSpine (within UrdfOptions::max_tree_depth), the leaves beyond kSpine hang from the
// spine links in turn. The leaves are fixed (a 1-DOF chain), or revolute: then the whole tree is imported, a
// joint per leaf (before trees, the default tip was ambiguous and the error listed the leaves: the path that
// was quadratic, walking up the spine once per leaf).
constexpr int kSpine = 1000;
std::string comb(int n, bool moving_leaves) {
  std::ostringstream x;
  x << "<robot name=\"comb\"><link name=\"base\"/><link name=\"m\">" << kInertial << "</link>"
    << "<joint name=\"jm\" type=\"revolute\"><parent link=\"base\"/><child link=\"m\"/><axis xyz=\"0 0 1\"/>"
    << "<limit lower=\"-1\" upper=\"1\" effort=\"1\" velocity=\"1\"/></joint>";
  const int spine = std::min(n, kSpine);
  for (int i = 0; i < spine; ++i) {
    x << "<link name=\"s" << i << "\">" << kInertial << "</link><joint name=\"js" << i
      << "\" type=\"fixed\"><parent link=\"";
    if (i == 0) {
      x << "m";
    } else {
      x << "s" << i - 1;
    }
    x << "\"/><child link=\"s" << i << "\"/><origin xyz=\"0 0 0.001\"/></joint>";
  }
  for (int i = 0; i < n; ++i) {
    x << "<link name=\"l" << i << "\">" << kInertial << "</link><joint name=\"jl" << i << "\" type=\""
      << (moving_leaves ? "revolute" : "fixed") << "\"><parent link=\"s" << i % spine << "\"/><child link=\"l"
      << i << "\"/><origin xyz=\"0.001 0 0\"/><axis xyz=\"0 0 1\"/>"
      << "<limit lower=\"-1\" upper=\"1\" effort=\"1\" velocity=\"1\"/></joint>";
  }
  x << "</robot>";
  return x.str();
}

// the message of the ModelError that f throws ("" and a test failure otherwise)
std::string modelError(const std::function<void()>& f) {
  try {
    f();
  } catch (const ModelError& e) {
    return e.what();
  } catch (const std::exception& e) {
    ADD_FAILURE() << "not a ModelError: " << e.what();
    return "";
  }
  ADD_FAILURE() << "accepted";
  return "";
}

void expectHas(const std::string& message, const std::vector<std::string>& parts) {
  for (const std::string& p : parts)
    EXPECT_NE(message.find(p), std::string::npos) << "'" << p << "' not in: " << message;
}

// Runs f on a thread with a stack of `bytes`; rethrows what it threw.
void onSmallStack(std::size_t bytes, const std::function<void()>& f) {
  struct Job {
    const std::function<void()>* f;
    std::exception_ptr error;
  } job{&f, nullptr};
  pthread_attr_t attr;
  ASSERT_EQ(pthread_attr_init(&attr), 0);
  ASSERT_EQ(pthread_attr_setstacksize(&attr, bytes), 0);
  pthread_t thread;
  const auto run = [](void* arg) -> void* {
    auto* j = static_cast<Job*>(arg);
    try {
      (*j->f)();
    } catch (...) {
      j->error = std::current_exception();
    }
    return nullptr;
  };
  ASSERT_EQ(pthread_create(&thread, &attr, run, &job), 0);
  pthread_join(thread, nullptr);
  pthread_attr_destroy(&attr);
  if (job.error) std::rethrow_exception(job.error);
}

constexpr std::size_t kSmallStack = 256 * 1024;

// ---------------------------------------------------------------------------------------------- limits

TEST(XmlLimits, DefaultsAreTheDocumentedOnes) {
  const XmlLimits l;
  EXPECT_EQ(l.max_bytes, 1048576u);
  EXPECT_EQ(l.max_depth, 64);
  EXPECT_EQ(l.max_elements, 100000u);
  EXPECT_EQ(l.max_attributes, 64u);
  EXPECT_EQ(l.max_name_bytes, 256u);
  EXPECT_EQ(l.max_value_bytes, 4096u);
  EXPECT_EQ(kMaxNameLength, 256u);
}

TEST(XmlLimits, DepthAtTheLimitIsReadByUrdfdomAndOneMoreIsRefused) {
  // <robot> is level 1: 63 nested <a> inside it reach the limit of 64
  const std::string at = robot(nested(63).substr(16, 63 * 7));  // the <a>..</a> part only
  ASSERT_EQ(scanXml(at).max_depth, 64);
  onSmallStack(kSmallStack, [&] { EXPECT_EQ(specFromUrdf(at).joints.size(), 1u); });
  const std::string beyond = robot(nested(64).substr(16, 64 * 7));
  const std::string msg = modelError([&] { specFromUrdf(beyond); });
  expectHas(msg, {"URDF text", "nested deeper than the limit of 64", "depth 65", "(line 6)"});
}

TEST(XmlLimits, DeepDocumentsAreRefusedWithoutRecursion) {
  // 50,000 levels (350 kB, within the text limit): the registration that ended denocd with SIGSEGV
  const std::string deep = nested(50000);
  ASSERT_LT(deep.size(), XmlLimits().max_bytes);
  onSmallStack(kSmallStack, [&] {
    expectHas(modelError([&] { specFromUrdf(deep); }), {"nested deeper than the limit of 64", "depth 65"});
  });
  // 1,000,000 levels: refused by the text limit, and with that limit lifted by the depth limit, still on
  // the small stack (Expat keeps its open elements on the heap)
  const std::string deeper = nested(1000000);
  onSmallStack(kSmallStack, [&] {
    expectHas(modelError([&] { specFromUrdf(deeper); }), {"bytes, more than the limit of 1048576"});
    UrdfOptions lifted;
    lifted.xml_limits.max_bytes = 16u << 20;
    expectHas(modelError([&] { specFromUrdf(deeper, lifted); }), {"nested deeper than the limit of 64"});
    // with the depth limit lifted too, the scan reads all million levels (and urdfdom never sees them: the
    // element limit stops them)
    lifted.xml_limits.max_depth = 2000000;
    expectHas(modelError([&] { specFromUrdf(deeper, lifted); }), {"more than the limit of 100000 elements"});
    XmlLimits all;
    all.max_bytes = 16u << 20;
    all.max_depth = 2000000;
    all.max_elements = 2000000;
    EXPECT_EQ(scanXml(deeper, all).max_depth, 1000001);
  });
}

TEST(XmlLimits, EachLimitAtItsValueIsAcceptedAndOneBeyondRefused) {
  XmlLimits small;
  small.max_bytes = 4000;
  small.max_elements = 20;
  small.max_attributes = 5;
  small.max_name_bytes = 10;
  small.max_value_bytes = 12;
  small.max_depth = 4;
  struct Case {
    const char* what;
    std::string at, beyond;
    std::vector<std::string> expect;
  };
  const auto elements = [](int n) {
    std::string s = "<r>";
    for (int i = 1; i < n; ++i) s += "<e/>";
    return s + "</r>";
  };
  const auto attributes = [](int n) {
    std::string s = "<r";
    for (int i = 0; i < n; ++i) s += " a" + std::to_string(i) + "=\"\"";
    return s + "/>";
  };
  const std::vector<Case> cases = {
      {"bytes",
       "<r>" + std::string(3993, ' ') + "</r>",
       "<r>" + std::string(3994, ' ') + "</r>",
       {"has 4001 bytes, more than the limit of 4000"}},
      {"elements", elements(20), elements(21), {"more than the limit of 20 elements", "(line 1)"}},
      {"attributes",
       attributes(5),
       attributes(6),
       {"more attributes on one element than the limit of 5", "6 on element 'r'"}},
      {"element name",
       "<" + std::string(10, 'n') + "/>",
       "<" + std::string(11, 'n') + "/>",
       {"element name of 11 bytes, more than the limit of 10"}},
      {"attribute name",
       "<r " + std::string(10, 'n') + "=\"\"/>",
       "<r " + std::string(11, 'n') + "=\"\"/>",
       {"attribute name of 11 bytes, more than the limit of 10"}},
      {"attribute value",
       "<r a=\"" + std::string(12, 'v') + "\"/>",
       "<r a=\"" + std::string(13, 'v') + "\"/>",
       {"attribute value of 13 bytes, more than the limit of 12", "'a' of element 'r'"}},
      {"attribute value with entities (counted decoded)",
       "<r a=\"" + std::string(11, 'v') + "&amp;\"/>",
       "<r a=\"" + std::string(12, 'v') + "&amp;\"/>",
       {"attribute value of 13 bytes"}},
      {"depth",
       "<a><b><c><d/></c></b></a>",
       "<a><b><c><d><e/></d></c></b></a>",
       {"nested deeper than the limit of 4 levels", "element 'e' at depth 5"}},
  };
  for (const Case& c : cases) {
    EXPECT_NO_THROW(scanXml(c.at, small)) << c.what;
    expectHas(modelError([&] { scanXml(c.beyond, small); }), c.expect);
  }
  // the defaults, on URDF text: 64 attributes, 256-byte names, 4096-byte values, 100,000 elements, 1 MiB
  std::string attrs;
  for (int i = 0; i < 63; ++i) attrs += " x" + std::to_string(i) + "=\"1\"";
  EXPECT_NO_THROW(specFromUrdf(robot("", attrs)));  // name and 63 more: 64
  expectHas(modelError([&] { specFromUrdf(robot("", attrs + " x63=\"1\"")); }),
            {"URDF text has more attributes on one element than the limit of 64", "65 on element 'robot'",
             "(line 2)"});
  std::string many;
  for (int i = 0; i < 100000 - 10; ++i) many += "<e/>";  // robot() has 10 elements
  EXPECT_EQ(scanXml(robot(many)).elements, 100000u);
  EXPECT_NO_THROW(specFromUrdf(robot(many)));
  expectHas(modelError([&] { specFromUrdf(robot(many + "<e/>")); }),
            {"more than the limit of 100000 elements"});
  const std::string padded = robot("<!--" + std::string(1048576 - robot().size() - 7, 'p') + "-->");
  ASSERT_EQ(padded.size(), 1048576u);
  EXPECT_NO_THROW(specFromUrdf(padded));
  expectHas(modelError([&] { specFromUrdf(padded + " "); }),
            {"has 1048577 bytes, more than the limit of 1048576"});
}

TEST(XmlLimits, TheAttacksOfTheReportAreRefusedByALimit) {
  // 20,000 attributes on <robot> (2.4 s and accepted before)
  std::string attrs;
  for (int i = 0; i < 20000; ++i) attrs += " a" + std::to_string(i) + "=\"\"";
  expectHas(modelError([&] { specFromUrdf(robot("", attrs)); }),
            {"more attributes on one element than the limit of 64", "20001 on element 'robot'"});
  // a 16 MiB name
  const std::string huge(16u << 20, 'n');
  expectHas(modelError([&] { specFromUrdf("<robot name=\"" + huge + "\"/>"); }),
            {"more than the limit of 1048576"});
  // a 4 kB name: within the XML limits, beyond the name limit (below)
}

TEST(XmlLimits, DtdsEntitiesInstructionsAndCharacterReferencesAreRefused) {
  struct Case {
    const char* what;
    std::string text;
    std::string expect;
  };
  const std::string r = robot();
  const std::string body = r.substr(r.find("<robot"));
  const std::vector<Case> cases = {
      {"external entity (XXE)",
       "<?xml version=\"1.0\"?><!DOCTYPE robot [<!ENTITY x SYSTEM \"file:///etc/passwd\">]>" + body,
       "document type declaration"},
      {"entity expansion",
       "<!DOCTYPE robot [<!ENTITY a \"aaaaaaaaaa\"><!ENTITY b \"&a;&a;&a;&a;&a;&a;&a;&a;&a;&a;\">]>" + body,
       "document type declaration"},
      {"external DTD", "<!DOCTYPE robot SYSTEM \"http://example.com/robot.dtd\">" + body,
       "document type declaration"},
      {"undeclared entity", "<robot name=\"&x;\"/>", "not well-formed XML (undefined entity)"},
      {"processing instruction", "<?xml version=\"1.0\"?><?pi <a><a><a> ?>" + body,
       "processing instruction <?pi"},
      {"character reference in a name", "<robot name=\"r&#65;\"/>", "character reference"},
      {"element read as unknown by TinyXML", "<robot name=\"r\"><:a/></robot>",
       "does not start with a letter"},
      {"second root", body + "<robot name=\"s\"/>", "not well-formed XML (junk after document element)"},
      {"unquoted attribute", "<robot name=r/>", "not well-formed XML"},
      {"mismatched tag", "<robot name=\"r\"><link></joint></robot>",
       "not well-formed XML (mismatched tag) (line 1)"},
  };
  for (const Case& c : cases) {
    const std::string msg = modelError([&] { specFromUrdf(c.text); });
    EXPECT_NE(msg.find(c.expect), std::string::npos) << c.what << ": " << msg;
    EXPECT_EQ(msg.rfind("URDF text ", 0), 0u) << c.what << ": " << msg;
  }
  // the five predefined entities, comments, CDATA and the XML declaration are fine
  EXPECT_NO_THROW(specFromUrdf(
      robot("<!-- a comment &#65; -->\n<tag a=\"&lt;&gt;&amp;&quot;&apos;\"><![CDATA[ <x> ]]></tag>\n")));
}

// urdfdom frees its link tree recursively (each link owns its children), also inside its parser when it
// gives up after linking the joints: a chain of 9,000 links with a second root overflowed a 256 KiB stack
// there. Trees deeper than UrdfOptions::max_tree_depth (1024) are refused before urdfdom sees them.
std::string linkChain(int n, bool second_root) {
  std::ostringstream x;
  x << "<robot name=\"c\"><link name=\"a\">" << kInertial << "</link><link name=\"b\">" << kInertial
    << "</link><joint name=\"m\" type=\"continuous\"><parent link=\"a\"/><child link=\"b\"/></joint>";
  std::string prev = "b";
  for (int i = 0; i < n; ++i) {
    std::string name(1, 'c');  // appended: GCC 12 warns falsely on "literal" + std::string&&
    name += std::to_string(i);
    x << "<link name=\"" << name << "\"/><joint name=\"j" << i << "\" type=\"fixed\"><parent link=\"" << prev
      << "\"/><child link=\"" << name << "\"/></joint>";
    prev = name;
  }
  if (second_root) x << "<link name=\"another_root\"/>";
  x << "</robot>";
  return x.str();
}

TEST(XmlLimits, DeepKinematicTreesAreRefusedBeforeUrdfdomFreesThemRecursively) {
  const std::string at = linkChain(1023, false);  // joint m and 1023 fixed joints: 1024 deep
  const std::string beyond = linkChain(1024, false);
  const std::string long_two_roots = linkChain(9000, true);
  ASSERT_LT(long_two_roots.size(), XmlLimits().max_bytes);
  onSmallStack(kSmallStack, [&] {
    EXPECT_EQ(buildModelFromUrdf(at).n, 1);
    expectHas(modelError([&] { buildModelFromUrdf(beyond); }), {"more than 1024 joints deep below link 'a'"});
    expectHas(modelError([&] { buildModelFromUrdf(long_two_roots); }), {"more than 1024 joints deep"});
    // within the depth limit urdfdom's own refusal (two roots) frees the tree on the small stack
    expectHas(modelError([&] { buildModelFromUrdf(linkChain(1023, true)); }), {"Two root links found"});
  });
}

// ------------------------------------------------------------------------------------ linear cost

struct Cost {
  std::size_t bytes = 0;
  std::uint64_t steps = 0;      // polls of the stop condition: one per 256 steps of the import's loops,
                                // one per 1024 elements of the pre-scan, and one per joint built
  std::size_t peak = 0;         // bytes held at once by operator new (urdfdom, TinyXML, ours) ...
  std::size_t allocations = 0;  // ... and allocations in all
  std::size_t scan_peak = 0;    // Expat's own heap at its most
};

// The cost of buildModelFromUrdf (build) or of the import alone, specFromUrdf (!build).
Cost importCost(const std::string& text, bool expect_error, bool build = true) {
  Cost c;
  c.bytes = text.size();
  std::uint64_t polls = 0;
  const StopCondition stop([&] { return ++polls, false; }, StopCondition::Clock::time_point::max(),
                           std::chrono::nanoseconds(0));
  c.scan_peak = scanXml(text).parser_peak_bytes;
  g_live = 0;
  g_peak = 0;
  g_allocations = 0;
  g_counting = true;
  bool failed = false;
  try {
    if (build) {
      buildModelFromUrdf(text, {}, &stop);
    } else {
      specFromUrdf(text, {}, &stop);
    }
  } catch (const ModelError&) {
    failed = true;
  }
  g_counting = false;
  EXPECT_EQ(failed, expect_error);
  c.steps = polls;
  c.peak = g_peak;
  c.allocations = g_allocations;
  return c;
}

void expectLinear(const std::vector<Cost>& costs, const char* what) {
  for (std::size_t k = 1; k < costs.size(); ++k) {
    const Cost& a = costs[k - 1];
    const Cost& b = costs[k];
    const double size = double(b.bytes) / double(a.bytes);
    SCOPED_TRACE(std::string(what) + " from " + std::to_string(a.bytes) + " to " + std::to_string(b.bytes) +
                 " bytes");
    EXPECT_LE(double(b.steps), 1.15 * size * double(a.steps) + 4) << a.steps << " -> " << b.steps;
    EXPECT_LE(double(b.allocations), 1.15 * size * double(a.allocations))
        << a.allocations << " -> " << b.allocations;
    EXPECT_LE(double(b.peak), 1.25 * size * double(a.peak)) << a.peak << " -> " << b.peak;
    EXPECT_LE(double(b.scan_peak), 1.25 * size * double(a.scan_peak) + 65536)
        << a.scan_peak << " -> " << b.scan_peak;
  }
  for (const Cost& c : costs) {
    std::printf(
        "[ cost ] %-32s %8zu bytes: %6llu polls, heap peak %5.1f x the text, %7zu allocations, Expat peak "
        "%4.1f x\n",
        what, c.bytes, static_cast<unsigned long long>(c.steps), double(c.peak) / double(c.bytes),
        c.allocations, double(c.scan_peak) / double(c.bytes));
  }
}

TEST(ParseCost, LinearInTheInput) {
  // the fixed comb with revolute leaves: quadratic before (7.6 s at 6,000), when its error listed the leaves;
  // now a tree of 1 + n joints. The import is measured alone: the model builder polls once per joint, and
  // the joints grow faster than the text here (the spine stops at kSpine links)
  std::vector<Cost> moving, fixed, chain;
  for (int n : {450, 900, 1800}) {
    moving.push_back(importCost(comb(n, true), false, false));
    fixed.push_back(importCost(comb(n, false), false));
  }
  expectLinear(moving, "comb, revolute leaves (import)");
  expectLinear(fixed, "comb, fixed leaves");
  // the largest comb within the text limit: at most 30 times its size in memory, imported and built
  const std::string big = comb(2500, true);
  ASSERT_LT(big.size(), XmlLimits().max_bytes);
  const Cost c = importCost(big, false);
  EXPECT_LT(double(c.peak), 30.0 * double(c.bytes));
  EXPECT_LT(double(c.scan_peak), 4.0 * double(c.bytes));
}

// --------------------------------------------------------------------------------- cancellation

TEST(ParseStop, ALongRegistrationStopsInEachPhase) {
  const std::string big = comb(2500, false);
  // the polls of a whole build: the pre-scan's (one per 1024 elements), the joint check's and the import's
  // (one per 256 steps), urdfdom's (one, before it parses), buildModel's (one per joint)
  std::uint64_t total = 0;
  {
    const StopCondition count([&] { return ++total, false; }, StopCondition::Clock::time_point::max(),
                              std::chrono::nanoseconds(0));
    buildModelFromUrdf(big, {}, &count);
  }
  const std::uint64_t scan = scanXml(big).elements / 1024;
  ASSERT_GT(scan, 10u);
  ASSERT_GT(total, scan + 10);
  // the callable says "stop" at its k-th poll
  const auto phaseAt = [&](std::uint64_t k) -> std::string {
    std::uint64_t polls = 0;
    const StopCondition stop([&] { return ++polls >= k; }, StopCondition::Clock::time_point::max(),
                             std::chrono::nanoseconds(0));
    try {
      buildModelFromUrdf(big, {}, &stop);
    } catch (const Stopped& e) {
      EXPECT_EQ(e.reason(), StopReason::Cancelled);
      EXPECT_NE(std::string(e.what()).find("cancelled"), std::string::npos) << e.what();
      EXPECT_EQ(polls, k);
      const std::string what = e.what();
      return what.substr(0, what.find(':'));
    }
    return "not stopped";
  };
  EXPECT_EQ(phaseAt(1), "URDF text (pre-scan)");
  EXPECT_EQ(phaseAt(scan), "URDF text (pre-scan)");
  EXPECT_EQ(phaseAt(scan + 1), "URDF joint check");
  EXPECT_EQ(phaseAt(total - 1), "URDF import");
  EXPECT_EQ(phaseAt(total), "buildModel");
  EXPECT_EQ(phaseAt(total + 1), "not stopped");
  // a deadline already passed stops at the first poll, with its own reason
  const StopCondition late({}, StopCondition::Clock::now() - std::chrono::seconds(1));
  try {
    buildModelFromUrdf(big, {}, &late);
    ADD_FAILURE() << "not stopped";
  } catch (const Stopped& e) {
    EXPECT_EQ(e.reason(), StopReason::Deadline);
    EXPECT_NE(std::string(e.what()).find("the deadline passed"), std::string::npos) << e.what();
  }
  // DH models and buildModel poll between joints
  DHSpec dh = stanfordArmDH();
  int polls = 0;
  const StopCondition third([&] { return ++polls >= 3; }, StopCondition::Clock::time_point::max(),
                            std::chrono::nanoseconds(0));
  try {
    buildModelFromDH(dh, &third);
    ADD_FAILURE() << "not stopped";
  } catch (const Stopped& e) {
    EXPECT_EQ(e.done(), 2u);
    EXPECT_NE(std::string(e.what()).find("specFromDH: stopped after 2 of 6 links"), std::string::npos)
        << e.what();
  }
}

// ---------------------------------------------------------------------------------------- names

TEST(Names, BoundedInUrdfAndDhModels) {
  const std::string n256(256, 'n'), n257(257, 'n');
  const auto renamed = [](std::string text, const std::string& from, const std::string& to) {
    for (std::size_t p; (p = text.find(from)) != std::string::npos;) text.replace(p, from.size(), to);
    return text;
  };
  const std::string r = robot();
  // robot, link and joint names at the limit load; one byte more is refused naming what it is
  EXPECT_NO_THROW(buildModelFromUrdf(renamed(r, "name=\"r\"", "name=\"" + n256 + "\"")));
  EXPECT_NO_THROW(buildModelFromUrdf(renamed(r, "\"l1\"", "\"" + n256 + "\"")));
  EXPECT_NO_THROW(buildModelFromUrdf(renamed(r, "\"j1\"", "\"" + n256 + "\"")));
  expectHas(modelError([&] { buildModelFromUrdf(renamed(r, "name=\"r\"", "name=\"" + n257 + "\"")); }),
            {"URDF robot name of 257 bytes", "longer than the limit of 256"});
  expectHas(modelError([&] { buildModelFromUrdf(renamed(r, "\"l1\"", "\"" + n257 + "\"")); }),
            {"URDF link name of 257 bytes"});
  expectHas(modelError([&] { buildModelFromUrdf(renamed(r, "\"j1\"", "\"" + n257 + "\"")); }),
            {"URDF joint name of 257 bytes"});
  // a link off the chain too (every name ends up somewhere: errors, logs)
  expectHas(modelError([&] {
              buildModelFromUrdf(robot("<link name=\"" + n257 +
                                       "\"/><joint name=\"f\" type=\"fixed\">"
                                       "<parent link=\"l1\"/><child link=\"" +
                                       n257 + "\"/></joint>"));
            }),
            {"URDF link name of 257 bytes"});
  // DH: the same bound (one constant)
  DHSpec dh = stanfordArmDH();
  dh.links[2].link = n256;
  dh.links[3].joint = n256;
  dh.name = n256;
  EXPECT_NO_THROW(buildModelFromDH(dh));
  dh.links[3].joint = n257;
  expectHas(modelError([&] { buildModelFromDH(dh); }), {"DH link 4: joint name of 257 bytes"});
  dh.links[3].joint = "";
  dh.name = n257;
  expectHas(modelError([&] { buildModelFromDH(dh); }), {"DH model name of 257 bytes"});
  // and the general builder
  ModelSpec spec = specFromDH(stanfordArmDH());
  spec.joints[1].link = n257;
  expectHas(modelError([&] { buildModel(spec); }), {"link name of 257 bytes"});
}

}  // namespace
}  // namespace denoc
