#include "denoc/client/version.hpp"

#include "denoc/version.hpp"

namespace denoc {

const char* version() noexcept { return DENOC_VERSION_STRING; }

}  // namespace denoc
