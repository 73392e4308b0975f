;; Components importing instances made earlier in the script: a named
;; instance is registered under its name (without `$`), `register` adds
;; another name, and the importer shares the instance, not a copy.
(component $counter
  (core module $M
    (global $count (mut i32) (i32.const 0))
    (func (export "bump") (param i32) (result i32)
      (global.set $count (i32.add (global.get $count) (local.get 0)))
      (global.get $count)))
  (core instance $m (instantiate $M))
  (func (export "bump") (param "by" u32) (result u32) (canon lift (core func $m "bump")))
)
(assert_return (invoke "bump" (u32.const 1)) (u32.const 1))

(component $client
  (import "counter" (instance $c (export "bump" (func (param "by" u32) (result u32)))))
  (core func $bump (canon lower (func $c "bump")))
  (core module $M
    (import "c" "bump" (func $bump (param i32) (result i32)))
    (func (export "bump-ten") (result i32) (call $bump (i32.const 10))))
  (core instance $m (instantiate $M (with "c" (instance (export "bump" (func $bump))))))
  (func (export "bump-ten") (result u32) (canon lift (core func $m "bump-ten")))
)
(assert_return (invoke "bump-ten") (u32.const 11))
(assert_return (invoke $counter "bump" (u32.const 1)) (u32.const 12))

;; `register` names the current instance (or an instance by id).
(register "shared-counter" $counter)
(component
  (import "shared-counter" (instance $c (export "bump" (func (param "by" u32) (result u32)))))
  (core func $bump (canon lower (func $c "bump")))
  (core module $M
    (import "c" "bump" (func $bump (param i32) (result i32)))
    (func (export "bump-hundred") (result i32) (call $bump (i32.const 100))))
  (core instance $m (instantiate $M (with "c" (instance (export "bump" (func $bump))))))
  (func (export "bump-hundred") (result u32) (canon lift (core func $m "bump-hundred")))
)
(assert_return (invoke "bump-hundred") (u32.const 112))
(assert_return (invoke $client "bump-ten") (u32.const 122))

;; Supplied instances are checked against the import's type.
(assert_unlinkable
  (component (import "counter" (instance (export "bump" (func (param "by" u32) (result string))))))
  "wrong type")
(assert_unlinkable
  (component (import "counter" (instance (export "reset" (func)))))
  "not exported")
