# Component text (.wat) assembled into a binary by the pinned jco at build
# time: cmhost_assemble_component(SOURCE x.wat OUTPUT dir/x.wasm) adds the
# rule; the caller collects the outputs into a target.
set(CMHOST_JCO ${PROJECT_SOURCE_DIR}/node_modules/.bin/jco)

function(cmhost_assemble_component)
  cmake_parse_arguments(ARG "" "SOURCE;OUTPUT" "" ${ARGN})
  get_filename_component(dir ${ARG_OUTPUT} DIRECTORY)
  get_filename_component(name ${ARG_SOURCE} NAME)
  add_custom_command(
    OUTPUT ${ARG_OUTPUT}
    COMMAND ${CMAKE_COMMAND} -E make_directory ${dir}
    COMMAND ${CMHOST_JCO} parse ${ARG_SOURCE} -o ${ARG_OUTPUT}
    DEPENDS ${ARG_SOURCE}
    COMMENT "jco parse ${name}"
    VERBATIM)
endfunction()
