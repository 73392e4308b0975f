# `cmake --install`: the public headers, libcmhost.a, the cmhost tool and
# its background builder (libexec/cmhost/cmhost-aot-build), the
# CMake package (find_package(cmhost CONFIG) -> cmhost::cmhost) and the
# pkg-config module, under CMAKE_INSTALL_PREFIX.
include(GNUInstallDirs)
include(CMakePackageConfigHelpers)

install(DIRECTORY ${PROJECT_SOURCE_DIR}/include/cmhost DESTINATION ${CMAKE_INSTALL_INCLUDEDIR})
install(TARGETS cmhost_lib EXPORT cmhostTargets ARCHIVE DESTINATION ${CMAKE_INSTALL_LIBDIR})
install(TARGETS cmhost RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR})
install(TARGETS cmhost-aot-build RUNTIME DESTINATION ${CMAKE_INSTALL_LIBEXECDIR}/cmhost)
install(FILES ${PROJECT_SOURCE_DIR}/src/engine/aot/exports.list DESTINATION ${CMAKE_INSTALL_DATADIR}/cmhost)
install(EXPORT cmhostTargets NAMESPACE cmhost:: DESTINATION ${CMAKE_INSTALL_LIBDIR}/cmake/cmhost)

configure_package_config_file(${PROJECT_SOURCE_DIR}/cmake/cmhostConfig.cmake.in
                              ${PROJECT_BINARY_DIR}/cmhostConfig.cmake
                              INSTALL_DESTINATION ${CMAKE_INSTALL_LIBDIR}/cmake/cmhost)
write_basic_package_version_file(${PROJECT_BINARY_DIR}/cmhostConfigVersion.cmake
                                 VERSION ${PROJECT_VERSION} COMPATIBILITY SameMinorVersion)
install(FILES ${PROJECT_BINARY_DIR}/cmhostConfig.cmake ${PROJECT_BINARY_DIR}/cmhostConfigVersion.cmake
        DESTINATION ${CMAKE_INSTALL_LIBDIR}/cmake/cmhost)

file(RELATIVE_PATH CMHOST_PC_TO_PREFIX ${CMAKE_INSTALL_FULL_LIBDIR}/pkgconfig ${CMAKE_INSTALL_PREFIX})
configure_file(${PROJECT_SOURCE_DIR}/cmake/cmhost.pc.in ${PROJECT_BINARY_DIR}/cmhost.pc @ONLY)
install(FILES ${PROJECT_BINARY_DIR}/cmhost.pc DESTINATION ${CMAKE_INSTALL_LIBDIR}/pkgconfig)
