// Fuzz target: the DH model reader (parseDHJson, "denoc-dh/1") and writer (toDHJson), and the DH builder.
//
// Input: a JSON document. The contract checked: parseDHJson returns a spec or throws ModelError (any other
// exception escapes and is reported); an accepted spec is written by toDHJson to a document that parses
// back to exactly the same spec (model_io.hpp promises this for every spec it can write; a ModelError
// from toDHJson is allowed); buildModelFromDH builds it or throws ModelError; every algorithm runs on the
// built model without a sanitizer report.
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>

#include "denoc/model_io.hpp"
#include "exercise.hpp"

namespace {

// -0.0 and 0.0 are the same value here (the writer drops a zero armature of either sign)
bool same(double a, double b) { return a == b || (a != a && b != b); }

bool same(const denoc::DHLink& a, const denoc::DHLink& b) {
  return a.joint == b.joint && a.link == b.link && a.type == b.type && same(a.a, b.a) && same(a.b, b.b) &&
         same(a.alpha, b.alpha) && same(a.theta, b.theta) && same(a.mass, b.mass) && a.com == b.com &&
         a.inertia == b.inertia && same(a.lower, b.lower) && same(a.upper, b.upper) &&
         same(a.velocity_limit, b.velocity_limit) && same(a.effort_limit, b.effort_limit) &&
         same(a.armature, b.armature);
}

[[noreturn]] void broken(const char* what, const std::string& text) {
  std::fprintf(stderr, "fuzz_dh_json: %s\n--- written document ---\n%s\n", what, text.c_str());
  std::abort();
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string text(reinterpret_cast<const char*>(data), size);
  denoc::DHSpec dh;
  try {
    dh = denoc::parseDHJson(text);
  } catch (const denoc::ModelError&) {
    return 0;
  }
  // the round trip through the writer
  std::string written;
  try {
    written = denoc::toDHJson(dh);
  } catch (const denoc::ModelError&) {
    written.clear();
  }
  if (!written.empty()) {
    denoc::DHSpec back;
    try {
      back = denoc::parseDHJson(written);
    } catch (const denoc::ModelError& e) {
      broken(e.what(), written);
    }
    if (back.name != dh.name || back.gravity != dh.gravity || back.links.size() != dh.links.size())
      broken("the written document reads back as another model", written);
    for (std::size_t i = 0; i < dh.links.size(); ++i) {
      if (!same(back.links[i], dh.links[i])) broken("a link reads back differently", written);
    }
  }
  // the builder and the algorithms
  try {
    const denoc::Model model = denoc::buildModelFromDH(dh);
    denoc::fuzz::exerciseModel(model, denoc::fuzz::hashBytes(data, size));
  } catch (const denoc::ModelError&) {
  }
  return 0;
}
