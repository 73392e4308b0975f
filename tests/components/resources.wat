;; A resource defined by the component: constructor, a borrow method, a
;; consuming function, and a destructor that counts drops.
(component
  (core module $state
    (global $drops (mut i32) (i32.const 0))
    (func (export "dtor") (param i32)
      (global.set $drops (i32.add (global.get $drops) (i32.const 1))))
    (func (export "drops") (result i32) (global.get $drops)))
  (core instance $state (instantiate $state))
  ;; A type before the resource, so type indices and resource order differ.
  (type $unused (func (param "x" u32)))
  (type $counter (resource (rep i32) (dtor (core func $state "dtor"))))
  (core func $new (canon resource.new $counter))
  (core func $rep (canon resource.rep $counter))
  (core func $drop (canon resource.drop $counter))
  (core module $impl
    (import "" "new" (func $new (param i32) (result i32)))
    (import "" "rep" (func $rep (param i32) (result i32)))
    (import "" "drop" (func $drop (param i32)))
    (func (export "make") (param i32) (result i32) (call $new (local.get 0)))
    ;; A borrow of its own resource reaches the implementation as the rep.
    (func (export "value") (param i32) (result i32) (local.get 0))
    (func (export "consume") (param i32) (call $drop (local.get 0)))
    (func (export "roundtrip") (param i32) (result i32)
      (call $new (i32.add (call $rep (local.get 0)) (i32.const 1)))
      (call $drop (local.get 0))))
  (core instance $builtins
    (export "new" (func $new))
    (export "rep" (func $rep))
    (export "drop" (func $drop)))
  (core instance $impl (instantiate $impl (with "" (instance $builtins))))
  (export $counter-export "counter" (type $counter))
  (func (export "make") (param "v" u32) (result (own $counter-export))
    (canon lift (core func $impl "make")))
  (func (export "value") (param "c" (borrow $counter-export)) (result u32)
    (canon lift (core func $impl "value")))
  (func (export "consume") (param "c" (own $counter-export))
    (canon lift (core func $impl "consume")))
  (func (export "bump") (param "c" (own $counter-export)) (result (own $counter-export))
    (canon lift (core func $impl "roundtrip")))
  (func (export "drops") (result u32) (canon lift (core func $state "drops")))
)
