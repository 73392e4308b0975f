;; An async export that takes an own handle of a host resource, and
;; backpressure the host can raise and lower, so that a call of it can be
;; cancelled before it starts (its argument never reaching the guest).
(component
  (import "cmhost:test/files@0.1.0" (instance $files
    (export "file" (type $file (sub resource)))
    (export "[method]file.size" (func (param "self" (borrow $file)) (result u32)))))
  (alias export $files "file" (type $file))
  (alias export $files "[method]file.size" (func $size))
  (core func $size_lowered (canon lower (func $size)))
  (core func $drop (canon resource.drop $file))
  (core func $task.return (canon task.return (result u32)))
  (core func $backpressure.inc (canon backpressure.inc))
  (core func $backpressure.dec (canon backpressure.dec))
  (core module $m
    (import "" "size" (func $size (param i32) (result i32)))
    (import "" "drop" (func $drop (param i32)))
    (import "" "task.return" (func $task.return (param i32)))
    (import "" "backpressure.inc" (func $backpressure.inc))
    (import "" "backpressure.dec" (func $backpressure.dec))
    ;; Stackful (no callback): returns the file's size, dropping the file.
    (func (export "take") (param $h i32) (local $n i32)
      (local.set $n (call $size (local.get $h)))
      (call $drop (local.get $h))
      (call $task.return (local.get $n)))
    (func (export "hold") (call $backpressure.inc))
    (func (export "release") (call $backpressure.dec)))
  (core instance $imports
    (export "size" (func $size_lowered))
    (export "drop" (func $drop))
    (export "task.return" (func $task.return))
    (export "backpressure.inc" (func $backpressure.inc))
    (export "backpressure.dec" (func $backpressure.dec)))
  (core instance $i (instantiate $m (with "" (instance $imports))))
  (func (export "take") async (param "f" (own $file)) (result u32) (canon lift (core func $i "take") async))
  (func (export "hold") (canon lift (core func $i "hold")))
  (func (export "release") (canon lift (core func $i "release")))
)
