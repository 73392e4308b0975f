// Tests of the component binary decoder.
//
// The fixtures below were assembled from the component text (WAT) in the
// comment above each by the pinned jco (`jco parse in.wat -o out.wasm`, jco
// 1.35.0). Encodings jco does not produce, or produces differently from
// Binary.md (🪙 values and value bounds, the 🧵② `shared?` immediates,
// `cancellable`), are built by hand with the helpers further down.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "binary/binary.hpp"
#include "cmhost/error.hpp"

namespace cmhost::binary {
namespace {

// (component $top
//   (core module $m
//     (func (export "run") (result i32) i32.const 7)
//     (memory (export "mem") 1))
//   (core instance $mi (instantiate $m))
//   (core instance $exports (export "run" (func $mi "run")))
//   (core type $ct (func (result i32)))
//   (component $inner
//     (import "x" (func $x))
//     (export "y" (func $x)))
//   (type $ft (func (result u32)))
//   (import "host-fn" (func $host (type $ft)))
//   (instance $ii (instantiate $inner (with "x" (func $host))))
//   (instance $bundle (export "f" (func $host)))
//   (alias export $ii "y" (func $y))
//   (core func $run (alias core export $mi "run"))
//   (func $lifted (type $ft) (canon lift (core func $run)))
//   (core func $lowered (canon lower (func $host)))
//   (start $y)
//   (export "run" (func $lifted))
//   (export "typed-run" (func $lifted) (func (type $ft)))
//   (@custom "producers" "cmhost test")
// )
constexpr uint8_t kSections[] = {
    0x00, 0x61, 0x73, 0x6d, 0x0d, 0x00, 0x01, 0x00, 0x01, 0x3a, 0x00, 0x61, 0x73, 0x6d, 0x01, 0x00,
    0x00, 0x00, 0x01, 0x05, 0x01, 0x60, 0x00, 0x01, 0x7f, 0x03, 0x02, 0x01, 0x00, 0x05, 0x03, 0x01,
    0x00, 0x01, 0x07, 0x0d, 0x02, 0x03, 0x72, 0x75, 0x6e, 0x00, 0x00, 0x03, 0x6d, 0x65, 0x6d, 0x02,
    0x00, 0x0a, 0x06, 0x01, 0x04, 0x00, 0x41, 0x07, 0x0b, 0x00, 0x09, 0x04, 0x6e, 0x61, 0x6d, 0x65,
    0x00, 0x02, 0x01, 0x6d, 0x02, 0x04, 0x01, 0x00, 0x00, 0x00, 0x06, 0x09, 0x01, 0x00, 0x00, 0x01,
    0x00, 0x03, 0x72, 0x75, 0x6e, 0x02, 0x09, 0x01, 0x01, 0x01, 0x03, 0x72, 0x75, 0x6e, 0x00, 0x00,
    0x03, 0x05, 0x01, 0x60, 0x00, 0x01, 0x7f, 0x04, 0x40, 0x00, 0x61, 0x73, 0x6d, 0x0d, 0x00, 0x01,
    0x00, 0x07, 0x05, 0x01, 0x40, 0x00, 0x01, 0x00, 0x0a, 0x06, 0x01, 0x00, 0x01, 0x78, 0x01, 0x00,
    0x0b, 0x07, 0x01, 0x00, 0x01, 0x79, 0x01, 0x00, 0x00, 0x00, 0x1e, 0x0e, 0x63, 0x6f, 0x6d, 0x70,
    0x6f, 0x6e, 0x65, 0x6e, 0x74, 0x2d, 0x6e, 0x61, 0x6d, 0x65, 0x00, 0x06, 0x05, 0x69, 0x6e, 0x6e,
    0x65, 0x72, 0x01, 0x05, 0x01, 0x01, 0x00, 0x01, 0x78, 0x07, 0x05, 0x01, 0x40, 0x00, 0x00, 0x79,
    0x0a, 0x0c, 0x01, 0x00, 0x07, 0x68, 0x6f, 0x73, 0x74, 0x2d, 0x66, 0x6e, 0x01, 0x00, 0x05, 0x0f,
    0x02, 0x00, 0x00, 0x01, 0x01, 0x78, 0x01, 0x00, 0x01, 0x01, 0x00, 0x01, 0x66, 0x01, 0x00, 0x06,
    0x0e, 0x02, 0x01, 0x00, 0x00, 0x01, 0x79, 0x00, 0x00, 0x01, 0x00, 0x03, 0x72, 0x75, 0x6e, 0x08,
    0x0a, 0x02, 0x00, 0x00, 0x01, 0x00, 0x00, 0x01, 0x00, 0x00, 0x00, 0x09, 0x03, 0x01, 0x00, 0x00,
    0x0b, 0x19, 0x02, 0x00, 0x03, 0x72, 0x75, 0x6e, 0x01, 0x02, 0x00, 0x00, 0x09, 0x74, 0x79, 0x70,
    0x65, 0x64, 0x2d, 0x72, 0x75, 0x6e, 0x01, 0x02, 0x01, 0x01, 0x00, 0x00, 0x15, 0x09, 0x70, 0x72,
    0x6f, 0x64, 0x75, 0x63, 0x65, 0x72, 0x73, 0x63, 0x6d, 0x68, 0x6f, 0x73, 0x74, 0x20, 0x74, 0x65,
    0x73, 0x74, 0x00, 0x83, 0x01, 0x0e, 0x63, 0x6f, 0x6d, 0x70, 0x6f, 0x6e, 0x65, 0x6e, 0x74, 0x2d,
    0x6e, 0x61, 0x6d, 0x65, 0x00, 0x04, 0x03, 0x74, 0x6f, 0x70, 0x01, 0x11, 0x00, 0x00, 0x02, 0x01,
    0x03, 0x72, 0x75, 0x6e, 0x02, 0x07, 0x6c, 0x6f, 0x77, 0x65, 0x72, 0x65, 0x64, 0x01, 0x07, 0x00,
    0x10, 0x01, 0x00, 0x02, 0x63, 0x74, 0x01, 0x06, 0x00, 0x11, 0x01, 0x00, 0x01, 0x6d, 0x01, 0x10,
    0x00, 0x12, 0x02, 0x00, 0x02, 0x6d, 0x69, 0x01, 0x07, 0x65, 0x78, 0x70, 0x6f, 0x72, 0x74, 0x73,
    0x01, 0x13, 0x01, 0x03, 0x00, 0x04, 0x68, 0x6f, 0x73, 0x74, 0x01, 0x01, 0x79, 0x02, 0x06, 0x6c,
    0x69, 0x66, 0x74, 0x65, 0x64, 0x01, 0x06, 0x03, 0x01, 0x00, 0x02, 0x66, 0x74, 0x01, 0x09, 0x04,
    0x01, 0x00, 0x05, 0x69, 0x6e, 0x6e, 0x65, 0x72, 0x01, 0x0e, 0x05, 0x02, 0x00, 0x02, 0x69, 0x69,
    0x01, 0x06, 0x62, 0x75, 0x6e, 0x64, 0x6c, 0x65,
};

// (component
//   (core module $m (func (export "dtor") (param i32)))
//   (core instance $i (instantiate $m))
//   (core func $dtor (alias core export $i "dtor"))
//   (type $r (resource (rep i32)))
//   (type $rd (resource (rep i32) (dtor (core func $dtor))))
//   (type $prims (tuple bool s8 u8 s16 u16 s32 u32 s64 u64 f32 f64 char string error-context))
//   (type $rec (record (field "a" u32) (field "b" string)))
//   (type $var (variant (case "none") (case "some" $rec)))
//   (type $list (list u8))
//   (type $fixed (list u32 4))
//   (type $flags (flags "read" "write"))
//   (type $enum (enum "red" "green"))
//   (type $opt (option string))
//   (type $res-both (result u32 (error string)))
//   (type $res-none (result))
//   (type $res-err (result (error u8)))
//   (type $own (own $r))
//   (type $borrow (borrow $r))
//   (type $stream (stream u8))
//   (type $stream-unit (stream))
//   (type $future (future string))
//   (type $future-unit (future))
//   (type $map (map string u32))
//   (type $ec error-context)
//   (type $sync (func (param "x" $rec) (param "y" u32) (result $opt)))
//   (type $async (func async (param "s" string)))
//   (type $ct (component
//     (core type (module))
//     (type $t u32)
//     (alias outer 1 $rec (type $outer))
//     (import "in" (func (param "v" $t)))
//     (import "res" (type (sub resource)))
//     (export "out" (type (eq $t)))))
//   (type $it (instance
//     (type $t2 string)
//     (export "r" (type $er (sub resource)))
//     (export "get" (func (result (own $er))))))
// )
constexpr uint8_t kTypes[] = {
    0x00, 0x61, 0x73, 0x6d, 0x0d, 0x00, 0x01, 0x00, 0x01, 0x2e, 0x00, 0x61, 0x73, 0x6d, 0x01, 0x00,
    0x00, 0x00, 0x01, 0x05, 0x01, 0x60, 0x01, 0x7f, 0x00, 0x03, 0x02, 0x01, 0x00, 0x07, 0x08, 0x01,
    0x04, 0x64, 0x74, 0x6f, 0x72, 0x00, 0x00, 0x0a, 0x04, 0x01, 0x02, 0x00, 0x0b, 0x00, 0x09, 0x04,
    0x6e, 0x61, 0x6d, 0x65, 0x00, 0x02, 0x01, 0x6d, 0x02, 0x04, 0x01, 0x00, 0x00, 0x00, 0x06, 0x0a,
    0x01, 0x00, 0x00, 0x01, 0x00, 0x04, 0x64, 0x74, 0x6f, 0x72, 0x07, 0xc6, 0x01, 0x19, 0x3f, 0x7f,
    0x00, 0x3f, 0x7f, 0x01, 0x00, 0x6f, 0x0e, 0x7f, 0x7e, 0x7d, 0x7c, 0x7b, 0x7a, 0x79, 0x78, 0x77,
    0x76, 0x75, 0x74, 0x73, 0x64, 0x72, 0x02, 0x01, 0x61, 0x79, 0x01, 0x62, 0x73, 0x71, 0x02, 0x04,
    0x6e, 0x6f, 0x6e, 0x65, 0x00, 0x00, 0x04, 0x73, 0x6f, 0x6d, 0x65, 0x01, 0x03, 0x00, 0x70, 0x7d,
    0x67, 0x79, 0x04, 0x6e, 0x02, 0x04, 0x72, 0x65, 0x61, 0x64, 0x05, 0x77, 0x72, 0x69, 0x74, 0x65,
    0x6d, 0x02, 0x03, 0x72, 0x65, 0x64, 0x05, 0x67, 0x72, 0x65, 0x65, 0x6e, 0x6b, 0x73, 0x6a, 0x01,
    0x79, 0x01, 0x73, 0x6a, 0x00, 0x00, 0x6a, 0x00, 0x01, 0x7d, 0x69, 0x00, 0x68, 0x00, 0x66, 0x01,
    0x7d, 0x66, 0x00, 0x65, 0x01, 0x73, 0x65, 0x00, 0x63, 0x73, 0x79, 0x64, 0x40, 0x02, 0x01, 0x78,
    0x03, 0x01, 0x79, 0x79, 0x00, 0x09, 0x43, 0x01, 0x01, 0x73, 0x73, 0x01, 0x00, 0x41, 0x07, 0x00,
    0x50, 0x00, 0x01, 0x79, 0x02, 0x03, 0x02, 0x01, 0x03, 0x01, 0x40, 0x01, 0x01, 0x76, 0x00, 0x01,
    0x00, 0x03, 0x00, 0x02, 0x69, 0x6e, 0x01, 0x02, 0x03, 0x00, 0x03, 0x72, 0x65, 0x73, 0x03, 0x01,
    0x04, 0x00, 0x03, 0x6f, 0x75, 0x74, 0x03, 0x00, 0x00, 0x42, 0x05, 0x01, 0x73, 0x04, 0x00, 0x01,
    0x72, 0x03, 0x01, 0x01, 0x69, 0x01, 0x01, 0x40, 0x00, 0x00, 0x02, 0x04, 0x00, 0x03, 0x67, 0x65,
    0x74, 0x01, 0x03, 0x00, 0xd8, 0x01, 0x0e, 0x63, 0x6f, 0x6d, 0x70, 0x6f, 0x6e, 0x65, 0x6e, 0x74,
    0x2d, 0x6e, 0x61, 0x6d, 0x65, 0x01, 0x09, 0x00, 0x00, 0x01, 0x00, 0x04, 0x64, 0x74, 0x6f, 0x72,
    0x01, 0x06, 0x00, 0x11, 0x01, 0x00, 0x01, 0x6d, 0x01, 0x06, 0x00, 0x12, 0x01, 0x00, 0x01, 0x69,
    0x01, 0xab, 0x01, 0x03, 0x19, 0x00, 0x01, 0x72, 0x01, 0x02, 0x72, 0x64, 0x02, 0x05, 0x70, 0x72,
    0x69, 0x6d, 0x73, 0x03, 0x03, 0x72, 0x65, 0x63, 0x04, 0x03, 0x76, 0x61, 0x72, 0x05, 0x04, 0x6c,
    0x69, 0x73, 0x74, 0x06, 0x05, 0x66, 0x69, 0x78, 0x65, 0x64, 0x07, 0x05, 0x66, 0x6c, 0x61, 0x67,
    0x73, 0x08, 0x04, 0x65, 0x6e, 0x75, 0x6d, 0x09, 0x03, 0x6f, 0x70, 0x74, 0x0a, 0x08, 0x72, 0x65,
    0x73, 0x2d, 0x62, 0x6f, 0x74, 0x68, 0x0b, 0x08, 0x72, 0x65, 0x73, 0x2d, 0x6e, 0x6f, 0x6e, 0x65,
    0x0c, 0x07, 0x72, 0x65, 0x73, 0x2d, 0x65, 0x72, 0x72, 0x0d, 0x03, 0x6f, 0x77, 0x6e, 0x0e, 0x06,
    0x62, 0x6f, 0x72, 0x72, 0x6f, 0x77, 0x0f, 0x06, 0x73, 0x74, 0x72, 0x65, 0x61, 0x6d, 0x10, 0x0b,
    0x73, 0x74, 0x72, 0x65, 0x61, 0x6d, 0x2d, 0x75, 0x6e, 0x69, 0x74, 0x11, 0x06, 0x66, 0x75, 0x74,
    0x75, 0x72, 0x65, 0x12, 0x0b, 0x66, 0x75, 0x74, 0x75, 0x72, 0x65, 0x2d, 0x75, 0x6e, 0x69, 0x74,
    0x13, 0x03, 0x6d, 0x61, 0x70, 0x14, 0x02, 0x65, 0x63, 0x15, 0x04, 0x73, 0x79, 0x6e, 0x63, 0x16,
    0x05, 0x61, 0x73, 0x79, 0x6e, 0x63, 0x17, 0x02, 0x63, 0x74, 0x18, 0x02, 0x69, 0x74,
};

// (component
//   (core module $m
//     (table (export "tbl") 1 funcref)
//     (memory (export "mem") 1)
//     (func (export "f") (param i32 i32))
//     (func (export "cb") (param i32 i32 i32) (result i32) i32.const 0)
//     (func (export "post") (param i32))
//     (func (export "realloc") (param i32 i32 i32 i32) (result i32) i32.const 0))
//   (core instance $i (instantiate $m))
//   (alias core export $i "mem" (core memory $mem))
//   (alias core export $i "tbl" (core table $tbl))
//   (alias core export $i "f" (core func $f))
//   (alias core export $i "cb" (core func $cb))
//   (alias core export $i "post" (core func $post))
//   (alias core export $i "realloc" (core func $realloc))
//   (type $r (resource (rep i32)))
//   (type $s (stream u8))
//   (type $fu (future))
//   (type $ft (func (param "s" string)))
//   (type $aft (func async (param "s" string)))
//   (core type $cft (func (param i32)))
//   (func $lifted (type $ft) (canon lift (core func $f) string-encoding=utf8 (memory $mem) (realloc
//   $realloc) (post-return $post))) (func $alifted (type $aft) (canon lift (core func $f) async
//   (callback $cb) string-encoding=utf16 (memory $mem) (realloc $realloc))) (core func (canon lower
//   (func $lifted) string-encoding=latin1+utf16 (memory $mem) (realloc $realloc))) (core func
//   (canon lower (func $alifted) async (memory $mem))) (core func (canon resource.new $r)) (core
//   func (canon resource.drop $r)) (core func (canon resource.rep $r)) (core func (canon
//   backpressure.inc)) (core func (canon backpressure.dec)) (core func (canon task.return (result
//   string) (memory $mem) string-encoding=utf8)) (core func (canon task.return)) (core func (canon
//   task.cancel)) (core func (canon context.get i32 0)) (core func (canon context.set i32 1)) (core
//   func (canon subtask.cancel)) (core func (canon subtask.cancel async)) (core func (canon
//   subtask.drop)) (core func (canon stream.new $s)) (core func (canon stream.read $s (memory
//   $mem))) (core func (canon stream.write $s (memory $mem))) (core func (canon stream.cancel-read
//   $s)) (core func (canon stream.cancel-write $s async)) (core func (canon stream.drop-readable
//   $s)) (core func (canon stream.drop-writable $s)) (core func (canon future.new $fu)) (core func
//   (canon future.read $fu (memory $mem))) (core func (canon future.write $fu (memory $mem))) (core
//   func (canon future.cancel-read $fu async)) (core func (canon future.cancel-write $fu)) (core
//   func (canon future.drop-readable $fu)) (core func (canon future.drop-writable $fu)) (core func
//   (canon error-context.new (memory $mem) string-encoding=utf8)) (core func (canon
//   error-context.debug-message (memory $mem) (realloc $realloc))) (core func (canon
//   error-context.drop)) (core func (canon waitable-set.new)) (core func (canon waitable-set.wait
//   (memory $mem))) (core func (canon waitable-set.poll (memory $mem))) (core func (canon
//   waitable-set.drop)) (core func (canon waitable.join)) (core func (canon thread.index)) (core
//   func (canon thread.new-indirect $cft (core table $tbl))) (core func (canon
//   thread.resume-later)) (core func (canon thread.suspend)) (core func (canon thread.yield)) (core
//   func (canon thread.suspend-then-resume)) (core func (canon thread.yield-then-resume)) (core
//   func (canon thread.suspend-then-promote)) (core func (canon thread.yield-then-promote))
// )
constexpr uint8_t kCanon[] = {
    0x00, 0x61, 0x73, 0x6d, 0x0d, 0x00, 0x01, 0x00, 0x01, 0x7c, 0x00, 0x61, 0x73, 0x6d, 0x01, 0x00,
    0x00, 0x00, 0x01, 0x19, 0x04, 0x60, 0x02, 0x7f, 0x7f, 0x00, 0x60, 0x03, 0x7f, 0x7f, 0x7f, 0x01,
    0x7f, 0x60, 0x01, 0x7f, 0x00, 0x60, 0x04, 0x7f, 0x7f, 0x7f, 0x7f, 0x01, 0x7f, 0x03, 0x05, 0x04,
    0x00, 0x01, 0x02, 0x03, 0x04, 0x04, 0x01, 0x70, 0x00, 0x01, 0x05, 0x03, 0x01, 0x00, 0x01, 0x07,
    0x27, 0x06, 0x03, 0x74, 0x62, 0x6c, 0x01, 0x00, 0x03, 0x6d, 0x65, 0x6d, 0x02, 0x00, 0x01, 0x66,
    0x00, 0x00, 0x02, 0x63, 0x62, 0x00, 0x01, 0x04, 0x70, 0x6f, 0x73, 0x74, 0x00, 0x02, 0x07, 0x72,
    0x65, 0x61, 0x6c, 0x6c, 0x6f, 0x63, 0x00, 0x03, 0x0a, 0x11, 0x04, 0x02, 0x00, 0x0b, 0x04, 0x00,
    0x41, 0x00, 0x0b, 0x02, 0x00, 0x0b, 0x04, 0x00, 0x41, 0x00, 0x0b, 0x00, 0x09, 0x04, 0x6e, 0x61,
    0x6d, 0x65, 0x00, 0x02, 0x01, 0x6d, 0x02, 0x04, 0x01, 0x00, 0x00, 0x00, 0x06, 0x33, 0x06, 0x00,
    0x02, 0x01, 0x00, 0x03, 0x6d, 0x65, 0x6d, 0x00, 0x01, 0x01, 0x00, 0x03, 0x74, 0x62, 0x6c, 0x00,
    0x00, 0x01, 0x00, 0x01, 0x66, 0x00, 0x00, 0x01, 0x00, 0x02, 0x63, 0x62, 0x00, 0x00, 0x01, 0x00,
    0x04, 0x70, 0x6f, 0x73, 0x74, 0x00, 0x00, 0x01, 0x00, 0x07, 0x72, 0x65, 0x61, 0x6c, 0x6c, 0x6f,
    0x63, 0x07, 0x17, 0x05, 0x3f, 0x7f, 0x00, 0x66, 0x01, 0x7d, 0x65, 0x00, 0x40, 0x01, 0x01, 0x73,
    0x73, 0x01, 0x00, 0x43, 0x01, 0x01, 0x73, 0x73, 0x01, 0x00, 0x03, 0x05, 0x01, 0x60, 0x01, 0x7f,
    0x00, 0x08, 0x9b, 0x01, 0x30, 0x00, 0x00, 0x00, 0x04, 0x00, 0x03, 0x00, 0x04, 0x03, 0x05, 0x02,
    0x03, 0x00, 0x00, 0x00, 0x05, 0x06, 0x07, 0x01, 0x01, 0x03, 0x00, 0x04, 0x03, 0x04, 0x01, 0x00,
    0x00, 0x03, 0x02, 0x03, 0x00, 0x04, 0x03, 0x01, 0x00, 0x01, 0x02, 0x06, 0x03, 0x00, 0x02, 0x00,
    0x03, 0x00, 0x04, 0x00, 0x24, 0x25, 0x09, 0x00, 0x73, 0x02, 0x03, 0x00, 0x00, 0x09, 0x01, 0x00,
    0x00, 0x05, 0x0a, 0x7f, 0x00, 0x0b, 0x7f, 0x01, 0x06, 0x00, 0x06, 0x01, 0x0d, 0x0e, 0x01, 0x0f,
    0x01, 0x01, 0x03, 0x00, 0x10, 0x01, 0x01, 0x03, 0x00, 0x11, 0x01, 0x00, 0x12, 0x01, 0x01, 0x13,
    0x01, 0x14, 0x01, 0x15, 0x02, 0x16, 0x02, 0x01, 0x03, 0x00, 0x17, 0x02, 0x01, 0x03, 0x00, 0x18,
    0x02, 0x01, 0x19, 0x02, 0x00, 0x1a, 0x02, 0x1b, 0x02, 0x1c, 0x02, 0x03, 0x00, 0x00, 0x1d, 0x02,
    0x03, 0x00, 0x04, 0x03, 0x1e, 0x1f, 0x20, 0x00, 0x00, 0x21, 0x00, 0x00, 0x22, 0x23, 0x26, 0x27,
    0x00, 0x00, 0x28, 0x29, 0x00, 0x0c, 0x00, 0x2a, 0x00, 0x2b, 0x00, 0x2c, 0x00, 0x2d, 0x00, 0x00,
    0x84, 0x01, 0x0e, 0x63, 0x6f, 0x6d, 0x70, 0x6f, 0x6e, 0x65, 0x6e, 0x74, 0x2d, 0x6e, 0x61, 0x6d,
    0x65, 0x01, 0x19, 0x00, 0x00, 0x04, 0x00, 0x01, 0x66, 0x01, 0x02, 0x63, 0x62, 0x02, 0x04, 0x70,
    0x6f, 0x73, 0x74, 0x03, 0x07, 0x72, 0x65, 0x61, 0x6c, 0x6c, 0x6f, 0x63, 0x01, 0x08, 0x00, 0x01,
    0x01, 0x00, 0x03, 0x74, 0x62, 0x6c, 0x01, 0x08, 0x00, 0x02, 0x01, 0x00, 0x03, 0x6d, 0x65, 0x6d,
    0x01, 0x08, 0x00, 0x10, 0x01, 0x00, 0x03, 0x63, 0x66, 0x74, 0x01, 0x06, 0x00, 0x11, 0x01, 0x00,
    0x01, 0x6d, 0x01, 0x06, 0x00, 0x12, 0x01, 0x00, 0x01, 0x69, 0x01, 0x13, 0x01, 0x02, 0x00, 0x06,
    0x6c, 0x69, 0x66, 0x74, 0x65, 0x64, 0x01, 0x07, 0x61, 0x6c, 0x69, 0x66, 0x74, 0x65, 0x64, 0x01,
    0x15, 0x03, 0x05, 0x00, 0x01, 0x72, 0x01, 0x01, 0x73, 0x02, 0x02, 0x66, 0x75, 0x03, 0x02, 0x66,
    0x74, 0x04, 0x03, 0x61, 0x66, 0x74,
};

// (component
//   (core type $nums (func (param i32 i64 f32 f64 v128) (result i32 i64)))
//   (core type $refs (func (param funcref externref (ref null any) (ref eq) (ref null $nums) i31ref
//   exnref) (result (ref func)))) (core type $point (struct (field $x i32) (field (mut i16)) (field
//   i8))) (core type $bytes (array (mut i8))) (core rec
//     (type $node (sub (struct (field (ref null $node)))))
//     (type $leaf (sub final $node (struct (field (ref null $node))))))
//   (core type $open (sub (func)))
//   (core type $mt (module
//     (type $f (func (param i32)))
//     (import "env" "f" (func (type $f)))
//     (import "env" "t" (table 1 2 funcref))
//     (import "env" "m" (memory 1))
//     (import "env" "m64" (memory i64 2 3))
//     (import "env" "shared" (memory 1 2 shared))
//     (import "env" "g" (global (mut i32)))
//     (import "env" "tag" (tag (type $f)))
//     (alias outer 1 $nums (type $outer))
//     (export "run" (func (type $outer)))
//     (export "const" (global f64))))
// )
constexpr uint8_t kCoreTypes[] = {
    0x00, 0x61, 0x73, 0x6d, 0x0d, 0x00, 0x01, 0x00, 0x03, 0xaa, 0x01, 0x07, 0x60, 0x05, 0x7f, 0x7e,
    0x7d, 0x7c, 0x7b, 0x02, 0x7f, 0x7e, 0x60, 0x07, 0x70, 0x6f, 0x6e, 0x64, 0x6d, 0x63, 0x00, 0x6c,
    0x69, 0x01, 0x64, 0x70, 0x5f, 0x03, 0x7f, 0x00, 0x77, 0x01, 0x78, 0x00, 0x5e, 0x78, 0x01, 0x4e,
    0x02, 0x50, 0x00, 0x5f, 0x01, 0x63, 0x04, 0x00, 0x4f, 0x01, 0x04, 0x5f, 0x01, 0x63, 0x04, 0x00,
    0x00, 0x50, 0x00, 0x60, 0x00, 0x00, 0x50, 0x0b, 0x01, 0x60, 0x01, 0x7f, 0x00, 0x00, 0x03, 0x65,
    0x6e, 0x76, 0x01, 0x66, 0x00, 0x00, 0x00, 0x03, 0x65, 0x6e, 0x76, 0x01, 0x74, 0x01, 0x70, 0x01,
    0x01, 0x02, 0x00, 0x03, 0x65, 0x6e, 0x76, 0x01, 0x6d, 0x02, 0x00, 0x01, 0x00, 0x03, 0x65, 0x6e,
    0x76, 0x03, 0x6d, 0x36, 0x34, 0x02, 0x05, 0x02, 0x03, 0x00, 0x03, 0x65, 0x6e, 0x76, 0x06, 0x73,
    0x68, 0x61, 0x72, 0x65, 0x64, 0x02, 0x03, 0x01, 0x02, 0x00, 0x03, 0x65, 0x6e, 0x76, 0x01, 0x67,
    0x03, 0x7f, 0x01, 0x00, 0x03, 0x65, 0x6e, 0x76, 0x03, 0x74, 0x61, 0x67, 0x04, 0x00, 0x00, 0x02,
    0x10, 0x01, 0x01, 0x00, 0x03, 0x03, 0x72, 0x75, 0x6e, 0x00, 0x01, 0x03, 0x05, 0x63, 0x6f, 0x6e,
    0x73, 0x74, 0x03, 0x7c, 0x00, 0x00, 0x44, 0x0e, 0x63, 0x6f, 0x6d, 0x70, 0x6f, 0x6e, 0x65, 0x6e,
    0x74, 0x2d, 0x6e, 0x61, 0x6d, 0x65, 0x01, 0x33, 0x00, 0x10, 0x08, 0x00, 0x04, 0x6e, 0x75, 0x6d,
    0x73, 0x01, 0x04, 0x72, 0x65, 0x66, 0x73, 0x02, 0x05, 0x70, 0x6f, 0x69, 0x6e, 0x74, 0x03, 0x05,
    0x62, 0x79, 0x74, 0x65, 0x73, 0x04, 0x04, 0x6e, 0x6f, 0x64, 0x65, 0x05, 0x04, 0x6c, 0x65, 0x61,
    0x66, 0x06, 0x04, 0x6f, 0x70, 0x65, 0x6e, 0x07, 0x02, 0x6d, 0x74,
};

// (component
//   (core module $m
//     (func (export "f"))
//     (table (export "t") 1 funcref)
//     (memory (export "m") 1)
//     (global (export "g") i32 (i32.const 0))
//     (tag (export "e")))
//   (core instance $ci (instantiate $m))
//   (alias core export $ci "f" (core func))
//   (alias core export $ci "t" (core table))
//   (alias core export $ci "m" (core memory))
//   (alias core export $ci "g" (core global))
//   (alias core export $ci "e" (core tag))
//   (core type $ct (func))
//   (type $t string)
//   (component $c)
//   (import "i" (instance $i
//     (export "f" (func))
//     (export "t" (type (sub resource)))
//     (export "c" (component))
//     (export "ii" (instance))
//     (export "m" (core module))))
//   (alias export $i "f" (func))
//   (alias export $i "t" (type))
//   (alias export $i "c" (component))
//   (alias export $i "ii" (instance))
//   (alias export $i "m" (core module))
//   (component $inner
//     (alias outer 1 $m (core module))
//     (alias outer 1 $ct (core type))
//     (alias outer 1 $t (type))
//     (alias outer 1 $c (component)))
// )
constexpr uint8_t kAliases[] = {
    0x00, 0x61, 0x73, 0x6d, 0x0d, 0x00, 0x01, 0x00, 0x01, 0x52, 0x00, 0x61, 0x73, 0x6d, 0x01, 0x00,
    0x00, 0x00, 0x01, 0x04, 0x01, 0x60, 0x00, 0x00, 0x03, 0x02, 0x01, 0x00, 0x04, 0x04, 0x01, 0x70,
    0x00, 0x01, 0x05, 0x03, 0x01, 0x00, 0x01, 0x0d, 0x03, 0x01, 0x00, 0x00, 0x06, 0x06, 0x01, 0x7f,
    0x00, 0x41, 0x00, 0x0b, 0x07, 0x15, 0x05, 0x01, 0x66, 0x00, 0x00, 0x01, 0x74, 0x01, 0x00, 0x01,
    0x6d, 0x02, 0x00, 0x01, 0x67, 0x03, 0x00, 0x01, 0x65, 0x04, 0x00, 0x0a, 0x04, 0x01, 0x02, 0x00,
    0x0b, 0x00, 0x09, 0x04, 0x6e, 0x61, 0x6d, 0x65, 0x00, 0x02, 0x01, 0x6d, 0x02, 0x04, 0x01, 0x00,
    0x00, 0x00, 0x06, 0x1f, 0x05, 0x00, 0x00, 0x01, 0x00, 0x01, 0x66, 0x00, 0x01, 0x01, 0x00, 0x01,
    0x74, 0x00, 0x02, 0x01, 0x00, 0x01, 0x6d, 0x00, 0x03, 0x01, 0x00, 0x01, 0x67, 0x00, 0x04, 0x01,
    0x00, 0x01, 0x65, 0x03, 0x04, 0x01, 0x60, 0x00, 0x00, 0x07, 0x02, 0x01, 0x73, 0x04, 0x1d, 0x00,
    0x61, 0x73, 0x6d, 0x0d, 0x00, 0x01, 0x00, 0x00, 0x13, 0x0e, 0x63, 0x6f, 0x6d, 0x70, 0x6f, 0x6e,
    0x65, 0x6e, 0x74, 0x2d, 0x6e, 0x61, 0x6d, 0x65, 0x00, 0x02, 0x01, 0x63, 0x07, 0x31, 0x01, 0x42,
    0x09, 0x01, 0x40, 0x00, 0x01, 0x00, 0x04, 0x00, 0x01, 0x66, 0x01, 0x00, 0x04, 0x00, 0x01, 0x74,
    0x03, 0x01, 0x01, 0x41, 0x00, 0x04, 0x00, 0x01, 0x63, 0x04, 0x02, 0x01, 0x42, 0x00, 0x04, 0x00,
    0x02, 0x69, 0x69, 0x05, 0x03, 0x00, 0x50, 0x00, 0x04, 0x00, 0x01, 0x6d, 0x00, 0x11, 0x00, 0x0a,
    0x06, 0x01, 0x00, 0x01, 0x69, 0x05, 0x01, 0x06, 0x1c, 0x05, 0x01, 0x00, 0x00, 0x01, 0x66, 0x03,
    0x00, 0x00, 0x01, 0x74, 0x04, 0x00, 0x00, 0x01, 0x63, 0x05, 0x00, 0x00, 0x02, 0x69, 0x69, 0x00,
    0x11, 0x00, 0x00, 0x01, 0x6d, 0x04, 0x36, 0x00, 0x61, 0x73, 0x6d, 0x0d, 0x00, 0x01, 0x00, 0x06,
    0x13, 0x04, 0x00, 0x11, 0x02, 0x01, 0x00, 0x00, 0x10, 0x02, 0x01, 0x00, 0x03, 0x02, 0x01, 0x00,
    0x04, 0x02, 0x01, 0x00, 0x00, 0x17, 0x0e, 0x63, 0x6f, 0x6d, 0x70, 0x6f, 0x6e, 0x65, 0x6e, 0x74,
    0x2d, 0x6e, 0x61, 0x6d, 0x65, 0x00, 0x06, 0x05, 0x69, 0x6e, 0x6e, 0x65, 0x72, 0x00, 0x45, 0x0e,
    0x63, 0x6f, 0x6d, 0x70, 0x6f, 0x6e, 0x65, 0x6e, 0x74, 0x2d, 0x6e, 0x61, 0x6d, 0x65, 0x01, 0x07,
    0x00, 0x10, 0x01, 0x00, 0x02, 0x63, 0x74, 0x01, 0x06, 0x00, 0x11, 0x01, 0x00, 0x01, 0x6d, 0x01,
    0x07, 0x00, 0x12, 0x01, 0x00, 0x02, 0x63, 0x69, 0x01, 0x05, 0x03, 0x01, 0x00, 0x01, 0x74, 0x01,
    0x0c, 0x04, 0x02, 0x00, 0x01, 0x63, 0x02, 0x05, 0x69, 0x6e, 0x6e, 0x65, 0x72, 0x01, 0x05, 0x05,
    0x01, 0x00, 0x01, 0x69,
};

// (component
//   (import "primary" (implements "wasi:keyvalue/store") (external-id "kv-prod") (instance))
//   (import "wasi:http/types@0.2" (versionsuffix ".6") (instance))
//   (import "[constructor]r" (func))
// )
constexpr uint8_t kAttributes[] = {
    0x00, 0x61, 0x73, 0x6d, 0x0d, 0x00, 0x01, 0x00, 0x07, 0x03, 0x01, 0x42, 0x00, 0x0a, 0x2b, 0x01,
    0x02, 0x07, 0x70, 0x72, 0x69, 0x6d, 0x61, 0x72, 0x79, 0x02, 0x00, 0x13, 0x77, 0x61, 0x73, 0x69,
    0x3a, 0x6b, 0x65, 0x79, 0x76, 0x61, 0x6c, 0x75, 0x65, 0x2f, 0x73, 0x74, 0x6f, 0x72, 0x65, 0x02,
    0x07, 0x6b, 0x76, 0x2d, 0x70, 0x72, 0x6f, 0x64, 0x05, 0x00, 0x07, 0x03, 0x01, 0x42, 0x00, 0x0a,
    0x1d, 0x01, 0x02, 0x13, 0x77, 0x61, 0x73, 0x69, 0x3a, 0x68, 0x74, 0x74, 0x70, 0x2f, 0x74, 0x79,
    0x70, 0x65, 0x73, 0x40, 0x30, 0x2e, 0x32, 0x01, 0x01, 0x02, 0x2e, 0x36, 0x05, 0x01, 0x07, 0x05,
    0x01, 0x40, 0x00, 0x01, 0x00, 0x0a, 0x13, 0x01, 0x00, 0x0e, 0x5b, 0x63, 0x6f, 0x6e, 0x73, 0x74,
    0x72, 0x75, 0x63, 0x74, 0x6f, 0x72, 0x5d, 0x72, 0x01, 0x02,
};


// ---- Helpers ----

using Bytes = std::vector<uint8_t>;

template <size_t N>
Bytes bytes_of(const uint8_t (&array)[N]) {
  return Bytes(array, array + N);
}

Bytes leb(uint64_t value) {
  Bytes out;
  do {
    uint8_t byte = value & 0x7f;
    value >>= 7;
    if (value != 0) byte |= 0x80;
    out.push_back(byte);
  } while (value != 0);
  return out;
}

Bytes operator+(Bytes a, const Bytes& b) {
  a.insert(a.end(), b.begin(), b.end());
  return a;
}

Bytes name(std::string_view text) { return leb(text.size()) + Bytes(text.begin(), text.end()); }

Bytes section(uint8_t id, const Bytes& content) {
  return Bytes{id} + leb(content.size()) + content;
}

const Bytes kPreamble = {0x00, 0x61, 0x73, 0x6d, 0x0d, 0x00, 0x01, 0x00};

Bytes component(std::initializer_list<Bytes> sections) {
  Bytes out = kPreamble;
  for (const Bytes& s : sections) out = out + s;
  return out;
}

Component decode(const Bytes& bytes) { return decode_component(bytes); }

// The message of the Decode error the bytes must raise ("" and a failure otherwise).
std::string decode_error(const Bytes& bytes) {
  try {
    decode_component(bytes);
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), ErrorKind::Decode) << e.what();
    return e.what();
  }
  ADD_FAILURE() << "decoded without error";
  return "";
}

#define EXPECT_DECODE_ERROR(bytes, fragment)                          \
  do {                                                                \
    const std::string message_ = decode_error(bytes);                 \
    EXPECT_NE(message_.find(fragment), std::string::npos) << message_; \
  } while (0)

template <typename T>
const T& item(const Component& c, size_t i) {
  return std::get<T>(c.definitions.at(i).item);
}

template <typename T>
const T& type_def(const Component& c, size_t i) {
  return std::get<T>(item<Type>(c, i).def);
}

bool is_prim(const ValType& t, PrimValType p) {
  return std::holds_alternative<PrimValType>(t) && std::get<PrimValType>(t) == p;
}

bool is_index(const ValType& t, uint32_t index) {
  return std::holds_alternative<TypeIndex>(t) && std::get<TypeIndex>(t).index == index;
}

bool is_num(const CoreValType& t, CoreNumType n) {
  return std::holds_alternative<CoreNumType>(t) && std::get<CoreNumType>(t) == n;
}

// ---- Preamble ----

TEST(Preamble, EmptyComponentDecodes) {
  const Component c = decode(kPreamble);
  EXPECT_TRUE(c.definitions.empty());
  EXPECT_FALSE(c.names.has_value());
  EXPECT_EQ(c.bytes.offset, 0u);
  EXPECT_EQ(c.bytes.size, 8u);
}

TEST(Preamble, RejectsBadMagic) {
  EXPECT_DECODE_ERROR((Bytes{0x00, 0x61, 0x73, 0x4d, 0x0d, 0x00, 0x01, 0x00}),
                      "at byte 0x00: bad magic");
  EXPECT_DECODE_ERROR((Bytes{'a', 's', 'm'}), "bad magic");
}

TEST(Preamble, SaysWhenTheInputIsACoreModule) {
  EXPECT_DECODE_ERROR((Bytes{0x00, 0x61, 0x73, 0x6d, 0x01, 0x00, 0x00, 0x00}),
                      "core WebAssembly module (layer 0), not a component");
}

TEST(Preamble, RejectsOtherVersionsAndLayers) {
  EXPECT_DECODE_ERROR((Bytes{0x00, 0x61, 0x73, 0x6d, 0x0c, 0x00, 0x01, 0x00}),
                      "at byte 0x04: unsupported component binary version 0x0c");
  EXPECT_DECODE_ERROR((Bytes{0x00, 0x61, 0x73, 0x6d, 0x0d, 0x00, 0x02, 0x00}),
                      "at byte 0x06: unknown layer 0x02");
}

TEST(Preamble, RejectsEveryTruncation) {
  for (size_t n = 0; n < kPreamble.size(); ++n) {
    EXPECT_DECODE_ERROR(Bytes(kPreamble.begin(), kPreamble.begin() + n), "preamble");
  }
}

// ---- Every section kind (the `sections` fixture) ----

TEST(SectionsFixture, DefinitionsInBinaryOrder) {
  const Component c = decode(bytes_of(kSections));
  // Indices of Definition::item's alternatives, in the order of the binary.
  const std::vector<size_t> expected = {1, 2, 6, 2, 3, 4, 7, 10, 5, 5, 6, 6, 8, 8, 9, 11, 11, 0, 0};
  std::vector<size_t> actual;
  for (const Definition& d : c.definitions) actual.push_back(d.item.index());
  EXPECT_EQ(actual, expected);
  EXPECT_EQ(c.definitions[0].offset, 0x0au);
  EXPECT_EQ(c.definitions[7].offset, 0xb3u);
}

TEST(SectionsFixture, CoreModuleIsAByteRangeOfTheInput) {
  const Bytes input = bytes_of(kSections);
  const Component c = decode(input);
  const ByteRange range = item<CoreModule>(c, 0).bytes;
  EXPECT_EQ(range.offset, 0x0au);
  EXPECT_EQ(range.size, 0x3au);
  const Bytes core_preamble = {0x00, 0x61, 0x73, 0x6d, 0x01, 0x00, 0x00, 0x00};
  EXPECT_EQ(Bytes(input.begin() + range.offset, input.begin() + range.offset + 8), core_preamble);
  EXPECT_EQ(range.offset + range.size,
            c.definitions[1].offset - 3);  // next section's id, size and count
}

TEST(SectionsFixture, CoreInstancesAndCoreTypes) {
  const Component c = decode(bytes_of(kSections));
  const auto& instantiate = std::get<CoreInstantiate>(item<CoreInstance>(c, 1).expr);
  EXPECT_EQ(instantiate.module, 0u);
  EXPECT_TRUE(instantiate.args.empty());
  const auto& exports = std::get<CoreInlineExports>(item<CoreInstance>(c, 3).expr).exports;
  ASSERT_EQ(exports.size(), 1u);
  EXPECT_EQ(exports[0].name, "run");
  EXPECT_EQ(exports[0].target.sort, Sort::CoreFunc);
  EXPECT_EQ(exports[0].target.index, 0u);
  const auto& rec = std::get<CoreRecType>(item<CoreType>(c, 4).def);
  ASSERT_EQ(rec.types.size(), 1u);
  const auto& func = std::get<CoreFuncType>(rec.types[0].type);
  EXPECT_TRUE(func.params.empty());
  ASSERT_EQ(func.results.size(), 1u);
  EXPECT_TRUE(is_num(func.results[0], CoreNumType::I32));
}

TEST(SectionsFixture, NestedComponent) {
  const Component c = decode(bytes_of(kSections));
  const auto& inner = *item<std::shared_ptr<const Component>>(c, 5);
  EXPECT_EQ(inner.bytes.offset, 0x69u);
  EXPECT_EQ(inner.bytes.size, 0x40u);
  ASSERT_EQ(inner.definitions.size(), 4u);
  EXPECT_TRUE(type_def<FuncType>(inner, 0).params.empty());
  const Import& import = item<Import>(inner, 1);
  EXPECT_EQ(import.name.name, "x");
  EXPECT_EQ(import.type.sort, Sort::Func);
  const Export& exported = item<Export>(inner, 2);
  EXPECT_EQ(exported.name.name, "y");
  EXPECT_FALSE(exported.type.has_value());
  ASSERT_TRUE(inner.names.has_value());
  EXPECT_EQ(inner.names->component_name, "inner");
  EXPECT_EQ(inner.names->names.at(Sort::Func).at(0), "x");
}

TEST(SectionsFixture, InstancesAliasesCanonsStartAndExports) {
  const Component c = decode(bytes_of(kSections));
  const auto& instantiate = std::get<Instantiate>(item<Instance>(c, 8).expr);
  EXPECT_EQ(instantiate.component, 0u);
  ASSERT_EQ(instantiate.args.size(), 1u);
  EXPECT_EQ(instantiate.args[0].name, "x");
  EXPECT_EQ(instantiate.args[0].target.sort, Sort::Func);
  const auto& bundle = std::get<InlineExports>(item<Instance>(c, 9).expr).exports;
  ASSERT_EQ(bundle.size(), 1u);
  EXPECT_EQ(bundle[0].name.name, "f");

  const Alias& y = item<Alias>(c, 10);
  EXPECT_EQ(y.sort, Sort::Func);
  EXPECT_EQ(std::get<AliasExport>(y.target).name, "y");
  const Alias& run = item<Alias>(c, 11);
  EXPECT_EQ(run.sort, Sort::CoreFunc);
  EXPECT_EQ(std::get<AliasCoreExport>(run.target).instance, 0u);

  const Canon& lift = item<Canon>(c, 12);
  EXPECT_EQ(lift.kind, CanonKind::Lift);
  EXPECT_EQ(lift.func_index, 1u);
  EXPECT_EQ(lift.type_index, 0u);
  EXPECT_EQ(item<Canon>(c, 13).kind, CanonKind::Lower);

  const Start& start = item<Start>(c, 14);
  EXPECT_EQ(start.func, 1u);
  EXPECT_TRUE(start.args.empty());
  EXPECT_EQ(start.result_count, 0u);

  const Export& plain = item<Export>(c, 15);
  EXPECT_EQ(plain.name.name, "run");
  EXPECT_EQ(plain.target.sort, Sort::Func);
  EXPECT_EQ(plain.target.index, 2u);
  EXPECT_FALSE(plain.type.has_value());
  const Export& typed = item<Export>(c, 16);
  ASSERT_TRUE(typed.type.has_value());
  EXPECT_EQ(typed.type->sort, Sort::Func);
  EXPECT_EQ(typed.type->index, 0u);
}

TEST(SectionsFixture, CustomSectionIsNameAndByteRange) {
  const Bytes input = bytes_of(kSections);
  const Component c = decode(input);
  const CustomSection& custom = item<CustomSection>(c, 17);
  EXPECT_EQ(custom.name, "producers");
  EXPECT_EQ(std::string(input.begin() + custom.data.offset,
                        input.begin() + custom.data.offset + custom.data.size),
            "cmhost test");
  EXPECT_EQ(item<CustomSection>(c, 18).name, "component-name");
}

TEST(SectionsFixture, NameSection) {
  const Component c = decode(bytes_of(kSections));
  ASSERT_TRUE(c.names.has_value());
  EXPECT_EQ(c.names->component_name, "top");
  const auto& names = c.names->names;
  EXPECT_EQ(names.at(Sort::CoreFunc),
            (std::map<uint32_t, std::string>{{1, "run"}, {2, "lowered"}}));
  EXPECT_EQ(names.at(Sort::CoreModule).at(0), "m");
  EXPECT_EQ(names.at(Sort::CoreInstance).at(1), "exports");
  EXPECT_EQ(names.at(Sort::CoreType).at(0), "ct");
  EXPECT_EQ(names.at(Sort::Func),
            (std::map<uint32_t, std::string>{{0, "host"}, {1, "y"}, {2, "lifted"}}));
  EXPECT_EQ(names.at(Sort::Type).at(0), "ft");
  EXPECT_EQ(names.at(Sort::Component).at(0), "inner");
  EXPECT_EQ(names.at(Sort::Instance).at(1), "bundle");
}

// ---- Every type opcode (the `types` fixture) ----

TEST(TypesFixture, ResourceTypes) {
  const Component c = decode(bytes_of(kTypes));
  const auto& plain = type_def<ResourceType>(c, 3);
  EXPECT_TRUE(is_num(plain.rep, CoreNumType::I32));
  EXPECT_FALSE(plain.dtor.has_value());
  EXPECT_EQ(type_def<ResourceType>(c, 4).dtor, 0u);
}

TEST(TypesFixture, PrimitiveTypesInATuple) {
  const Component c = decode(bytes_of(kTypes));
  const auto& tuple = type_def<TupleType>(c, 5);
  const PrimValType expected[] = {
      PrimValType::Bool, PrimValType::S8,  PrimValType::U8,  PrimValType::S16,    PrimValType::U16,
      PrimValType::S32,  PrimValType::U32, PrimValType::S64, PrimValType::U64,    PrimValType::F32,
      PrimValType::F64,  PrimValType::Char, PrimValType::String, PrimValType::ErrorContext,
  };
  ASSERT_EQ(tuple.types.size(), std::size(expected));
  for (size_t i = 0; i < std::size(expected); ++i) {
    EXPECT_TRUE(is_prim(tuple.types[i], expected[i])) << to_string(expected[i]);
  }
  EXPECT_EQ(type_def<PrimValType>(c, 23), PrimValType::ErrorContext);
  EXPECT_TRUE(item<Type>(c, 23).is_defvaltype());
}

TEST(TypesFixture, CompoundValueTypes) {
  const Component c = decode(bytes_of(kTypes));
  const auto& record = type_def<RecordType>(c, 6);
  ASSERT_EQ(record.fields.size(), 2u);
  EXPECT_EQ(record.fields[0].label, "a");
  EXPECT_TRUE(is_prim(record.fields[0].type, PrimValType::U32));
  EXPECT_EQ(record.fields[1].label, "b");

  const auto& variant = type_def<VariantType>(c, 7);
  ASSERT_EQ(variant.cases.size(), 2u);
  EXPECT_EQ(variant.cases[0].label, "none");
  EXPECT_FALSE(variant.cases[0].type.has_value());
  EXPECT_TRUE(is_index(*variant.cases[1].type, 3));

  const auto& list = type_def<ListType>(c, 8);
  EXPECT_TRUE(is_prim(list.element, PrimValType::U8));
  EXPECT_FALSE(list.length.has_value());
  const auto& fixed = type_def<ListType>(c, 9);
  EXPECT_TRUE(is_prim(fixed.element, PrimValType::U32));
  EXPECT_EQ(fixed.length, 4u);

  EXPECT_EQ(type_def<FlagsType>(c, 10).labels, (std::vector<std::string>{"read", "write"}));
  EXPECT_EQ(type_def<EnumType>(c, 11).labels, (std::vector<std::string>{"red", "green"}));
  EXPECT_TRUE(is_prim(type_def<OptionType>(c, 12).type, PrimValType::String));

  const auto& both = type_def<ResultType>(c, 13);
  EXPECT_TRUE(is_prim(*both.ok, PrimValType::U32));
  EXPECT_TRUE(is_prim(*both.error, PrimValType::String));
  const auto& none = type_def<ResultType>(c, 14);
  EXPECT_FALSE(none.ok || none.error);
  const auto& error_only = type_def<ResultType>(c, 15);
  EXPECT_FALSE(error_only.ok.has_value());
  EXPECT_TRUE(is_prim(*error_only.error, PrimValType::U8));
}

TEST(TypesFixture, HandlesStreamsFuturesAndMaps) {
  const Component c = decode(bytes_of(kTypes));
  EXPECT_EQ(type_def<OwnType>(c, 16).resource, 0u);
  EXPECT_EQ(type_def<BorrowType>(c, 17).resource, 0u);
  EXPECT_TRUE(is_prim(*type_def<StreamType>(c, 18).element, PrimValType::U8));
  EXPECT_FALSE(type_def<StreamType>(c, 19).element.has_value());
  EXPECT_TRUE(is_prim(*type_def<FutureType>(c, 20).element, PrimValType::String));
  EXPECT_FALSE(type_def<FutureType>(c, 21).element.has_value());
  const auto& map = type_def<MapType>(c, 22);
  EXPECT_TRUE(is_prim(map.key, PrimValType::String));
  EXPECT_TRUE(is_prim(map.value, PrimValType::U32));
}

TEST(TypesFixture, FunctionTypes) {
  const Component c = decode(bytes_of(kTypes));
  const auto& sync = type_def<FuncType>(c, 24);
  EXPECT_FALSE(sync.async);
  ASSERT_EQ(sync.params.size(), 2u);
  EXPECT_EQ(sync.params[0].label, "x");
  EXPECT_TRUE(is_index(sync.params[0].type, 3));
  EXPECT_TRUE(is_prim(sync.params[1].type, PrimValType::U32));
  EXPECT_TRUE(is_index(*sync.result, 9));
  const auto& async = type_def<FuncType>(c, 25);
  EXPECT_TRUE(async.async);
  EXPECT_FALSE(async.result.has_value());
  EXPECT_FALSE(item<Type>(c, 25).is_defvaltype());
}

TEST(TypesFixture, ComponentType) {
  const Component c = decode(bytes_of(kTypes));
  const auto& decls = type_def<ComponentType>(c, 26).decls;
  ASSERT_EQ(decls.size(), 7u);
  EXPECT_TRUE(std::get<CoreModuleType>(std::get<CoreType>(decls[0].item).def).decls.empty());
  EXPECT_EQ(std::get<PrimValType>(std::get<std::shared_ptr<const Type>>(decls[1].item)->def),
            PrimValType::U32);
  const Alias& outer = std::get<Alias>(decls[2].item);
  EXPECT_EQ(outer.sort, Sort::Type);
  EXPECT_EQ(std::get<AliasOuter>(outer.target).count, 1u);
  EXPECT_EQ(std::get<AliasOuter>(outer.target).index, 3u);
  const auto& func = std::get<FuncType>(std::get<std::shared_ptr<const Type>>(decls[3].item)->def);
  EXPECT_TRUE(is_index(func.params.at(0).type, 0));
  const ImportDecl& in = std::get<ImportDecl>(decls[4].item);
  EXPECT_EQ(in.name.name, "in");
  EXPECT_EQ(in.type.sort, Sort::Func);
  EXPECT_EQ(in.type.index, 2u);
  const ImportDecl& res = std::get<ImportDecl>(decls[5].item);
  EXPECT_EQ(res.type.sort, Sort::Type);
  EXPECT_TRUE(res.type.sub_resource);
  const ExportDecl& out = std::get<ExportDecl>(decls[6].item);
  EXPECT_EQ(out.name.name, "out");
  EXPECT_FALSE(out.type.sub_resource);
  EXPECT_EQ(out.type.index, 0u);
}

TEST(TypesFixture, InstanceType) {
  const Component c = decode(bytes_of(kTypes));
  const auto& decls = type_def<InstanceType>(c, 27).decls;
  ASSERT_EQ(decls.size(), 5u);
  EXPECT_TRUE(std::get<ExportDecl>(decls[1].item).type.sub_resource);
  EXPECT_EQ(std::get<OwnType>(std::get<std::shared_ptr<const Type>>(decls[2].item)->def).resource,
            1u);
  const ExportDecl& get = std::get<ExportDecl>(decls[4].item);
  EXPECT_EQ(get.name.name, "get");
  EXPECT_EQ(get.type.index, 3u);
}

// ---- Every canon opcode (the `canon` fixture, and by hand) ----

TEST(CanonFixture, EveryBuiltinInOrder) {
  const Component c = decode(bytes_of(kCanon));
  std::vector<CanonKind> kinds;
  for (const Definition& d : c.definitions) {
    if (const Canon* canon = std::get_if<Canon>(&d.item)) kinds.push_back(canon->kind);
  }
  using K = CanonKind;
  const std::vector<CanonKind> expected = {
      K::Lift, K::Lift, K::Lower, K::Lower, K::ResourceNew, K::ResourceDrop, K::ResourceRep,
      K::BackpressureInc, K::BackpressureDec, K::TaskReturn, K::TaskReturn, K::TaskCancel,
      K::ContextGet, K::ContextSet, K::SubtaskCancel, K::SubtaskCancel, K::SubtaskDrop,
      K::StreamNew, K::StreamRead, K::StreamWrite, K::StreamCancelRead, K::StreamCancelWrite,
      K::StreamDropReadable, K::StreamDropWritable, K::FutureNew, K::FutureRead, K::FutureWrite,
      K::FutureCancelRead, K::FutureCancelWrite, K::FutureDropReadable, K::FutureDropWritable,
      K::ErrorContextNew, K::ErrorContextDebugMessage, K::ErrorContextDrop, K::WaitableSetNew,
      K::WaitableSetWait, K::WaitableSetPoll, K::WaitableSetDrop, K::WaitableJoin, K::ThreadIndex,
      K::ThreadNewIndirect, K::ThreadResumeLater, K::ThreadSuspend, K::ThreadYield,
      K::ThreadSuspendThenResume, K::ThreadYieldThenResume, K::ThreadSuspendThenPromote,
      K::ThreadYieldThenPromote,
  };
  EXPECT_EQ(kinds, expected);
  EXPECT_STREQ(to_string(K::ErrorContextDebugMessage), "error-context.debug-message");
}

// Canon definitions of the fixture start after the module, instance, six
// aliases, five types and one core type.
constexpr size_t kFirstCanon = 14;

const Canon& canon_at(const Component& c, size_t n) { return item<Canon>(c, kFirstCanon + n); }

TEST(CanonFixture, LiftAndLowerWithEveryOption) {
  const Component c = decode(bytes_of(kCanon));
  using O = CanonOptionKind;
  const auto kinds = [](const Canon& canon) {
    std::vector<O> out;
    for (const CanonOption& o : canon.options) out.push_back(o.kind);
    return out;
  };
  const Canon& sync_lift = canon_at(c, 0);
  EXPECT_EQ(kinds(sync_lift),
            (std::vector<O>{O::StringUtf8, O::Memory, O::Realloc, O::PostReturn}));
  EXPECT_EQ(sync_lift.options[2].index, 3u);  // realloc
  EXPECT_EQ(sync_lift.options[3].index, 2u);  // post-return
  EXPECT_EQ(sync_lift.type_index, 3u);
  const Canon& async_lift = canon_at(c, 1);
  EXPECT_EQ(kinds(async_lift),
            (std::vector<O>{O::Async, O::Callback, O::StringUtf16, O::Memory, O::Realloc}));
  EXPECT_EQ(async_lift.options[1].index, 1u);  // callback
  EXPECT_EQ(async_lift.type_index, 4u);
  const Canon& lower = canon_at(c, 2);
  EXPECT_EQ(lower.func_index, 0u);
  EXPECT_EQ(kinds(lower), (std::vector<O>{O::StringLatin1Utf16, O::Memory, O::Realloc}));
  EXPECT_EQ(canon_at(c, 3).func_index, 1u);
}

TEST(CanonFixture, Immediates) {
  const Component c = decode(bytes_of(kCanon));
  EXPECT_EQ(canon_at(c, 4).type_index, 0u);  // resource.new $r
  const Canon& task_return = canon_at(c, 9);
  EXPECT_TRUE(is_prim(*task_return.result, PrimValType::String));
  EXPECT_EQ(task_return.options.size(), 2u);
  EXPECT_FALSE(canon_at(c, 10).result.has_value());
  EXPECT_EQ(canon_at(c, 12).context_slot, 0u);
  EXPECT_TRUE(is_num(canon_at(c, 13).context_type, CoreNumType::I32));
  EXPECT_EQ(canon_at(c, 13).context_slot, 1u);
  EXPECT_FALSE(canon_at(c, 14).async);
  EXPECT_TRUE(canon_at(c, 15).async);
  EXPECT_EQ(canon_at(c, 17).type_index, 1u);  // stream.new $s
  EXPECT_EQ(canon_at(c, 18).options.size(), 1u);
  EXPECT_TRUE(canon_at(c, 21).async);           // stream.cancel-write async
  EXPECT_EQ(canon_at(c, 24).type_index, 2u);  // future.new $fu
  EXPECT_TRUE(canon_at(c, 27).async);           // future.cancel-read async
  EXPECT_EQ(canon_at(c, 32).options.size(), 2u);  // error-context.debug-message
  EXPECT_FALSE(canon_at(c, 35).cancellable);
  EXPECT_EQ(canon_at(c, 35).memory_index, 0u);
  const Canon& new_indirect = canon_at(c, 40);
  EXPECT_EQ(new_indirect.core_type_index, 0u);
  EXPECT_EQ(new_indirect.table_index, 0u);
}

TEST(Canon, SharedEverythingThreadBuiltins) {
  const Component c =
      decode(component({section(8, {0x03, 0x40, 0x01, 0x05, 0x41, 0x00, 0x06, 0x02, 0x42, 0x01})}));
  const Canon& spawn_ref = item<Canon>(c, 0);
  EXPECT_EQ(spawn_ref.kind, CanonKind::ThreadSpawnRef);
  EXPECT_TRUE(spawn_ref.shared);
  EXPECT_EQ(spawn_ref.core_type_index, 5u);
  const Canon& spawn_indirect = item<Canon>(c, 1);
  EXPECT_EQ(spawn_indirect.kind, CanonKind::ThreadSpawnIndirect);
  EXPECT_FALSE(spawn_indirect.shared);
  EXPECT_EQ(spawn_indirect.core_type_index, 6u);
  EXPECT_EQ(spawn_indirect.table_index, 2u);
  EXPECT_EQ(item<Canon>(c, 2).kind, CanonKind::ThreadAvailableParallelism);
  EXPECT_TRUE(item<Canon>(c, 2).shared);
}

TEST(Canon, CancellableFlags) {
  const Component c =
      decode(component({section(8, {0x08, 0x20, 0x01, 0x03, 0x21, 0x01, 0x00, 0x29, 0x01, 0x0c,
                                    0x01, 0x2a, 0x01, 0x2b, 0x00, 0x2c, 0x01, 0x2d, 0x01})}));
  ASSERT_EQ(c.definitions.size(), 8u);
  EXPECT_EQ(item<Canon>(c, 0).memory_index, 3u);
  for (size_t i = 0; i < 8; ++i) EXPECT_EQ(item<Canon>(c, i).cancellable, i != 5) << i;
}

TEST(Canon, ContextGetWithI64) {
  const Component c = decode(component({section(8, {0x01, 0x0a, 0x7e, 0x02})}));
  EXPECT_TRUE(is_num(item<Canon>(c, 0).context_type, CoreNumType::I64));
  EXPECT_EQ(item<Canon>(c, 0).context_slot, 2u);
}

TEST(Canon, RejectsUnknownOpcodesOptionsAndFlags) {
  EXPECT_DECODE_ERROR(component({section(8, {0x01, 0x07})}),
                      "at byte 0x0b: unknown canonical definition opcode 0x07 in canon section");
  EXPECT_DECODE_ERROR(component({section(8, {0x01, 0x2e})}),
                      "unknown canonical definition opcode 0x2e");
  EXPECT_DECODE_ERROR(component({section(8, {0x01, 0x01, 0x00, 0x00, 0x01, 0x08})}),
                      "unknown canonical option 0x08");
  EXPECT_DECODE_ERROR(component({section(8, {0x01, 0x00, 0x01, 0x00, 0x00, 0x00})}),
                      "sort of the lifted function");
  EXPECT_DECODE_ERROR(component({section(8, {0x01, 0x0c, 0x02})}), "invalid cancellable flag 0x02");
  EXPECT_DECODE_ERROR(component({section(8, {0x01, 0x06, 0x02})}), "invalid async flag 0x02");
  EXPECT_DECODE_ERROR(component({section(8, {0x01, 0x42, 0x02})}), "invalid shared flag 0x02");
  EXPECT_DECODE_ERROR(component({section(8, {0x01, 0x09, 0x01, 0x01, 0x00})}),
                      "must be 0x00, found 0x01");
}

// ---- Core types (the `core_types` fixture, and by hand) ----

TEST(CoreTypesFixture, FunctionTypesWithNumbersVectorsAndReferences) {
  const Component c = decode(bytes_of(kCoreTypes));
  const auto func_at = [&](size_t i) -> const CoreFuncType& {
    return std::get<CoreFuncType>(std::get<CoreRecType>(item<CoreType>(c, i).def).types.at(0).type);
  };
  const CoreFuncType& nums = func_at(0);
  ASSERT_EQ(nums.params.size(), 5u);
  EXPECT_TRUE(is_num(nums.params[4], CoreNumType::V128));
  EXPECT_TRUE(is_num(nums.results[1], CoreNumType::I64));

  const CoreFuncType& refs = func_at(1);
  ASSERT_EQ(refs.params.size(), 7u);
  const auto ref = [](const CoreValType& t) { return std::get<CoreRefType>(t); };
  EXPECT_TRUE(ref(refs.params[0]).nullable);
  EXPECT_EQ(ref(refs.params[0]).heap.abstract, AbstractHeapType::Func);
  EXPECT_EQ(ref(refs.params[1]).heap.abstract, AbstractHeapType::Extern);
  EXPECT_EQ(ref(refs.params[2]).heap.abstract, AbstractHeapType::Any);
  EXPECT_FALSE(ref(refs.params[3]).nullable);
  EXPECT_EQ(ref(refs.params[3]).heap.abstract, AbstractHeapType::Eq);
  EXPECT_TRUE(ref(refs.params[4]).nullable);
  EXPECT_EQ(ref(refs.params[4]).heap.type_index, 0u);
  EXPECT_EQ(ref(refs.params[5]).heap.abstract, AbstractHeapType::I31);
  EXPECT_EQ(ref(refs.params[6]).heap.abstract, AbstractHeapType::Exn);
  EXPECT_FALSE(ref(refs.results.at(0)).nullable);
}

TEST(CoreTypesFixture, GcStructsArraysAndRecGroups) {
  const Component c = decode(bytes_of(kCoreTypes));
  const auto rec_at = [&](size_t i) -> const CoreRecType& {
    return std::get<CoreRecType>(item<CoreType>(c, i).def);
  };
  const auto& point = std::get<CoreStructType>(rec_at(2).types.at(0).type);
  ASSERT_EQ(point.fields.size(), 3u);
  EXPECT_FALSE(point.fields[0].is_mutable);
  EXPECT_TRUE(point.fields[1].is_mutable);
  EXPECT_EQ(std::get<CorePackedType>(point.fields[1].type), CorePackedType::I16);
  EXPECT_EQ(std::get<CorePackedType>(point.fields[2].type), CorePackedType::I8);
  const auto& bytes = std::get<CoreArrayType>(rec_at(3).types.at(0).type);
  EXPECT_TRUE(bytes.element.is_mutable);

  const CoreRecType& group = rec_at(4);
  ASSERT_EQ(group.types.size(), 2u);
  EXPECT_FALSE(group.types[0].is_final);
  EXPECT_TRUE(group.types[0].supertypes.empty());
  EXPECT_TRUE(group.types[1].is_final);
  EXPECT_EQ(group.types[1].supertypes, (std::vector<uint32_t>{4}));

  // (sub (func)) outside a rec group is encoded 0x00 0x50 in components.
  const CoreSubType& open = rec_at(5).types.at(0);
  EXPECT_FALSE(open.is_final);
  EXPECT_TRUE(std::holds_alternative<CoreFuncType>(open.type));
}

TEST(CoreTypesFixture, ModuleType) {
  const Component c = decode(bytes_of(kCoreTypes));
  const auto& decls = std::get<CoreModuleType>(item<CoreType>(c, 6).def).decls;
  ASSERT_EQ(decls.size(), 11u);
  EXPECT_TRUE(std::holds_alternative<CoreRecType>(decls[0]));
  const auto import_at = [&](size_t i) -> const CoreImportDecl& {
    return std::get<CoreImportDecl>(decls[i]);
  };
  EXPECT_EQ(import_at(1).module, "env");
  EXPECT_EQ(import_at(1).name, "f");
  EXPECT_EQ(std::get<CoreFuncRef>(import_at(1).type).type_index, 0u);
  const auto& table = std::get<CoreTableType>(import_at(2).type);
  EXPECT_EQ(table.element.heap.abstract, AbstractHeapType::Func);
  EXPECT_EQ(table.limits.min, 1u);
  EXPECT_EQ(table.limits.max, 2u);
  const auto& memory = std::get<CoreMemoryType>(import_at(3).type);
  EXPECT_EQ(memory.limits.min, 1u);
  EXPECT_FALSE(memory.limits.max.has_value());
  const auto& memory64 = std::get<CoreMemoryType>(import_at(4).type);
  EXPECT_TRUE(memory64.limits.is_64);
  EXPECT_EQ(memory64.limits.max, 3u);
  EXPECT_TRUE(std::get<CoreMemoryType>(import_at(5).type).limits.shared);
  const auto& global = std::get<CoreGlobalType>(import_at(6).type);
  EXPECT_TRUE(global.is_mutable);
  EXPECT_TRUE(is_num(global.type, CoreNumType::I32));
  EXPECT_EQ(std::get<CoreTagType>(import_at(7).type).type_index, 0u);
  const auto& alias = std::get<CoreOuterTypeAlias>(decls[8]);
  EXPECT_EQ(alias.count, 1u);
  EXPECT_EQ(alias.index, 0u);
  const auto& run = std::get<CoreExportDecl>(decls[9]);
  EXPECT_EQ(run.name, "run");
  EXPECT_EQ(std::get<CoreFuncRef>(run.type).type_index, 1u);
  EXPECT_FALSE(std::get<CoreGlobalType>(std::get<CoreExportDecl>(decls[10]).type).is_mutable);
}

TEST(CoreTypes, SharedHeapTypesAndCustomPageSizes) {
  // (func (param (ref null (shared any)))) and a module type importing a
  // memory with a 1-byte page size.
  const Component c =
      decode(component({section(3, {0x02, 0x60, 0x01, 0x63, 0x65, 0x6e, 0x00, 0x50, 0x01, 0x00,
                                    0x01, 'a', 0x01, 'b', 0x02, 0x08, 0x01, 0x00})}));
  const auto& func =
      std::get<CoreFuncType>(std::get<CoreRecType>(item<CoreType>(c, 0).def).types.at(0).type);
  const auto& ref = std::get<CoreRefType>(func.params.at(0));
  EXPECT_TRUE(ref.heap.shared);
  EXPECT_EQ(ref.heap.abstract, AbstractHeapType::Any);
  const auto& module = std::get<CoreModuleType>(item<CoreType>(c, 1).def);
  const auto& memory = std::get<CoreMemoryType>(std::get<CoreImportDecl>(module.decls.at(0)).type);
  EXPECT_EQ(memory.page_size_log2, 0u);
}

TEST(CoreTypes, RejectsMalformedCoreTypes) {
  EXPECT_DECODE_ERROR(component({section(3, {0x01, 0x50, 0x01, 0x01, 0x50, 0x00})}),
                      "a module type cannot declare a module type");
  EXPECT_DECODE_ERROR(component({section(3, {0x01, 0x00, 0x60, 0x00, 0x00})}),
                      "core type opcode after a 0x00 prefix must be 0x50");
  EXPECT_DECODE_ERROR(component({section(3, {0x01, 0x61})}), "unknown core type opcode 0x61");
  EXPECT_DECODE_ERROR(component({section(3, {0x01, 0x60, 0x01, 0x7a, 0x00})}),
                      "unknown core value type 0x7a");
  EXPECT_DECODE_ERROR(component({section(3, {0x01, 0x50, 0x01, 0x04})}),
                      "unknown module type declaration 0x04");
  EXPECT_DECODE_ERROR(component({section(3, {0x01, 0x50, 0x01, 0x02, 0x00, 0x01, 0x00, 0x00})}),
                      "module type alias sort");
  EXPECT_DECODE_ERROR(
      component({section(3, {0x01, 0x50, 0x01, 0x03, 0x01, 'e', 0x02, 0x10, 0x00})}),
      "unknown memory limits flags 0x10");
}

// ---- Aliases (the `aliases` fixture, and by hand) ----

TEST(AliasesFixture, EveryTargetAndSort) {
  const Component c = decode(bytes_of(kAliases));
  const Sort core_sorts[] = {Sort::CoreFunc, Sort::CoreTable, Sort::CoreMemory, Sort::CoreGlobal,
                             Sort::CoreTag};
  const char* core_names[] = {"f", "t", "m", "g", "e"};
  for (size_t i = 0; i < 5; ++i) {
    const Alias& alias = item<Alias>(c, 2 + i);
    EXPECT_EQ(alias.sort, core_sorts[i]);
    EXPECT_EQ(std::get<AliasCoreExport>(alias.target).name, core_names[i]);
  }
  const Sort export_sorts[] = {Sort::Func, Sort::Type, Sort::Component, Sort::Instance,
                               Sort::CoreModule};
  const char* export_names[] = {"f", "t", "c", "ii", "m"};
  for (size_t i = 0; i < 5; ++i) {
    const Alias& alias = item<Alias>(c, 12 + i);
    EXPECT_EQ(alias.sort, export_sorts[i]);
    EXPECT_EQ(std::get<AliasExport>(alias.target).instance, 0u);
    EXPECT_EQ(std::get<AliasExport>(alias.target).name, export_names[i]);
  }
  const auto& inner = *item<std::shared_ptr<const Component>>(c, 17);
  const Sort outer_sorts[] = {Sort::CoreModule, Sort::CoreType, Sort::Type, Sort::Component};
  for (size_t i = 0; i < 4; ++i) {
    const Alias& alias = item<Alias>(inner, i);
    EXPECT_EQ(alias.sort, outer_sorts[i]);
    EXPECT_EQ(std::get<AliasOuter>(alias.target).count, 1u);
    EXPECT_EQ(std::get<AliasOuter>(alias.target).index, 0u);
  }
}

TEST(Aliases, RejectsSortsOutsideTheirForm) {
  EXPECT_DECODE_ERROR(component({section(6, {0x01, 0x01, 0x02, 0x00, 0x00})}),
                      "outer alias of sort func");
  EXPECT_DECODE_ERROR(component({section(6, {0x01, 0x05, 0x02, 0x00, 0x00})}),
                      "outer alias of sort instance");
  EXPECT_DECODE_ERROR(component({section(6, {0x01, 0x01, 0x01, 0x00, 0x01, 'f'})}),
                      "core export alias of non-core sort func");
  EXPECT_DECODE_ERROR(component({section(6, {0x01, 0x01, 0x03, 0x00, 0x00})}),
                      "unknown alias target 0x03");
  EXPECT_DECODE_ERROR(component({section(6, {0x01, 0x06, 0x02, 0x00, 0x00})}), "unknown sort 0x06");
  EXPECT_DECODE_ERROR(component({section(6, {0x01, 0x00, 0x13, 0x02, 0x00, 0x00})}),
                      "unknown core sort 0x13");
}

// ---- Imports, exports and name attributes ----

TEST(NameAttributesFixture, ImplementsExternalIdAndVersionSuffix) {
  const Component c = decode(bytes_of(kAttributes));
  const Import& primary = item<Import>(c, 1);
  EXPECT_EQ(primary.name.name, "primary");
  ASSERT_EQ(primary.name.attributes.size(), 2u);
  EXPECT_EQ(primary.name.attributes[0].kind, NameAttributeKind::Implements);
  EXPECT_EQ(primary.name.attributes[0].value, "wasi:keyvalue/store");
  EXPECT_EQ(primary.name.attributes[1].kind, NameAttributeKind::ExternalId);
  EXPECT_EQ(primary.name.attributes[1].value, "kv-prod");
  EXPECT_EQ(primary.type.sort, Sort::Instance);
  const Import& http = item<Import>(c, 3);
  EXPECT_EQ(http.name.name, "wasi:http/types@0.2");
  ASSERT_EQ(http.name.attributes.size(), 1u);
  EXPECT_EQ(http.name.attributes[0].kind, NameAttributeKind::VersionSuffix);
  EXPECT_EQ(http.name.attributes[0].value, ".6");
  EXPECT_EQ(item<Import>(c, 5).name.name, "[constructor]r");
  EXPECT_TRUE(item<Import>(c, 5).name.attributes.empty());
}

TEST(NameAttributes, PlainFormsAndDuplicatesAreKept) {
  // Imports "a" (form 0x00), "b" (form 0x01) and "c" with two `implements`
  // (duplicates are for validation to reject), all (func (type 0)).
  const Component c = decode(component(
      {section(10, Bytes{0x03, 0x00} + name("a") + Bytes{0x01, 0x00, 0x01} + name("b") +
                       Bytes{0x01, 0x00, 0x02} + name("c") + Bytes{0x02, 0x00} + name("x:y/z") +
                       Bytes{0x00} + name("x:y/w") + Bytes{0x01, 0x00})}));
  EXPECT_EQ(item<Import>(c, 0).name.name, "a");
  EXPECT_EQ(item<Import>(c, 1).name.name, "b");
  EXPECT_EQ(item<Import>(c, 2).name.attributes.size(), 2u);
}

TEST(NameAttributes, RejectsUnknownFormsAndAttributes) {
  EXPECT_DECODE_ERROR(component({section(10, Bytes{0x01, 0x03} + name("a") + Bytes{0x01, 0x00})}),
                      "unknown name form 0x03");
  EXPECT_DECODE_ERROR(component({section(10, Bytes{0x01, 0x02} + name("a") + Bytes{0x01, 0x03} +
                                                 name("x") + Bytes{0x01, 0x00})}),
                      "unknown name attribute 0x03");
}

TEST(Imports, EveryExternTypeAndBound) {
  const Bytes imports = Bytes{0x07} +                                       // 7 imports
                        Bytes{0x00} + name("m") + Bytes{0x00, 0x11, 0x04} +  // core module (type 4)
                        Bytes{0x00} + name("f") + Bytes{0x01, 0x05} +        // func (type 5)
                        Bytes{0x00} + name("v") + Bytes{0x02, 0x00, 0x02} +  // value (eq 2)
                        Bytes{0x00} + name("w") + Bytes{0x02, 0x01, 0x73} +  // value string
                        Bytes{0x00} + name("t") + Bytes{0x03, 0x00, 0x06} +  // type (eq 6)
                        Bytes{0x00} + name("c") + Bytes{0x04, 0x07} +        // component (type 7)
                        Bytes{0x00} + name("i") + Bytes{0x05, 0x08};         // instance (type 8)
  const Component c = decode(component({section(10, imports)}));
  const Sort sorts[] = {Sort::CoreModule, Sort::Func,      Sort::Value,   Sort::Value,
                        Sort::Type,       Sort::Component, Sort::Instance};
  const uint32_t indices[] = {4, 5, 2, 0, 6, 7, 8};
  for (size_t i = 0; i < 7; ++i) {
    EXPECT_EQ(item<Import>(c, i).type.sort, sorts[i]) << i;
    EXPECT_EQ(item<Import>(c, i).type.index, indices[i]) << i;
  }
  EXPECT_FALSE(item<Import>(c, 2).type.value_type.has_value());
  EXPECT_TRUE(is_prim(*item<Import>(c, 3).type.value_type, PrimValType::String));
  EXPECT_FALSE(item<Import>(c, 4).type.sub_resource);
}

TEST(Imports, RejectsUnknownKindsAndBounds) {
  const auto import_of = [](Bytes type) {
    return component({section(10, Bytes{0x01, 0x00} + name("x") + type)});
  };
  EXPECT_DECODE_ERROR(import_of({0x06, 0x00}), "unknown extern type kind 0x06");
  EXPECT_DECODE_ERROR(import_of({0x00, 0x10, 0x00}),
                      "core sort of an extern type (only core module) must be 0x11");
  EXPECT_DECODE_ERROR(import_of({0x03, 0x02}), "unknown type bound 0x02");
  EXPECT_DECODE_ERROR(import_of({0x02, 0x02}), "unknown value bound 0x02");
}

TEST(Exports, RejectsABadAscribedTypeFlag) {
  EXPECT_DECODE_ERROR(
      component({section(11, Bytes{0x01, 0x00} + name("e") + Bytes{0x01, 0x00, 0x02})}),
      "invalid ascribed export type presence flag 0x02");
}

// ---- 🪙 Values and start ----

TEST(Values, ValueSectionKeepsTheEncodedBytes) {
  const Bytes input =
      component({section(12, Bytes{0x02, 0x79, 0x01, 0x2a, 0x73, 0x03} + name("hi"))});
  const Component c = decode(input);
  const Value& number = item<Value>(c, 0);
  EXPECT_TRUE(is_prim(number.type, PrimValType::U32));
  EXPECT_EQ(number.bytes.size, 1u);
  EXPECT_EQ(input[number.bytes.offset], 0x2a);
  const Value& text = item<Value>(c, 1);
  EXPECT_TRUE(is_prim(text.type, PrimValType::String));
  EXPECT_EQ(text.bytes.size, 3u);
  EXPECT_DECODE_ERROR(component({section(12, {0x01, 0x79, 0x05, 0x2a})}),
                      "unexpected end of data reading a value");
}

TEST(Start, ArgumentsAndResults) {
  const Component c = decode(component({section(9, {0x02, 0x02, 0x00, 0x04, 0x01})}));
  const Start& start = item<Start>(c, 0);
  EXPECT_EQ(start.func, 2u);
  EXPECT_EQ(start.args, (std::vector<uint32_t>{0, 4}));
  EXPECT_EQ(start.result_count, 1u);
}

// ---- The name section ----

Bytes name_section(const Bytes& subsections) {
  return section(0, name("component-name") + subsections);
}

TEST(NameSection, SortNamesAndTheComponentName) {
  // Subsection 0: the component's name. Subsections 1: core modules 0 and 3, instance 2.
  const Bytes component_name = Bytes{0x00} + leb(5) + name("demo");
  const Bytes modules =
      Bytes{0x01, 0x0b, 0x00, 0x11, 0x02, 0x00} + name("m0") + Bytes{0x03} + name("m3");
  const Bytes instances = Bytes{0x01, 0x05, 0x05, 0x01, 0x02} + name("i");
  const Component c = decode(component({name_section(component_name + modules + instances)}));
  ASSERT_TRUE(c.names.has_value());
  EXPECT_EQ(c.names->component_name, "demo");
  EXPECT_EQ(c.names->names.at(Sort::CoreModule),
            (std::map<uint32_t, std::string>{{0, "m0"}, {3, "m3"}}));
  EXPECT_EQ(c.names->names.at(Sort::Instance).at(2), "i");
}

TEST(NameSection, MalformedSectionIsIgnoredNotAnError) {
  const Bytes garbage[] = {
      {0xff, 0xfe, 0x01},                    // unknown subsection running past the end
      Bytes{0x00, 0x03} + name("toolong"),   // subsection size too small
      {0x01, 0x04, 0x06, 0x00, 0x00, 0x00},  // unknown sort
      Bytes{0x00, 0x03, 0x02, 0xff, 0xfe},   // invalid UTF-8
      Bytes{0x01, 0x02, 0x01, 0x00} + Bytes{0x00, 0x02} +
          name("x"),  // component name after sort names
  };
  for (const Bytes& payload : garbage) {
    const Component c = decode(component({name_section(payload)}));
    EXPECT_FALSE(c.names.has_value());
    EXPECT_EQ(item<CustomSection>(c, 0).name, "component-name");
  }
}

TEST(NameSection, UnknownSubsectionsAreSkippedAndTheLastWellFormedSectionWins) {
  const Component c = decode(component({
      name_section(Bytes{0x00, 0x02} + name("a")),
      name_section(Bytes{0x00, 0x02} + name("b") + Bytes{0x07, 0x02, 0xaa, 0xbb}),
      name_section({0x00, 0x09}),  // malformed: ignored
  }));
  ASSERT_TRUE(c.names.has_value());
  EXPECT_EQ(c.names->component_name, "b");
  EXPECT_EQ(c.definitions.size(), 3u);
}

// ---- Value types: indices are s33, opcodes are negative ----

TEST(ValTypes, TypeIndicesAreNonNegativeS33) {
  // (list <type 100>): 100 as s33 takes two bytes, because a single 0x64 is
  // the error-context opcode.
  const Component c = decode(component(
      {section(7, {0x03, 0x70, 0xe4, 0x00, 0x70, 0x64, 0x70, 0xff, 0xff, 0xff, 0xff, 0x0f})}));
  EXPECT_TRUE(is_index(type_def<ListType>(c, 0).element, 100));
  EXPECT_TRUE(is_prim(type_def<ListType>(c, 1).element, PrimValType::ErrorContext));
  EXPECT_TRUE(is_index(type_def<ListType>(c, 2).element, 0xffffffffu));
  EXPECT_DECODE_ERROR(component({section(7, {0x01, 0x70, 0x72})}),
                      "unknown value type opcode 0x72");
  EXPECT_DECODE_ERROR(component({section(7, {0x01, 0x70, 0xff, 0xff, 0xff, 0xff, 0x1f})}),
                      "integer too large for s33");
}

TEST(Types, RejectsUnknownOpcodesAndTrailers) {
  EXPECT_EQ(decode_error(component({section(7, {0x01, 0x55})})),
            "at byte 0x0b: unknown type opcode 0x55 in type section");
  EXPECT_DECODE_ERROR(component({section(7, {0x01, 0x71, 0x01, 0x01, 'c', 0x00, 0x01})}),
                      "variant case trailer must be 0x00");
  EXPECT_DECODE_ERROR(component({section(7, {0x01, 0x40, 0x00, 0x02})}),
                      "unknown result list form 0x02");
  EXPECT_DECODE_ERROR(component({section(7, {0x01, 0x6b, 0x70})}),
                      "unknown value type opcode 0x70");
  EXPECT_DECODE_ERROR(component({section(7, {0x01, 0x66, 0x02})}),
                      "invalid stream element presence flag 0x02");
  EXPECT_DECODE_ERROR(
      component({section(7, {0x01, 0x42, 0x01, 0x03, 0x00, 0x01, 'a', 0x01, 0x00})}),
      "an instance type cannot declare an import");
  EXPECT_DECODE_ERROR(component({section(7, {0x01, 0x41, 0x01, 0x05})}),
                      "unknown component type declarator 0x05");
}

// ---- Malformed input ----

// Offsets where a top-level section ends: a prefix cut exactly there is a
// smaller, valid component.
std::vector<size_t> section_ends(const Bytes& input) {
  std::vector<size_t> ends = {8};
  size_t pos = 8;
  while (pos < input.size()) {
    ++pos;  // id
    uint64_t size = 0;
    for (unsigned shift = 0;; shift += 7) {
      const uint8_t byte = input[pos++];
      size |= uint64_t(byte & 0x7f) << shift;
      if (!(byte & 0x80)) break;
    }
    pos += size;
    ends.push_back(pos);
  }
  return ends;
}

TEST(Malformed, EveryPrefixOfEveryFixtureFailsCleanly) {
  const Bytes fixtures[] = {bytes_of(kSections), bytes_of(kTypes), bytes_of(kCanon),
                            bytes_of(kCoreTypes), bytes_of(kAliases), bytes_of(kAttributes)};
  for (const Bytes& full : fixtures) {
    const std::vector<size_t> ends = section_ends(full);
    ASSERT_EQ(ends.back(), full.size());
    for (size_t n = 0; n < full.size(); ++n) {
      const Bytes prefix(full.begin(), full.begin() + n);
      const bool at_section_end = std::find(ends.begin(), ends.end(), n) != ends.end();
      try {
        decode_component(prefix);
        EXPECT_TRUE(at_section_end) << "a prefix of " << n << " bytes decoded";
      } catch (const Error& e) {
        EXPECT_FALSE(at_section_end) << e.what();
        EXPECT_EQ(e.kind(), ErrorKind::Decode);
        EXPECT_EQ(std::string(e.what()).rfind("at byte 0x", 0), 0u) << e.what();
      }
    }
  }
}

TEST(Malformed, SectionSizesMustMatchTheContents) {
  EXPECT_DECODE_ERROR(component({Bytes{0x07, 0x05, 0x01, 0x73}}),
                      "type section size 5 exceeds the 2 remaining bytes");
  EXPECT_DECODE_ERROR(component({Bytes{0x07, 0x03, 0x01, 0x73, 0x73}}), "1 unused byte at the end");
  EXPECT_DECODE_ERROR(component({Bytes{0x07, 0x01, 0x01, 0x73}}), "unexpected end of data");
  // Inside a nested component the section sizes are checked against its own end.
  EXPECT_DECODE_ERROR(component({section(4, kPreamble + Bytes{0x07, 0x02, 0x01})}),
                      "type section size 2 exceeds the 1 remaining bytes");
}

TEST(Malformed, UnknownSectionId) {
  EXPECT_EQ(decode_error(component({Bytes{0x0d, 0x00}})),
            "at byte 0x08: unknown section id 0x0d in component");
}

TEST(Malformed, Leb128AsCoreWasm) {
  // A 5-byte u32 with zero padding is fine.
  EXPECT_EQ(decode(component({Bytes{0x07, 0x81, 0x80, 0x80, 0x80, 0x00, 0x00}})).definitions.size(),
            0u);
  EXPECT_DECODE_ERROR(component({Bytes{0x07, 0x81, 0x80, 0x80, 0x80, 0x80, 0x00, 0x00}}),
                      "integer representation too long");
  EXPECT_DECODE_ERROR(component({Bytes{0x07, 0x81, 0x80, 0x80, 0x80, 0x10, 0x00}}),
                      "integer too large for u32");
  EXPECT_DECODE_ERROR(component({Bytes{0x07, 0x80}}), "unexpected end of data reading an integer");
  // u64 limits in a memory64 import: ten bytes at most.
  const Bytes overlong64 = {0x01, 0x50, 0x01, 0x00, 0x00, 0x00, 0x02, 0x04,
                            0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x00};
  EXPECT_DECODE_ERROR(component({section(3, overlong64)}), "u64 takes at most 10 bytes");
}

TEST(Malformed, NamesMustBeUtf8) {
  const auto import_named = [](const Bytes& raw) {
    return component({section(10, Bytes{0x01, 0x00} + leb(raw.size()) + raw + Bytes{0x01, 0x00})});
  };
  EXPECT_DECODE_ERROR(import_named({0xff}), "import/export name is not valid UTF-8");
  EXPECT_DECODE_ERROR(import_named({0xc0, 0x80}), "not valid UTF-8");        // overlong
  EXPECT_DECODE_ERROR(import_named({0xed, 0xa0, 0x80}), "not valid UTF-8");  // surrogate
  EXPECT_DECODE_ERROR(import_named({'a', 0xe2, 0x82}), "not valid UTF-8");   // truncated
  EXPECT_EQ(item<Import>(decode(import_named({0xe2, 0x82, 0xac})), 0).name.name, "\xe2\x82\xac");
  EXPECT_DECODE_ERROR(component({section(0, {0x02, 0xff, 0xfe})}),
                      "custom section name is not valid UTF-8");
}

TEST(Malformed, HugeCountsFailBeforeAllocating) {
  EXPECT_DECODE_ERROR(component({section(7, {0xff, 0xff, 0xff, 0xff, 0x0f})}),
                      "4294967295 types declared");
  EXPECT_DECODE_ERROR(component({section(7, {0x01, 0x72, 0xff, 0xff, 0xff, 0xff, 0x0f})}),
                      "record fields declared");
  EXPECT_DECODE_ERROR(component({section(10, {0x01, 0x00, 0xff, 0xff, 0xff, 0xff, 0x0f})}),
                      "name of 4294967295 bytes");
}

TEST(Malformed, CoreModuleSectionMustHoldACoreModule) {
  EXPECT_DECODE_ERROR(component({section(1, kPreamble)}),
                      "expected a core module but found a component");
  EXPECT_DECODE_ERROR(component({section(1, {0x00, 0x61, 0x73})}), "8-byte preamble");
  const Component c =
      decode(component({section(1, {0x00, 0x61, 0x73, 0x6d, 0x01, 0x00, 0x00, 0x00})}));
  EXPECT_EQ(item<CoreModule>(c, 0).bytes.size, 8u);
}

Bytes nested_components(size_t depth) {
  Bytes inner = kPreamble;
  for (size_t i = 0; i < depth; ++i) inner = kPreamble + section(4, inner);
  return inner;
}

Bytes nested_component_types(size_t depth) {
  Bytes type = {0x41, 0x00};
  for (size_t i = 0; i < depth; ++i) type = Bytes{0x41, 0x01, 0x01} + type;
  return component({section(7, Bytes{0x01} + type)});
}

TEST(Malformed, NestingIsBounded) {
  EXPECT_NO_THROW(decode(nested_components(50)));
  EXPECT_DECODE_ERROR(nested_components(200), "nesting deeper than 100 levels");
  EXPECT_NO_THROW(decode(nested_component_types(50)));
  EXPECT_DECODE_ERROR(nested_component_types(1000), "nesting deeper than 100 levels");
}

// Flips bytes of the fixtures at random (fixed seed): every result must be a
// component or a Decode error. Mostly useful under the sanitizers.
TEST(Malformed, RandomMutationsNeverCrash) {
  const Bytes fixtures[] = {bytes_of(kSections), bytes_of(kTypes), bytes_of(kCanon),
                            bytes_of(kCoreTypes), bytes_of(kAliases), bytes_of(kAttributes)};
  uint64_t state = 0x2545f4914f6cdd1dull;
  const auto next = [&state] {
    state ^= state << 13;
    state ^= state >> 7;
    state ^= state << 17;
    return state;
  };
  size_t decoded = 0, rejected = 0;
  for (int round = 0; round < 3000; ++round) {
    Bytes input = fixtures[next() % std::size(fixtures)];
    const int flips = 1 + int(next() % 3);
    for (int i = 0; i < flips; ++i) input[8 + next() % (input.size() - 8)] = uint8_t(next());
    try {
      decode_component(input);
      ++decoded;
    } catch (const Error& e) {
      ASSERT_EQ(e.kind(), ErrorKind::Decode);
      ++rejected;
    }
  }
  EXPECT_GT(rejected, 0u);
  EXPECT_GT(decoded, 0u);
}

// ---- Import/export name grammar ----

TEST(ExternNames, PlainAndAnnotatedNames) {
  using Kind = ParsedExternName::Kind;
  auto parsed = parse_extern_name("get-JSON");
  ASSERT_TRUE(parsed);
  EXPECT_EQ(parsed->kind, Kind::Label);
  EXPECT_EQ(parsed->label, "get-JSON");

  parsed = parse_extern_name("[constructor]blob");
  ASSERT_TRUE(parsed);
  EXPECT_EQ(parsed->kind, Kind::Constructor);
  EXPECT_EQ(parsed->resource, "blob");

  parsed = parse_extern_name("[method]blob.read-all");
  ASSERT_TRUE(parsed);
  EXPECT_EQ(parsed->kind, Kind::Method);
  EXPECT_EQ(parsed->resource, "blob");
  EXPECT_EQ(parsed->label, "read-all");

  parsed = parse_extern_name("[static]blob.merge");
  ASSERT_TRUE(parsed);
  EXPECT_EQ(parsed->kind, Kind::Static);
  EXPECT_FALSE(parsed->legacy_async);

  parsed = parse_extern_name("[async method]blob.read");
  ASSERT_TRUE(parsed);
  EXPECT_EQ(parsed->kind, Kind::Method);
  EXPECT_TRUE(parsed->legacy_async);
  parsed = parse_extern_name("[async]run");
  ASSERT_TRUE(parsed);
  EXPECT_EQ(parsed->kind, Kind::Label);
  EXPECT_TRUE(parsed->legacy_async);
}

TEST(ExternNames, InterfaceNames) {
  auto parsed = parse_extern_name("wasi:http/types@0.2.6-rc.1+build.5");
  ASSERT_TRUE(parsed);
  EXPECT_EQ(parsed->kind, ParsedExternName::Kind::Interface);
  EXPECT_EQ(parsed->namespace_name, "wasi");
  EXPECT_EQ(parsed->package, "http");
  EXPECT_EQ(parsed->interface, "types");
  EXPECT_EQ(parsed->version, "0.2.6-rc.1+build.5");
  for (const char* ok :
       {"a-b:c-d/e-F", "a:b/c@1", "a:b/c@0.2", "a:b/c@0.0.3", "a:b/c@0.0.0", "a:b/c@10.20.30"}) {
    EXPECT_TRUE(parse_extern_name(ok)) << ok;
  }
  EXPECT_FALSE(parse_extern_name("a:b/c")->version.has_value());
}

TEST(ExternNames, RejectsMalformedNames) {
  for (const char* bad : {"",
                          "Foo-bar",
                          "1abc",
                          "a--b",
                          "a-",
                          "-a",
                          "a_b",
                          "[constructor]",
                          "[method]a",
                          "[method]a.",
                          "[unknown]a",
                          "a:b",
                          "A:b/c",
                          "a:b/c@",
                          "a:b/c@1.",
                          "a:b/c@01.0.0",
                          "a:b/c@1.0.0-",
                          "a:b/c@1.0.0+",
                          "a:b/c@1.0.0-01",
                          "a:b:c/d",
                          "a:b/c/d",
                          "a:b/c@0.01"}) {
    std::string why;
    EXPECT_FALSE(parse_extern_name(bad, &why)) << bad;
    EXPECT_FALSE(why.empty()) << bad;
  }
}

TEST(ExternNames, PathsNameAnInstancesItem) {
  auto parsed = parse_extern_path("wasi:cli/stdout@0.2.0#get-stdout");
  ASSERT_TRUE(parsed);
  EXPECT_EQ(parsed->kind, ParsedExternName::Kind::Interface);
  EXPECT_EQ(parsed->namespace_name, "wasi");
  EXPECT_EQ(parsed->package, "cli");
  EXPECT_EQ(parsed->interface, "stdout");
  EXPECT_EQ(parsed->version, "0.2.0");
  EXPECT_EQ(parsed->member, "get-stdout");
  parsed = parse_extern_path("wasi:filesystem/types#[method]descriptor.stat");
  ASSERT_TRUE(parsed);
  EXPECT_FALSE(parsed->version);
  EXPECT_EQ(parsed->member, "[method]descriptor.stat");
  parsed = parse_extern_path("log");  // a root name has no item
  ASSERT_TRUE(parsed);
  EXPECT_EQ(parsed->label, "log");
  EXPECT_TRUE(parsed->member.empty());
  parsed = parse_extern_path("host#log");  // an instance named by a label
  ASSERT_TRUE(parsed);
  EXPECT_EQ(parsed->kind, ParsedExternName::Kind::Label);
  EXPECT_EQ(parsed->member, "log");
  // The extern name alone takes no item.
  EXPECT_FALSE(parse_extern_name("wasi:cli/stdout@0.2.0#get-stdout"));
  for (const char* bad : {"wasi:cli/stdout#", "wasi:cli/stdout#Get_Stdout", "a#b#c", "#run", "A:b/c#run"}) {
    std::string why;
    EXPECT_FALSE(parse_extern_path(bad, &why)) << bad;
    EXPECT_FALSE(why.empty()) << bad;
  }
}

TEST(ExternNames, Labels) {
  for (const char* ok :
       {"a", "a-b-c", "a1-2-3", "A", "A-B-C", "A1-2-3", "a11-w0rds", "m1x3d-4CR0NYMS"}) {
    EXPECT_TRUE(is_label(ok)) << ok;
  }
  for (const char* bad : {"", "1-2-3", "aB", "a-bC", "a.b", "-"})
    EXPECT_FALSE(is_label(bad)) << bad;
}

// binary/canon_table.def: one row per kind, with its own opcode and name.
TEST(Canon, TableHasOneRowPerKind) {
  const size_t count = static_cast<size_t>(CanonKind::ThreadAvailableParallelism) + 1;
  std::map<uint8_t, CanonKind> by_opcode;
  std::map<std::string, CanonKind> by_name;
  for (size_t i = 0; i < count; ++i) {
    const auto kind = static_cast<CanonKind>(i);
    const CanonInfo& info = canon_info(kind);
    EXPECT_EQ(info.kind, kind) << i;
    EXPECT_STREQ(to_string(kind), info.name) << i;
    EXPECT_TRUE(by_opcode.emplace(info.opcode, kind).second) << info.name;
    EXPECT_TRUE(by_name.emplace(info.name, kind).second) << info.name;
  }
  EXPECT_STREQ(to_string(CanonKind::StreamRead), "stream.read");
  EXPECT_EQ(canon_info(CanonKind::ThreadYield).opcode, 0x0c);
  EXPECT_STREQ(to_string(static_cast<CanonKind>(count)), "?");
}

}  // namespace
}  // namespace cmhost::binary
