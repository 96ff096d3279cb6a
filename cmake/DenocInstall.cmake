# Install rules (cmake --install BUILD [--prefix DIR]), in GNUInstallDirs places:
#   lib/          libdenoc_core.a, libdenoc_proto.a, libdenoc_client.a; cmake/denoc/ (the CMake package);
#                 pkgconfig/denoc.pc and denoc-client.pc
#   include/      denoc/ (core headers, generated version.hpp and config.hpp), denoc/client/, denoc/v1/ (the
#                 generated protocol headers)
#   bin/          denocd, denoc, denoc-health, denoc_probe
#   share/denoc/  models/ (the example models with their licences), proto/ (the wire contract)
#   share/doc/denoc/  LICENSE, NOTICE, README.md
#   lib/systemd/system/denoc.service and etc/default/denoc (/lib/systemd/system and /etc with prefix /usr)
# Files that name the install prefix (the pkg-config files and the unit) are written when installing, so the
# same build installs correctly into a temporary prefix and, through cpack, into /usr.
include(CMakePackageConfigHelpers)

set(DENOC_INSTALL_CMAKEDIR ${CMAKE_INSTALL_LIBDIR}/cmake/denoc)
set(DENOC_INSTALL_DATADIR ${CMAKE_INSTALL_DATADIR}/denoc)

# ---- libraries, headers, the CMake package ------------------------------------------------------------------
install(TARGETS denoc_core EXPORT denocCoreTargets ARCHIVE DESTINATION ${CMAKE_INSTALL_LIBDIR})
install(TARGETS denoc_proto denoc_client EXPORT denocClientTargets ARCHIVE DESTINATION ${CMAKE_INSTALL_LIBDIR})
install(DIRECTORY ${PROJECT_SOURCE_DIR}/core/include/denoc ${PROJECT_SOURCE_DIR}/clients/cpp/include/denoc
                  ${DENOC_GENERATED_INCLUDE_DIR}/denoc
        DESTINATION ${CMAKE_INSTALL_INCLUDEDIR} FILES_MATCHING PATTERN "*.hpp" PATTERN "*.hxx")
install(DIRECTORY ${PROJECT_BINARY_DIR}/proto/gen/denoc DESTINATION ${CMAKE_INSTALL_INCLUDEDIR}
        FILES_MATCHING PATTERN "*.pb.h")
install(EXPORT denocCoreTargets FILE denocCoreTargets.cmake NAMESPACE denoc:: DESTINATION ${DENOC_INSTALL_CMAKEDIR})
install(EXPORT denocClientTargets FILE denocClientTargets.cmake NAMESPACE denoc::
        DESTINATION ${DENOC_INSTALL_CMAKEDIR})
configure_package_config_file(${PROJECT_SOURCE_DIR}/cmake/denocConfig.cmake.in
                              ${PROJECT_BINARY_DIR}/cmake/denocConfig.cmake
                              INSTALL_DESTINATION ${DENOC_INSTALL_CMAKEDIR})
# 0.2.x accepts requests for 0.2 or an older 0.2.y (SameMinorVersion: 0.x releases may break the API)
write_basic_package_version_file(${PROJECT_BINARY_DIR}/cmake/denocConfigVersion.cmake
                                 COMPATIBILITY SameMinorVersion)
install(FILES ${PROJECT_BINARY_DIR}/cmake/denocConfig.cmake ${PROJECT_BINARY_DIR}/cmake/denocConfigVersion.cmake
        DESTINATION ${DENOC_INSTALL_CMAKEDIR})

# ---- files naming the install prefix, written at install time -------------------------------------------------
# denoc_install_template(TEMPLATE OUTPUT): configures TEMPLATE now (@VAR@), then at install time replaces
# %PREFIX%, %BINDIR% and %DOCDIR% with the install prefix's paths and writes OUTPUT (in the build tree) for the
# install(FILES) rule that follows.
function(denoc_install_template template output)
  configure_file(${template} ${output}.in @ONLY)
  install(CODE "
    file(READ \"${output}.in\" text)
    string(REPLACE \"%PREFIX%\" \"\${CMAKE_INSTALL_PREFIX}\" text \"\${text}\")
    string(REPLACE \"%BINDIR%\" \"\${CMAKE_INSTALL_PREFIX}/${CMAKE_INSTALL_BINDIR}\" text \"\${text}\")
    string(REPLACE \"%DOCDIR%\" \"\${CMAKE_INSTALL_PREFIX}/${CMAKE_INSTALL_DOCDIR}\" text \"\${text}\")
    file(WRITE \"${output}\" \"\${text}\")")
endfunction()

if(DENOC_EIGEN_VECTORIZE)
  set(DENOC_PC_CFLAGS "")
else()
  set(DENOC_PC_CFLAGS "-DEIGEN_DONT_VECTORIZE")
endif()
denoc_install_template(${PROJECT_SOURCE_DIR}/cmake/denoc.pc.in ${PROJECT_BINARY_DIR}/pkgconfig/denoc.pc)
denoc_install_template(${PROJECT_SOURCE_DIR}/cmake/denoc-client.pc.in ${PROJECT_BINARY_DIR}/pkgconfig/denoc-client.pc)
install(FILES ${PROJECT_BINARY_DIR}/pkgconfig/denoc.pc ${PROJECT_BINARY_DIR}/pkgconfig/denoc-client.pc
        DESTINATION ${CMAKE_INSTALL_LIBDIR}/pkgconfig)

# ---- programs, protocol, models, documents --------------------------------------------------------------------
install(TARGETS denocd denoc denoc-health denoc_probe RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR})
install(DIRECTORY ${PROJECT_SOURCE_DIR}/proto/denoc DESTINATION ${DENOC_INSTALL_DATADIR}/proto
        FILES_MATCHING PATTERN "*.proto")
install(DIRECTORY ${PROJECT_SOURCE_DIR}/examples/models/ DESTINATION ${DENOC_INSTALL_DATADIR}/models)
install(FILES ${PROJECT_SOURCE_DIR}/LICENSE ${PROJECT_SOURCE_DIR}/NOTICE ${PROJECT_SOURCE_DIR}/README.md
        DESTINATION ${CMAKE_INSTALL_DOCDIR})

# ---- the service: systemd unit and its settings -----------------------------------------------------------------
option(DENOC_INSTALL_SYSTEMD_UNIT "Install the systemd unit denoc.service and /etc/default/denoc" ON)
if(DENOC_INSTALL_SYSTEMD_UNIT)
  # Debian 12 keeps packaged units in /lib/systemd/system; other prefixes get lib/systemd/system inside
  if(CMAKE_INSTALL_PREFIX STREQUAL "/usr")
    set(DENOC_SYSTEMD_UNITDIR /lib/systemd/system CACHE PATH "Where the systemd unit goes")
  else()
    set(DENOC_SYSTEMD_UNITDIR lib/systemd/system CACHE PATH "Where the systemd unit goes")
  endif()
  denoc_install_template(${PROJECT_SOURCE_DIR}/deploy/debian/denoc.service.in
                         ${PROJECT_BINARY_DIR}/systemd/denoc.service)
  install(FILES ${PROJECT_BINARY_DIR}/systemd/denoc.service DESTINATION ${DENOC_SYSTEMD_UNITDIR})
  # /etc for prefix /usr (GNUInstallDirs' full path then), else etc inside the prefix
  if(CMAKE_INSTALL_PREFIX STREQUAL "/usr")
    set(denoc_sysconfdir ${CMAKE_INSTALL_FULL_SYSCONFDIR})
  else()
    set(denoc_sysconfdir ${CMAKE_INSTALL_SYSCONFDIR})
  endif()
  install(FILES ${PROJECT_SOURCE_DIR}/deploy/debian/denoc.default DESTINATION ${denoc_sysconfdir}/default
          RENAME denoc)
endif()
