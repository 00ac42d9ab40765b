# Kernel sources (kernels/*.cuh, kernels/*.h) are embedded into the binary as strings, so the
# JIT needs no source tree at run time and every run can report the SHA-256 of exactly the
# text it compiled. Regenerated whenever a kernel file changes.
file(GLOB MOETUNE_KERNEL_FILES CONFIGURE_DEPENDS
     ${PROJECT_SOURCE_DIR}/kernels/*.cuh ${PROJECT_SOURCE_DIR}/kernels/*.h)
set(MOETUNE_EMBEDDED_KERNELS_CPP ${CMAKE_BINARY_DIR}/generated/embedded_kernels.cpp)
add_custom_command(
  OUTPUT ${MOETUNE_EMBEDDED_KERNELS_CPP}
  COMMAND ${CMAKE_COMMAND} -DOUTPUT=${MOETUNE_EMBEDDED_KERNELS_CPP}
          "-DINPUTS=${MOETUNE_KERNEL_FILES}"
          -P ${PROJECT_SOURCE_DIR}/cmake/write_embedded_kernels.cmake
  DEPENDS ${MOETUNE_KERNEL_FILES} ${PROJECT_SOURCE_DIR}/cmake/write_embedded_kernels.cmake
  COMMENT "Embedding kernel sources"
  VERBATIM)
