# Kernel sources (kernels/*.cuh, kernels/*.h) are embedded into the binary as strings, so the
# JIT needs no source tree at run time and every run can report the SHA-256 of exactly the
# text it compiled. The generating rule itself is declared in autotune/jit/CMakeLists.txt:
# CMake attaches a custom command only to targets of the directory that declares it.
file(GLOB MOETUNE_KERNEL_FILES CONFIGURE_DEPENDS
     ${PROJECT_SOURCE_DIR}/kernels/*.cuh ${PROJECT_SOURCE_DIR}/kernels/*.h)
set(MOETUNE_EMBEDDED_KERNELS_CPP ${CMAKE_BINARY_DIR}/generated/embedded_kernels.cpp)
