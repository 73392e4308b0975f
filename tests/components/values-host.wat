;; Values the other way: the guest forwards its flat arguments to host
;; imports, so the host lifts core values a guest produced (variant slots
;; joined to i64, spilled arguments) and lowers its results through the
;; guest's return pointer and realloc.
(component
  (type $var-def (variant (case "int" s32) (case "long" s64) (case "float" f32) (case "double" f64)
    (case "text" string) (case "byte" u8) (case "none")))
  (import "var" (type $var-in (eq $var-def)))
  (import "host-var" (func $host-var (param "v" $var-in) (result $var-in)))
  (import "host-strings" (func $host-strings (param "v" (list string)) (result (list string))))
  (import "host-many" (func $host-many
    (param "a" u8) (param "b" s8) (param "c" u16) (param "d" s16) (param "e" u32) (param "f" s32)
    (param "g" u64) (param "h" s64) (param "i" f32) (param "j" f64) (param "k" char) (param "l" bool)
    (param "m" string) (param "n" (list u16)) (param "o" (option u8))
    (result (tuple u8 s8 u16 s16 u32 s32 u64 s64 f32 f64 char bool string (list u16) (option u8)))))

  ;; Memory and realloc come first: lowering the imports needs them.
  (core module $libc
    (memory (export "mem") 1)
    (global $bump (mut i32) (i32.const 4096))
    (func (export "realloc") (param $old i32) (param $old_size i32) (param $align i32) (param $new_size i32) (result i32)
      (local $ret i32) (local $end i32) (local $have i32)
      (local.set $ret
        (i32.and (i32.add (global.get $bump) (i32.sub (local.get $align) (i32.const 1)))
                 (i32.sub (i32.const 0) (local.get $align))))
      (local.set $end (i32.add (local.get $ret) (local.get $new_size)))
      (local.set $have (i32.shl (memory.size) (i32.const 16)))
      (if (i32.gt_u (local.get $end) (local.get $have))
        (then
          (if (i32.eq (memory.grow (i32.shr_u (i32.add (i32.sub (local.get $end) (local.get $have))
                                                       (i32.const 0xFFFF))
                                              (i32.const 16)))
                      (i32.const -1))
            (then unreachable))))
      (global.set $bump (local.get $end))
      (memory.copy (local.get $ret) (local.get $old)
        (select (local.get $old_size) (local.get $new_size)
                (i32.lt_u (local.get $old_size) (local.get $new_size))))
      (local.get $ret)))
  (core instance $libc (instantiate $libc))

  (core func $host-var-lowered (canon lower (func $host-var)
    (memory (core memory $libc "mem")) (realloc (core func $libc "realloc"))))
  (core func $host-strings-lowered (canon lower (func $host-strings)
    (memory (core memory $libc "mem")) (realloc (core func $libc "realloc"))))
  (core func $host-many-lowered (canon lower (func $host-many)
    (memory (core memory $libc "mem")) (realloc (core func $libc "realloc"))))

  (core module $m
    (import "libc" "mem" (memory 1))
    ;; Flat arguments, then the pointer the host stores the result at.
    (import "host" "var" (func $host_var (param i32 i64 i32 i32)))
    (import "host" "strings" (func $host_strings (param i32 i32 i32)))
    ;; 18 flat values: one pointer to the spilled arguments.
    (import "host" "many" (func $host_many (param i32 i32)))
    (func (export "via-var") (param i32 i64 i32) (result i32)
      (call $host_var (local.get 0) (local.get 1) (local.get 2) (i32.const 256))
      (i32.const 256))
    (func (export "via-strings") (param i32 i32) (result i32)
      (call $host_strings (local.get 0) (local.get 1) (i32.const 256))
      (i32.const 256))
    ;; The spilled arguments the host lowered for this export have the
    ;; layout of the import's spilled arguments: pass the pointer on.
    (func (export "via-many") (param i32) (result i32)
      (call $host_many (local.get 0) (i32.const 256))
      (i32.const 256)))
  (core instance $i (instantiate $m
    (with "libc" (instance $libc))
    (with "host" (instance
      (export "var" (func $host-var-lowered))
      (export "strings" (func $host-strings-lowered))
      (export "many" (func $host-many-lowered))))))

  (export $var "var" (type $var-def))
  (func (export "via-var") (param "v" $var) (result $var)
    (canon lift (core func $i "via-var") (memory (core memory $libc "mem")) (realloc (core func $libc "realloc"))))
  ;; The same core function, given chosen bits for the variant's three flat
  ;; values, so the host lifts whatever the guest passes.
  (func (export "raw-var") (param "case" u32) (param "a" u64) (param "b" u32) (result $var)
    (canon lift (core func $i "via-var") (memory (core memory $libc "mem"))))
  (func (export "via-strings") (param "v" (list string)) (result (list string))
    (canon lift (core func $i "via-strings") (memory (core memory $libc "mem")) (realloc (core func $libc "realloc"))))
  (func (export "via-many")
    (param "a" u8) (param "b" s8) (param "c" u16) (param "d" s16) (param "e" u32) (param "f" s32)
    (param "g" u64) (param "h" s64) (param "i" f32) (param "j" f64) (param "k" char) (param "l" bool)
    (param "m" string) (param "n" (list u16)) (param "o" (option u8))
    (result (tuple u8 s8 u16 s16 u32 s32 u64 s64 f32 f64 char bool string (list u16) (option u8)))
    (canon lift (core func $i "via-many") (memory (core memory $libc "mem")) (realloc (core func $libc "realloc"))))
)
