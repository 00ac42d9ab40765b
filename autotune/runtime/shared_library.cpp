// libmoetune.so is moetune_runtime linked whole (CMakeLists.txt); a shared library target
// needs at least one source of its own, and this is it.
