// Fuzz target: the URDF importer (core/src/urdf.cpp through urdfdom) and the model builder.
//
// Input: URDF text, optionally followed by options after NUL bytes: "<urdf>\0<base_link>\0<tip_link>\0<k>"
// where k (one byte) asks for k armature values (0.01 each). The contract checked: specFromUrdf returns a
// spec or throws ModelError (any other exception escapes and is reported), an accepted model builds or is
// refused with ModelError, and every algorithm runs on a built model without a sanitizer report.
#include <cstddef>
#include <cstdint>
#include <string>

#include "denoc/urdf.hpp"
#include "exercise.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string input(reinterpret_cast<const char*>(data), size);
  const std::size_t end = input.find('\0');
  const std::string text = input.substr(0, end);
  denoc::UrdfOptions options;
  if (end != std::string::npos) {
    // the options: base, tip, armature count
    std::size_t pos = end + 1;
    auto next = [&] {
      const std::size_t stop = std::min(input.find('\0', pos), input.size());
      std::string field = input.substr(pos, stop - pos);
      pos = stop + 1;
      return field;
    };
    options.base_link = next();
    if (pos <= input.size()) options.tip_link = next();
    if (pos < input.size()) options.armature.assign(static_cast<unsigned char>(input[pos]) % 16, 0.01);
  }
  denoc::ModelSpec spec;
  try {
    spec = denoc::specFromUrdf(text, options);
  } catch (const denoc::ModelError&) {
    return 0;
  }
  try {
    const denoc::Model model = denoc::buildModel(spec);
    denoc::fuzz::exerciseModel(model, denoc::fuzz::hashBytes(data, size));
  } catch (const denoc::ModelError&) {
  }
  return 0;
}
