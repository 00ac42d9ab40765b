# One static library per pipeline stage (autotune/<name>/), so that each stage builds, links
# and is tested on its own, and a half-finished stage never breaks another's build.
#   moetune_component(io DEPS moetune_core)
# Sources: every .cpp directly in autotune/<name>/ plus any listed in EXTRA_SOURCES.
function(moetune_component name)
  cmake_parse_arguments(ARG "" "" "DEPS;EXTRA_SOURCES;PRIVATE_DEPS" ${ARGN})
  file(GLOB sources CONFIGURE_DEPENDS ${CMAKE_CURRENT_SOURCE_DIR}/*.cpp)
  list(APPEND sources ${ARG_EXTRA_SOURCES})
  if(sources)
    add_library(moetune_${name} STATIC ${sources})
    target_include_directories(moetune_${name} PUBLIC ${PROJECT_SOURCE_DIR})
    target_link_libraries(moetune_${name} PUBLIC ${ARG_DEPS} PRIVATE ${ARG_PRIVATE_DEPS})
  else()
    add_library(moetune_${name} INTERFACE)
    target_include_directories(moetune_${name} INTERFACE ${PROJECT_SOURCE_DIR})
    target_link_libraries(moetune_${name} INTERFACE ${ARG_DEPS})
  endif()
endfunction()
