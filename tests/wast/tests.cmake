# cmhost wast on the scripts in this directory: counts, failure lines, exit
# status, --expect, --json and the time limit. Included from tests/CMakeLists.txt.
set(wast_dir ${CMAKE_CURRENT_SOURCE_DIR}/wast)
set(wast_cache --cache-dir ${CMAKE_BINARY_DIR}/wast-cache)

cmhost_cli_test(wast-values ARGS wast ${wast_cache} ${wast_dir}/values.wast
                EXPECT "values.wast: 43 passed, 0 failed, 0 skipped\n43 passed, 0 failed, 0 skipped\n$")
cmhost_cli_test(wast-commands ARGS wast ${wast_cache} ${wast_dir}/commands.wast
                EXPECT "line 73: assert_malformed skipped: jco cannot assemble the text: [^\n]*\n22 passed, 0 failed, 1 skipped\n$")
cmhost_cli_test(wast-linking ARGS wast ${wast_cache} ${wast_dir}/linking.wast EXPECT "\n11 passed, 0 failed, 0 skipped\n$")
cmhost_cli_test(wast-failures ARGS wast ${wast_cache} ${wast_dir}/failures.wast EXIT 1
                EXPECT "line 11: assert_return failed \\(wrong-value\\): expected \\(u32.const 8\\), got 7\n.*line 15: assert_return failed \\(trap\\): .*line 25: assert_return failed \\(validation\\): the component at line 24 failed to instantiate\n1 passed, 14 failed, 0 skipped\n$")
# An assert_trap that traps only at the script's own `unreachable` is
# reported apart from the passes.
cmhost_cli_test(wast-unconfirmed ARGS wast ${wast_cache} ${wast_dir}/unconfirmed.wast
                EXPECT "line 14: assert_trap unconfirmed: expected \"cannot enter component instance\", trapped only at the script's own `unreachable`\n4 passed, 0 failed, 0 skipped, 1 unconfirmed\n$")
cmhost_cli_test(wast-json ARGS wast --json ${wast_cache} ${wast_dir}/commands.wast
                EXPECT "^{\n  \"failed\": 0,\n  \"files\": \\[\n.*\"command\": \"assert_malformed\",\n *\"detail\": \"jco cannot assemble the text: .*\"outcome\": \"skip\",.*\"passed\": 22,\n  \"skipped\": 1,\n  \"unconfirmed\": 0\n}\n$")
cmhost_cli_test(wast-timeout ARGS wast --command-timeout 1 ${wast_cache} ${wast_dir}/hang.wast EXIT 1
                EXPECT "line 13: assert_return failed \\(timeout\\): timed out after 1 s\n  line 14: [^\n]*timed out[^\n]*\n5 passed, 2 failed, 0 skipped\n$")
# A lone `;` (found by fuzz/wast_fuzz.cpp: it was read as empty atoms without end).
cmhost_cli_test(wast-lone-semicolon ARGS wast ${wast_cache} ${wast_dir}/lone-semicolon.wast EXIT 1
                EXPECT "cannot parse the script: line 2: unexpected `;` \\(comments start with `;;` or `\\(;`\\)\n0 passed, 1 failed, 0 skipped\n$")
cmhost_cli_test(wast-missing-file ARGS wast ${wast_dir}/missing.wast EXIT 2
                EXPECT "^cmhost: no such file or directory: [^\n]*missing.wast\n$")

# --expect. Expectations name files as the command line does: run from this directory.
cmhost_cli_test(wast-expect ARGS wast ${wast_cache} --expect failures.expect failures.wast
                WORKING_DIRECTORY ${wast_dir}
                EXPECT "expectations: 1 passed as expected, 0 unconfirmed as expected, 14 known failures and skips, 0 unexpected\n")
cmhost_cli_test(wast-expect-differs ARGS wast ${wast_cache} --expect nothing-fails.expect failures.wast EXIT 1
                WORKING_DIRECTORY ${wast_dir}
                EXPECT "unexpected: failures.wast:11 assert_return failed \\(wrong-value\\), expected passed \\(pass\\)")
# A known trap that becomes a crash is not the failure that was expected
# (--inject-crash: only the test build's cmhost-test-hooks has it).
cmhost_cli_test(wast-expect-crash COMMAND $<TARGET_FILE:cmhost-test-hooks> ARGS wast ${wast_cache} --inject-crash failures.wast:15 --expect failures.expect
                failures.wast EXIT 1 WORKING_DIRECTORY ${wast_dir}
                EXPECT "unexpected: failures.wast:15 assert_return failed \\(crash\\), expected failed \\(trap\\): cmhost crashed: signal 6 [^\n]*\n.*11 known failures and skips, 3 unexpected\n")
# The installed cmhost has no such hook.
cmhost_cli_test(wast-no-inject-crash ARGS wast ${wast_cache} --inject-crash failures.wast:15 failures.wast EXIT 2
                WORKING_DIRECTORY ${wast_dir} EXPECT "The following argument was not expected: --inject-crash")
# A listed script that did not run, another number of commands, and no count at all.
cmhost_cli_test(wast-expect-needs-count ARGS wast ${wast_cache} --expect /dev/null failures.wast EXIT 2
                WORKING_DIRECTORY ${wast_dir}
                EXPECT "^cmhost: /dev/null: no `commands: N` line \\(the number of commands of the run\\)\n$")
cmhost_cli_test(wast-expect-missing-script ARGS wast ${wast_cache} --expect failures-and-more.expect failures.wast
                EXIT 1 WORKING_DIRECTORY ${wast_dir}
                EXPECT "unexpected: unconfirmed.wast is listed but did not run\n")
cmhost_cli_test(wast-expect-command-count ARGS wast ${wast_cache} --expect failures-and-more.expect failures.wast
                unconfirmed.wast EXIT 1 WORKING_DIRECTORY ${wast_dir}
                EXPECT "unexpected: 20 commands ran, the expectations count 21\nexpectations: 5 passed as expected, 1 unconfirmed as expected, 14 known failures and skips, 1 unexpected\n")
