# The Debian package: cpack -G DEB (or cpack --preset deb) in a build configured with CMAKE_INSTALL_PREFIX=/usr
# (the `package` preset) gives denoc_<version>_<arch>.deb with everything cmake --install puts there: the
# server, the command-line tools, the static libraries with their headers, CMake and pkg-config files, the
# protocol, the example models, the systemd unit and /etc/default/denoc. Runtime dependencies come from
# dpkg-shlibdeps; what building against the libraries needs is suggested.
set(DENOC_PACKAGE_MAINTAINER "denoc maintainers <maintainers@denoc.invalid>"
    CACHE STRING "Maintainer field of the Debian package")

# Debian's copyright and changelog files, in the package's documentation directory (a native package: the
# version has no Debian revision, so the changelog is changelog.gz)
configure_file(${PROJECT_SOURCE_DIR}/deploy/debian/changelog.in ${PROJECT_BINARY_DIR}/debian/changelog @ONLY)
add_custom_command(
  OUTPUT ${PROJECT_BINARY_DIR}/debian/changelog.gz
  COMMAND gzip -9nf -k ${PROJECT_BINARY_DIR}/debian/changelog
  DEPENDS ${PROJECT_BINARY_DIR}/debian/changelog
  COMMENT "changelog.gz")
set(denoc_package_files ${PROJECT_BINARY_DIR}/debian/changelog.gz)
install(FILES ${PROJECT_SOURCE_DIR}/deploy/debian/copyright ${PROJECT_BINARY_DIR}/debian/changelog.gz
        DESTINATION ${CMAKE_INSTALL_DOCDIR})

# manual pages of the programs from their --help (help2man, Debian help2man; runs the programs at build time,
# so only where asked: the package preset)
option(DENOC_MAN_PAGES "Write and install manual pages of the programs with help2man" OFF)
if(DENOC_MAN_PAGES)
  find_program(DENOC_HELP2MAN help2man REQUIRED)
  set(denoc_man_denocd "the denoc dynamics service (gRPC)")
  set(denoc_man_denoc "dynamics of robot manipulators, locally or on a denocd server")
  set(denoc_man_denoc-health "grpc.health.v1 check of a denocd")
  set(denoc_man_denoc_probe "latency and throughput of a running denocd")
  foreach(program denocd denoc denoc-health denoc_probe)
    set(page ${PROJECT_BINARY_DIR}/man/${program}.1)
    add_custom_command(
      OUTPUT ${page}.gz
      COMMAND ${CMAKE_COMMAND} -E make_directory ${PROJECT_BINARY_DIR}/man
      COMMAND ${DENOC_HELP2MAN} --no-info --no-discard-stderr --version-string=${PROJECT_VERSION}
              "--name=${denoc_man_${program}}" --output=${page} $<TARGET_FILE:${program}>
      COMMAND gzip -9nf ${page}
      DEPENDS ${program}
      COMMENT "man page ${program}.1"
      VERBATIM)
    list(APPEND denoc_package_files ${page}.gz)
    install(FILES ${page}.gz DESTINATION ${CMAKE_INSTALL_MANDIR}/man1)
  endforeach()
endif()
add_custom_target(denoc_package_files ALL DEPENDS ${denoc_package_files})

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
    "libeigen3-dev, liburdfdom-dev, libconsole-bridge-dev, libexpat1-dev, libgrpc++-dev, libprotobuf-dev, pkg-config, cmake")
# the synopsis is CPACK_PACKAGE_DESCRIPTION_SUMMARY; this is the extended description (lines under 80)
set(CPACK_DEBIAN_PACKAGE_DESCRIPTION
    "denocd answers inverse dynamics, forward dynamics, inertia-matrix
factorization and simulation requests for registered robot models (URDF or
Denavit-Hartenberg) over gRPC, in batches and streams, with TLS, bearer tokens
and Prometheus metrics. Its core implements S. K. Saha's decoupled natural
orthogonal complement method and Fixman's theorem.
.
The package holds denocd with a sandboxed systemd unit (disabled until
enabled), the denoc command-line tool, the health and latency probes, the
static libraries denoc_core and denoc_client with their headers, CMake package
and pkg-config files, the protocol and example robot models.")
# /etc/default/denoc is a configuration file dpkg keeps when the administrator changed it
if(CMAKE_INSTALL_FULL_SYSCONFDIR STREQUAL "/etc" AND DENOC_INSTALL_SYSTEMD_UNIT)
  file(WRITE ${PROJECT_BINARY_DIR}/debian/conffiles "/etc/default/denoc\n")
  set(CPACK_DEBIAN_PACKAGE_CONTROL_EXTRA ${PROJECT_BINARY_DIR}/debian/conffiles)
endif()
include(CPack)
