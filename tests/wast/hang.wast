;; A command that never ends fails on the time limit, and the script goes on:
;; definitions survive, instances are lost with the abandoned command.
(component definition $Spin
  (core module $M
    (func (export "spin") (loop $forever (br $forever)))
    (func (export "one") (result i32) (i32.const 1)))
  (core instance $m (instantiate $M))
  (func (export "spin") (canon lift (core func $m "spin")))
  (func (export "one") (result u32) (canon lift (core func $m "one")))
)
(component instance $s $Spin)
(assert_return (invoke "one") (u32.const 1))
(assert_return (invoke "spin"))
(assert_return (invoke "one") (u32.const 1))
(component instance $again $Spin)
(assert_return (invoke "one") (u32.const 1))
