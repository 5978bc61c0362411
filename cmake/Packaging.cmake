# The Debian packages (scripts/package.sh builds them; docs/operations.md, "Install"):
#   sandbox-host          the executables, the modules, the systemd units, the docs and the
#                         commented system-wide config /etc/sandbox-host/config.toml;
#   sandbox-host-dev      the SDK's headers, the core's static libraries and both CMake
#                         packages, at exactly the runtime package's version;
#   sandbox-host-dbgsym   the runtime package's debug info, split out by build-id.
# The version is the project's (project(... VERSION) in the top CMakeLists.txt). The
# packaged paths are the ones compiled into the executables, so a package is built from a
# tree configured with CMAKE_INSTALL_PREFIX=/usr, where GNUInstallDirs puts the modules in
# the multiarch directory /usr/lib/<triplet>/sandbox-host/modules.

set(control_dir ${PROJECT_BINARY_DIR}/debian-control)
file(MAKE_DIRECTORY ${control_dir})

# ---- what only the package installs --------------------------------------------------------
# EXCLUDE_FROM_ALL: CPack installs component by component and so picks these up, while a
# plain `cmake --install` of a source build (tests/sdk's into a scratch prefix among them)
# writes nothing into /etc or the system's systemd directories.

# The config that `sandbox-host` reads when no --config is given (kDefaultConfigPath in
# host/include/sandbox_host/host/config.hpp), whatever the prefix; a conffile (below).
set(SANDBOX_HOST_SYSTEM_CONFIG /etc/sandbox-host/config.toml)
install(FILES deploy/debian/config.toml DESTINATION /etc/sandbox-host
        COMPONENT runtime EXCLUDE_FROM_ALL)

# Every unit in deploy/systemd/. A template (name@.service, name@.socket) is an instance per
# account of the system manager, every other unit the user manager's.
file(GLOB systemd_units CONFIGURE_DEPENDS
     ${PROJECT_SOURCE_DIR}/deploy/systemd/*.service
     ${PROJECT_SOURCE_DIR}/deploy/systemd/*.socket
     ${PROJECT_SOURCE_DIR}/deploy/systemd/*.timer)
set(SANDBOX_HOST_SYSTEM_UNITS "")
set(SANDBOX_HOST_USER_UNITS "")
foreach(unit IN LISTS systemd_units)
  get_filename_component(name ${unit} NAME)
  if(name MATCHES "@\\.")
    install(FILES ${unit} DESTINATION lib/systemd/system COMPONENT runtime EXCLUDE_FROM_ALL)
    string(APPEND SANDBOX_HOST_SYSTEM_UNITS " ${name}")
  else()
    install(FILES ${unit} DESTINATION lib/systemd/user COMPONENT runtime EXCLUDE_FROM_ALL)
    string(APPEND SANDBOX_HOST_USER_UNITS " ${name}")
  endif()
endforeach()

# /usr/share/doc/<package>: the README and docs/*.md, and for both packages the copyright in
# Debian's format and the changelog. The packages are native (the version has no Debian
# revision), so the changelog is changelog.gz; deploy/debian/changelog gets an entry for
# each version (tests/system/package checks its first one is the project's version).
set(doc_dir ${CMAKE_INSTALL_DATAROOTDIR}/doc/sandbox-host)
set(dev_doc_dir ${CMAKE_INSTALL_DATAROOTDIR}/doc/sandbox-host-dev)
set(changelog ${control_dir}/changelog.gz)
set_property(DIRECTORY APPEND PROPERTY CMAKE_CONFIGURE_DEPENDS deploy/debian/changelog)
execute_process(COMMAND gzip -9nc ${PROJECT_SOURCE_DIR}/deploy/debian/changelog
                OUTPUT_FILE ${changelog} COMMAND_ERROR_IS_FATAL ANY)
file(GLOB docs CONFIGURE_DEPENDS ${PROJECT_SOURCE_DIR}/docs/*.md)
install(FILES README.md deploy/debian/copyright ${changelog} DESTINATION ${doc_dir}
        COMPONENT runtime EXCLUDE_FROM_ALL)
install(FILES ${docs} DESTINATION ${doc_dir}/docs COMPONENT runtime EXCLUDE_FROM_ALL)
install(FILES deploy/debian/copyright ${changelog} DESTINATION ${dev_doc_dir}
        COMPONENT dev EXCLUDE_FROM_ALL)

# What lintian reports on purpose, with the reason in the file.
install(FILES deploy/debian/lintian-overrides DESTINATION ${CMAKE_INSTALL_DATAROOTDIR}/lintian/overrides
        RENAME sandbox-host COMPONENT runtime EXCLUDE_FROM_ALL)

# Manual pages, made by help2man from each command's --help, where help2man is installed
# (scripts/setup.sh installs it).
find_program(HELP2MAN help2man)
if(HELP2MAN)
  set(man_pages "")
  foreach(command sandbox-host sandbox-host-launch)
    if(command STREQUAL "sandbox-host")
      set(summary "runs untrusted plugins inside OS sandboxes")
    else()
      set(summary "launches a plugin through the launch service of sandbox-host serve")
    endif()
    set(page ${control_dir}/${command}.1)
    # Run by name from PATH, so that the usage line names the command, not the build tree.
    add_custom_command(OUTPUT ${page}.gz
      COMMAND ${CMAKE_COMMAND} -E env PATH=$<TARGET_FILE_DIR:${command}>:$ENV{PATH}
              ${HELP2MAN} --no-info --version-string=${PROJECT_VERSION} --name=${summary}
              --include=${PROJECT_SOURCE_DIR}/deploy/debian/man-see-also.h2m
              --output=${page} ${command}
      COMMAND gzip -9nf ${page}
      DEPENDS ${command} deploy/debian/man-see-also.h2m
      VERBATIM)
    list(APPEND man_pages ${page}.gz)
  endforeach()
  add_custom_target(man_pages ALL DEPENDS ${man_pages})
  install(FILES ${man_pages} DESTINATION ${CMAKE_INSTALL_MANDIR}/man1
          COMPONENT runtime EXCLUDE_FROM_ALL)
else()
  message(STATUS "help2man not found: the Debian package will have no manual pages")
endif()

# ---- maintainer scripts and conffiles ------------------------------------------------------
foreach(script postinst postrm)
  configure_file(deploy/debian/${script}.in ${control_dir}/${script} @ONLY
                 FILE_PERMISSIONS OWNER_READ OWNER_WRITE OWNER_EXECUTE GROUP_READ GROUP_EXECUTE
                                  WORLD_READ WORLD_EXECUTE)
endforeach()
file(WRITE ${control_dir}/conffiles "${SANDBOX_HOST_SYSTEM_CONFIG}\n")

# ---- CPack ---------------------------------------------------------------------------------
set(CPACK_GENERATOR DEB)
set(CPACK_PACKAGE_NAME sandbox-host)
set(CPACK_PACKAGE_VENDOR "sandbox-host maintainers")
set(CPACK_PACKAGE_CONTACT "sandbox-host maintainers <maintainers@users.noreply.a-seed-ad1a4b25.example>")
set(CPACK_PACKAGING_INSTALL_PREFIX ${CMAKE_INSTALL_PREFIX})
set(CPACK_DEB_COMPONENT_INSTALL ON)
set(CPACK_COMPONENTS_ALL runtime dev)
set(CPACK_DEBIAN_FILE_NAME DEB-DEFAULT)
set(CPACK_DEBIAN_PACKAGE_SECTION admin)
set(CPACK_DEBIAN_PACKAGE_PRIORITY optional)
# Depends comes from dpkg-shlibdeps, which reads every ELF file of the package: the
# executables and the dlopen'ed modules alike.
set(CPACK_DEBIAN_PACKAGE_SHLIBDEPS ON)
set(CPACK_DEBIAN_PACKAGE_CONTROL_STRICT_PERMISSION ON)

set(CPACK_DEBIAN_RUNTIME_PACKAGE_NAME sandbox-host)
set(CPACK_DEBIAN_RUNTIME_DEBUGINFO_PACKAGE ON)
set(CPACK_DEBIAN_RUNTIME_PACKAGE_CONTROL_EXTRA
    ${control_dir}/conffiles ${control_dir}/postinst ${control_dir}/postrm)
# Each description's first line is its package's synopsis.
set(CPACK_COMPONENT_RUNTIME_DESCRIPTION
    "runs untrusted plugins inside OS sandboxes
sandbox-host launches plugins as subprocesses under a Linux sandbox (user,
mount, pid and network namespaces with seccomp, or Landlock where user
namespaces are blocked), with a broker that acts on the host for them and an
egress proxy that holds their network. This package holds the executables,
the backend and operation modules, the systemd units and a commented default
config.")

set(CPACK_DEBIAN_DEV_PACKAGE_NAME sandbox-host-dev)
set(CPACK_DEBIAN_DEV_PACKAGE_SECTION libdevel)
set(CPACK_COMPONENT_DEV_DEPENDS runtime)
# What the CMake packages find (find_dependency, pkg_check_modules) is a build dependency of
# every gateway or module built against them, which shlibdeps cannot see in headers and
# static libraries: Boost's headers and CMake package, OpenSSL's, libidn2's and RE2's headers
# with their pkg-config files, pkg-config itself, and prometheus-cpp's CMake package.
set(CPACK_DEBIAN_DEV_PACKAGE_DEPENDS
    "libboost1.81-dev, libssl-dev, libidn2-dev, libre2-dev, pkgconf, prometheus-cpp-dev")
# sandbox-host-dev Depends also: sandbox-host (= <version>).
set(CPACK_DEBIAN_ENABLE_COMPONENT_DEPENDS ON)
set(CPACK_COMPONENT_DEV_DESCRIPTION
    "SDK and core library of sandbox-host, for modules and gateways
The module SDK's headers and CMake package (SandboxHostSDK), and the core's
static libraries, headers and CMake package (SandboxHost) for gateways that
launch plugins themselves.")

include(CPack)
