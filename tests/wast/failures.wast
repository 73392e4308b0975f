;; Commands that must be reported as failures (the runner's own test: each
;; line below is listed in failures.expect).
(component
  (core module $M
    (func (export "seven") (result i32) (i32.const 7))
    (func (export "trap") unreachable))
  (core instance $m (instantiate $M))
  (func (export "seven") (result u32) (canon lift (core func $m "seven")))
  (func (export "trap") (canon lift (core func $m "trap")))
)
(assert_return (invoke "seven") (u32.const 8))
(assert_return (invoke "seven"))
(assert_return (invoke "seven") (s32.const 7))
(assert_trap (invoke "seven") "unreachable")
(assert_return (invoke "trap"))
(invoke "missing")
(assert_return (invoke "seven" (u32.const 1)) (u32.const 7))
(assert_return (invoke "seven") (u32.const 0x1_0000_0000))
(assert_invalid (component) "this component is valid")
(assert_unlinkable (component) "nothing to link")
(assert_trap (component) "instantiation does not trap")
(not_a_command)
;; a component that fails takes the invokes after it along
(component (import "unsupplied" (func)))
(assert_return (invoke "seven") (u32.const 7))
