# The SHA-256 of the code that decides a verdict (issue #12): the default-configuration
# heuristic (the baseline every candidate must beat), the statistics and the gate, the
# protocol (bucket tuner, confirmation, candidate pairs, calibration), the GPU sampler (how
# many launches a sample times), the verifier and the reference it compares against. It is part of every report's provenance and of a journal's
# identity, so `tune --resume` refuses a journal whose verdicts this code might not reach.
#
# The digest is `sha256sum FILES | sha256sum` run at the project root: the SHA-256 of the
# lines "<file digest>  <relative path>\n" in the order below, so it can be checked by hand.
# Every file is a configure dependency: editing one re-runs CMake, which recomputes it.
function(moetune_decision_code_sha256 out_var)
  file(GLOB stats_sources CONFIGURE_DEPENDS RELATIVE ${PROJECT_SOURCE_DIR}
       ${PROJECT_SOURCE_DIR}/autotune/stats/*.cpp)
  list(SORT stats_sources)
  set(sources
      autotune/search/default_config.cpp
      ${stats_sources}
      autotune/tune/bucket_tuner.cpp
      autotune/tune/confirmation.cpp
      autotune/tune/confirmation_layout.cpp
      autotune/measure/served_tokens.cpp
      autotune/measure/gpu_sampler.cpp
      autotune/tune/candidate_pairs.cpp
      autotune/tune/calibration.cpp
      autotune/exec/verifier.cpp
      autotune/moe/compare.cpp
      autotune/moe/reference.cpp)
  set(listing "")
  foreach(source IN LISTS sources)
    set(path ${PROJECT_SOURCE_DIR}/${source})
    if(NOT EXISTS ${path})
      message(FATAL_ERROR "decision code source ${source} is missing: update ${CMAKE_CURRENT_FUNCTION_LIST_FILE}")
    endif()
    file(SHA256 ${path} digest)
    string(APPEND listing "${digest}  ${source}\n")
    set_property(DIRECTORY ${PROJECT_SOURCE_DIR} APPEND PROPERTY CMAKE_CONFIGURE_DEPENDS ${path})
  endforeach()
  string(SHA256 total "${listing}")
  set(${out_var} ${total} PARENT_SCOPE)
endfunction()
