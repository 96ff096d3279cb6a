// The version of the denoc client library.
#pragma once

namespace denoc {

/// The version of the denoc client library this program is linked with, e.g. "0.2.0": the
/// DENOC_VERSION_STRING of denoc/version.hpp when the library was built (a program compiled against other
/// headers can compare the two).
const char* version() noexcept;

}  // namespace denoc
