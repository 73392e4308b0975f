// The core engine on wabt's interpreter: compiling, instantiating, calls,
// traps, host functions (reentrant), linking, memory growth, the instruction
// budget and the post-MVP features cmhost enables.
//
// Modules are embedded as bytes, each under the WAT it was assembled from
// (wat2wasm 1.0.32 with --enable-multi-memory --enable-memory64
// --enable-tail-call --enable-exceptions --enable-threads; the invalid one
// with --no-check).
#include "../support/expect_error.hpp"
#include "../support/test_engine.hpp"
#include "cmhost/engine/backend.hpp"

#include <fcntl.h>
#include <gtest/gtest.h>
#include <unistd.h>

#include <bit>
#include <chrono>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <fstream>
#include <functional>
#include <iterator>
#include <map>
#include <span>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

#include "../../src/engine/aot/rt.h"
#include "../../src/engine/interp/wabt_backend.hpp"
#include "cmhost/error.hpp"

namespace cmhost::engine {
namespace {

// clang-format off
// (module
//   (func (export "add_i32") (param i32 i32) (result i32) (i32.add (local.get 0) (local.get 1)))
//   (func (export "add_i64") (param i64 i64) (result i64) (i64.add (local.get 0) (local.get 1)))
//   (func (export "mul_f32") (param f32 f32) (result f32) (f32.mul (local.get 0) (local.get 1)))
//   (func (export "div_f64") (param f64 f64) (result f64) (f64.div (local.get 0) (local.get 1)))
//   (func (export "same_f32") (param f32) (result f32) (local.get 0))
//   (func (export "rotate") (param i32 i64 f32 f64) (result f64 i32 i64 f32)
//     (local.get 3) (local.get 0) (local.get 1) (local.get 2))
//   (func (export "identity") (param i32) (result i32) (local.get 0))
//   (func (export "sum_to") (param $n i32) (result i32) (local $acc i32)
//     (block $done
//       (loop $next
//         (br_if $done (i32.eqz (local.get $n)))
//         (local.set $acc (i32.add (local.get $acc) (local.get $n)))
//         (local.set $n (i32.sub (local.get $n) (i32.const 1)))
//         (br $next)))
//     (local.get $acc))
//   (global $counter (export "counter") (mut i64) (i64.const 7))
//   (global (export "answer") i32 (i32.const 42))
//   (func (export "bump") (result i64)
//     (global.set $counter (i64.add (global.get $counter) (i64.const 1)))
//     (global.get $counter)))
constexpr uint8_t kArith[] = {
    0x00, 0x61, 0x73, 0x6d, 0x01, 0x00, 0x00, 0x00, 0x01, 0x32, 0x08, 0x60, 0x02, 0x7f, 0x7f, 0x01,
    0x7f, 0x60, 0x02, 0x7e, 0x7e, 0x01, 0x7e, 0x60, 0x02, 0x7d, 0x7d, 0x01, 0x7d, 0x60, 0x02, 0x7c,
    0x7c, 0x01, 0x7c, 0x60, 0x01, 0x7d, 0x01, 0x7d, 0x60, 0x04, 0x7f, 0x7e, 0x7d, 0x7c, 0x04, 0x7c,
    0x7f, 0x7e, 0x7d, 0x60, 0x01, 0x7f, 0x01, 0x7f, 0x60, 0x00, 0x01, 0x7e, 0x03, 0x0a, 0x09, 0x00,
    0x01, 0x02, 0x03, 0x04, 0x05, 0x06, 0x06, 0x07, 0x06, 0x0b, 0x02, 0x7e, 0x01, 0x42, 0x07, 0x0b,
    0x7f, 0x00, 0x41, 0x2a, 0x0b, 0x07, 0x6b, 0x0b, 0x07, 0x61, 0x64, 0x64, 0x5f, 0x69, 0x33, 0x32,
    0x00, 0x00, 0x07, 0x61, 0x64, 0x64, 0x5f, 0x69, 0x36, 0x34, 0x00, 0x01, 0x07, 0x6d, 0x75, 0x6c,
    0x5f, 0x66, 0x33, 0x32, 0x00, 0x02, 0x07, 0x64, 0x69, 0x76, 0x5f, 0x66, 0x36, 0x34, 0x00, 0x03,
    0x08, 0x73, 0x61, 0x6d, 0x65, 0x5f, 0x66, 0x33, 0x32, 0x00, 0x04, 0x06, 0x72, 0x6f, 0x74, 0x61,
    0x74, 0x65, 0x00, 0x05, 0x08, 0x69, 0x64, 0x65, 0x6e, 0x74, 0x69, 0x74, 0x79, 0x00, 0x06, 0x06,
    0x73, 0x75, 0x6d, 0x5f, 0x74, 0x6f, 0x00, 0x07, 0x07, 0x63, 0x6f, 0x75, 0x6e, 0x74, 0x65, 0x72,
    0x03, 0x00, 0x06, 0x61, 0x6e, 0x73, 0x77, 0x65, 0x72, 0x03, 0x01, 0x04, 0x62, 0x75, 0x6d, 0x70,
    0x00, 0x08, 0x0a, 0x64, 0x09, 0x07, 0x00, 0x20, 0x00, 0x20, 0x01, 0x6a, 0x0b, 0x07, 0x00, 0x20,
    0x00, 0x20, 0x01, 0x7c, 0x0b, 0x07, 0x00, 0x20, 0x00, 0x20, 0x01, 0x94, 0x0b, 0x07, 0x00, 0x20,
    0x00, 0x20, 0x01, 0xa3, 0x0b, 0x04, 0x00, 0x20, 0x00, 0x0b, 0x0a, 0x00, 0x20, 0x03, 0x20, 0x00,
    0x20, 0x01, 0x20, 0x02, 0x0b, 0x04, 0x00, 0x20, 0x00, 0x0b, 0x21, 0x01, 0x01, 0x7f, 0x02, 0x40,
    0x03, 0x40, 0x20, 0x00, 0x45, 0x0d, 0x01, 0x20, 0x01, 0x20, 0x00, 0x6a, 0x21, 0x01, 0x20, 0x00,
    0x41, 0x01, 0x6b, 0x21, 0x00, 0x0c, 0x00, 0x0b, 0x0b, 0x20, 0x01, 0x0b, 0x0b, 0x00, 0x23, 0x00,
    0x42, 0x01, 0x7c, 0x24, 0x00, 0x23, 0x00, 0x0b,
};

// (module
//   (tag $e (param i32))
//   (func $thrower (param i32) (throw $e (local.get 0)))
//   (func (export "catch_it") (param i32) (result i32)
//     (try (result i32) (do (call $thrower (local.get 0)) (i32.const 0))
//       (catch $e (i32.add (i32.const 1)))))
//   (func (export "nested") (param i32) (result i32)
//     (try (result i32)
//       (do (try (result i32) (do (call $thrower (local.get 0)) (i32.const 0))
//             (catch $e (i32.add (i32.const 10)) (throw $e))))
//       (catch $e (i32.add (i32.const 100)))))
//   (func (export "throw_it") (call $thrower (i32.const 7))))
// (wat2wasm --enable-exceptions)
constexpr uint8_t kExceptions[] = {
    0x00, 0x61, 0x73, 0x6d, 0x01, 0x00, 0x00, 0x00, 0x01, 0x0d, 0x03, 0x60, 0x01, 0x7f, 0x00, 0x60,
    0x01, 0x7f, 0x01, 0x7f, 0x60, 0x00, 0x00, 0x03, 0x05, 0x04, 0x00, 0x01, 0x01, 0x02, 0x0d, 0x03,
    0x01, 0x00, 0x00, 0x07, 0x20, 0x03, 0x08, 0x63, 0x61, 0x74, 0x63, 0x68, 0x5f, 0x69, 0x74, 0x00,
    0x01, 0x06, 0x6e, 0x65, 0x73, 0x74, 0x65, 0x64, 0x00, 0x02, 0x08, 0x74, 0x68, 0x72, 0x6f, 0x77,
    0x5f, 0x69, 0x74, 0x00, 0x03, 0x0a, 0x3c, 0x04, 0x06, 0x00, 0x20, 0x00, 0x08, 0x00, 0x0b, 0x10,
    0x00, 0x06, 0x7f, 0x20, 0x00, 0x10, 0x00, 0x41, 0x00, 0x07, 0x00, 0x41, 0x01, 0x6a, 0x0b, 0x0b,
    0x1b, 0x00, 0x06, 0x7f, 0x06, 0x7f, 0x20, 0x00, 0x10, 0x00, 0x41, 0x00, 0x07, 0x00, 0x41, 0x0a,
    0x6a, 0x08, 0x00, 0x0b, 0x07, 0x00, 0x41, 0xe4, 0x00, 0x6a, 0x0b, 0x0b, 0x06, 0x00, 0x41, 0x07,
    0x10, 0x00, 0x0b,
};

// (module
//   (memory (export "memory") 1)
//   (func (export "unreachable") (unreachable))
//   (func (export "div_s") (param i32 i32) (result i32) (i32.div_s (local.get 0) (local.get 1)))
//   (func (export "load") (param i32) (result i32) (i32.load (local.get 0)))
//   (func $recurse (export "recurse") (param i32) (result i32)
//     (i32.add (i32.const 1) (call $recurse (local.get 0)))))
constexpr uint8_t kTraps[] = {
    0x00, 0x61, 0x73, 0x6d, 0x01, 0x00, 0x00, 0x00, 0x01, 0x0f, 0x03, 0x60, 0x00, 0x00, 0x60, 0x02,
    0x7f, 0x7f, 0x01, 0x7f, 0x60, 0x01, 0x7f, 0x01, 0x7f, 0x03, 0x05, 0x04, 0x00, 0x01, 0x02, 0x02,
    0x05, 0x03, 0x01, 0x00, 0x01, 0x07, 0x31, 0x05, 0x06, 0x6d, 0x65, 0x6d, 0x6f, 0x72, 0x79, 0x02,
    0x00, 0x0b, 0x75, 0x6e, 0x72, 0x65, 0x61, 0x63, 0x68, 0x61, 0x62, 0x6c, 0x65, 0x00, 0x00, 0x05,
    0x64, 0x69, 0x76, 0x5f, 0x73, 0x00, 0x01, 0x04, 0x6c, 0x6f, 0x61, 0x64, 0x00, 0x02, 0x07, 0x72,
    0x65, 0x63, 0x75, 0x72, 0x73, 0x65, 0x00, 0x03, 0x0a, 0x1f, 0x04, 0x03, 0x00, 0x00, 0x0b, 0x07,
    0x00, 0x20, 0x00, 0x20, 0x01, 0x6d, 0x0b, 0x07, 0x00, 0x20, 0x00, 0x28, 0x02, 0x00, 0x0b, 0x09,
    0x00, 0x41, 0x01, 0x20, 0x00, 0x10, 0x03, 0x6a, 0x0b,
};

// (module
//   (import "env" "add3" (func $add3 (param i32 i32 i32) (result i32)))
//   (import "env" "callback" (func $callback (param i32) (result i32)))
//   (import "env" "fail" (func $fail))
//   (import "env" "peek" (func $peek (param i32) (result i32)))
//   (memory (export "memory") 1)
//   (data (i32.const 16) "\2a\00\00\00")
//   (func (export "call_add3") (param i32 i32 i32) (result i32)
//     (call $add3 (local.get 0) (local.get 1) (local.get 2)))
//   (func (export "call_callback") (param i32) (result i32)
//     (i32.add (i32.const 1000) (call $callback (local.get 0))))
//   (func (export "double") (param i32) (result i32) (i32.mul (local.get 0) (i32.const 2)))
//   (func (export "call_fail") (result i32) (call $fail) (i32.const 1))
//   (func (export "call_peek") (param i32) (result i32) (call $peek (local.get 0)))
//   (func (export "trap") (unreachable)))
constexpr uint8_t kHost[] = {
    0x00, 0x61, 0x73, 0x6d, 0x01, 0x00, 0x00, 0x00, 0x01, 0x14, 0x04, 0x60, 0x03, 0x7f, 0x7f, 0x7f,
    0x01, 0x7f, 0x60, 0x01, 0x7f, 0x01, 0x7f, 0x60, 0x00, 0x00, 0x60, 0x00, 0x01, 0x7f, 0x02, 0x31,
    0x04, 0x03, 0x65, 0x6e, 0x76, 0x04, 0x61, 0x64, 0x64, 0x33, 0x00, 0x00, 0x03, 0x65, 0x6e, 0x76,
    0x08, 0x63, 0x61, 0x6c, 0x6c, 0x62, 0x61, 0x63, 0x6b, 0x00, 0x01, 0x03, 0x65, 0x6e, 0x76, 0x04,
    0x66, 0x61, 0x69, 0x6c, 0x00, 0x02, 0x03, 0x65, 0x6e, 0x76, 0x04, 0x70, 0x65, 0x65, 0x6b, 0x00,
    0x01, 0x03, 0x07, 0x06, 0x00, 0x01, 0x01, 0x03, 0x01, 0x02, 0x05, 0x03, 0x01, 0x00, 0x01, 0x07,
    0x4e, 0x07, 0x06, 0x6d, 0x65, 0x6d, 0x6f, 0x72, 0x79, 0x02, 0x00, 0x09, 0x63, 0x61, 0x6c, 0x6c,
    0x5f, 0x61, 0x64, 0x64, 0x33, 0x00, 0x04, 0x0d, 0x63, 0x61, 0x6c, 0x6c, 0x5f, 0x63, 0x61, 0x6c,
    0x6c, 0x62, 0x61, 0x63, 0x6b, 0x00, 0x05, 0x06, 0x64, 0x6f, 0x75, 0x62, 0x6c, 0x65, 0x00, 0x06,
    0x09, 0x63, 0x61, 0x6c, 0x6c, 0x5f, 0x66, 0x61, 0x69, 0x6c, 0x00, 0x07, 0x09, 0x63, 0x61, 0x6c,
    0x6c, 0x5f, 0x70, 0x65, 0x65, 0x6b, 0x00, 0x08, 0x04, 0x74, 0x72, 0x61, 0x70, 0x00, 0x09, 0x0a,
    0x31, 0x06, 0x0a, 0x00, 0x20, 0x00, 0x20, 0x01, 0x20, 0x02, 0x10, 0x00, 0x0b, 0x0a, 0x00, 0x41,
    0xe8, 0x07, 0x20, 0x00, 0x10, 0x01, 0x6a, 0x0b, 0x07, 0x00, 0x20, 0x00, 0x41, 0x02, 0x6c, 0x0b,
    0x06, 0x00, 0x10, 0x02, 0x41, 0x01, 0x0b, 0x06, 0x00, 0x20, 0x00, 0x10, 0x03, 0x0b, 0x03, 0x00,
    0x00, 0x0b, 0x0b, 0x0a, 0x01, 0x00, 0x41, 0x10, 0x0b, 0x04, 0x2a, 0x00, 0x00, 0x00,
};

// (module
//   (memory (export "mem") 1 4)
//   (table (export "tab") 2 funcref)
//   (global (export "g") (mut i32) (i32.const 5))
//   (func $triple (export "triple") (param i32) (result i32) (i32.mul (local.get 0) (i32.const 3)))
//   (elem (i32.const 1) $triple))
constexpr uint8_t kProvider[] = {
    0x00, 0x61, 0x73, 0x6d, 0x01, 0x00, 0x00, 0x00, 0x01, 0x06, 0x01, 0x60, 0x01, 0x7f, 0x01, 0x7f,
    0x03, 0x02, 0x01, 0x00, 0x04, 0x04, 0x01, 0x70, 0x00, 0x02, 0x05, 0x04, 0x01, 0x01, 0x01, 0x04,
    0x06, 0x06, 0x01, 0x7f, 0x01, 0x41, 0x05, 0x0b, 0x07, 0x1a, 0x04, 0x03, 0x6d, 0x65, 0x6d, 0x02,
    0x00, 0x03, 0x74, 0x61, 0x62, 0x01, 0x00, 0x01, 0x67, 0x03, 0x00, 0x06, 0x74, 0x72, 0x69, 0x70,
    0x6c, 0x65, 0x00, 0x00, 0x09, 0x07, 0x01, 0x00, 0x41, 0x01, 0x0b, 0x01, 0x00, 0x0a, 0x09, 0x01,
    0x07, 0x00, 0x20, 0x00, 0x41, 0x03, 0x6c, 0x0b,
};

// (module
//   (import "p" "mem" (memory 1))
//   (import "p" "tab" (table 2 funcref))
//   (import "p" "g" (global $g (mut i32)))
//   (import "p" "triple" (func $triple (param i32) (result i32)))
//   (type $unary (func (param i32) (result i32)))
//   (func (export "store") (param i32 i32) (i32.store (local.get 0) (local.get 1)))
//   (func (export "load") (param i32) (result i32) (i32.load (local.get 0)))
//   (func (export "via_table") (param i32) (result i32)
//     (call_indirect (type $unary) (local.get 0) (i32.const 1)))
//   (func (export "call_triple") (param i32) (result i32) (call $triple (local.get 0)))
//   (func (export "bump_g") (result i32)
//     (global.set $g (i32.add (global.get $g) (i32.const 1))) (global.get $g)))
constexpr uint8_t kConsumer[] = {
    0x00, 0x61, 0x73, 0x6d, 0x01, 0x00, 0x00, 0x00, 0x01, 0x0f, 0x03, 0x60, 0x01, 0x7f, 0x01, 0x7f,
    0x60, 0x02, 0x7f, 0x7f, 0x00, 0x60, 0x00, 0x01, 0x7f, 0x02, 0x26, 0x04, 0x01, 0x70, 0x03, 0x6d,
    0x65, 0x6d, 0x02, 0x00, 0x01, 0x01, 0x70, 0x03, 0x74, 0x61, 0x62, 0x01, 0x70, 0x00, 0x02, 0x01,
    0x70, 0x01, 0x67, 0x03, 0x7f, 0x01, 0x01, 0x70, 0x06, 0x74, 0x72, 0x69, 0x70, 0x6c, 0x65, 0x00,
    0x00, 0x03, 0x06, 0x05, 0x01, 0x00, 0x00, 0x00, 0x02, 0x07, 0x33, 0x05, 0x05, 0x73, 0x74, 0x6f,
    0x72, 0x65, 0x00, 0x01, 0x04, 0x6c, 0x6f, 0x61, 0x64, 0x00, 0x02, 0x09, 0x76, 0x69, 0x61, 0x5f,
    0x74, 0x61, 0x62, 0x6c, 0x65, 0x00, 0x03, 0x0b, 0x63, 0x61, 0x6c, 0x6c, 0x5f, 0x74, 0x72, 0x69,
    0x70, 0x6c, 0x65, 0x00, 0x04, 0x06, 0x62, 0x75, 0x6d, 0x70, 0x5f, 0x67, 0x00, 0x05, 0x0a, 0x30,
    0x05, 0x09, 0x00, 0x20, 0x00, 0x20, 0x01, 0x36, 0x02, 0x00, 0x0b, 0x07, 0x00, 0x20, 0x00, 0x28,
    0x02, 0x00, 0x0b, 0x09, 0x00, 0x20, 0x00, 0x41, 0x01, 0x11, 0x00, 0x00, 0x0b, 0x06, 0x00, 0x20,
    0x00, 0x10, 0x00, 0x0b, 0x0b, 0x00, 0x23, 0x00, 0x41, 0x01, 0x6a, 0x24, 0x00, 0x23, 0x00, 0x0b,
};

// (module
//   (memory (export "memory") 1 8)
//   (func (export "grow") (param i32) (result i32) (memory.grow (local.get 0)))
//   (func (export "size") (result i32) (memory.size))
//   (func (export "load") (param i32) (result i32) (i32.load (local.get 0)))
//   (func (export "store") (param i32 i32) (i32.store (local.get 0) (local.get 1))))
constexpr uint8_t kGrow[] = {
    0x00, 0x61, 0x73, 0x6d, 0x01, 0x00, 0x00, 0x00, 0x01, 0x0f, 0x03, 0x60, 0x01, 0x7f, 0x01, 0x7f,
    0x60, 0x00, 0x01, 0x7f, 0x60, 0x02, 0x7f, 0x7f, 0x00, 0x03, 0x05, 0x04, 0x00, 0x01, 0x00, 0x02,
    0x05, 0x04, 0x01, 0x01, 0x01, 0x08, 0x07, 0x27, 0x05, 0x06, 0x6d, 0x65, 0x6d, 0x6f, 0x72, 0x79,
    0x02, 0x00, 0x04, 0x67, 0x72, 0x6f, 0x77, 0x00, 0x00, 0x04, 0x73, 0x69, 0x7a, 0x65, 0x00, 0x01,
    0x04, 0x6c, 0x6f, 0x61, 0x64, 0x00, 0x02, 0x05, 0x73, 0x74, 0x6f, 0x72, 0x65, 0x00, 0x03, 0x0a,
    0x1f, 0x04, 0x06, 0x00, 0x20, 0x00, 0x40, 0x00, 0x0b, 0x04, 0x00, 0x3f, 0x00, 0x0b, 0x07, 0x00,
    0x20, 0x00, 0x28, 0x02, 0x00, 0x0b, 0x09, 0x00, 0x20, 0x00, 0x20, 0x01, 0x36, 0x02, 0x00, 0x0b,
};

// (module (func (result i32) (i64.const 1)))
constexpr uint8_t kInvalid[] = {
    0x00, 0x61, 0x73, 0x6d, 0x01, 0x00, 0x00, 0x00, 0x01, 0x05, 0x01, 0x60, 0x00, 0x01, 0x7f, 0x03,
    0x02, 0x01, 0x00, 0x0a, 0x06, 0x01, 0x04, 0x00, 0x42, 0x01, 0x0b,
};

// (module
//   (func (export "spin") (loop $forever (br $forever)))
//   (func $deep (export "deep") (call $deep))
//   (func (export "count") (param $n i32) (result i32) (local $i i32)
//     (loop $next
//       (local.set $i (i32.add (local.get $i) (i32.const 1)))
//       (br_if $next (i32.lt_u (local.get $i) (local.get $n))))
//     (local.get $i))
//   (func (export "add") (param i32 i32) (result i32) (i32.add (local.get 0) (local.get 1))))
constexpr uint8_t kSpin[] = {
    0x00, 0x61, 0x73, 0x6d, 0x01, 0x00, 0x00, 0x00, 0x01, 0x0f, 0x03, 0x60, 0x00, 0x00, 0x60, 0x01,
    0x7f, 0x01, 0x7f, 0x60, 0x02, 0x7f, 0x7f, 0x01, 0x7f, 0x03, 0x05, 0x04, 0x00, 0x00, 0x01, 0x02,
    0x07, 0x1d, 0x04, 0x04, 0x73, 0x70, 0x69, 0x6e, 0x00, 0x00, 0x04, 0x64, 0x65, 0x65, 0x70, 0x00,
    0x01, 0x05, 0x63, 0x6f, 0x75, 0x6e, 0x74, 0x00, 0x02, 0x03, 0x61, 0x64, 0x64, 0x00, 0x03, 0x0a,
    0x2e, 0x04, 0x07, 0x00, 0x03, 0x40, 0x0c, 0x00, 0x0b, 0x0b, 0x04, 0x00, 0x10, 0x01, 0x0b, 0x17,
    0x01, 0x01, 0x7f, 0x03, 0x40, 0x20, 0x01, 0x41, 0x01, 0x6a, 0x21, 0x01, 0x20, 0x01, 0x20, 0x00,
    0x49, 0x0d, 0x00, 0x0b, 0x20, 0x01, 0x0b, 0x07, 0x00, 0x20, 0x00, 0x20, 0x01, 0x6a, 0x0b,
};

// (module
//   (memory (export "memory") i64 1)
//   (func (export "store") (param i64 i64) (i64.store (local.get 0) (local.get 1)))
//   (func (export "load") (param i64) (result i64) (i64.load (local.get 0)))
//   (func (export "size") (result i64) (memory.size)))
constexpr uint8_t kMem64[] = {
    0x00, 0x61, 0x73, 0x6d, 0x01, 0x00, 0x00, 0x00, 0x01, 0x0f, 0x03, 0x60, 0x02, 0x7e, 0x7e, 0x00,
    0x60, 0x01, 0x7e, 0x01, 0x7e, 0x60, 0x00, 0x01, 0x7e, 0x03, 0x04, 0x03, 0x00, 0x01, 0x02, 0x05,
    0x03, 0x01, 0x04, 0x01, 0x07, 0x20, 0x04, 0x06, 0x6d, 0x65, 0x6d, 0x6f, 0x72, 0x79, 0x02, 0x00,
    0x05, 0x73, 0x74, 0x6f, 0x72, 0x65, 0x00, 0x00, 0x04, 0x6c, 0x6f, 0x61, 0x64, 0x00, 0x01, 0x04,
    0x73, 0x69, 0x7a, 0x65, 0x00, 0x02, 0x0a, 0x18, 0x03, 0x09, 0x00, 0x20, 0x00, 0x20, 0x01, 0x37,
    0x03, 0x00, 0x0b, 0x07, 0x00, 0x20, 0x00, 0x29, 0x03, 0x00, 0x0b, 0x04, 0x00, 0x3f, 0x00, 0x0b,
};

// (module
//   (memory $a (export "a") 1)
//   (memory $b (export "b") 2)
//   (func (export "copy_a_to_b") (param i32)
//     (i32.store $b (local.get 0) (i32.load $a (local.get 0))))
//   (func (export "load_b") (param i32) (result i32) (i32.load $b (local.get 0)))
//   (func (export "sizes") (result i32 i32) (memory.size $a) (memory.size $b)))
constexpr uint8_t kMultimem[] = {
    0x00, 0x61, 0x73, 0x6d, 0x01, 0x00, 0x00, 0x00, 0x01, 0x0f, 0x03, 0x60, 0x01, 0x7f, 0x00, 0x60,
    0x01, 0x7f, 0x01, 0x7f, 0x60, 0x00, 0x02, 0x7f, 0x7f, 0x03, 0x04, 0x03, 0x00, 0x01, 0x02, 0x05,
    0x05, 0x02, 0x00, 0x01, 0x00, 0x02, 0x07, 0x28, 0x05, 0x01, 0x61, 0x02, 0x00, 0x01, 0x62, 0x02,
    0x01, 0x0b, 0x63, 0x6f, 0x70, 0x79, 0x5f, 0x61, 0x5f, 0x74, 0x6f, 0x5f, 0x62, 0x00, 0x00, 0x06,
    0x6c, 0x6f, 0x61, 0x64, 0x5f, 0x62, 0x00, 0x01, 0x05, 0x73, 0x69, 0x7a, 0x65, 0x73, 0x00, 0x02,
    0x0a, 0x1f, 0x03, 0x0d, 0x00, 0x20, 0x00, 0x20, 0x00, 0x28, 0x02, 0x00, 0x36, 0x42, 0x01, 0x00,
    0x0b, 0x08, 0x00, 0x20, 0x00, 0x28, 0x42, 0x01, 0x00, 0x0b, 0x06, 0x00, 0x3f, 0x00, 0x3f, 0x01,
    0x0b,
};

// (module
//   (import "env" "g" (global $imported i32))
//   (global $own (mut i32) (i32.const 100))
//   (global $init_from_import i32 (global.get $imported))
//   (tag $oops (param i32))
//   (memory 1)
//   (func $fact_acc (param $n i64) (param $acc i64) (result i64)
//     (if (result i64) (i64.eqz (local.get $n))
//       (then (local.get $acc))
//       (else (return_call $fact_acc (i64.sub (local.get $n) (i64.const 1))
//                                    (i64.mul (local.get $n) (local.get $acc))))))
//   (func (export "fact") (param i64) (result i64) (call $fact_acc (local.get 0) (i64.const 1)))
//   (func (export "catch_it") (param i32) (result i32)
//     (try (result i32)
//       (do (throw $oops (local.get 0)))
//       (catch $oops (i32.add (i32.const 1))))
//   )
//   (func (export "throw_it") (throw $oops (i32.const 3)))
//   (func (export "simd_sum") (result i32)
//     (i32x4.extract_lane 2 (i32x4.add (v128.const i32x4 1 2 3 4) (v128.const i32x4 10 20 30 40))))
//   (func (export "globals") (result i32)
//     (global.set $own (i32.add (global.get $own) (global.get $imported)))
//     (i32.add (global.get $own) (global.get $init_from_import)))
//   (func (export "bulk") (result i32)
//     (memory.fill (i32.const 0) (i32.const 7) (i32.const 16))
//     (memory.copy (i32.const 100) (i32.const 0) (i32.const 16))
//     (i32.load8_u (i32.const 110)))
//   (func (export "atomic") (result i32)
//     (drop (i32.atomic.rmw.add (i32.const 200) (i32.const 5)))
//     (i32.atomic.load (i32.const 200)))
//   (func (export "nested_loops") (param $n i32) (result i32) (local $i i32) (local $j i32) (local $total i32)
//     (loop $outer
//       (local.set $j (i32.const 0))
//       (loop $inner
//         (local.set $total (i32.add (local.get $total) (i32.const 1)))
//         (local.set $j (i32.add (local.get $j) (i32.const 1)))
//         (br_if $inner (i32.lt_u (local.get $j) (local.get $n))))
//       (local.set $i (i32.add (local.get $i) (i32.const 1)))
//       (br_if $outer (i32.lt_u (local.get $i) (local.get $n))))
//     (local.get $total)))
constexpr uint8_t kFeatures[] = {
    0x00, 0x61, 0x73, 0x6d, 0x01, 0x00, 0x00, 0x00, 0x01, 0x1c, 0x06, 0x60, 0x01, 0x7f, 0x00, 0x60,
    0x02, 0x7e, 0x7e, 0x01, 0x7e, 0x60, 0x01, 0x7e, 0x01, 0x7e, 0x60, 0x01, 0x7f, 0x01, 0x7f, 0x60,
    0x00, 0x00, 0x60, 0x00, 0x01, 0x7f, 0x02, 0x0a, 0x01, 0x03, 0x65, 0x6e, 0x76, 0x01, 0x67, 0x03,
    0x7f, 0x00, 0x03, 0x0a, 0x09, 0x01, 0x02, 0x03, 0x04, 0x05, 0x05, 0x05, 0x05, 0x03, 0x05, 0x03,
    0x01, 0x00, 0x01, 0x0d, 0x03, 0x01, 0x00, 0x00, 0x06, 0x0c, 0x02, 0x7f, 0x01, 0x41, 0xe4, 0x00,
    0x0b, 0x7f, 0x00, 0x23, 0x00, 0x0b, 0x07, 0x52, 0x08, 0x04, 0x66, 0x61, 0x63, 0x74, 0x00, 0x01,
    0x08, 0x63, 0x61, 0x74, 0x63, 0x68, 0x5f, 0x69, 0x74, 0x00, 0x02, 0x08, 0x74, 0x68, 0x72, 0x6f,
    0x77, 0x5f, 0x69, 0x74, 0x00, 0x03, 0x08, 0x73, 0x69, 0x6d, 0x64, 0x5f, 0x73, 0x75, 0x6d, 0x00,
    0x04, 0x07, 0x67, 0x6c, 0x6f, 0x62, 0x61, 0x6c, 0x73, 0x00, 0x05, 0x04, 0x62, 0x75, 0x6c, 0x6b,
    0x00, 0x06, 0x06, 0x61, 0x74, 0x6f, 0x6d, 0x69, 0x63, 0x00, 0x07, 0x0c, 0x6e, 0x65, 0x73, 0x74,
    0x65, 0x64, 0x5f, 0x6c, 0x6f, 0x6f, 0x70, 0x73, 0x00, 0x08, 0x0a, 0xd9, 0x01, 0x09, 0x17, 0x00,
    0x20, 0x00, 0x50, 0x04, 0x7e, 0x20, 0x01, 0x05, 0x20, 0x00, 0x42, 0x01, 0x7d, 0x20, 0x00, 0x20,
    0x01, 0x7e, 0x12, 0x00, 0x0b, 0x0b, 0x08, 0x00, 0x20, 0x00, 0x42, 0x01, 0x10, 0x00, 0x0b, 0x0e,
    0x00, 0x06, 0x7f, 0x20, 0x00, 0x08, 0x00, 0x07, 0x00, 0x41, 0x01, 0x6a, 0x0b, 0x0b, 0x06, 0x00,
    0x41, 0x03, 0x08, 0x00, 0x0b, 0x2c, 0x00, 0xfd, 0x0c, 0x01, 0x00, 0x00, 0x00, 0x02, 0x00, 0x00,
    0x00, 0x03, 0x00, 0x00, 0x00, 0x04, 0x00, 0x00, 0x00, 0xfd, 0x0c, 0x0a, 0x00, 0x00, 0x00, 0x14,
    0x00, 0x00, 0x00, 0x1e, 0x00, 0x00, 0x00, 0x28, 0x00, 0x00, 0x00, 0xfd, 0xae, 0x01, 0xfd, 0x1b,
    0x02, 0x0b, 0x0e, 0x00, 0x23, 0x01, 0x23, 0x00, 0x6a, 0x24, 0x01, 0x23, 0x01, 0x23, 0x02, 0x6a,
    0x0b, 0x1c, 0x00, 0x41, 0x00, 0x41, 0x07, 0x41, 0x10, 0xfc, 0x0b, 0x00, 0x41, 0xe4, 0x00, 0x41,
    0x00, 0x41, 0x10, 0xfc, 0x0a, 0x00, 0x00, 0x41, 0xee, 0x00, 0x2d, 0x00, 0x00, 0x0b, 0x13, 0x00,
    0x41, 0xc8, 0x01, 0x41, 0x05, 0xfe, 0x1e, 0x02, 0x00, 0x1a, 0x41, 0xc8, 0x01, 0xfe, 0x10, 0x02,
    0x00, 0x0b, 0x33, 0x01, 0x03, 0x7f, 0x03, 0x40, 0x41, 0x00, 0x21, 0x02, 0x03, 0x40, 0x20, 0x03,
    0x41, 0x01, 0x6a, 0x21, 0x03, 0x20, 0x02, 0x41, 0x01, 0x6a, 0x21, 0x02, 0x20, 0x02, 0x20, 0x00,
    0x49, 0x0d, 0x00, 0x0b, 0x20, 0x01, 0x41, 0x01, 0x6a, 0x21, 0x01, 0x20, 0x01, 0x20, 0x00, 0x49,
    0x0d, 0x00, 0x0b, 0x20, 0x03, 0x0b,
};

// (module (func $start (unreachable)) (start $start))
constexpr uint8_t kStartTrap[] = {
    0x00, 0x61, 0x73, 0x6d, 0x01, 0x00, 0x00, 0x00, 0x01, 0x04, 0x01, 0x60, 0x00, 0x00, 0x03, 0x02,
    0x01, 0x00, 0x08, 0x01, 0x00, 0x0a, 0x05, 0x01, 0x03, 0x00, 0x00, 0x0b,
};

// (module (func $start (loop $l (br $l))) (start $start))
constexpr uint8_t kStartSpin[] = {
    0x00, 0x61, 0x73, 0x6d, 0x01, 0x00, 0x00, 0x00, 0x01, 0x04, 0x01, 0x60, 0x00, 0x00, 0x03, 0x02,
    0x01, 0x00, 0x08, 0x01, 0x00, 0x0a, 0x09, 0x01, 0x07, 0x00, 0x03, 0x40, 0x0c, 0x00, 0x0b, 0x0b,
};

// (module (memory 1) (data (i32.const 65535) "ab"))
constexpr uint8_t kDataOob[] = {
    0x00, 0x61, 0x73, 0x6d, 0x01, 0x00, 0x00, 0x00, 0x05, 0x03, 0x01, 0x00, 0x01, 0x0b, 0x0a, 0x01,
    0x00, 0x41, 0xff, 0xff, 0x03, 0x0b, 0x02, 0x61, 0x62,
};

// (module
//   (import "env" "bounce" (func $bounce (param i32) (result i32)))
//   (func (export "ping") (param i32) (result i32)
//     (if (result i32) (i32.eqz (local.get 0))
//       (then (i32.const 0))
//       (else (i32.add (i32.const 1) (call $bounce (i32.sub (local.get 0) (i32.const 1))))))))
constexpr uint8_t kPingpong[] = {
    0x00, 0x61, 0x73, 0x6d, 0x01, 0x00, 0x00, 0x00, 0x01, 0x06, 0x01, 0x60, 0x01, 0x7f, 0x01, 0x7f,
    0x02, 0x0e, 0x01, 0x03, 0x65, 0x6e, 0x76, 0x06, 0x62, 0x6f, 0x75, 0x6e, 0x63, 0x65, 0x00, 0x00,
    0x03, 0x02, 0x01, 0x00, 0x07, 0x08, 0x01, 0x04, 0x70, 0x69, 0x6e, 0x67, 0x00, 0x01, 0x0a, 0x17,
    0x01, 0x15, 0x00, 0x20, 0x00, 0x45, 0x04, 0x7f, 0x41, 0x00, 0x05, 0x41, 0x01, 0x20, 0x00, 0x41,
    0x01, 0x6b, 0x10, 0x00, 0x6a, 0x0b, 0x0b,
};

// (module
//   (type $t (func (param i32) (result i32)))
//   (table 1 funcref)
//   (elem (i32.const 0) $f)
//   (func $f (export "f") (param i32) (result i32)
//     (i32.add (i32.const 1) (call_indirect (type $t) (local.get 0) (i32.const 0)))))
constexpr uint8_t kIndirectRecursion[] = {
    0x00, 0x61, 0x73, 0x6d, 0x01, 0x00, 0x00, 0x00, 0x01, 0x06, 0x01, 0x60, 0x01, 0x7f, 0x01, 0x7f,
    0x03, 0x02, 0x01, 0x00, 0x04, 0x04, 0x01, 0x70, 0x00, 0x01, 0x07, 0x05, 0x01, 0x01, 0x66, 0x00,
    0x00, 0x09, 0x07, 0x01, 0x00, 0x41, 0x00, 0x0b, 0x01, 0x00, 0x0a, 0x0e, 0x01, 0x0c, 0x00, 0x41,
    0x01, 0x20, 0x00, 0x41, 0x00, 0x11, 0x00, 0x00, 0x6a, 0x0b,
};
// clang-format on

template <size_t N>
std::span<const uint8_t> wasm(const uint8_t (&bytes)[N]) {
  return {bytes, N};
}

uint64_t f32_bits(float v) { return std::bit_cast<uint32_t>(v); }
uint64_t f64_bits(double v) { return std::bit_cast<uint64_t>(v); }
float as_f32(uint64_t bits) { return std::bit_cast<float>(static_cast<uint32_t>(bits)); }
double as_f64(uint64_t bits) { return std::bit_cast<double>(bits); }

// An engine and a store, with shorthands for instantiating and calling.
class EngineTest : public ::testing::Test {
 protected:
  explicit EngineTest(EngineConfig config = {})
      : engine_(make_engine(testing_support::test_engine_config(config))), store_(engine_->new_store()) {}

  std::shared_ptr<Instance> instantiate(std::span<const uint8_t> bytes,
                                        const std::vector<Extern>& imports = {}) {
    auto module = engine_->compile(bytes);
    return store_->instantiate(*module, imports);
  }

  static Extern exported(const Instance& instance, std::string_view name) {
    auto found = instance.get_export(name);
    if (!found) throw std::runtime_error("no export named " + std::string(name));
    return *found;
  }

  std::vector<uint64_t> call(Extern func, const std::vector<uint64_t>& args = {}) {
    std::vector<uint64_t> results(store_->func_type(func).results.size());
    store_->call(func, args, results);
    return results;
  }
  std::vector<uint64_t> call(const Instance& instance, std::string_view name,
                             const std::vector<uint64_t>& args = {}) {
    return call(exported(instance, name), args);
  }
  uint64_t call1(const Instance& instance, std::string_view name, const std::vector<uint64_t>& args = {}) {
    auto results = call(instance, name, args);
    EXPECT_EQ(results.size(), 1u);
    return results.at(0);
  }

  std::unique_ptr<Engine> engine_;
  std::unique_ptr<Store> store_;
};

// host.wat's four imports, each forwarding to a replaceable behaviour.
struct HostImports {
  std::function<uint64_t(Caller&, uint64_t)> callback = [](Caller&, uint64_t x) { return x; };
  std::function<void()> fail = [] {};

  std::vector<Extern> make(Store& store) {
    const FuncType i32_to_i32{{CoreType::I32}, {CoreType::I32}};
    Extern add3 = store.host_func({{CoreType::I32, CoreType::I32, CoreType::I32}, {CoreType::I32}},
                                  [](Caller&, std::span<const uint64_t> p, std::span<uint64_t> r) {
                                    r[0] = static_cast<uint32_t>(p[0] + p[1] + p[2]);
                                  });
    Extern callback_func = store.host_func(
        i32_to_i32,
        [this](Caller& c, std::span<const uint64_t> p, std::span<uint64_t> r) { r[0] = callback(c, p[0]); });
    Extern fail_func =
        store.host_func({}, [this](Caller&, std::span<const uint64_t>, std::span<uint64_t>) { fail(); });
    // Reads a u32 from the caller's memory, or answers 0xffffffff without one.
    Extern peek =
        store.host_func(i32_to_i32, [](Caller& c, std::span<const uint64_t> p, std::span<uint64_t> r) {
          auto memory = c.caller_export("memory");
          if (!memory) {
            r[0] = 0xffffffff;
            return;
          }
          uint32_t value;
          std::memcpy(&value, c.store().memory_bytes(*memory).data() + p[0], sizeof value);
          r[0] = value;
        });
    return {add3, callback_func, fail_func, peek};
  }
};

TEST_F(EngineTest, DescribesImportsAndExports) {
  auto host = engine_->compile(wasm(kHost));
  ASSERT_EQ(host->imports().size(), 4u);
  EXPECT_EQ(host->imports()[0].module, "env");
  EXPECT_EQ(host->imports()[0].name, "add3");
  EXPECT_EQ(host->imports()[0].type.kind, ExternKind::Func);
  EXPECT_EQ(host->imports()[0].type.func,
            (FuncType{{CoreType::I32, CoreType::I32, CoreType::I32}, {CoreType::I32}}));

  auto provider = engine_->compile(wasm(kProvider));
  ASSERT_EQ(provider->exports().size(), 4u);
  const ExternType& mem = provider->exports()[0].type;
  EXPECT_EQ(provider->exports()[0].name, "mem");
  EXPECT_EQ(mem.kind, ExternKind::Memory);
  EXPECT_EQ(mem.limits.min, 1u);
  EXPECT_EQ(mem.limits.max, std::optional<uint64_t>(4));
  const ExternType& tab = provider->exports()[1].type;
  EXPECT_EQ(tab.kind, ExternKind::Table);
  EXPECT_EQ(tab.value, CoreType::FuncRef);
  EXPECT_EQ(tab.limits.min, 2u);
  EXPECT_FALSE(tab.limits.max.has_value());
  const ExternType& g = provider->exports()[2].type;
  EXPECT_EQ(g.kind, ExternKind::Global);
  EXPECT_EQ(g.value, CoreType::I32);
  EXPECT_TRUE(g.mutable_global);

  auto instance = store_->instantiate(*provider, {});
  EXPECT_EQ(instance->exports().size(), 4u);
  EXPECT_FALSE(instance->get_export("nope").has_value());
  ExternType triple = store_->extern_type(exported(*instance, "triple"));
  EXPECT_EQ(triple.kind, ExternKind::Func);
  EXPECT_EQ(to_string(triple.func), "[i32] -> [i32]");
}

TEST_F(EngineTest, CallsWithEveryNumberTypeAndMultipleResults) {
  auto arith = instantiate(wasm(kArith));
  EXPECT_EQ(call1(*arith, "add_i32", {0xffffffff, 2}), 1u);  // wraps; upper bits stay zero
  EXPECT_EQ(call1(*arith, "add_i64", {uint64_t{1} << 40, 5}), (uint64_t{1} << 40) + 5);
  EXPECT_EQ(call1(*arith, "add_i64", {~uint64_t{0}, 1}), 0u);
  EXPECT_EQ(as_f32(call1(*arith, "mul_f32", {f32_bits(1.5f), f32_bits(-2.0f)})), -3.0f);
  EXPECT_EQ(as_f64(call1(*arith, "div_f64", {f64_bits(1.0), f64_bits(4.0)})), 0.25);
  EXPECT_TRUE(std::isinf(as_f64(call1(*arith, "div_f64", {f64_bits(1.0), f64_bits(0.0)}))));
  // A signalling NaN's payload survives the trip.
  EXPECT_EQ(call1(*arith, "same_f32", {0x7fa00001}), 0x7fa00001u);
  EXPECT_EQ(call1(*arith, "sum_to", {100}), 5050u);

  auto rotated = call(*arith, "rotate", {7, ~uint64_t{0}, f32_bits(2.5f), f64_bits(-0.5)});
  ASSERT_EQ(rotated.size(), 4u);
  EXPECT_EQ(as_f64(rotated[0]), -0.5);
  EXPECT_EQ(rotated[1], 7u);
  EXPECT_EQ(rotated[2], ~uint64_t{0});
  EXPECT_EQ(as_f32(rotated[3]), 2.5f);

  EXPECT_EQ(store_->func_type(exported(*arith, "rotate")),
            (FuncType{{CoreType::I32, CoreType::I64, CoreType::F32, CoreType::F64},
                      {CoreType::F64, CoreType::I32, CoreType::I64, CoreType::F32}}));
}

TEST_F(EngineTest, HostReadsAndWritesGlobals) {
  auto arith = instantiate(wasm(kArith));
  Extern counter = exported(*arith, "counter");
  EXPECT_EQ(store_->global_get(counter), 7u);
  EXPECT_EQ(call1(*arith, "bump"), 8u);
  store_->global_set(counter, 100);
  EXPECT_EQ(call1(*arith, "bump"), 101u);
  EXPECT_EQ(store_->global_get(counter), 101u);

  Extern answer = exported(*arith, "answer");
  EXPECT_EQ(store_->global_get(answer), 42u);
  expect_error(ErrorKind::Usage, [&] { store_->global_set(answer, 1); }, "immutable");
}

TEST_F(EngineTest, TrapsCarryTheEngineMessage) {
  auto traps = instantiate(wasm(kTraps));
  expect_error(ErrorKind::Trap, [&] { call(*traps, "unreachable"); }, "unreachable");
  expect_error(ErrorKind::Trap, [&] { call(*traps, "div_s", {1, 0}); }, "divide by zero");
  expect_error(ErrorKind::Trap, [&] { call(*traps, "div_s", {0x80000000, 0xffffffff}); }, "overflow");
  expect_error(ErrorKind::Trap, [&] { call(*traps, "load", {65534}); }, "out of bounds memory access");
  expect_error(ErrorKind::Trap, [&] { call(*traps, "recurse", {0}); }, "call stack exhausted");
  // Nothing of a trapped call lingers.
  EXPECT_EQ(call1(*traps, "div_s", {7, 2}), 3u);
  EXPECT_EQ(call1(*traps, "load", {65532}), 0u);
}

// Each thread's traps unwind its own calls: two stores on two threads, both
// trapping (out of bounds, stack overflow, divide by zero) between calls
// that return.
TEST(EngineThreads, StoresOnTwoThreadsTrapIndependently) {
  auto engine = make_engine(testing_support::test_engine_config());
  auto module = engine->compile(wasm(kTraps));
  const auto work = [&](uint32_t seed, int& returned, int& trapped) {
    auto store = engine->new_store();
    auto traps = store->instantiate(*module, {});
    const Extern div = *traps->get_export("div_s");
    const Extern load = *traps->get_export("load");
    const Extern recurse = *traps->get_export("recurse");
    for (uint32_t i = 0; i < 200; ++i) {
      uint64_t result = 0;
      try {
        switch ((i + seed) % 4) {
          case 0: store->call(div, std::vector<uint64_t>{i + 10, 2}, std::span<uint64_t>(&result, 1)); break;
          case 1: store->call(load, std::vector<uint64_t>{70000}, std::span<uint64_t>(&result, 1)); break;
          case 2: store->call(recurse, std::vector<uint64_t>{0}, std::span<uint64_t>(&result, 1)); break;
          case 3: store->call(div, std::vector<uint64_t>{1, 0}, std::span<uint64_t>(&result, 1)); break;
        }
        if (result == (i + 10) / 2) ++returned;
      } catch (const Error& e) {
        if (e.kind() == ErrorKind::Trap) ++trapped;
      }
    }
  };
  int returned[2] = {0, 0}, trapped[2] = {0, 0};
  std::thread first(work, 0, std::ref(returned[0]), std::ref(trapped[0]));
  std::thread second(work, 1, std::ref(returned[1]), std::ref(trapped[1]));
  first.join();
  second.join();
  for (int t = 0; t < 2; ++t) {
    EXPECT_EQ(returned[t], 50) << "thread " << t;
    EXPECT_EQ(trapped[t], 150) << "thread " << t;
  }
}

// Legacy exceptions within a module: caught, rethrown through nested try
// blocks, and uncaught (a trap); the store goes on working after each.
TEST_F(EngineTest, ExceptionsAreCaughtRethrownAndTrapWhenUncaught) {
  auto exceptions = instantiate(wasm(kExceptions));
  EXPECT_EQ(call1(*exceptions, "catch_it", {41}), 42u);
  EXPECT_EQ(call1(*exceptions, "nested", {1}), 111u);
  expect_error(ErrorKind::Trap, [&] { call(*exceptions, "throw_it"); }, "uncaught exception");
  EXPECT_EQ(call1(*exceptions, "catch_it", {1}), 2u);
  // A trap in between leaves the unwind targets as they were.
  auto traps = instantiate(wasm(kTraps));
  expect_error(ErrorKind::Trap, [&] { call(*traps, "div_s", {1, 0}); }, "divide by zero");
  EXPECT_EQ(call1(*exceptions, "nested", {2}), 112u);
}

// wabt 1.0.32 lets call_indirect overflow the call stack silently and carry
// on; the engine still reports the trap.
TEST_F(EngineTest, CallIndirectStackOverflowTraps) {
  auto recursion = instantiate(wasm(kIndirectRecursion));
  expect_error(ErrorKind::Trap, [&] { call(*recursion, "f", {0}); }, "call stack exhausted");
}

TEST_F(EngineTest, ManyTrapsLeaveTheStoreUsable) {
  auto traps = instantiate(wasm(kTraps));
  // Each trap is a store object (a stack overflow's holds the whole call
  // stack); the store collects them from time to time.
  for (int i = 0; i < 300; ++i) {
    if (i % 2)
      expect_error(ErrorKind::Trap, [&] { call(*traps, "recurse", {0}); }, "call stack exhausted");
    else
      expect_error(ErrorKind::Trap, [&] { call(*traps, "unreachable"); }, "unreachable");
  }
  EXPECT_EQ(call1(*traps, "div_s", {9, 3}), 3u);
  store_->memory_bytes(exported(*traps, "memory"))[0] = 5;
  EXPECT_EQ(call1(*traps, "load", {0}), 5u);
}

TEST_F(EngineTest, HostFunctionsAndCallbacksIntoWasm) {
  HostImports env;
  std::shared_ptr<Instance> host;
  env.callback = [&](Caller& caller, uint64_t x) {
    uint64_t doubled;
    caller.store().call(exported(*host, "double"), std::span<const uint64_t>(&x, 1),
                        std::span<uint64_t>(&doubled, 1));
    return doubled + 1;
  };
  host = instantiate(wasm(kHost), env.make(*store_));

  EXPECT_EQ(call1(*host, "call_add3", {1, 2, 0xffffffff}), 2u);
  EXPECT_EQ(call1(*host, "call_callback", {20}), 1041u);
  EXPECT_EQ(call1(*host, "call_peek", {16}), 42u);  // the caller's own memory
  EXPECT_EQ(call1(*host, "call_fail"), 1u);
}

TEST_F(EngineTest, HostFunctionsCanBeCalledDirectly) {
  HostImports env;
  std::vector<Extern> funcs = env.make(*store_);
  EXPECT_EQ(call(funcs[0], {4, 5, 6}), std::vector<uint64_t>{15});
  EXPECT_EQ(call(funcs[3], {0}), std::vector<uint64_t>{0xffffffff});  // no calling instance
  EXPECT_EQ(store_->func_type(funcs[0]),
            (FuncType{{CoreType::I32, CoreType::I32, CoreType::I32}, {CoreType::I32}}));
  expect_error(
      ErrorKind::Usage, [&] {
        store_->host_func({{CoreType::V128}, {}}, [](Caller&, auto, auto) {});
      }, "only i32, i64, f32 and f64");
}

TEST_F(EngineTest, HostErrorTrapsTheWasmCaller) {
  HostImports env;
  env.fail = [] { throw Error(ErrorKind::InvalidValue, "host says no"); };
  auto host = instantiate(wasm(kHost), env.make(*store_));
  expect_error(ErrorKind::Trap, [&] { call(*host, "call_fail"); }, "host says no");
  EXPECT_EQ(call1(*host, "double", {21}), 42u);
}

TEST_F(EngineTest, OtherHostExceptionsPassThroughUnchanged) {
  HostImports env;
  env.fail = [] { throw std::out_of_range("no such thing"); };
  auto host = instantiate(wasm(kHost), env.make(*store_));
  try {
    call(*host, "call_fail");
    ADD_FAILURE() << "expected std::out_of_range";
  } catch (const std::out_of_range& e) {
    EXPECT_STREQ(e.what(), "no such thing");
  }
  EXPECT_EQ(call1(*host, "double", {4}), 8u);
}

TEST_F(EngineTest, HostFunctionCanCatchATrapFromANestedCall) {
  HostImports env;
  std::shared_ptr<Instance> host;
  env.callback = [&](Caller& caller, uint64_t) -> uint64_t {
    try {
      caller.store().call(exported(*host, "trap"), {}, {});
    } catch (const Error& e) {
      EXPECT_EQ(e.kind(), ErrorKind::Trap);
      return 5;
    }
    return 0;
  };
  host = instantiate(wasm(kHost), env.make(*store_));
  // The outer wasm call goes on undisturbed after the nested one trapped.
  EXPECT_EQ(call1(*host, "call_callback", {0}), 1005u);
  EXPECT_EQ(call1(*host, "call_callback", {0}), 1005u);
}

TEST_F(EngineTest, ReentrancyIsBounded) {
  std::shared_ptr<Instance> pingpong;
  Extern bounce = store_->host_func({{CoreType::I32}, {CoreType::I32}},
                                    [&](Caller& caller, std::span<const uint64_t> p, std::span<uint64_t> r) {
                                      caller.store().call(exported(*pingpong, "ping"), p, r);
                                    });
  pingpong = instantiate(wasm(kPingpong), {bounce});
  EXPECT_EQ(call1(*pingpong, "ping", {40}), 40u);
  expect_error(ErrorKind::Trap, [&] { call(*pingpong, "ping", {100000}); }, "nested");
  EXPECT_EQ(call1(*pingpong, "ping", {3}), 3u);
}

// Builds an import list in the module's order from (module, name) pairs.
std::vector<Extern> link(const Module& module,
                         const std::map<std::pair<std::string, std::string>, Extern>& by_name) {
  std::vector<Extern> imports;
  for (const ImportDesc& import : module.imports())
    imports.push_back(by_name.at({import.module, import.name}));
  return imports;
}

TEST_F(EngineTest, LinksMemoryTableGlobalAndFunctionAcrossInstances) {
  auto provider = instantiate(wasm(kProvider));
  std::map<std::pair<std::string, std::string>, Extern> exports;
  for (const ExportDesc& e : provider->exports()) exports[{"p", e.name}] = exported(*provider, e.name);
  auto consumer_module = engine_->compile(wasm(kConsumer));
  auto consumer = store_->instantiate(*consumer_module, link(*consumer_module, exports));

  call(*consumer, "store", {8, 0x01020304});
  uint32_t seen;
  std::memcpy(&seen, store_->memory_bytes(exported(*provider, "mem")).data() + 8, 4);
  EXPECT_EQ(seen, 0x01020304u);
  EXPECT_EQ(call1(*consumer, "via_table", {5}), 15u);
  EXPECT_EQ(call1(*consumer, "call_triple", {7}), 21u);
  EXPECT_EQ(call1(*consumer, "bump_g"), 6u);
  EXPECT_EQ(store_->global_get(exported(*provider, "g")), 6u);
  // An instance's export is the very extern it imported.
  EXPECT_EQ(store_->global_get(exported(*provider, "g")), 6u);
}

TEST_F(EngineTest, ImportMismatchesAreLinkErrors) {
  auto provider = instantiate(wasm(kProvider));
  auto arith = instantiate(wasm(kArith));
  std::map<std::pair<std::string, std::string>, Extern> exports;
  for (const ExportDesc& e : provider->exports()) exports[{"p", e.name}] = exported(*provider, e.name);
  auto consumer = engine_->compile(wasm(kConsumer));

  auto wrong_func = exports;
  wrong_func[{"p", "triple"}] = exported(*arith, "add_i32");
  expect_error(ErrorKind::Link, [&] { store_->instantiate(*consumer, link(*consumer, wrong_func)); },
               "triple");

  auto wrong_kind = exports;
  wrong_kind[{"p", "mem"}] = exports[{"p", "tab"}];
  expect_error(ErrorKind::Link, [&] { store_->instantiate(*consumer, link(*consumer, wrong_kind)); }, "mem");

  auto immutable_global = exports;
  immutable_global[{"p", "g"}] = exported(*arith, "answer");
  expect_error(ErrorKind::Link, [&] { store_->instantiate(*consumer, link(*consumer, immutable_global)); },
               "\"g\"");

  std::vector<Extern> too_few = link(*consumer, exports);
  too_few.pop_back();
  expect_error(ErrorKind::Link, [&] { store_->instantiate(*consumer, too_few); }, "4 imports, 3 given");

  HostImports env;
  auto host = engine_->compile(wasm(kHost));
  std::vector<Extern> imports = env.make(*store_);
  imports[0] = imports[1];  // (i32) -> i32 where (i32 i32 i32) -> i32 is wanted
  expect_error(ErrorKind::Link, [&] { store_->instantiate(*host, imports); }, "add3");
}

TEST_F(EngineTest, HandlesAreChecked) {
  auto arith = instantiate(wasm(kArith));
  expect_error(ErrorKind::Usage, [&] { call(Extern{ExternKind::Func, 99999}); }, "no function");
  Extern counter = exported(*arith, "counter");
  expect_error(
      ErrorKind::Usage, [&] {
        store_->call({ExternKind::Func, counter.id}, {}, {});
      }, "no function");
  expect_error(ErrorKind::Usage, [&] { store_->memory_bytes(counter); }, "expected a memory");
  expect_error(ErrorKind::Usage, [&] { store_->func_type(counter); }, "not a function");
  uint64_t one_result;
  expect_error(ErrorKind::Usage, [&] { store_->call(exported(*arith, "add_i32"), {}, std::span<uint64_t>(&one_result, 1)); }, "takes 2 arguments");
  // Another store's handles mean nothing here.
  auto other_store = engine_->new_store();
  expect_error(ErrorKind::Usage, [&] { other_store->call(exported(*arith, "identity"), {}, {}); },
               "no function");
}

TEST_F(EngineTest, ModulesAreSharedBetweenStores) {
  auto module = engine_->compile(wasm(kArith));
  auto other_store = engine_->new_store();
  auto here = store_->instantiate(*module, {});
  auto there = other_store->instantiate(*module, {});
  store_->global_set(exported(*here, "counter"), 1000);
  EXPECT_EQ(other_store->global_get(exported(*there, "counter")), 7u);
  EXPECT_EQ(store_->global_get(exported(*here, "counter")), 1000u);
}

TEST_F(EngineTest, MemoryAccessSurvivesGrowth) {
  auto grow = instantiate(wasm(kGrow));
  Extern memory = exported(*grow, "memory");
  auto write = [&](size_t at, uint32_t value) {
    std::memcpy(store_->memory_bytes(memory).data() + at, &value, 4);
  };
  auto read = [&](size_t at) {
    uint32_t value;
    std::memcpy(&value, store_->memory_bytes(memory).data() + at, 4);
    return value;
  };

  write(100, 0xdeadbeef);
  EXPECT_EQ(call1(*grow, "load", {100}), 0xdeadbeefu);
  EXPECT_EQ(call1(*grow, "grow", {1}), 1u);  // from wasm
  EXPECT_EQ(store_->memory_bytes(memory).size(), 2u * 65536);
  EXPECT_EQ(read(100), 0xdeadbeefu);
  write(70000, 17);
  EXPECT_EQ(call1(*grow, "load", {70000}), 17u);

  EXPECT_EQ(store_->grow_memory(memory, 2), std::optional<uint64_t>(2));  // from the host
  EXPECT_EQ(call1(*grow, "size"), 4u);
  call(*grow, "store", {4 * 65536 - 4, 99});
  EXPECT_EQ(read(4 * 65536 - 4), 99u);
  EXPECT_EQ(read(100), 0xdeadbeefu);

  // The maximum is 8 pages.
  EXPECT_EQ(store_->grow_memory(memory, 5), std::nullopt);
  EXPECT_EQ(call1(*grow, "grow", {5}), 0xffffffffu);
  EXPECT_EQ(store_->grow_memory(memory, ~uint64_t{0}), std::nullopt);
  EXPECT_EQ(store_->grow_memory(memory, 4), std::optional<uint64_t>(4));
  EXPECT_EQ(store_->memory_bytes(memory).size(), 8u * 65536);
}

TEST_F(EngineTest, MalformedAndInvalidModulesAreRejected) {
  const uint8_t garbage[] = {0x00, 0x61, 0x73, 0x6d, 0x02, 0x00, 0x00, 0x00};
  expect_error(ErrorKind::Decode, [&] { engine_->compile(wasm(garbage)); }, "malformed");
  expect_error(ErrorKind::Decode, [&] { engine_->compile(wasm(kArith).first(40)); }, "malformed");
  expect_error(ErrorKind::Validate, [&] { engine_->compile(wasm(kInvalid)); }, "type mismatch");
  expect_error(ErrorKind::Decode, [&] { engine_->compile({}); }, "malformed");
}

TEST_F(EngineTest, InitialisationTrapsFailInstantiation) {
  expect_error(ErrorKind::Trap, [&] { instantiate(wasm(kStartTrap)); }, "unreachable");
  expect_error(ErrorKind::Trap, [&] { instantiate(wasm(kDataOob)); }, "out of bounds");
}

TEST_F(EngineTest, Memory64AndMultiMemory) {
  if (testing_support::testing_aot()) {
    // wasm2c's memories are 32-bit.
    expect_error(ErrorKind::Validate, [&] { instantiate(wasm(kMem64)); }, "uses memory64");
  } else {
    auto mem64 = instantiate(wasm(kMem64));
    call(*mem64, "store", {65528, 0x1122334455667788});
    EXPECT_EQ(call1(*mem64, "load", {65528}), 0x1122334455667788u);
    EXPECT_EQ(call1(*mem64, "size"), 1u);
    EXPECT_TRUE(store_->extern_type(exported(*mem64, "memory")).limits.is64);
    expect_error(ErrorKind::Trap, [&] { call(*mem64, "load", {uint64_t{1} << 40}); }, "out of bounds");
  }

  auto multi = instantiate(wasm(kMultimem));
  uint32_t value = 0xabcdef01;
  std::memcpy(store_->memory_bytes(exported(*multi, "a")).data() + 4, &value, 4);
  call(*multi, "copy_a_to_b", {4});
  EXPECT_EQ(call1(*multi, "load_b", {4}), 0xabcdef01u);
  EXPECT_EQ(call(*multi, "sizes"), (std::vector<uint64_t>{1, 2}));
  EXPECT_EQ(store_->memory_bytes(exported(*multi, "b")).size(), 2u * 65536);
}

// Tail calls, legacy exceptions, SIMD, imported globals in constant
// expressions, bulk memory, atomics and nested loops; run on both an
// unmetered and a metered engine, which must agree.
void check_post_mvp_features(Store& store, Engine& engine) {
  if (testing_support::testing_aot()) {
    // wasm2c 1.0.32 translates none of SIMD, tail calls and threads: the
    // module is refused, naming the first it tries.
    expect_error(ErrorKind::Validate, [&] { engine.compile(wasm(kFeatures)); }, "cannot translate a module that uses");
    return;
  }
  auto arith = store.instantiate(*engine.compile(wasm(kArith)), {});
  const std::vector<Extern> imports{*arith->get_export("answer")};
  auto features = store.instantiate(*engine.compile(wasm(kFeatures)), imports);
  auto call1 = [&](std::string_view name, std::vector<uint64_t> args = {}) {
    uint64_t result = 0;
    store.call(*features->get_export(name), args, std::span<uint64_t>(&result, 1));
    return result;
  };
  EXPECT_EQ(call1("fact", {20}), 2432902008176640000u);
  EXPECT_EQ(call1("catch_it", {41}), 42u);
  expect_error(ErrorKind::Trap, [&] { store.call(*features->get_export("throw_it"), {}, {}); },
               "uncaught exception");
  EXPECT_EQ(call1("simd_sum"), 33u);
  EXPECT_EQ(call1("globals"), 184u);  // 100 + 42, plus a global initialised from the import
  EXPECT_EQ(call1("bulk"), 7u);
  EXPECT_EQ(call1("atomic"), 5u);
  EXPECT_EQ(call1("nested_loops", {30}), 900u);
}

TEST_F(EngineTest, PostMvpFeatures) { check_post_mvp_features(*store_, *engine_); }

class BudgetTest : public EngineTest {
 protected:
  BudgetTest() : EngineTest(EngineConfig{.metering = true}) {}
};

TEST_F(BudgetTest, InfiniteLoopRunsOutOfFuel) {
  auto spin = instantiate(wasm(kSpin));
  EXPECT_EQ(store_->fuel(), std::nullopt);  // unlimited until set
  EXPECT_EQ(call1(*spin, "count", {50000}), 50000u);
  store_->set_fuel(1000);
  expect_error(ErrorKind::Trap, [&] { call(*spin, "spin"); }, "out of fuel: the store's fuel of 1000 units is spent");
  EXPECT_EQ(store_->fuel(), std::optional<uint64_t>(0));
  store_->set_fuel(1000);
  expect_error(ErrorKind::Trap, [&] { call(*spin, "deep"); }, "out of fuel");
  // The fuel is the store's, across calls: a leaf function costs none.
  store_->set_fuel(1000);
  EXPECT_EQ(call1(*spin, "add", {2, 3}), 5u);
  EXPECT_EQ(store_->fuel(), std::optional<uint64_t>(1000));
  EXPECT_EQ(call1(*spin, "count", {900}), 900u);
  const uint64_t left = store_->fuel().value();
  EXPECT_LE(left, 100u);
  EXPECT_GE(left, 90u);
  expect_error(ErrorKind::Trap, [&] { call(*spin, "count", {900}); }, "out of fuel");
  store_->set_fuel(std::nullopt);
  EXPECT_EQ(call1(*spin, "count", {5000}), 5000u);
  auto recursion = instantiate(wasm(kIndirectRecursion));
  store_->set_fuel(1000);
  expect_error(ErrorKind::Trap, [&] { call(*recursion, "f", {0}); }, "out of fuel");
}

TEST_F(BudgetTest, FuelIsCountedAcrossSlices) {
  auto spin = instantiate(wasm(kSpin));
  store_->set_fuel(1'000'000);
  for (int i = 0; i < 10; ++i) EXPECT_EQ(call1(*spin, "count", {25000}), 25000u);
  const uint64_t used = 1'000'000 - store_->fuel().value();
  EXPECT_GE(used, 250'000u);
  EXPECT_LE(used, 250'100u);  // a unit per iteration, and a few per call
}

TEST_F(BudgetTest, AnEpochPastTheDeadlineInterrupts) {
  auto spin = instantiate(wasm(kSpin));
  store_->set_epoch_deadline(engine_->epoch() + 2);
  EXPECT_EQ(call1(*spin, "count", {30000}), 30000u);
  engine_->increment_epoch();
  EXPECT_FALSE(store_->deadline_passed());
  EXPECT_EQ(call1(*spin, "count", {30000}), 30000u);
  engine_->increment_epoch();
  EXPECT_TRUE(store_->deadline_passed());
  expect_error(ErrorKind::Trap, [&] { call(*spin, "count", {30000}); }, "interrupted: the engine's epoch reached");
  store_->set_epoch_deadline(engine_->epoch() + 1);
  EXPECT_EQ(call1(*spin, "add", {1, 1}), 2u);
}

TEST_F(BudgetTest, AnotherThreadInterruptsARunawayLoop) {
  auto spin = instantiate(wasm(kSpin));
  store_->set_epoch_deadline(engine_->epoch() + 1);
  const auto start = std::chrono::steady_clock::now();
  std::thread timer([&] {
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
    engine_->increment_epoch();
  });
  expect_error(ErrorKind::Trap, [&] { call(*spin, "spin"); }, "interrupted");
  timer.join();
  const auto elapsed = std::chrono::steady_clock::now() - start;
  EXPECT_LT(elapsed, std::chrono::milliseconds(150));  // the deadline plus under 100 ms
}

TEST_F(BudgetTest, MeteredModulesKeepTheirBehaviour) {
  check_post_mvp_features(*store_, *engine_);
  auto traps = instantiate(wasm(kTraps));
  expect_error(ErrorKind::Trap, [&] { call(*traps, "unreachable"); }, "unreachable executed");
  // The metering imports stay hidden.
  EXPECT_EQ(engine_->compile(wasm(kHost))->imports().size(), 4u);
  auto arith = instantiate(wasm(kArith));
  EXPECT_EQ(store_->global_get(exported(*arith, "counter")), 7u);  // global indices shifted consistently
  EXPECT_EQ(call1(*arith, "bump"), 8u);
  // Function indices too: calls, a start function, host imports.
  auto host = instantiate(wasm(kPingpong), {store_->host_func({{CoreType::I32}, {CoreType::I32}},
                                                              [](Caller&, std::span<const uint64_t> a,
                                                                 std::span<uint64_t> r) { r[0] = a[0] + 1; })});
  EXPECT_EQ(call1(*host, "ping", {41}), 42u);
}

TEST_F(BudgetTest, FuelCoversNestedCallsAndStartFunctions) {
  auto spin = instantiate(wasm(kSpin));
  Extern bounce = store_->host_func({{CoreType::I32}, {CoreType::I32}},
                                    [&](Caller& caller, std::span<const uint64_t>, std::span<uint64_t> r) {
                                      caller.store().call(exported(*spin, "spin"), {}, {});
                                      r[0] = 0;
                                    });
  auto pingpong = instantiate(wasm(kPingpong), {bounce});
  store_->set_fuel(5000);
  expect_error(ErrorKind::Trap, [&] { call(*pingpong, "ping", {1}); }, "out of fuel");
  store_->set_fuel(5000);
  expect_error(ErrorKind::Trap, [&] { instantiate(wasm(kStartSpin)); }, "out of fuel");
  EXPECT_EQ(call1(*spin, "add", {1, 1}), 2u);
}

TEST(EngineBudget, UnmeteredStoresRefuseFuel) {
  auto plain = make_engine(testing_support::test_engine_config());
  auto store = plain->new_store();
  expect_error(ErrorKind::Usage, [&] { store->set_fuel(10); }, "EngineConfig::metering");
  expect_error(ErrorKind::Usage, [&] { store->set_epoch_deadline(1); }, "EngineConfig::metering");
  EXPECT_FALSE(store->deadline_passed());
}

TEST_F(BudgetTest, InvalidModulesAreStillClassified) {
  const uint8_t garbage[] = {0x00, 0x61, 0x73, 0x6d, 0x02, 0x00, 0x00, 0x00};
  expect_error(ErrorKind::Decode, [&] { engine_->compile(wasm(garbage)); }, "malformed");
  expect_error(ErrorKind::Validate, [&] { engine_->compile(wasm(kInvalid)); }, "type mismatch");
}

// (module (func (block (block ... (block) ...)))) with `depth` blocks.
std::vector<uint8_t> nested_blocks(uint32_t depth) {
  auto leb = [](std::vector<uint8_t>& out, uint32_t n) {
    do {
      uint8_t byte = n & 0x7f;
      n >>= 7;
      out.push_back(n ? byte | 0x80 : byte);
    } while (n);
  };
  std::vector<uint8_t> body{0x00};  // no locals
  for (uint32_t i = 0; i < depth; ++i) body.insert(body.end(), {0x02, 0x40});
  body.insert(body.end(), depth + 1, 0x0b);
  std::vector<uint8_t> code;
  leb(code, 1);
  leb(code, body.size());
  code.insert(code.end(), body.begin(), body.end());
  std::vector<uint8_t> module{0x00, 0x61, 0x73, 0x6d, 0x01, 0x00, 0x00, 0x00,  // header
                              0x01, 0x04, 0x01, 0x60, 0x00, 0x00,              // type [] -> []
                              0x03, 0x02, 0x01, 0x00,                          // one function
                              0x0a};
  leb(module, code.size());
  module.insert(module.end(), code.begin(), code.end());
  return module;
}

// Metering works on wabt's recursive IR, so it bounds block nesting; the
// interpreter alone does not need to.
TEST_F(BudgetTest, DeepNestingIsAnImplementationLimit) {
  if (testing_support::testing_aot()) GTEST_SKIP() << "the interpreter's metering limit";
  EXPECT_NO_THROW(engine_->compile(nested_blocks(5000)));
  expect_error(ErrorKind::Validate, [&] { engine_->compile(nested_blocks(50000)); }, "implementation limit");
  EXPECT_NO_THROW(make_engine(testing_support::test_engine_config())->compile(nested_blocks(50000)));
}

TEST(EngineBudget, StoresRefuseModulesMeteredDifferently) {
  auto metered = make_engine(testing_support::test_engine_config({.metering = true}));
  auto plain = make_engine(testing_support::test_engine_config());
  auto module = metered->compile(wasm(kArith));
  auto store = plain->new_store();
  expect_error(ErrorKind::Usage, [&] { store->instantiate(*module, {}); }, "metering");
}

// A store's caps on what its modules define: growth stops at them as at a
// declared maximum, from wasm and from the host.
TEST_F(EngineTest, MemoryGrowthStopsAtTheStoresCap) {
  store_->set_memory_limits({.memory_bytes = 3 * 65536, .table_elements = 2});
  auto grow = instantiate(wasm(kGrow));  // declares 1 to 8 pages
  EXPECT_EQ(call1(*grow, "grow", {2}), 1u);
  EXPECT_EQ(call1(*grow, "grow", {1}), 0xffffffffu);  // memory.grow fails as beyond its maximum
  EXPECT_EQ(store_->grow_memory(exported(*grow, "memory"), 1), std::nullopt);
  EXPECT_EQ(call1(*grow, "size"), 3u);
  EXPECT_EQ(store_->extern_type(exported(*grow, "memory")).limits.max, std::optional<uint64_t>(3));
  // A table of 2 elements fits a cap of 2, and a second one does not.
  auto provider = instantiate(wasm(kProvider));
  expect_error(ErrorKind::Trap, [&] { instantiate(wasm(kProvider)); }, "table limit: table 0 of 2 elements");
  // Another store of the same engine has no caps.
  auto other = engine_->new_store();
  auto uncapped = other->instantiate(*engine_->compile(wasm(kGrow)), {});
  std::vector<uint64_t> result(1);
  other->call(*uncapped->get_export("grow"), {std::vector<uint64_t>{5}}, result);
  EXPECT_EQ(result[0], 1u);
}

TEST_F(EngineTest, TheStoresMemoriesShareTheTotal) {
  store_->set_memory_limits({.total_memory_bytes = 4 * 65536});
  auto first = instantiate(wasm(kGrow));  // 1 page, up to 8
  EXPECT_EQ(call1(*first, "grow", {1}), 1u);  // 2 pages in use
  auto second = instantiate(wasm(kGrow));     // 1 more: 3 in use, room for 1
  EXPECT_EQ(call1(*second, "grow", {2}), 0xffffffffu);
  EXPECT_EQ(call1(*second, "grow", {1}), 1u);
  EXPECT_EQ(store_->grow_memory(exported(*first, "memory"), 1), std::nullopt);  // the host too
  expect_error(ErrorKind::Trap, [&] { instantiate(wasm(kGrow)); },
               "memory limit: memory 0 of 65536 bytes would take the store's memories past its limit of 262144 bytes "
               "in total (262144 in use)");
}

std::vector<uint8_t> read_test_module(const char* name) {
  std::ifstream in(std::string(CMHOST_TEST_MODULES) + "/" + name, std::ios::binary);
  std::vector<uint8_t> bytes{std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
  if (bytes.empty()) throw std::runtime_error(std::string("no test module ") + name);
  return bytes;
}

constexpr uint64_t kFailed32 = 0xffffffffu;

// Instances made before any of them grows share the total: each growth is
// checked against what the store's memories hold at that moment, however
// many memories there are and whoever grows them.
TEST_F(EngineTest, EveryGrowthIsCheckedAgainstTheTotalInUse) {
  store_->set_memory_limits({.total_memory_bytes = 7 * 65536});
  const auto growth = read_test_module("growth.wasm");  // two memories of 1 page
  auto first = instantiate(growth);
  auto second = instantiate(growth);  // 4 pages in use
  EXPECT_EQ(call1(*first, "grow", {2}), 1u);  // 6
  EXPECT_EQ(call1(*second, "grow", {2}), kFailed32);
  EXPECT_EQ(call1(*second, "grow_b", {1}), 1u);  // 7
  EXPECT_EQ(call1(*first, "grow_b", {1}), kFailed32);
  EXPECT_EQ(call1(*second, "grow", {0}), 1u);  // growing by nothing always succeeds
  EXPECT_EQ(store_->grow_memory(exported(*first, "memory"), 1), std::nullopt);
  EXPECT_EQ(call1(*first, "pages") + call1(*second, "pages"), 7u);
}

// Two core instances with one memory each, made before either grows: the
// memory the interpreter grows unguarded and the guarded one see each
// other's growth, and the host's.
TEST_F(EngineTest, MemoriesMadeBeforeEitherGrowsShareTheTotal) {
  store_->set_memory_limits({.total_memory_bytes = 5 * 65536});
  auto first = instantiate(wasm(kGrow));   // 1 page
  auto second = instantiate(wasm(kGrow));  // 1 page
  EXPECT_EQ(call1(*second, "grow", {2}), 1u);  // 4 in use
  EXPECT_EQ(call1(*first, "grow", {2}), kFailed32);
  EXPECT_EQ(call1(*first, "grow", {1}), 1u);  // 5
  EXPECT_EQ(call1(*second, "grow", {1}), kFailed32);
  EXPECT_EQ(store_->grow_memory(exported(*second, "memory"), 1), std::nullopt);
  EXPECT_EQ(call1(*first, "size") + call1(*second, "size"), 5u);
  // The host's growth counts as well.
  auto other = engine_->new_store();
  other->set_memory_limits({.total_memory_bytes = 4 * 65536});
  auto a = other->instantiate(*engine_->compile(wasm(kGrow)), {});
  auto b = other->instantiate(*engine_->compile(wasm(kGrow)), {});
  EXPECT_EQ(other->grow_memory(exported(*b, "memory"), 2), std::optional<uint64_t>(1));
  std::vector<uint64_t> result(1);
  other->call(*a->get_export("grow"), {std::vector<uint64_t>{1}}, result);
  EXPECT_EQ(result[0], kFailed32);
}

// Data segments: every instance starts from them, whatever another wrote
// (an ahead-of-time memory image is copy-on-write), and growing adds zeros.
TEST_F(EngineTest, EachInstanceStartsFromTheDataSegments) {
  const auto bytes = read_test_module("data-segments.wasm");
  auto first = instantiate(bytes);
  const auto byte_at = [&](const Instance& instance, uint64_t address) { return call1(instance, "load", {address}); };
  EXPECT_EQ(byte_at(*first, 16), uint64_t{'h'});
  EXPECT_EQ(byte_at(*first, 20), uint64_t{'!'}) << "the later segment wins";
  EXPECT_EQ(byte_at(*first, 70000), uint64_t{'w'});
  EXPECT_EQ(byte_at(*first, 131071), uint64_t{'l'});
  EXPECT_EQ(byte_at(*first, 100), 0u);
  for (uint64_t address : {16u, 70001u, 100u, 131071u}) call(*first, "store", {address, 'X'});
  auto second = instantiate(bytes);
  EXPECT_EQ(byte_at(*second, 16), uint64_t{'h'});
  EXPECT_EQ(byte_at(*second, 70001), uint64_t{'o'});
  EXPECT_EQ(byte_at(*second, 100), 0u);
  EXPECT_EQ(byte_at(*second, 131071), uint64_t{'l'});
  EXPECT_EQ(byte_at(*first, 70001), uint64_t{'X'}) << "the first instance keeps what it wrote";
  EXPECT_EQ(call1(*second, "grow", {1}), 2u);
  EXPECT_EQ(byte_at(*second, 131072), 0u);
  call(*second, "store", {131072, 'Y'});
  EXPECT_EQ(byte_at(*second, 131072), uint64_t{'Y'});
  auto third = instantiate(bytes);
  EXPECT_EQ(byte_at(*third, 16), uint64_t{'h'});
}

// An engine that pools freed memories (EngineConfig::pooling).
std::unique_ptr<Engine> pooling_engine() {
  EngineConfig config;
  config.pooling.memory_slots = 8;
  return make_engine(testing_support::test_engine_config(config));
}

// The export's first result (0 when it has none).
uint64_t call_export(Store& store, const Instance& instance, const char* name, std::vector<uint64_t> args) {
  const Extern f = *instance.get_export(name);
  std::vector<uint64_t> results(store.func_type(f).results.size());
  store.call(f, args, results);
  return results.empty() ? uint64_t{0} : results[0];
}

// Pooled memories (EngineConfig::pooling; the ahead-of-time backend's):
// a memory reused after another instance wrote it, grew it, or had another
// image starts as a fresh one would, whichever backend runs.
TEST(PooledMemories, AReusedMemoryStartsAsAFreshOne) {
  auto engine = pooling_engine();
  const auto data = read_test_module("data-segments.wasm");
  const auto blank = read_test_module("blank-memory.wasm");
  {
    auto store = engine->new_store();
    auto used = store->instantiate(*engine->compile(data), {});
    for (uint64_t address : {16u, 70001u, 100u, 131071u}) call_export(*store, *used, "store", {address, 'X'});
    EXPECT_EQ(call_export(*store, *used, "grow", {1}), 2u);
    call_export(*store, *used, "store", {131072 + 5, 'Y'});
  }
  // On aot with guard pages the dropped store's memory went to the pool.
  if (testing_support::testing_aot() && cmhost_rt_uses_guard_pages()) {
    EXPECT_GT(cmhost_rt_pooled_memories(), 0u);
  }
  {
    auto store = engine->new_store();
    auto fresh = store->instantiate(*engine->compile(data), {});
    EXPECT_EQ(call_export(*store, *fresh, "load", {16}), uint64_t{'h'});
    EXPECT_EQ(call_export(*store, *fresh, "load", {70001}), uint64_t{'o'});
    EXPECT_EQ(call_export(*store, *fresh, "load", {100}), 0u);
    EXPECT_EQ(call_export(*store, *fresh, "load", {131071}), uint64_t{'l'});
    EXPECT_EQ(store->extern_type(*fresh->get_export("memory")).limits.min, 2u) << "the grown page is not kept";
    expect_error(ErrorKind::Trap, [&] { call_export(*store, *fresh, "load", {131072 + 5}); }, "out of bounds");
    EXPECT_EQ(call_export(*store, *fresh, "grow", {1}), 2u);
    EXPECT_EQ(call_export(*store, *fresh, "load", {131072 + 5}), 0u);
  }
  {
    auto store = engine->new_store();
    auto other = store->instantiate(*engine->compile(blank), {});
    for (uint64_t address : {16u, 70001u, 131071u, 131072u + 5})
      EXPECT_EQ(call_export(*store, *other, "load", {address}), 0u) << "at " << address;
  }
  auto store = engine->new_store();
  auto again = store->instantiate(*engine->compile(data), {});
  EXPECT_EQ(call_export(*store, *again, "load", {16}), uint64_t{'h'});
  EXPECT_EQ(call_export(*store, *again, "load", {131068}), uint64_t{'t'});
}

// Pages of an image that earlier instances wrote are learned as their
// memories go to the pool; the next instance of the image gets them written
// in advance (present and its own before it touches them: no copy-on-write
// fault later), with the image's contents. Pages nobody wrote stay unmapped.
TEST(PooledMemories, PagesEarlierInstancesWroteAreTheirOwnFromTheStart) {
  if (!testing_support::testing_aot() || !cmhost_rt_uses_guard_pages() || ::sysconf(_SC_PAGESIZE) != 4096)
    GTEST_SKIP() << "the ahead-of-time backend's pooled, imaged memories, on 4 KiB pages";
  const int pagemap = ::open("/proc/self/pagemap", O_RDONLY | O_CLOEXEC);
  if (pagemap < 0) GTEST_SKIP() << "no /proc/self/pagemap";
  // Present, private (not the image file's page) and mapped once.
  const auto written = [&](const uint8_t* address) {
    uint64_t entry = 0;
    const auto at = static_cast<off_t>(reinterpret_cast<uintptr_t>(address) / 4096 * 8);
    if (::pread(pagemap, &entry, sizeof entry, at) != static_cast<ssize_t>(sizeof entry)) return false;
    return (entry >> 63 & 1) && !(entry >> 61 & 1) && (entry >> 56 & 1);
  };
  auto engine = pooling_engine();
  const auto data = read_test_module("data-segments.wasm");
  {
    auto store = engine->new_store();
    auto first = store->instantiate(*engine->compile(data), {});
    call_export(*store, *first, "load", {16});  // read only
    call_export(*store, *first, "store", {70001, 'X'});
  }
  auto store = engine->new_store();
  auto next = store->instantiate(*engine->compile(data), {});
  const uint8_t* base = store->memory_bytes(*next->get_export("memory")).data();
  EXPECT_TRUE(written(base + 70001)) << "the page the first instance wrote";
  EXPECT_FALSE(written(base + 16)) << "a page it only read";
  EXPECT_EQ(call_export(*store, *next, "load", {70001}), uint64_t{'o'}) << "the image's byte, not the first instance's";
  EXPECT_EQ(call_export(*store, *next, "load", {70000}), uint64_t{'w'});
  ::close(pagemap);
}

TEST_F(EngineTest, ASegmentPastTheInitialSizeTrapsAtInstantiation) {
  expect_error(ErrorKind::Trap, [&] { instantiate(read_test_module("data-out-of-bounds.wasm")); },
               "out of bounds memory access");
}

TEST_F(EngineTest, OneCallGrowingTwoMemoriesStaysWithinTheTotal) {
  store_->set_memory_limits({.total_memory_bytes = 3 * 65536});
  auto growth = instantiate(read_test_module("growth.wasm"));
  EXPECT_EQ(call1(*growth, "grow_both", {1}), kFailed32);  // the first memory took the last page
  EXPECT_EQ(call1(*growth, "pages"), 3u);
  EXPECT_EQ(call1(*growth, "grow_each", {10}), 0u);
}

TEST_F(EngineTest, TablesShareTheStoresTotal) {
  store_->set_memory_limits({.table_elements = 4});
  auto first = instantiate(read_test_module("growth.wasm"));  // two tables of 1 element
  EXPECT_EQ(call1(*first, "grow_funcs", {1}), 1u);
  EXPECT_EQ(call1(*first, "grow_externs", {2}), kFailed32);
  EXPECT_EQ(call1(*first, "grow_externs", {1}), 1u);
  EXPECT_EQ(call1(*first, "grow_funcs", {1}), kFailed32);
  EXPECT_EQ(call1(*first, "elements"), 4u);
  expect_error(ErrorKind::Trap, [&] { instantiate(read_test_module("growth.wasm")); },
               "table limit: table 0 of 1 elements would take the store's tables past its limit of 4 elements in "
               "total (4 in use)");
}

TEST_F(EngineTest, ManyTablesTogetherAreRefusedAtTheDefaultLimit) {
  store_->set_memory_limits({.table_elements = uint64_t{1} << 20});  // cmhost::StoreLimits' default
  expect_error(ErrorKind::Trap, [&] { instantiate(read_test_module("big-tables.wasm")); },
               "table limit: table 1 of 600000 elements would take the store's tables past its limit of 1048576 "
               "elements in total (600000 in use)");
}

TEST_F(EngineTest, SixtyFourBitMemoriesAreCheckedToo) {
  if (testing_support::testing_aot()) GTEST_SKIP() << "the ahead-of-time backend does not translate memory64";
  store_->set_memory_limits({.total_memory_bytes = 2 * 65536});
  auto growth = instantiate(read_test_module("growth64.wasm"));
  EXPECT_EQ(call1(*growth, "grow", {2}), ~uint64_t{0});
  EXPECT_EQ(call1(*growth, "grow", {1}), 1u);
  EXPECT_EQ(call1(*growth, "size"), 2u);
}

class MeteredGrowthTest : public EngineTest {
 protected:
  MeteredGrowthTest() : EngineTest({.metering = true}) {}
};

// Metering and the growth checks rewrite the same module together.
TEST_F(MeteredGrowthTest, MeteredModulesAreCheckedAsTheyGrow) {
  store_->set_memory_limits({.total_memory_bytes = 5 * 65536});
  store_->set_fuel(1'000'000);
  auto growth = instantiate(read_test_module("growth.wasm"));
  EXPECT_EQ(call1(*growth, "grow_each", {10}), 3u);
  EXPECT_EQ(call1(*growth, "grow_funcs", {1}), 1u);
  EXPECT_LT(*store_->fuel(), 1'000'000u);
}

TEST_F(EngineTest, ModulesStartingAboveTheStoresCapsAreRefused) {
  store_->set_memory_limits({.memory_bytes = 65535});  // less than a page
  expect_error(ErrorKind::Trap, [&] { instantiate(wasm(kGrow)); },
               "memory limit: memory 0 starts at 65536 bytes, above the store's limit of 65535 bytes per memory");
  store_->set_memory_limits({.table_elements = 1});
  expect_error(ErrorKind::Trap, [&] { instantiate(wasm(kProvider)); },
               "table limit: table 0 of 2 elements would take the store's tables past its limit of 1 elements in "
               "total (0 in use)");
  store_->set_memory_limits({});
  EXPECT_NO_THROW(instantiate(wasm(kProvider)));
}

TEST_F(EngineTest, PreparedCallsCallTheFunction) {
  auto arith = instantiate(wasm(kArith));
  const auto add = store_->prepare_call(exported(*arith, "add_i32"));
  const uint64_t args[] = {2, 40};
  uint64_t result[1] = {0};
  add->call(args, result);
  EXPECT_EQ(result[0], 42u);
  expect_error(ErrorKind::Usage, [&] { (void)store_->prepare_call(exported(*arith, "counter")); });
  expect_error(ErrorKind::Usage, [&] { add->call(std::span<const uint64_t>(args, 1), result); }, "arguments");
  const auto trap = store_->prepare_call(exported(*instantiate(wasm(kTraps)), "unreachable"));
  expect_error(ErrorKind::Trap, [&] { trap->call({}, {}); });
}

TEST(EngineArtifacts, TheInterpreterLoadsNone) {
  auto engine = make_engine();
  expect_error(ErrorKind::Usage, [&] { (void)engine->load_artifact("app.so", wasm(kArith)); }, "loads no artifacts");
}

TEST(EngineTypes, ToString) {
  EXPECT_STREQ(to_string(CoreType::I32), "i32");
  EXPECT_STREQ(to_string(CoreType::ExternRef), "externref");
  EXPECT_STREQ(to_string(ExternKind::Memory), "memory");
  EXPECT_EQ(to_string(FuncType{{CoreType::I32, CoreType::I64}, {CoreType::F32}}), "[i32 i64] -> [f32]");
  EXPECT_EQ(to_string(FuncType{}), "[] -> []");
}

}  // namespace
}  // namespace cmhost::engine
