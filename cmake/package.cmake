# `cpack` in a build tree: two .deb packages (docs/install.md).
#   warden      the command, its man page, bash completion and systemd units;
#               Depends from dpkg-shlibdeps (the libraries the binary links)
#   warden-dev  the library, headers, CMake package and warden.pc; Depends:
#               the -dev packages of the library's dependencies
# Install prefix /usr. tests/packaging builds them, installs them in a
# scratch root and runs `warden demo` from there.
# cpack packages what the tree has built; without this its `preinstall`
# step would first build every target, the tests included.
set(CMAKE_SKIP_INSTALL_ALL_DEPENDENCY ON)
set(CPACK_GENERATOR DEB)
set(CPACK_PACKAGE_NAME warden)
set(CPACK_PACKAGE_VERSION ${PROJECT_VERSION})
set(CPACK_PACKAGE_CONTACT "warden maintainers <warden@localhost>")
set(CPACK_PACKAGE_DESCRIPTION_SUMMARY
  "durable job queue that recovers the work of dead workers in under a second")
set(CPACK_PACKAGING_INSTALL_PREFIX /usr)
set(CPACK_DEB_COMPONENT_INSTALL ON)
set(CPACK_COMPONENTS_ALL runtime dev)
set(CPACK_DEBIAN_FILE_NAME DEB-DEFAULT)
set(CPACK_DEBIAN_PACKAGE_SECTION utils)

set(CPACK_DEBIAN_RUNTIME_PACKAGE_NAME warden)
set(CPACK_DEBIAN_RUNTIME_PACKAGE_SHLIBDEPS ON)
set(CPACK_COMPONENT_RUNTIME_DESCRIPTION
  "warden stores jobs (SQLite or PostgreSQL), runs workers (in-process handlers or supervised\n\
shell commands) and administers them; a killed or frozen worker's jobs run again, never twice.")

set(CPACK_DEBIAN_DEV_PACKAGE_NAME warden-dev)
set(CPACK_DEBIAN_DEV_PACKAGE_SECTION libdevel)
set(WARDEN_DEV_DEPENDS "nlohmann-json3-dev, libsqlite3-dev, libfmt-dev, libssl-dev")
if(WARDEN_POSTGRES)
  string(APPEND WARDEN_DEV_DEPENDS ", libpq-dev")
endif()
set(CPACK_DEBIAN_DEV_PACKAGE_DEPENDS ${WARDEN_DEV_DEPENDS})
set(CPACK_COMPONENT_DEV_DESCRIPTION
  "The static library libwarden.a, its headers (include/warden), find_package(warden) and\n\
warden.pc: enqueue jobs and run handlers inside a C++20 program.")

include(CPack)
