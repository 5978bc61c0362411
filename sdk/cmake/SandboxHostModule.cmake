# sandbox_host_add_module(<name> KIND backend|op|egress SOURCES <file>...)
#
# Builds a sandbox-host module as a shared library named the way the host looks for it:
# backend_<name>.so, op_<name>.so or egress_<name>.so. Drop the file into a module directory and enable
# <name> in the host's config.
function(sandbox_host_add_module name)
  cmake_parse_arguments(PARSE_ARGV 1 ARG "" "KIND;OUTPUT_DIRECTORY" "SOURCES")
  if(NOT ARG_KIND MATCHES "^(backend|op|egress)$")
    message(FATAL_ERROR "sandbox_host_add_module(${name}): KIND must be backend, op or egress, not '${ARG_KIND}'")
  endif()
  set(target "${ARG_KIND}_${name}")
  string(REPLACE "-" "_" target "${target}")
  add_library(${target} MODULE ${ARG_SOURCES})
  target_link_libraries(${target} PRIVATE SandboxHost::sdk)
  set_target_properties(${target} PROPERTIES
    PREFIX ""
    OUTPUT_NAME "${ARG_KIND}_${name}"
    CXX_VISIBILITY_PRESET hidden
    VISIBILITY_INLINES_HIDDEN ON)
  if(ARG_OUTPUT_DIRECTORY)
    set_target_properties(${target} PROPERTIES LIBRARY_OUTPUT_DIRECTORY "${ARG_OUTPUT_DIRECTORY}")
  elseif(DEFINED SANDBOX_HOST_MODULE_BUILD_DIR)
    set_target_properties(${target} PROPERTIES LIBRARY_OUTPUT_DIRECTORY "${SANDBOX_HOST_MODULE_BUILD_DIR}")
  endif()
  set(SANDBOX_HOST_LAST_MODULE_TARGET ${target} PARENT_SCOPE)
endfunction()
