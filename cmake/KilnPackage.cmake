# `cpack -G DEB` in the build tree: kiln_<version>_<arch>.deb of what `cmake --install`
# installs, under /usr. Its dependencies are Debian packages only: the shared libraries kiln
# links (found by dpkg-shlibdeps) and the C++ compiler kiln runs to build models.
set(CPACK_PACKAGE_NAME kiln)
set(CPACK_PACKAGE_VERSION ${PROJECT_VERSION})
set(CPACK_PACKAGE_DESCRIPTION_SUMMARY "ahead-of-time compiler for neural-network inference")
set(CPACK_PACKAGE_DESCRIPTION
    "kiln compiles ONNX and PyTorch models into standalone executables and C libraries.")
set(CPACK_PACKAGE_CONTACT "kiln developers" CACHE STRING "the .deb's Maintainer field")
set(CPACK_GENERATOR DEB)
set(CPACK_STRIP_FILES ON)  # the RelWithDebInfo binary is mostly debug info
set(CPACK_DEBIAN_FILE_NAME DEB-DEFAULT)  # kiln_0.1.0_amd64.deb
set(CPACK_DEBIAN_PACKAGE_SECTION devel)
set(CPACK_DEBIAN_PACKAGE_SHLIBDEPS ON)
set(CPACK_DEBIAN_PACKAGE_DEPENDS "g++")
include(CPack)
