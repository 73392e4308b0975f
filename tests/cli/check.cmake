# Runs a command as a user would and checks its exit status and its output
# (stdout and stderr together) at once: a command that prints the expected
# text but exits with another status fails, and so does the reverse.
#
#   cmake -P check.cmake -- STATUS REGEX COMMAND [ARGS...]
#
# REGEX is a CMake regular expression matched against the whole output
# (`^` and `$` anchor at its start and end).
set(first -1)
math(EXPR last "${CMAKE_ARGC} - 1")
foreach(i RANGE 1 ${last})
  if(CMAKE_ARGV${i} STREQUAL "--")
    math(EXPR first "${i} + 1")
    break()
  endif()
endforeach()
math(EXPR regex_at "${first} + 1")
math(EXPR command_at "${first} + 2")
if(first LESS 0 OR command_at GREATER last)
  message(FATAL_ERROR "usage: cmake -P check.cmake -- STATUS REGEX COMMAND [ARGS...]")
endif()
set(expected_status "${CMAKE_ARGV${first}}")
set(regex "${CMAKE_ARGV${regex_at}}")
set(command)
foreach(i RANGE ${command_at} ${last})
  string(REPLACE ";" "\\;" arg "${CMAKE_ARGV${i}}")  # a `;` inside an argument is not a list separator
  list(APPEND command "${arg}")
endforeach()

execute_process(COMMAND ${command} RESULT_VARIABLE status OUTPUT_VARIABLE output ERROR_VARIABLE output)
message("${output}")
set(problems)
if(NOT status STREQUAL expected_status)
  list(APPEND problems "exit status ${status}, expected ${expected_status}")
endif()
if(NOT output MATCHES "${regex}")
  list(APPEND problems "the output does not match `${regex}`")
endif()
if(problems)
  list(JOIN problems "; " text)
  message(FATAL_ERROR "${text}")
endif()
