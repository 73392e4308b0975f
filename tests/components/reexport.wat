;; Host imports exported again unchanged: the host reaches its own functions
;; through the instance (Func::call with Vals), as a component that forwards
;; an import would hand them on.
(component
  (import "echo-strings" (func $strings (param "v" (list string)) (result (list string))))
  (import "pair" (func $pair (param "a" u32) (param "b" string) (result (tuple u32 string))))
  (import "count" (func $count (param "v" (list u8)) (result u32)))
  (import "log" (func $log (param "msg" string)))
  (import "tick" (func $tick (result u32)))
  (export "echo-strings" (func $strings))
  (export "pair" (func $pair))
  (export "count" (func $count))
  (export "log" (func $log))
  (export "tick" (func $tick))
)
