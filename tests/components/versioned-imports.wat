;; Imports the linker supplies with definitions of other, semver-compatible
;; versions: `v2` at 0.2.6 (the host defines 0.2.12), `v1` at 1.0.0 (the
;; host defines 1.4.2), and a resource at 0.2.1.
(component
  (import "cmhost:test/v2@0.2.6" (instance $v2
    (export "two" (func (result u32)))))
  (import "cmhost:test/v1@1.0.0" (instance $v1
    (export "one" (func (result u32)))
    (export "thing" (type (sub resource)))))
  (alias export $v2 "two" (func $two))
  (alias export $v1 "one" (func $one))
  (core func $two_lowered (canon lower (func $two)))
  (core func $one_lowered (canon lower (func $one)))
  (core module $m
    (import "" "two" (func $two (result i32)))
    (import "" "one" (func $one (result i32)))
    (func (export "sum") (result i32) (i32.add (call $two) (call $one))))
  (core instance $imports (export "two" (func $two_lowered)) (export "one" (func $one_lowered)))
  (core instance $i (instantiate $m (with "" (instance $imports))))
  (func (export "sum") (result u32) (canon lift (core func $i "sum")))
)
