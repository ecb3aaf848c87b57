# `cmake --install build --prefix PREFIX` and `cpack -G DEB` (docs/install.md).
# The layout is fixed, not GNUInstallDirs': the installed binary finds its
# presets at PREFIX/bin/../share/parashift/scenarios (core/data_dir.cpp), and
# the shipped scenarios name their topologies as ../topologies/<file>.dot.

# Link folders outside the build tree (OpenMPI's, CUDA's) stay on the
# installed binary's run path; the build tree's are dropped.
set(CMAKE_INSTALL_RPATH_USE_LINK_PATH ON)
set_target_properties(parashift PROPERTIES INSTALL_RPATH_USE_LINK_PATH ON)

install(TARGETS parashift RUNTIME DESTINATION bin)
install(DIRECTORY scenarios/ DESTINATION share/parashift/scenarios)
install(FILES topologies/h100-1k.dot topologies/h100-16k.dot
  DESTINATION share/parashift/topologies)
# The published runs `validate` checks against and the nccl-tests figures.
install(DIRECTORY tests/data/ DESTINATION share/parashift/data)
install(FILES README.md LICENSE DESTINATION share/doc/parashift)
install(DIRECTORY docs/ DESTINATION share/doc/parashift/docs)

set(CPACK_PACKAGE_NAME parashift)
set(CPACK_PACKAGE_VENDOR "parashift")
set(CPACK_PACKAGE_DESCRIPTION_SUMMARY
  "Plans, simulates and re-decides how large-model training is split across GPUs")
set(CPACK_PACKAGE_VERSION ${PROJECT_VERSION})
set(CPACK_PACKAGING_INSTALL_PREFIX /usr)
set(CPACK_DEBIAN_PACKAGE_MAINTAINER "parashift developers <parashift@localhost>")
set(CPACK_DEBIAN_PACKAGE_SECTION science)
set(CPACK_DEBIAN_FILE_NAME DEB-DEFAULT)
# Debian 12's runtime packages of the libraries the binary links (ldd).
# dpkg-shlibdeps is not used: a CUDA build also links the toolkit's
# libraries, which no Debian package provides (the package then needs the
# CUDA toolkit and NCCL installed as on the build machine).
set(CPACK_DEBIAN_PACKAGE_DEPENDS
  "libc6, libstdc++6, libyaml-cpp0.7, libboost-graph1.74.0, libssl3, libopenmpi3")
include(CPack)
