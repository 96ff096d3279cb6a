// Prints the C++ client library's version (denoc::version(), compiled into the library) and the generated
// header's (DENOC_VERSION_STRING), for check_versions.py.
#include <iostream>

#include "denoc/client/version.hpp"
#include "denoc/version.hpp"

int main() { std::cout << denoc::version() << ' ' << DENOC_VERSION_STRING << '\n'; }
