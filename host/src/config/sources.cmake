# The config file's reader (docs/config.md): one file per table, each walking its schema.
# One list for the core and for the config fuzzer (fuzz/), which builds the reader alone.
set(SANDBOX_HOST_CONFIG_SOURCES
  ${CMAKE_CURRENT_LIST_DIR}/audit_config.cpp
  ${CMAKE_CURRENT_LIST_DIR}/backends_config.cpp
  ${CMAKE_CURRENT_LIST_DIR}/broker_config.cpp
  ${CMAKE_CURRENT_LIST_DIR}/config.cpp
  ${CMAKE_CURRENT_LIST_DIR}/config_reader.cpp
  ${CMAKE_CURRENT_LIST_DIR}/egress_config.cpp
  ${CMAKE_CURRENT_LIST_DIR}/egress_parent_config.cpp
  ${CMAKE_CURRENT_LIST_DIR}/launcher_config.cpp
  ${CMAKE_CURRENT_LIST_DIR}/limits_config.cpp
  ${CMAKE_CURRENT_LIST_DIR}/metrics_config.cpp
  ${CMAKE_CURRENT_LIST_DIR}/metrics_scrapers.cpp
  ${CMAKE_CURRENT_LIST_DIR}/module_name.cpp
  ${CMAKE_CURRENT_LIST_DIR}/ops_config.cpp
  ${CMAKE_CURRENT_LIST_DIR}/plugin_config.cpp
  ${CMAKE_CURRENT_LIST_DIR}/requester_env.cpp)
