;; Each kind of script command, as cmhost wast runs it.

;; A component is defined and instantiated; invokes go to the latest one.
(component
  (core module $M
    (global $count (mut i32) (i32.const 0))
    (func (export "bump") (result i32)
      (global.set $count (i32.add (global.get $count) (i32.const 1)))
      (global.get $count))
    (func (export "halve") (param i32) (result i32)
      (if (i32.and (local.get 0) (i32.const 1)) (then unreachable))
      (i32.shr_u (local.get 0) (i32.const 1)))
    (func (export "noop")))
  (core instance $m (instantiate $M))
  (func (export "bump") (result u32) (canon lift (core func $m "bump")))
  (func (export "halve") (param "n" u32) (result u32) (canon lift (core func $m "halve")))
  (func (export "noop") (canon lift (core func $m "noop")))
)
(invoke "bump")
(assert_return (invoke "bump") (u32.const 2))
(assert_return (invoke "noop"))
(assert_return (invoke "halve" (u32.const 8)) (u32.const 4))
(assert_trap (invoke "halve" (u32.const 7)) "unreachable")
;; a trap poisons the instance: it cannot be entered again
(assert_trap (invoke "halve" (u32.const 8)) "cannot enter component instance")

;; A definition is instantiated only by `component instance`; each instance
;; has its own state, and an id names an instance for `invoke`.
(component definition $Counter
  (core module $M
    (global $count (mut i32) (i32.const 100))
    (func (export "bump") (result i32)
      (global.set $count (i32.add (global.get $count) (i32.const 1)))
      (global.get $count)))
  (core instance $m (instantiate $M))
  (func (export "bump") (result u32) (canon lift (core func $m "bump")))
)
(component instance $a $Counter)
(component instance $b $Counter)
(assert_return (invoke "bump") (u32.const 101))
(assert_return (invoke "bump") (u32.const 102))
(assert_return (invoke $a "bump") (u32.const 101))
(assert_return (invoke $b "bump") (u32.const 103))

;; Instantiation that traps (a core start function): assert_trap of a
;; component, and of an instance of a definition.
(assert_trap
  (component
    (core module $M (func $start unreachable) (start $start))
    (core instance (instantiate $M)))
  "unreachable")
(component definition $Trapping
  (core module $M (func $start unreachable) (start $start))
  (core instance (instantiate $M)))
(assert_trap (component instance $t $Trapping) "unreachable")

;; A component given as bytes: the empty component.
(component binary "\00asm" "\0d\00\01\00")
(component $named binary "\00asm" "\0d\00\01\00")

;; Rejected by cmhost's validator: two exports with one name.
(assert_invalid
  (component
    (core module $M)
    (export "m" (core module $M))
    (export "m" (core module $M)))
  "conflicts with a previous export")
;; Rejected by cmhost's decoder: an unknown binary version.
(assert_malformed
  (component binary "\00asm" "\0d\00\02\00")
  "unsupported component binary version")
;; Text jco cannot assemble: skipped, never passed.
(assert_malformed
  (component quote "(export \"x\" (func $nowhere))")
  "unknown func")

;; Imports nothing supplies.
(assert_unlinkable
  (component (import "host-only" (func)))
  "missing import")
