# `cmake --install BUILD [--prefix P]` (docs/install.md): the component
# `runtime` is the `warden` command and what runs it (the `warden` .deb),
# `dev` what a C++ program needs to use the library (`warden-dev`).
include(CMakePackageConfigHelpers)

install(TARGETS warden RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR} COMPONENT runtime)
# Where workers look for it (FindShimProgram, env/subprocess.h): beside the
# program, or in its ../libexec/warden.
install(TARGETS warden-shim RUNTIME DESTINATION ${CMAKE_INSTALL_LIBEXECDIR}/warden
  COMPONENT runtime)
configure_file(docs/man/warden.1.in ${PROJECT_BINARY_DIR}/warden.1 @ONLY)
install(FILES ${PROJECT_BINARY_DIR}/warden.1 DESTINATION ${CMAKE_INSTALL_MANDIR}/man1
  COMPONENT runtime)
# Where bash-completion looks for a command's completion, loaded on first use.
install(FILES scripts/completion/warden.bash RENAME warden
  DESTINATION ${CMAKE_INSTALL_DATADIR}/bash-completion/completions COMPONENT runtime)
# Whatever units deploy/systemd/ holds (the worker template and the
# server), with ExecStart naming the binary installed beside them. The
# prefix is known only at install time (`cmake --install --prefix DIR`,
# and cpack's /usr): the units are written then, from their .in, into the
# build tree, and installed from there. (configure_file at configure time
# would name CMAKE_INSTALL_PREFIX as configured, /usr/local, whatever
# --prefix said.) In lib/, not the libdir: systemd reads
# /usr/lib/systemd/system and /usr/local/lib/systemd/system.
file(GLOB WARDEN_SYSTEMD_UNITS CONFIGURE_DEPENDS ${PROJECT_SOURCE_DIR}/deploy/systemd/*.service.in)
if(WARDEN_SYSTEMD_UNITS)
  set(WARDEN_UNITS_OUT ${PROJECT_BINARY_DIR}/installed-units)
  set(WARDEN_UNITS_INSTALLED "")
  foreach(unit ${WARDEN_SYSTEMD_UNITS})
    get_filename_component(name ${unit} NAME)
    string(REGEX REPLACE "\\.in$" "" name ${name})
    list(APPEND WARDEN_UNITS_INSTALLED ${WARDEN_UNITS_OUT}/${name})
  endforeach()
  install(CODE "
    set(CMAKE_INSTALL_FULL_BINDIR \"${CMAKE_INSTALL_BINDIR}\")
    if(NOT IS_ABSOLUTE \"\${CMAKE_INSTALL_FULL_BINDIR}\")
      set(CMAKE_INSTALL_FULL_BINDIR \"\${CMAKE_INSTALL_PREFIX}/\${CMAKE_INSTALL_FULL_BINDIR}\")
    endif()
    foreach(unit ${WARDEN_SYSTEMD_UNITS})
      get_filename_component(name \"\${unit}\" NAME)
      string(REGEX REPLACE \"[.]in$\" \"\" name \"\${name}\")
      configure_file(\"\${unit}\" \"${WARDEN_UNITS_OUT}/\${name}\" @ONLY)
    endforeach()
  " COMPONENT runtime)
  install(FILES ${WARDEN_UNITS_INSTALLED} DESTINATION lib/systemd/system COMPONENT runtime)
endif()
# The units' user (User=warden): sysusers.d(5), which systemd-sysusers
# applies at boot, and the .deb's postinst at once (cmake/package.cmake).
install(FILES deploy/sysusers/warden.conf DESTINATION lib/sysusers.d COMPONENT runtime)

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
