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
# Staged with DESTDIR, so that CMAKE_INSTALL_PREFIX is /usr while it
# installs (CPACK_INSTALL_PREFIX: with DESTDIR, cpack installs there): the
# units' ExecStart (cmake/install.cmake) is written then, and must name
# /usr/bin/warden, not the staging directory.
set(CPACK_SET_DESTDIR ON)
set(CPACK_INSTALL_PREFIX ${CPACK_PACKAGING_INSTALL_PREFIX})
set(CPACK_DEB_COMPONENT_INSTALL ON)
set(CPACK_COMPONENTS_ALL runtime dev)
set(CPACK_DEBIAN_FILE_NAME DEB-DEFAULT)
set(CPACK_DEBIAN_PACKAGE_SECTION utils)

set(CPACK_DEBIAN_RUNTIME_PACKAGE_NAME warden)
set(CPACK_DEBIAN_RUNTIME_PACKAGE_SHLIBDEPS ON)
# Maintainer scripts (deploy/debian/): postinst makes user warden (from
# lib/sysusers.d/warden.conf) and reloads a running systemd; prerm stops
# the running warden units on remove (not on upgrade); postrm reloads
# systemd again, and keeps /var/lib/warden, the jobs, on purge. No unit is
# enabled or started: the operator chooses (docs/install.md).
set(CPACK_DEBIAN_RUNTIME_PACKAGE_CONTROL_EXTRA
  ${PROJECT_SOURCE_DIR}/deploy/debian/postinst ${PROJECT_SOURCE_DIR}/deploy/debian/prerm
  ${PROJECT_SOURCE_DIR}/deploy/debian/postrm)
set(CPACK_DEBIAN_PACKAGE_CONTROL_STRICT_PERMISSION ON)
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
