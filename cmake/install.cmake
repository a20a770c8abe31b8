# `cmake --install BUILD [--prefix P]` (docs/install.md): the component
# `runtime` is the `warden` command and what runs it (the `warden` .deb),
# `dev` what a C++ program needs to use the library (`warden-dev`).
include(CMakePackageConfigHelpers)

install(TARGETS warden RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR} COMPONENT runtime)
configure_file(docs/man/warden.1.in ${PROJECT_BINARY_DIR}/warden.1 @ONLY)
install(FILES ${PROJECT_BINARY_DIR}/warden.1 DESTINATION ${CMAKE_INSTALL_MANDIR}/man1
  COMPONENT runtime)
# Where bash-completion looks for a command's completion, loaded on first use.
install(FILES scripts/completion/warden.bash RENAME warden
  DESTINATION ${CMAKE_INSTALL_DATADIR}/bash-completion/completions COMPONENT runtime)
# Whatever units deploy/systemd/ holds (the worker template and the server).
file(GLOB WARDEN_SYSTEMD_UNITS CONFIGURE_DEPENDS ${PROJECT_SOURCE_DIR}/deploy/systemd/*.service)
if(WARDEN_SYSTEMD_UNITS)
  install(FILES ${WARDEN_SYSTEMD_UNITS} DESTINATION lib/systemd/system COMPONENT runtime)
endif()

# The library, its public headers (include/warden: they include only each
# other, the standard library, nlohmann/json and, in warden/sqlite.h,
# sqlite3.h; tests/packaging checks each one compiles alone from the
# installed tree), and a CMake package: find_package(warden) gives
# warden::warden.
install(TARGETS warden_lib EXPORT warden-targets
  ARCHIVE DESTINATION ${CMAKE_INSTALL_LIBDIR} COMPONENT dev)
install(DIRECTORY include/warden DESTINATION ${CMAKE_INSTALL_INCLUDEDIR} COMPONENT dev
  FILES_MATCHING PATTERN "*.h")
set(WARDEN_CMAKE_DIR ${CMAKE_INSTALL_LIBDIR}/cmake/warden)
install(EXPORT warden-targets NAMESPACE warden:: DESTINATION ${WARDEN_CMAKE_DIR} COMPONENT dev)
configure_package_config_file(cmake/warden-config.cmake.in
  ${PROJECT_BINARY_DIR}/warden-config.cmake INSTALL_DESTINATION ${WARDEN_CMAKE_DIR})
# 0.x: a minor version may break the API.
write_basic_package_version_file(${PROJECT_BINARY_DIR}/warden-config-version.cmake
  COMPATIBILITY SameMinorVersion)
install(FILES ${PROJECT_BINARY_DIR}/warden-config.cmake
  ${PROJECT_BINARY_DIR}/warden-config-version.cmake
  DESTINATION ${WARDEN_CMAKE_DIR} COMPONENT dev)

# pkg-config: warden.pc finds its prefix from where it lies (${pcfiledir}),
# so an installed tree may be moved (a DESTDIR, a scratch root).
file(RELATIVE_PATH WARDEN_PC_TO_PREFIX /prefix/${CMAKE_INSTALL_LIBDIR}/pkgconfig /prefix)
string(REGEX REPLACE "/$" "" WARDEN_PC_TO_PREFIX "${WARDEN_PC_TO_PREFIX}")
if(WARDEN_POSTGRES)
  set(WARDEN_PC_PG " libpq")
else()
  set(WARDEN_PC_PG "")
endif()
configure_file(cmake/warden.pc.in ${PROJECT_BINARY_DIR}/warden.pc @ONLY)
install(FILES ${PROJECT_BINARY_DIR}/warden.pc
  DESTINATION ${CMAKE_INSTALL_LIBDIR}/pkgconfig COMPONENT dev)
