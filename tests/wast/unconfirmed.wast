;; An assert_trap whose only trap is the script's own `unreachable`: the
;; runner reports it as unconfirmed, not as a pass.
(component definition $C
  (core module $M
    (func (export "trap") unreachable))
  (core instance $m (instantiate $M))
  (func (export "trap") (canon lift (core func $m "trap")))
)
(component instance $i $C)
;; passes: the trap expected is the `unreachable`
(assert_trap (invoke "trap") "unreachable")
(component instance $i $C)
;; unconfirmed: the script expects another trap
(assert_trap (invoke "trap") "cannot enter component instance")
