;; Memories and tables that grow from guest code, for the store's limits:
;; two memories of 1 page and two tables of 1 element.
(module
  (memory $a 1)
  (memory $b 1)
  (table $funcs 1 funcref)
  (table $externs 1 externref)
  (export "memory" (memory $a))
  (func (export "grow") (param i32) (result i32) (memory.grow $a (local.get 0)))
  (func (export "grow_b") (param i32) (result i32) (memory.grow $b (local.get 0)))
  ;; Both memories in one call: the second is checked against what the
  ;; first took.
  (func (export "grow_both") (param i32) (result i32)
    (drop (memory.grow $a (local.get 0)))
    (memory.grow $b (local.get 0)))
  (func (export "pages") (result i32) (i32.add (memory.size $a) (memory.size $b)))
  (func (export "grow_funcs") (param i32) (result i32) (table.grow $funcs (ref.null func) (local.get 0)))
  (func (export "grow_externs") (param i32) (result i32) (table.grow $externs (ref.null extern) (local.get 0)))
  (func (export "elements") (result i32) (i32.add (table.size $funcs) (table.size $externs)))
  ;; A loop, so that a metered build has something to count.
  (func (export "grow_each") (param $times i32) (result i32)
    (local $grown i32)
    (block $done
      (loop $again
        (br_if $done (i32.eqz (local.get $times)))
        (br_if $done (i32.eq (memory.grow $a (i32.const 1)) (i32.const -1)))
        (local.set $grown (i32.add (local.get $grown) (i32.const 1)))
        (local.set $times (i32.sub (local.get $times) (i32.const 1)))
        (br $again)))
    (local.get $grown)))
