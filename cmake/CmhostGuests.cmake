# C guests: C sources with hand-written canonical ABI glue, compiled by clang
# into a wasi-libc reactor module, then made a component by jco's JS API
# (tests/guests/componentize.mjs). The modules use only malloc/free/memcpy
# from wasi-libc, which import nothing from WASI, so no preview1 adapter is
# needed (cmhost has no WASI host functions).
#
#   include(${PROJECT_SOURCE_DIR}/cmake/CmhostGuests.cmake)
#   cmhost_add_c_guest(NAME boundary WIT boundary.wit [WORLD boundary]
#                      SOURCES a.c b.c [DEPENDS a.h] [FLAGS -mbulk-memory]
#                      OUTPUT dir/boundary.wasm)
#
# adds the rules for OUTPUT (the core module goes to
# ${CMAKE_CURRENT_BINARY_DIR}/guests/NAME.core.wasm); a custom target that
# depends on OUTPUT builds it.

find_program(CMHOST_CLANG NAMES clang clang-14)
find_program(CMHOST_NODE NAMES node)
if(NOT CMHOST_CLANG OR NOT CMHOST_NODE)
  message(FATAL_ERROR "C guests need clang and node (clang: ${CMHOST_CLANG}, node: ${CMHOST_NODE}); "
                      "scripts/setup installs clang, lld, wasi-libc and libclang-rt-14-dev-wasm32")
endif()
set(CMHOST_GUEST_FLAGS --target=wasm32-wasi -O2 -mexec-model=reactor -Wall -Wextra -Werror
                       -Wl,--strip-debug -Wl,--gc-sections)
set(CMHOST_COMPONENTIZE ${PROJECT_SOURCE_DIR}/tests/guests/componentize.mjs)

# Compiling and linking a tiny reactor checks clang, wasm-ld, the wasi-libc
# sysroot and the wasm32 compiler runtime at once, with a message now rather
# than a link error in the middle of the build. Once per configure, however
# many directories include this file.
get_property(probed GLOBAL PROPERTY CMHOST_GUEST_TOOLCHAIN_PROBED)
if(NOT probed)
  set_property(GLOBAL PROPERTY CMHOST_GUEST_TOOLCHAIN_PROBED TRUE)
  set(probe_dir ${PROJECT_BINARY_DIR}/guest-probe)
  file(MAKE_DIRECTORY ${probe_dir})
  file(WRITE ${probe_dir}/probe.c "#include <stdlib.h>\n__attribute__((export_name(\"f\"))) void *f(size_t n) { return malloc(n); }\n")
  execute_process(COMMAND ${CMHOST_CLANG} ${CMHOST_GUEST_FLAGS} ${probe_dir}/probe.c -o ${probe_dir}/probe.wasm
                  RESULT_VARIABLE probe_status OUTPUT_VARIABLE probe_output ERROR_VARIABLE probe_output)
  if(NOT probe_status EQUAL 0)
    message(FATAL_ERROR "${CMHOST_CLANG} cannot build a wasm32-wasi reactor (C guests need clang, lld, "
                        "wasi-libc and libclang-rt-14-dev-wasm32; scripts/setup installs them):\n${probe_output}")
  endif()
endif()

function(cmhost_add_c_guest)
  cmake_parse_arguments(ARG "" "NAME;WIT;WORLD;OUTPUT" "SOURCES;DEPENDS;FLAGS" ${ARGN})
  if(NOT ARG_WORLD)
    set(ARG_WORLD ${ARG_NAME})
  endif()
  set(core ${CMAKE_CURRENT_BINARY_DIR}/guests/${ARG_NAME}.core.wasm)
  get_filename_component(output_dir ${ARG_OUTPUT} DIRECTORY)
  add_custom_command(
    OUTPUT ${core}
    COMMAND ${CMAKE_COMMAND} -E make_directory ${CMAKE_CURRENT_BINARY_DIR}/guests
    COMMAND ${CMHOST_CLANG} ${CMHOST_GUEST_FLAGS} ${ARG_FLAGS} ${ARG_SOURCES} -o ${core}
    DEPENDS ${ARG_SOURCES} ${ARG_DEPENDS}
    COMMENT "clang --target=wasm32-wasi ${ARG_NAME}"
    VERBATIM)
  add_custom_command(
    OUTPUT ${ARG_OUTPUT}
    COMMAND ${CMAKE_COMMAND} -E make_directory ${output_dir}
    COMMAND ${CMHOST_NODE} ${CMHOST_COMPONENTIZE} ${core} ${ARG_WIT} ${ARG_WORLD} ${ARG_OUTPUT}
    DEPENDS ${core} ${ARG_WIT} ${CMHOST_COMPONENTIZE}
    COMMENT "componentize ${ARG_NAME}"
    VERBATIM)
endfunction()
