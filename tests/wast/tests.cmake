# cmhost wast on the scripts in this directory: counts, failure lines, exit
# status, --expect, --json and the time limit. Included from tests/CMakeLists.txt.
set(wast_dir ${CMAKE_CURRENT_SOURCE_DIR}/wast)
set(wast_cache --cache-dir ${CMAKE_BINARY_DIR}/wast-cache)

cmhost_cli_test(wast-values ARGS wast ${wast_cache} ${wast_dir}/values.wast
                EXPECT "values.wast: 43 passed, 0 failed, 0 skipped\n43 passed, 0 failed, 0 skipped\n$")
cmhost_cli_test(wast-commands ARGS wast ${wast_cache} ${wast_dir}/commands.wast
                EXPECT "line 73: assert_malformed skipped: jco cannot assemble the text: [^\n]*\n22 passed, 0 failed, 1 skipped\n$")
cmhost_cli_test(wast-linking ARGS wast ${wast_cache} ${wast_dir}/linking.wast EXPECT "\n11 passed, 0 failed, 0 skipped\n$")
cmhost_cli_test(wast-failures-exit ARGS wast ${wast_cache} ${wast_dir}/failures.wast EXIT 1)
cmhost_cli_test(wast-failures-output ARGS wast ${wast_cache} ${wast_dir}/failures.wast
                EXPECT "line 11: assert_return failed: expected \\(u32.const 8\\), got 7\n.*line 25: assert_return failed: the component at line 24 failed to instantiate\n1 passed, 14 failed, 0 skipped\n$")
cmhost_cli_test(wast-json ARGS wast --json ${wast_cache} ${wast_dir}/commands.wast
                EXPECT "^{\n  \"failed\": 0,\n  \"files\": \\[\n.*\"command\": \"assert_malformed\",\n *\"detail\": \"jco cannot assemble the text: .*\"passed\": 22,\n  \"skipped\": 1\n}\n$")
cmhost_cli_test(wast-timeout ARGS wast --timeout 1 ${wast_cache} ${wast_dir}/hang.wast
                EXPECT "line 13: assert_return failed: timed out after 1 s\n  line 14: [^\n]*timed out[^\n]*\n5 passed, 2 failed, 0 skipped\n$")
cmhost_cli_test(wast-missing-file ARGS wast ${wast_dir}/missing.wast EXIT 2)
# Expectations name files as the command line does: run from this directory.
add_test(NAME cli.wast-expect
         COMMAND ${CMAKE_CURRENT_SOURCE_DIR}/cli/expect_exit.sh 0 $<TARGET_FILE:cmhost> wast ${wast_cache}
                 --expect failures.expect failures.wast
         WORKING_DIRECTORY ${wast_dir})
add_test(NAME cli.wast-expect-differs
         COMMAND ${CMAKE_CURRENT_SOURCE_DIR}/cli/expect_exit.sh 1 $<TARGET_FILE:cmhost> wast ${wast_cache}
                 --expect /dev/null failures.wast
         WORKING_DIRECTORY ${wast_dir})
