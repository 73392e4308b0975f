;; The guest of examples/typed, in core wasm text (jco makes it a component
;; for app.wit). `render` makes a layer through the host's constructor,
;; draws each shape on it through the host's method, drops the layer and
;; returns its stats. Memory: 256.. the return area, 1024.. the heap.
(module
  (import "example:shapes/canvas@1.0.0" "[constructor]layer" (func $layer_new (param i32 i32) (result i32)))
  ;; self, shape (discriminant, then its payload joined: i32 i32 f32), style
  (import "example:shapes/canvas@1.0.0" "[method]layer.draw" (func $draw (param i32 i32 i32 i32 f32 i32) (result i32)))
  (import "example:shapes/canvas@1.0.0" "[resource-drop]layer" (func $layer_drop (param i32)))
  (memory (export "memory") 1)
  (global $bump (mut i32) (i32.const 1024))
  (data (i32.const 512) "scene")

  (func $alloc (export "cabi_realloc") (param $old i32) (param $old_size i32) (param $align i32) (param $size i32) (result i32)
    (local $at i32) (local $end i32)
    (local.set $at (i32.and (i32.add (global.get $bump) (i32.sub (local.get $align) (i32.const 1)))
                            (i32.sub (i32.const 0) (local.get $align))))
    (local.set $end (i32.add (local.get $at) (local.get $size)))
    (if (i32.gt_u (local.get $end) (i32.shl (memory.size) (i32.const 16)))
      (then (if (i32.eq (memory.grow (i32.add (i32.shr_u (i32.sub (local.get $end) (i32.shl (memory.size) (i32.const 16)))
                                                         (i32.const 16))
                                              (i32.const 1)))
                        (i32.const -1))
              (then unreachable))))
    (global.set $bump (local.get $end))
    (if (local.get $old_size) (then (memory.copy (local.get $at) (local.get $old) (local.get $old_size))))
    (local.get $at))

  ;; shape: 16 bytes, discriminant at 0, payload at 4 (circle: x, y, r;
  ;; polygon: points ptr, len; label: string ptr, len).
  ;; stats: shapes at 0, points at 4, labels (ptr, len) at 8.
  (func (export "example:shapes/scene@1.0.0#render") (param $shapes i32) (param $count i32) (result i32)
    (local $layer i32) (local $i i32) (local $at i32) (local $case i32) (local $points i32)
    (local $labels i32) (local $nlabels i32)
    (local.set $layer (call $layer_new (i32.const 512) (i32.const 5)))
    ;; Room for every label's (ptr, len), should every shape be one.
    (local.set $labels (call $alloc (i32.const 0) (i32.const 0) (i32.const 4) (i32.shl (local.get $count) (i32.const 3))))
    (block $done
      (loop $each
        (br_if $done (i32.ge_u (local.get $i) (local.get $count)))
        (local.set $at (i32.add (local.get $shapes) (i32.shl (local.get $i) (i32.const 4))))
        (local.set $case (i32.load8_u (local.get $at)))
        (drop (call $draw (local.get $layer) (local.get $case)
                          (i32.load offset=4 (local.get $at)) (i32.load offset=8 (local.get $at))
                          (f32.load offset=12 (local.get $at))
                          ;; labels bold (1), the rest filled (4)
                          (select (i32.const 1) (i32.const 4) (i32.eq (local.get $case) (i32.const 2)))))
        (if (i32.eq (local.get $case) (i32.const 0))
          (then (local.set $points (i32.add (local.get $points) (i32.const 1)))))
        (if (i32.eq (local.get $case) (i32.const 1))
          (then (local.set $points (i32.add (local.get $points) (i32.load offset=8 (local.get $at))))))
        (if (i32.eq (local.get $case) (i32.const 2))
          (then
            (i64.store (i32.add (local.get $labels) (i32.shl (local.get $nlabels) (i32.const 3)))
                       (i64.load offset=4 (local.get $at)))
            (local.set $nlabels (i32.add (local.get $nlabels) (i32.const 1)))))
        (local.set $i (i32.add (local.get $i) (i32.const 1)))
        (br $each)))
    (call $layer_drop (local.get $layer))
    (i32.store (i32.const 256) (local.get $count))
    (i32.store (i32.const 260) (local.get $points))
    (i32.store (i32.const 264) (local.get $labels))
    (i32.store (i32.const 268) (local.get $nlabels))
    (i32.const 256)))
