;; Every value type of the Component Model as parameter and result, through
;; identity ("echo") functions, plus functions that hand the host chosen bits
;; so lifting's truncation rules and traps can be checked.
;;
;; Memory map of the core module:
;;   256..1024  the return area: results that flatten to more than one core
;;              value are stored here in their canonical ABI layout
;;   1024..4096 a log of realloc calls, 20 bytes each
;;   4096..     the heap of the bump allocator behind `realloc`
;; Strings and lists come back as the (ptr, len) they arrived with, so results
;; refer to the memory the host lowered the arguments into.
(component
  (core module $m
    (memory (export "mem") 1)
    (global $bump (mut i32) (i32.const 4096))
    (global $post_returns (mut i32) (i32.const 0))
    (global $log_count (mut i32) (i32.const 0))

    ;; Bump allocation that grows memory on demand, so large values fit.
    (func $realloc (export "realloc") (param $old i32) (param $old_size i32) (param $align i32) (param $new_size i32) (result i32)
      (local $ret i32) (local $end i32) (local $have i32) (local $entry i32)
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
      ;; A shrinking realloc (UTF-16 strings) keeps only the new size.
      (memory.copy (local.get $ret) (local.get $old)
        (select (local.get $old_size) (local.get $new_size)
                (i32.lt_u (local.get $old_size) (local.get $new_size))))
      ;; Log (old, old size, align, new size, result) while there is room.
      (if (i32.lt_u (global.get $log_count) (i32.const 150))
        (then
          (local.set $entry (i32.add (i32.const 1024) (i32.mul (global.get $log_count) (i32.const 20))))
          (i32.store (local.get $entry) (local.get $old))
          (i32.store offset=4 (local.get $entry) (local.get $old_size))
          (i32.store offset=8 (local.get $entry) (local.get $align))
          (i32.store offset=12 (local.get $entry) (local.get $new_size))
          (i32.store offset=16 (local.get $entry) (local.get $ret))
          (global.set $log_count (i32.add (global.get $log_count) (i32.const 1)))))
      (local.get $ret))

    ;; The log as list<tuple<u32, u32, u32, u32, u32>>; its post-return
    ;; clears it.
    (func (export "realloc-log") (result i32)
      (i32.store (i32.const 256) (i32.const 1024))
      (i32.store (i32.const 260) (global.get $log_count))
      (i32.const 256))
    (func (export "post-clear-log") (param i32) (global.set $log_count (i32.const 0)))

    ;; Allocators that break the rules the host must check.
    (func (export "realloc-misaligned") (param i32 i32 i32 i32) (result i32)
      (i32.add (call $realloc (local.get 0) (local.get 1) (local.get 2) (local.get 3)) (i32.const 1)))
    (func (export "realloc-out-of-bounds") (param i32 i32 i32 i32) (result i32) (i32.const 0xFFFFFFF0))
    (func (export "realloc-traps") (param i32 i32 i32 i32) (result i32) unreachable)

    ;; Post-returns: count the calls; post-free also releases the heap, as
    ;; everything the call returned has been lifted by then.
    (func (export "post-count") (param i32)
      (global.set $post_returns (i32.add (global.get $post_returns) (i32.const 1))))
    (func (export "post-free") (param i32)
      (global.set $post_returns (i32.add (global.get $post_returns) (i32.const 1)))
      (global.set $bump (i32.const 4096)))
    (func (export "post-traps") (param i32) unreachable)
    ;; For a function without results: a post-return without parameters.
    (func (export "consume") (param i32))
    (func (export "post-nothing")
      (global.set $post_returns (i32.add (global.get $post_returns) (i32.const 1))))
    (func (export "post-returns") (result i32) (global.get $post_returns))
    (func (export "heap-top") (result i32) (global.get $bump))

    ;; Values the host lowered wrongly trap here: a variant's unused slots
    ;; must be zero and 32-bit payloads in an i64 slot zero-extended.
    (func $zero32 (param i32) (if (local.get 0) (then unreachable)))
    (func $zero64 (param i64) (if (i64.ne (local.get 0) (i64.const 0)) (then unreachable)))
    (func $high_zero (param i64)
      (if (i64.ne (i64.shr_u (local.get 0) (i64.const 32)) (i64.const 0)) (then unreachable)))

    ;; One flat value in, the same value out.
    (func (export "id-i32") (param i32) (result i32) (local.get 0))
    (func (export "id-i64") (param i64) (result i64) (local.get 0))
    (func (export "id-f32") (param f32) (result f32) (local.get 0))
    (func (export "id-f64") (param f64) (result f64) (local.get 0))
    (func (export "f32-bits") (param f32) (result i32) (i32.reinterpret_f32 (local.get 0)))
    (func (export "f64-bits") (param f64) (result i64) (i64.reinterpret_f64 (local.get 0)))
    (func (export "bits-f32") (param i32) (result f32) (f32.reinterpret_i32 (local.get 0)))
    (func (export "bits-f64") (param i64) (result f64) (f64.reinterpret_i64 (local.get 0)))

    ;; string and list<T>: (ptr, len) at the return area.
    (func (export "echo-pair") (param i32 i32) (result i32)
      (i32.store (i32.const 256) (local.get 0))
      (i32.store (i32.const 260) (local.get 1))
      (i32.const 256))

    ;; list<u8, 4>: four flat values, four bytes.
    (func (export "echo-u8x4") (param i32 i32 i32 i32) (result i32)
      (i32.store8 (i32.const 256) (local.get 0))
      (i32.store8 (i32.const 257) (local.get 1))
      (i32.store8 (i32.const 258) (local.get 2))
      (i32.store8 (i32.const 259) (local.get 3))
      (i32.const 256))

    ;; list<string, 2>: two (ptr, len) pairs.
    (func (export "echo-i32x4") (param i32 i32 i32 i32) (result i32)
      (i32.store (i32.const 256) (local.get 0))
      (i32.store (i32.const 260) (local.get 1))
      (i32.store (i32.const 264) (local.get 2))
      (i32.store (i32.const 268) (local.get 3))
      (i32.const 256))

    ;; rec: flag@0 big@8 name@16 ratio@24 small@28 maybe@30 (payload @32), 40 bytes.
    (func (export "echo-rec") (param $flag i32) (param $big i64) (param $name i32) (param $len i32)
        (param $ratio f32) (param $small i32) (param $has i32) (param $maybe i32) (result i32)
      (if (i32.eqz (local.get $has)) (then (call $zero32 (local.get $maybe))))
      (i32.store8 (i32.const 256) (local.get $flag))
      (i64.store (i32.const 264) (local.get $big))
      (i32.store (i32.const 272) (local.get $name))
      (i32.store (i32.const 276) (local.get $len))
      (f32.store (i32.const 280) (local.get $ratio))
      (i32.store8 (i32.const 284) (local.get $small))
      (i32.store8 (i32.const 286) (local.get $has))
      (i32.store16 (i32.const 288) (local.get $maybe))
      (i32.const 256))

    ;; tuple<u8, f32, string, s64, char>: @0 @4 @8 @16 @24, 32 bytes.
    (func (export "echo-tup") (param i32 f32 i32 i32 i64 i32) (result i32)
      (i32.store8 (i32.const 256) (local.get 0))
      (f32.store (i32.const 260) (local.get 1))
      (i32.store (i32.const 264) (local.get 2))
      (i32.store (i32.const 268) (local.get 3))
      (i64.store (i32.const 272) (local.get 4))
      (i32.store (i32.const 280) (local.get 5))
      (i32.const 256))

    ;; entry: id@0 name@4 score@16 (payload @24), 32 bytes.
    (func (export "echo-entry") (param $id i32) (param $name i32) (param $len i32) (param $has i32)
        (param $score f64) (result i32)
      (if (i32.eqz (local.get $has)) (then (call $zero64 (i64.reinterpret_f64 (local.get $score)))))
      (i32.store (i32.const 256) (local.get $id))
      (i32.store (i32.const 260) (local.get $name))
      (i32.store (i32.const 264) (local.get $len))
      (i32.store8 (i32.const 272) (local.get $has))
      (f64.store (i32.const 280) (local.get $score))
      (i32.const 256))

    ;; var flattens to (i32 case, i64, i32): the i64 slot joins s32, s64,
    ;; f32, f64, the string's pointer and u8; the i32 slot is the string's
    ;; length. In memory: case@0, payload@8, 16 bytes.
    (func $store_var (param $p i32) (param $case i32) (param $a i64) (param $b i32)
      (i32.store8 (local.get $p) (local.get $case))
      (block $bad
        (block $none
          (block $byte
            (block $text
              (block $double
                (block $float
                  (block $long
                    (block $int
                      (br_table $int $long $float $double $text $byte $none $bad (local.get $case)))
                    ;; int(s32)
                    (call $high_zero (local.get $a))
                    (call $zero32 (local.get $b))
                    (i32.store offset=8 (local.get $p) (i32.wrap_i64 (local.get $a)))
                    (return))
                  ;; long(s64)
                  (call $zero32 (local.get $b))
                  (i64.store offset=8 (local.get $p) (local.get $a))
                  (return))
                ;; float(f32)
                (call $high_zero (local.get $a))
                (call $zero32 (local.get $b))
                (f32.store offset=8 (local.get $p) (f32.reinterpret_i32 (i32.wrap_i64 (local.get $a))))
                (return))
              ;; double(f64)
              (call $zero32 (local.get $b))
              (f64.store offset=8 (local.get $p) (f64.reinterpret_i64 (local.get $a)))
              (return))
            ;; text(string)
            (call $high_zero (local.get $a))
            (i32.store offset=8 (local.get $p) (i32.wrap_i64 (local.get $a)))
            (i32.store offset=12 (local.get $p) (local.get $b))
            (return))
          ;; byte(u8): zero-extended, so nothing above the low byte
          (call $zero64 (i64.shr_u (local.get $a) (i64.const 8)))
          (call $zero32 (local.get $b))
          (i32.store8 offset=8 (local.get $p) (i32.wrap_i64 (local.get $a)))
          (return))
        ;; none
        (call $zero64 (local.get $a))
        (call $zero32 (local.get $b))
        (return))
      unreachable)
    (func (export "echo-var") (param i32 i64 i32) (result i32)
      (call $store_var (i32.const 256) (local.get 0) (local.get 1) (local.get 2))
      (i32.const 256))

    ;; result<list<string>, var> flattens to (i32, i32, i64, i32); payload@8, 24 bytes.
    (func (export "echo-nested-result") (param $case i32) (param $a i32) (param $b i64) (param $c i32) (result i32)
      (i32.store8 (i32.const 256) (local.get $case))
      (if (i32.eqz (local.get $case))
        (then
          (call $high_zero (local.get $b))
          (call $zero32 (local.get $c))
          (i32.store (i32.const 264) (local.get $a))
          (i32.store (i32.const 268) (i32.wrap_i64 (local.get $b))))
        (else
          (if (i32.ne (local.get $case) (i32.const 1)) (then unreachable))
          (call $store_var (i32.const 264) (local.get $a) (local.get $b) (local.get $c))))
      (i32.const 256))

    ;; option<u32>: case@0 value@4.
    (func (export "echo-opt-u32") (param $case i32) (param $v i32) (result i32)
      (if (i32.eqz (local.get $case)) (then (call $zero32 (local.get $v))))
      (i32.store8 (i32.const 256) (local.get $case))
      (i32.store (i32.const 260) (local.get $v))
      (i32.const 256))

    ;; option<option<s8>>: outer case@0, inner case@1, value@2.
    (func (export "echo-opt-opt") (param $outer i32) (param $inner i32) (param $v i32) (result i32)
      (if (i32.eqz (local.get $outer)) (then (call $zero32 (local.get $inner))))
      (if (i32.eqz (local.get $inner)) (then (call $zero32 (local.get $v))))
      (i32.store8 (i32.const 256) (local.get $outer))
      (i32.store8 (i32.const 257) (local.get $inner))
      (i32.store8 (i32.const 258) (local.get $v))
      (i32.const 256))

    ;; option<string>, result<u32, string>, result<_, string>: case@0, then
    ;; two i32 at 4 and 8.
    (func (export "echo-case-i32-i32") (param i32 i32 i32) (result i32)
      (i32.store8 (i32.const 256) (local.get 0))
      (i32.store (i32.const 260) (local.get 1))
      (i32.store (i32.const 264) (local.get 2))
      (i32.const 256))

    ;; result<f32>: case@0 value@4.
    (func (export "echo-result-f32") (param $case i32) (param $v f32) (result i32)
      (i32.store8 (i32.const 256) (local.get $case))
      (f32.store (i32.const 260) (local.get $v))
      (i32.const 256))

    ;; result<f64, u8> flattens to (i32, i64): ok's f64 bits or err's
    ;; zero-extended u8; payload@8.
    (func (export "echo-result-f64-u8") (param $case i32) (param $v i64) (result i32)
      (i32.store8 (i32.const 256) (local.get $case))
      (if (i32.eqz (local.get $case))
        (then (f64.store (i32.const 264) (f64.reinterpret_i64 (local.get $v))))
        (else
          (call $zero64 (i64.shr_u (local.get $v) (i64.const 8)))
          (i32.store8 (i32.const 264) (i32.wrap_i64 (local.get $v)))))
      (i32.const 256))

    ;; Parameters that do not fit in 16 flat values arrive as a pointer to
    ;; their tuple; a result of the same tuple type has the same layout, so
    ;; the pointer is the result.
    (func (export "echo-spilled") (param i32) (result i32) (local.get 0))

    ;; Exactly 16 flat parameters still arrive flat.
    (func (export "last-of-16") (param i32 i32 i32 i32 i32 i32 i32 i32 i32 i32 i32 i32 i32 i32 i32 f64)
        (result f64)
      (local.get 15))

    ;; The core values a var parameter arrived as: tuple<u32, u64, u32>.
    (func (export "var-bits") (param i32 i64 i32) (result i32)
      (i32.store (i32.const 256) (local.get 0))
      (i64.store (i32.const 264) (local.get 1))
      (i32.store (i32.const 272) (local.get 2))
      (i32.const 256))

    ;; The bytes of spilled arguments (their tuple without its tail padding)
    ;; as a list<u8>.
    (func (export "spill-bytes") (param i32) (result i32)
      (i32.store (i32.const 256) (local.get 0))
      (i32.store (i32.const 260) (i32.const 25))
      (i32.const 256))

    ;; Copies the bytes of a list<u8> to the return area at `offset` and
    ;; returns that address: the host then lifts whatever type the function's
    ;; result says from those bytes.
    (func (export "place-at") (param $ptr i32) (param $len i32) (param $offset i32) (result i32)
      (local $dst i32)
      (if (i32.gt_u (i32.add (local.get $offset) (local.get $len)) (i32.const 768)) (then unreachable))
      (local.set $dst (i32.add (i32.const 256) (local.get $offset)))
      (memory.copy (local.get $dst) (local.get $ptr) (local.get $len))
      (local.get $dst))
  )
  (core instance $i (instantiate $m))

  ;; Named types: records, variants, enums and flags are used through their
  ;; exports, which give them a name outside.
  (type $color-def (enum "red" "green" "blue"))
  (export $color "color" (type $color-def))
  ;; 257 cases: a two-byte discriminant in memory.
  (type $big-def (enum
    "c0" "c1" "c2" "c3" "c4" "c5" "c6" "c7" "c8" "c9" "c10" "c11" "c12" "c13" "c14" "c15" "c16"
    "c17" "c18" "c19" "c20" "c21" "c22" "c23" "c24" "c25" "c26" "c27" "c28" "c29" "c30" "c31" "c32"
    "c33" "c34" "c35" "c36" "c37" "c38" "c39" "c40" "c41" "c42" "c43" "c44" "c45" "c46" "c47" "c48"
    "c49" "c50" "c51" "c52" "c53" "c54" "c55" "c56" "c57" "c58" "c59" "c60" "c61" "c62" "c63" "c64"
    "c65" "c66" "c67" "c68" "c69" "c70" "c71" "c72" "c73" "c74" "c75" "c76" "c77" "c78" "c79" "c80"
    "c81" "c82" "c83" "c84" "c85" "c86" "c87" "c88" "c89" "c90" "c91" "c92" "c93" "c94" "c95" "c96"
    "c97" "c98" "c99" "c100" "c101" "c102" "c103" "c104" "c105" "c106" "c107" "c108" "c109" "c110"
    "c111" "c112" "c113" "c114" "c115" "c116" "c117" "c118" "c119" "c120" "c121" "c122" "c123"
    "c124" "c125" "c126" "c127" "c128" "c129" "c130" "c131" "c132" "c133" "c134" "c135" "c136"
    "c137" "c138" "c139" "c140" "c141" "c142" "c143" "c144" "c145" "c146" "c147" "c148" "c149"
    "c150" "c151" "c152" "c153" "c154" "c155" "c156" "c157" "c158" "c159" "c160" "c161" "c162"
    "c163" "c164" "c165" "c166" "c167" "c168" "c169" "c170" "c171" "c172" "c173" "c174" "c175"
    "c176" "c177" "c178" "c179" "c180" "c181" "c182" "c183" "c184" "c185" "c186" "c187" "c188"
    "c189" "c190" "c191" "c192" "c193" "c194" "c195" "c196" "c197" "c198" "c199" "c200" "c201"
    "c202" "c203" "c204" "c205" "c206" "c207" "c208" "c209" "c210" "c211" "c212" "c213" "c214"
    "c215" "c216" "c217" "c218" "c219" "c220" "c221" "c222" "c223" "c224" "c225" "c226" "c227"
    "c228" "c229" "c230" "c231" "c232" "c233" "c234" "c235" "c236" "c237" "c238" "c239" "c240"
    "c241" "c242" "c243" "c244" "c245" "c246" "c247" "c248" "c249" "c250" "c251" "c252" "c253"
    "c254" "c255" "c256"))
  (export $big "big" (type $big-def))
  (type $perms-def (flags "read" "write" "exec"))
  (export $perms "perms" (type $perms-def))
  ;; 12 flags: two bytes in memory.
  (type $mid-def (flags "m0" "m1" "m2" "m3" "m4" "m5" "m6" "m7" "m8" "m9" "m10" "m11"))
  (export $mid "mid" (type $mid-def))
  ;; 32 flags, the most a flags type may have: all bits of the i32. (More
  ;; than 32 is invalid; tests/components/values-flags33.wat checks that.)
  (type $wide-def (flags
    "w0" "w1" "w2" "w3" "w4" "w5" "w6" "w7" "w8" "w9" "w10" "w11" "w12" "w13" "w14" "w15" "w16" "w17" "w18" "w19" "w20" "w21" "w22" "w23" "w24" "w25" "w26" "w27" "w28" "w29" "w30" "w31"))
  (export $wide "wide" (type $wide-def))
  (type $rec-def (record (field "flag" bool) (field "big" s64) (field "name" string)
    (field "ratio" f32) (field "small" s8) (field "maybe" (option u16))))
  (export $rec "rec" (type $rec-def))
  (type $entry-def (record (field "id" u32) (field "name" string) (field "score" (option f64))))
  (export $entry "entry" (type $entry-def))
  ;; Payloads of every flat shape; `none` is a WAVE keyword, written `%none`.
  (type $var-def (variant (case "int" s32) (case "long" s64) (case "float" f32) (case "double" f64)
    (case "text" string) (case "byte" u8) (case "none")))
  (export $var "var" (type $var-def))

  ;; Scalars: one flat value each way.
  (func (export "echo-bool") (param "v" bool) (result bool)
    (canon lift (core func $i "id-i32")))
  (func (export "echo-s8") (param "v" s8) (result s8)
    (canon lift (core func $i "id-i32")))
  (func (export "echo-u8") (param "v" u8) (result u8)
    (canon lift (core func $i "id-i32")))
  (func (export "echo-s16") (param "v" s16) (result s16)
    (canon lift (core func $i "id-i32")))
  (func (export "echo-u16") (param "v" u16) (result u16)
    (canon lift (core func $i "id-i32")))
  (func (export "echo-s32") (param "v" s32) (result s32)
    (canon lift (core func $i "id-i32") (post-return (core func $i "post-count"))))
  (func (export "echo-u32") (param "v" u32) (result u32)
    (canon lift (core func $i "id-i32")))
  (func (export "echo-char") (param "v" char) (result char)
    (canon lift (core func $i "id-i32")))
  (func (export "echo-s64") (param "v" s64) (result s64)
    (canon lift (core func $i "id-i64")))
  (func (export "echo-u64") (param "v" u64) (result u64)
    (canon lift (core func $i "id-i64")))
  (func (export "echo-f32") (param "v" f32) (result f32)
    (canon lift (core func $i "id-f32")))
  (func (export "echo-f64") (param "v" f64) (result f64)
    (canon lift (core func $i "id-f64")))
  (func (export "f32-bits") (param "v" f32) (result u32)
    (canon lift (core func $i "f32-bits")))
  (func (export "f64-bits") (param "v" f64) (result u64)
    (canon lift (core func $i "f64-bits")))
  (func (export "echo-color") (param "v" $color) (result $color)
    (canon lift (core func $i "id-i32")))
  (func (export "echo-big") (param "v" $big) (result $big)
    (canon lift (core func $i "id-i32")))
  (func (export "echo-perms") (param "v" $perms) (result $perms)
    (canon lift (core func $i "id-i32")))
  (func (export "echo-mid") (param "v" $mid) (result $mid)
    (canon lift (core func $i "id-i32")))
  (func (export "echo-wide") (param "v" $wide) (result $wide)
    (canon lift (core func $i "id-i32")))
  (func (export "echo-unit-result") (param "v" (result)) (result (result))
    (canon lift (core func $i "id-i32")))
  ;; Strings and lists: (ptr, len) into memory the host allocated with realloc.
  (func (export "echo-string") (param "v" string) (result string)
    (canon lift (core func $i "echo-pair") (memory (core memory $i "mem")) (realloc (core func $i "realloc")) (post-return (core func $i "post-free"))))
  (func (export "echo-string16") (param "v" string) (result string)
    (canon lift (core func $i "echo-pair") string-encoding=utf16 (memory (core memory $i "mem")) (realloc (core func $i "realloc"))))
  (func (export "echo-string-latin1") (param "v" string) (result string)
    (canon lift (core func $i "echo-pair") string-encoding=latin1+utf16 (memory (core memory $i "mem")) (realloc (core func $i "realloc"))))
  (func (export "bytes") (param "v" (list u8)) (result (list u8))
    (canon lift (core func $i "echo-pair") (memory (core memory $i "mem")) (realloc (core func $i "realloc"))))
  (func (export "list-bool") (param "v" (list bool)) (result (list bool))
    (canon lift (core func $i "echo-pair") (memory (core memory $i "mem")) (realloc (core func $i "realloc"))))
  (func (export "list-s8") (param "v" (list s8)) (result (list s8))
    (canon lift (core func $i "echo-pair") (memory (core memory $i "mem")) (realloc (core func $i "realloc"))))
  (func (export "list-s16") (param "v" (list s16)) (result (list s16))
    (canon lift (core func $i "echo-pair") (memory (core memory $i "mem")) (realloc (core func $i "realloc"))))
  (func (export "list-u16") (param "v" (list u16)) (result (list u16))
    (canon lift (core func $i "echo-pair") (memory (core memory $i "mem")) (realloc (core func $i "realloc"))))
  (func (export "list-s32") (param "v" (list s32)) (result (list s32))
    (canon lift (core func $i "echo-pair") (memory (core memory $i "mem")) (realloc (core func $i "realloc"))))
  (func (export "list-u32") (param "v" (list u32)) (result (list u32))
    (canon lift (core func $i "echo-pair") (memory (core memory $i "mem")) (realloc (core func $i "realloc"))))
  (func (export "list-s64") (param "v" (list s64)) (result (list s64))
    (canon lift (core func $i "echo-pair") (memory (core memory $i "mem")) (realloc (core func $i "realloc"))))
  (func (export "list-u64") (param "v" (list u64)) (result (list u64))
    (canon lift (core func $i "echo-pair") (memory (core memory $i "mem")) (realloc (core func $i "realloc"))))
  (func (export "list-f32") (param "v" (list f32)) (result (list f32))
    (canon lift (core func $i "echo-pair") (memory (core memory $i "mem")) (realloc (core func $i "realloc"))))
  (func (export "list-f64") (param "v" (list f64)) (result (list f64))
    (canon lift (core func $i "echo-pair") (memory (core memory $i "mem")) (realloc (core func $i "realloc"))))
  (func (export "list-char") (param "v" (list char)) (result (list char))
    (canon lift (core func $i "echo-pair") (memory (core memory $i "mem")) (realloc (core func $i "realloc"))))
  (func (export "list-string") (param "v" (list string)) (result (list string))
    (canon lift (core func $i "echo-pair") (memory (core memory $i "mem")) (realloc (core func $i "realloc")) (post-return (core func $i "post-free"))))
  (func (export "list-rec") (param "v" (list $rec)) (result (list $rec))
    (canon lift (core func $i "echo-pair") (memory (core memory $i "mem")) (realloc (core func $i "realloc"))))
  (func (export "list-tup") (param "v" (list (tuple u8 f32 string s64 char))) (result (list (tuple u8 f32 string s64 char)))
    (canon lift (core func $i "echo-pair") (memory (core memory $i "mem")) (realloc (core func $i "realloc"))))
  (func (export "list-var") (param "v" (list $var)) (result (list $var))
    (canon lift (core func $i "echo-pair") (memory (core memory $i "mem")) (realloc (core func $i "realloc"))))
  (func (export "list-color") (param "v" (list $color)) (result (list $color))
    (canon lift (core func $i "echo-pair") (memory (core memory $i "mem")) (realloc (core func $i "realloc"))))
  (func (export "list-big") (param "v" (list $big)) (result (list $big))
    (canon lift (core func $i "echo-pair") (memory (core memory $i "mem")) (realloc (core func $i "realloc"))))
  (func (export "list-perms") (param "v" (list $perms)) (result (list $perms))
    (canon lift (core func $i "echo-pair") (memory (core memory $i "mem")) (realloc (core func $i "realloc"))))
  (func (export "list-mid") (param "v" (list $mid)) (result (list $mid))
    (canon lift (core func $i "echo-pair") (memory (core memory $i "mem")) (realloc (core func $i "realloc"))))
  (func (export "list-wide") (param "v" (list $wide)) (result (list $wide))
    (canon lift (core func $i "echo-pair") (memory (core memory $i "mem")) (realloc (core func $i "realloc"))))
  (func (export "list-fixed") (param "v" (list (list u8 4))) (result (list (list u8 4)))
    (canon lift (core func $i "echo-pair") (memory (core memory $i "mem")) (realloc (core func $i "realloc"))))
  (func (export "list-lists") (param "v" (list (list string))) (result (list (list string)))
    (canon lift (core func $i "echo-pair") (memory (core memory $i "mem")) (realloc (core func $i "realloc"))))
  (func (export "list-results") (param "v" (list (result u32 (error string)))) (result (list (result u32 (error string))))
    (canon lift (core func $i "echo-pair") (memory (core memory $i "mem")) (realloc (core func $i "realloc"))))
  (func (export "list-opt-opt") (param "v" (list (option (option s8)))) (result (list (option (option s8))))
    (canon lift (core func $i "echo-pair") (memory (core memory $i "mem")) (realloc (core func $i "realloc"))))
  (func (export "list-entries") (param "v" (list (option $entry))) (result (list (option $entry)))
    (canon lift (core func $i "echo-pair") (memory (core memory $i "mem")) (realloc (core func $i "realloc"))))
  (func (export "list-string16") (param "v" (list string)) (result (list string))
    (canon lift (core func $i "echo-pair") string-encoding=utf16 (memory (core memory $i "mem")) (realloc (core func $i "realloc"))))
  (func (export "list-string-latin1") (param "v" (list string)) (result (list string))
    (canon lift (core func $i "echo-pair") string-encoding=latin1+utf16 (memory (core memory $i "mem")) (realloc (core func $i "realloc"))))
  ;; Fixed-length lists: flattened element by element.
  (func (export "echo-u8x4") (param "v" (list u8 4)) (result (list u8 4))
    (canon lift (core func $i "echo-u8x4") (memory (core memory $i "mem"))))
  (func (export "echo-string-x2") (param "v" (list string 2)) (result (list string 2))
    (canon lift (core func $i "echo-i32x4") (memory (core memory $i "mem")) (realloc (core func $i "realloc"))))
  (func (export "echo-u32x17") (param "v" (list u32 17)) (result (list u32 17))
    (canon lift (core func $i "echo-spilled") (memory (core memory $i "mem")) (realloc (core func $i "realloc"))))
  ;; Flattenings longer than cmhost lists (256 values): still spilled.
  (func (export "echo-u8x1000") (param "v" (list u8 1000)) (result (list u8 1000))
    (canon lift (core func $i "echo-spilled") (memory (core memory $i "mem")) (realloc (core func $i "realloc"))))
  (func (export "echo-string-x300") (param "v" (list string 300)) (result (list string 300))
    (canon lift (core func $i "echo-spilled") (memory (core memory $i "mem")) (realloc (core func $i "realloc"))))
  (func (export "echo-opt-u8x300") (param "v" (option (list u8 300))) (result (option (list u8 300)))
    (canon lift (core func $i "echo-spilled") (memory (core memory $i "mem")) (realloc (core func $i "realloc"))))
  ;; Records, tuples, variants, options, results.
  (func (export "echo-rec") (param "v" $rec) (result $rec)
    (canon lift (core func $i "echo-rec") (memory (core memory $i "mem")) (realloc (core func $i "realloc"))))
  (func (export "echo-tup") (param "v" (tuple u8 f32 string s64 char)) (result (tuple u8 f32 string s64 char))
    (canon lift (core func $i "echo-tup") (memory (core memory $i "mem")) (realloc (core func $i "realloc"))))
  (func (export "echo-entry") (param "v" $entry) (result $entry)
    (canon lift (core func $i "echo-entry") (memory (core memory $i "mem")) (realloc (core func $i "realloc"))))
  (func (export "echo-var") (param "v" $var) (result $var)
    (canon lift (core func $i "echo-var") (memory (core memory $i "mem")) (realloc (core func $i "realloc"))))
  (func (export "echo-opt-u32") (param "v" (option u32)) (result (option u32))
    (canon lift (core func $i "echo-opt-u32") (memory (core memory $i "mem"))))
  (func (export "echo-opt-opt") (param "v" (option (option s8))) (result (option (option s8)))
    (canon lift (core func $i "echo-opt-opt") (memory (core memory $i "mem"))))
  (func (export "echo-opt-string") (param "v" (option string)) (result (option string))
    (canon lift (core func $i "echo-case-i32-i32") (memory (core memory $i "mem")) (realloc (core func $i "realloc"))))
  (func (export "echo-result") (param "v" (result u32 (error string))) (result (result u32 (error string)))
    (canon lift (core func $i "echo-case-i32-i32") (memory (core memory $i "mem")) (realloc (core func $i "realloc"))))
  (func (export "echo-result-err") (param "v" (result (error string))) (result (result (error string)))
    (canon lift (core func $i "echo-case-i32-i32") (memory (core memory $i "mem")) (realloc (core func $i "realloc"))))
  (func (export "echo-result-f32") (param "v" (result f32)) (result (result f32))
    (canon lift (core func $i "echo-result-f32") (memory (core memory $i "mem"))))
  (func (export "echo-result-f64-u8") (param "v" (result f64 (error u8))) (result (result f64 (error u8)))
    (canon lift (core func $i "echo-result-f64-u8") (memory (core memory $i "mem"))))
  (func (export "echo-nested-result") (param "v" (result (list string) (error $var))) (result (result (list string) (error $var)))
    (canon lift (core func $i "echo-nested-result") (memory (core memory $i "mem")) (realloc (core func $i "realloc"))))
  ;; 20 flat parameters: spilled into memory, and the tuple result with them.
  (func (export "many") (param "a" u8) (param "b" s8) (param "c" u16) (param "d" s16) (param "e" u32) (param "f" s32) (param "g" u64) (param "h" s64) (param "i" f32) (param "j" f64) (param "k" char) (param "l" bool) (param "m" string) (param "n" (list u16)) (param "o" (option u8)) (param "p" $perms) (param "q" $color) (result (tuple u8 s8 u16 s16 u32 s32 u64 s64 f32 f64 char bool string (list u16) (option u8) $perms $color))
    (canon lift (core func $i "echo-spilled") (memory (core memory $i "mem")) (realloc (core func $i "realloc")) (post-return (core func $i "post-free"))))
  (func (export "last-of-16") (param "a" u32) (param "b" u32) (param "c" u32) (param "d" u32) (param "e" u32) (param "f" u32) (param "g" u32) (param "h" u32) (param "i" u32) (param "j" u32) (param "k" u32) (param "l" u32) (param "m" u32) (param "n" u32) (param "o" u32) (param "p" f64) (result f64)
    (canon lift (core func $i "last-of-16")))
  ;; Lifting chosen bits: a u32 argument comes back as the core result of
  ;; another type, to check truncation and the traps of lifting.
  (func (export "narrow-bool") (param "bits" u32) (result bool)
    (canon lift (core func $i "id-i32")))
  (func (export "narrow-s8") (param "bits" u32) (result s8)
    (canon lift (core func $i "id-i32")))
  (func (export "narrow-u8") (param "bits" u32) (result u8)
    (canon lift (core func $i "id-i32")))
  (func (export "narrow-s16") (param "bits" u32) (result s16)
    (canon lift (core func $i "id-i32")))
  (func (export "narrow-u16") (param "bits" u32) (result u16)
    (canon lift (core func $i "id-i32")))
  (func (export "narrow-s32") (param "bits" u32) (result s32)
    (canon lift (core func $i "id-i32")))
  (func (export "narrow-char") (param "bits" u32) (result char)
    (canon lift (core func $i "id-i32")))
  (func (export "narrow-color") (param "bits" u32) (result $color)
    (canon lift (core func $i "id-i32")))
  (func (export "narrow-big") (param "bits" u32) (result $big)
    (canon lift (core func $i "id-i32")))
  (func (export "narrow-perms") (param "bits" u32) (result $perms)
    (canon lift (core func $i "id-i32")))
  (func (export "narrow-mid") (param "bits" u32) (result $mid)
    (canon lift (core func $i "id-i32")))
  (func (export "narrow-wide") (param "bits" u32) (result $wide)
    (canon lift (core func $i "id-i32")))
  (func (export "narrow-unit-result") (param "bits" u32) (result (result))
    (canon lift (core func $i "id-i32")))
  (func (export "narrow-f32") (param "bits" u32) (result f32)
    (canon lift (core func $i "bits-f32")))
  (func (export "narrow-f64") (param "bits" u64) (result f64)
    (canon lift (core func $i "bits-f64")))
  ;; The core values parameters arrive as; the nested components pass
  ;; chosen bits to these, which a cross-component call must lift and lower.
  (func (export "bool-bits") (param "v" bool) (result u32)
    (canon lift (core func $i "id-i32")))
  (func (export "s8-bits") (param "v" s8) (result u32)
    (canon lift (core func $i "id-i32")))
  (func (export "u8-bits") (param "v" u8) (result u32)
    (canon lift (core func $i "id-i32")))
  (func (export "s16-bits") (param "v" s16) (result u32)
    (canon lift (core func $i "id-i32")))
  (func (export "u16-bits") (param "v" u16) (result u32)
    (canon lift (core func $i "id-i32")))
  (func (export "char-bits") (param "v" char) (result u32)
    (canon lift (core func $i "id-i32")))
  (func (export "color-bits") (param "v" $color) (result u32)
    (canon lift (core func $i "id-i32")))
  (func (export "perms-bits") (param "v" $perms) (result u32)
    (canon lift (core func $i "id-i32")))
  (func (export "var-bits") (param "v" $var) (result (tuple u32 u64 u32))
    (canon lift (core func $i "var-bits") (memory (core memory $i "mem")) (realloc (core func $i "realloc"))))
  (func (export "spill-bytes") (param "a" bool) (param "b" s8) (param "c" u16) (param "d" char) (param "e" $color) (param "f" $perms) (param "g" (option u8)) (param "h" f32) (param "i" u8) (param "j" u8) (param "k" u8) (param "l" u8) (param "m" u8) (param "n" u8) (param "o" u8) (param "p" u8) (param "q" u8) (result (list u8))
    (canon lift (core func $i "spill-bytes") (memory (core memory $i "mem")) (realloc (core func $i "realloc"))))
  ;; Lifting chosen bytes from memory: the bytes are copied to 256+offset.
  (func (export "mem-opt-bool") (param "bytes" (list u8)) (param "offset" u32) (result (option bool))
    (canon lift (core func $i "place-at") (memory (core memory $i "mem")) (realloc (core func $i "realloc"))))
  (func (export "mem-opt-s8") (param "bytes" (list u8)) (param "offset" u32) (result (option s8))
    (canon lift (core func $i "place-at") (memory (core memory $i "mem")) (realloc (core func $i "realloc"))))
  (func (export "mem-opt-u16") (param "bytes" (list u8)) (param "offset" u32) (result (option u16))
    (canon lift (core func $i "place-at") (memory (core memory $i "mem")) (realloc (core func $i "realloc"))))
  (func (export "mem-opt-char") (param "bytes" (list u8)) (param "offset" u32) (result (option char))
    (canon lift (core func $i "place-at") (memory (core memory $i "mem")) (realloc (core func $i "realloc"))))
  (func (export "mem-opt-color") (param "bytes" (list u8)) (param "offset" u32) (result (option $color))
    (canon lift (core func $i "place-at") (memory (core memory $i "mem")) (realloc (core func $i "realloc"))))
  (func (export "mem-opt-big") (param "bytes" (list u8)) (param "offset" u32) (result (option $big))
    (canon lift (core func $i "place-at") (memory (core memory $i "mem")) (realloc (core func $i "realloc"))))
  (func (export "mem-opt-perms") (param "bytes" (list u8)) (param "offset" u32) (result (option $perms))
    (canon lift (core func $i "place-at") (memory (core memory $i "mem")) (realloc (core func $i "realloc"))))
  (func (export "mem-opt-f32") (param "bytes" (list u8)) (param "offset" u32) (result (option f32))
    (canon lift (core func $i "place-at") (memory (core memory $i "mem")) (realloc (core func $i "realloc"))))
  (func (export "mem-var") (param "bytes" (list u8)) (param "offset" u32) (result $var)
    (canon lift (core func $i "place-at") (memory (core memory $i "mem")) (realloc (core func $i "realloc"))))
  (func (export "mem-opt-string") (param "bytes" (list u8)) (param "offset" u32) (result (option string))
    (canon lift (core func $i "place-at") (memory (core memory $i "mem")) (realloc (core func $i "realloc"))))
  (func (export "mem-list-u32") (param "bytes" (list u8)) (param "offset" u32) (result (list u32))
    (canon lift (core func $i "place-at") (memory (core memory $i "mem")) (realloc (core func $i "realloc"))))
  (func (export "mem-entry") (param "bytes" (list u8)) (param "offset" u32) (result $entry)
    (canon lift (core func $i "place-at") (memory (core memory $i "mem")) (realloc (core func $i "realloc"))))
  (func (export "mem-opt-string16") (param "bytes" (list u8)) (param "offset" u32) (result (option string))
    (canon lift (core func $i "place-at") string-encoding=utf16 (memory (core memory $i "mem")) (realloc (core func $i "realloc"))))
  (func (export "mem-opt-string-latin1") (param "bytes" (list u8)) (param "offset" u32) (result (option string))
    (canon lift (core func $i "place-at") string-encoding=latin1+utf16 (memory (core memory $i "mem")) (realloc (core func $i "realloc"))))
  ;; A result pointer chosen by the caller.
  (func (export "ptr-entry") (param "p" u32) (result $entry)
    (canon lift (core func $i "id-i32") (memory (core memory $i "mem"))))
  ;; Allocators and post-returns that misbehave: the host must trap.
  (func (export "misaligned-list") (param "v" (list u32)) (result (list u32))
    (canon lift (core func $i "echo-pair") (memory (core memory $i "mem")) (realloc (core func $i "realloc-misaligned"))))
  (func (export "misaligned-spill") (param "v" (list u32 17)) (result (list u32 17))
    (canon lift (core func $i "echo-spilled") (memory (core memory $i "mem")) (realloc (core func $i "realloc-misaligned"))))
  (func (export "out-of-bounds-string") (param "v" string) (result string)
    (canon lift (core func $i "echo-pair") (memory (core memory $i "mem")) (realloc (core func $i "realloc-out-of-bounds"))))
  (func (export "trapping-realloc") (param "v" string) (result string)
    (canon lift (core func $i "echo-pair") (memory (core memory $i "mem")) (realloc (core func $i "realloc-traps"))))
  (func (export "no-result") (param "v" u32)
    (canon lift (core func $i "consume") (post-return (core func $i "post-nothing"))))
  (func (export "trapping-post-return") (param "v" u32) (result u32)
    (canon lift (core func $i "id-i32") (post-return (core func $i "post-traps"))))
  ;; Observers.
  (func (export "realloc-log") (result (list (tuple u32 u32 u32 u32 u32)))
    (canon lift (core func $i "realloc-log") (memory (core memory $i "mem")) (post-return (core func $i "post-clear-log"))))
  (func (export "post-returns") (result u32)
    (canon lift (core func $i "post-returns")))
  (func (export "heap-top") (result u32)
    (canon lift (core func $i "heap-top")))
)
