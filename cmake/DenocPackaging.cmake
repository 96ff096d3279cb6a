# The Debian package: cpack -G DEB (or cpack --preset deb) in a build configured with CMAKE_INSTALL_PREFIX=/usr
# (the `package` preset) gives denoc_<version>_<arch>.deb with everything cmake --install puts there: the
# server, the command-line tools, the static libraries with their headers, CMake and pkg-config files, the
# protocol, the example models, the systemd unit and /etc/default/denoc. Runtime dependencies come from
# dpkg-shlibdeps; what building against the libraries needs is suggested.
set(DENOC_PACKAGE_MAINTAINER "denoc maintainers <maintainers@denoc.invalid>"
    CACHE STRING "Maintainer field of the Debian package")

# Debian's copyright and changelog files, in the package's documentation directory
configure_file(${PROJECT_SOURCE_DIR}/deploy/debian/changelog.in ${PROJECT_BINARY_DIR}/debian/changelog.Debian @ONLY)
add_custom_command(
  OUTPUT ${PROJECT_BINARY_DIR}/debian/changelog.Debian.gz
  COMMAND gzip -9nf -k ${PROJECT_BINARY_DIR}/debian/changelog.Debian
  DEPENDS ${PROJECT_BINARY_DIR}/debian/changelog.Debian
  COMMENT "changelog.Debian.gz")
add_custom_target(denoc_debian_changelog ALL DEPENDS ${PROJECT_BINARY_DIR}/debian/changelog.Debian.gz)
install(FILES ${PROJECT_SOURCE_DIR}/deploy/debian/copyright ${PROJECT_BINARY_DIR}/debian/changelog.Debian.gz
        DESTINATION ${CMAKE_INSTALL_DOCDIR})

set(CPACK_PACKAGE_NAME denoc)
set(CPACK_PACKAGE_VERSION ${PROJECT_VERSION})
set(CPACK_PACKAGE_VENDOR "denoc")
set(CPACK_PACKAGE_CONTACT "${DENOC_PACKAGE_MAINTAINER}")
set(CPACK_PACKAGE_DESCRIPTION_SUMMARY "dynamics service for robot manipulators (DeNOC method), with its libraries")
set(CPACK_RESOURCE_FILE_LICENSE ${PROJECT_SOURCE_DIR}/LICENSE)
set(CPACK_GENERATOR DEB)
set(CPACK_STRIP_FILES ON)
set(CPACK_PACKAGING_INSTALL_PREFIX /usr)
set(CPACK_OUTPUT_FILE_PREFIX ${PROJECT_BINARY_DIR}/packages)

set(CPACK_DEBIAN_FILE_NAME DEB-DEFAULT)  # denoc_0.2.0_amd64.deb
set(CPACK_DEBIAN_PACKAGE_SECTION science)
set(CPACK_DEBIAN_PACKAGE_PRIORITY optional)
set(CPACK_DEBIAN_PACKAGE_SHLIBDEPS ON)
# building against the installed libraries: the headers and link-time libraries of their dependencies
set(CPACK_DEBIAN_PACKAGE_SUGGESTS
    "libeigen3-dev, liburdfdom-dev, libconsole-bridge-dev, libtinyxml-dev, libgrpc++-dev, libprotobuf-dev, pkg-config, cmake")
set(CPACK_DEBIAN_PACKAGE_DESCRIPTION
    "dynamics service for robot manipulators (DeNOC method), with its libraries
denocd answers inverse dynamics, forward dynamics, inertia-matrix factorization and simulation requests for
registered robot models (URDF or Denavit-Hartenberg) over gRPC, in batches and streams, with TLS, bearer
tokens and Prometheus metrics. Its core implements S. K. Saha's decoupled natural orthogonal complement
method and Fixman's theorem.
.
The package holds denocd with a sandboxed systemd unit (disabled until enabled), the denoc command-line
tool, the health and latency probes, the static libraries denoc_core and denoc_client with their headers,
CMake package and pkg-config files, the protocol and example robot models.")
# /etc/default/denoc is a configuration file dpkg keeps when the administrator changed it
if(CMAKE_INSTALL_FULL_SYSCONFDIR STREQUAL "/etc" AND DENOC_INSTALL_SYSTEMD_UNIT)
  file(WRITE ${PROJECT_BINARY_DIR}/debian/conffiles "/etc/default/denoc\n")
  set(CPACK_DEBIAN_PACKAGE_CONTROL_EXTRA ${PROJECT_BINARY_DIR}/debian/conffiles)
endif()
include(CPack)
