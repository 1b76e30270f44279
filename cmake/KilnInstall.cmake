# `cmake --install`: bin/kiln and the CMake package (find_package(kiln CONFIG): kiln::kiln and
# kiln_add_model()). Nothing else is needed to compile models: kiln carries its runtime's
# sources inside itself and builds them into a cache on first use, so there is no runtime
# library or header to install (each compiled model's NAME.h, libNAME.a and NAME.pc stand
# alone). Every installed path is relative to the prefix, so the tree can be moved.
include(GNUInstallDirs)
include(CMakePackageConfigHelpers)

set(KILN_INSTALL_CMAKEDIR ${CMAKE_INSTALL_LIBDIR}/cmake/kiln CACHE STRING "where kilnConfig.cmake is installed, under the prefix")

install(TARGETS kiln EXPORT kilnTargets RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR})
install(EXPORT kilnTargets NAMESPACE kiln:: DESTINATION ${KILN_INSTALL_CMAKEDIR})

configure_package_config_file(${CMAKE_CURRENT_LIST_DIR}/kilnConfig.cmake.in
                              ${PROJECT_BINARY_DIR}/cmake/kilnConfig.cmake
                              INSTALL_DESTINATION ${KILN_INSTALL_CMAKEDIR})
# While kiln is 0.x a minor version may change kiln_add_model() or the generated C API, so
# find_package(kiln 0.1) accepts 0.1.z only.
write_basic_package_version_file(${PROJECT_BINARY_DIR}/cmake/kilnConfigVersion.cmake
                                 COMPATIBILITY SameMinorVersion)
install(FILES ${PROJECT_BINARY_DIR}/cmake/kilnConfig.cmake ${PROJECT_BINARY_DIR}/cmake/kilnConfigVersion.cmake
              ${CMAKE_CURRENT_LIST_DIR}/KilnAddModel.cmake
        DESTINATION ${KILN_INSTALL_CMAKEDIR})
