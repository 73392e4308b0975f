// Canonical ABI lift and lower, compiled once per type.
//
// The stage sees guest memory only through GuestMemory: a byte span that may
// move after any call into the guest, plus the canonical realloc. Core values
// are raw bit patterns in uint64_t: i32 and f32 in the low 32 bits with the
// upper bits zero, i64 and f64 in all 64.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <span>
#include <vector>

#include "cmhost/abi/type.hpp"
#include "cmhost/abi/val.hpp"

namespace cmhost::abi {

namespace typed {
class HandleTypes;
}

enum class StringEncoding : uint8_t { Utf8, Utf16, Latin1Utf16 };
const char* to_string(StringEncoding e) noexcept;

struct CanonOptions {
  AddrWidth addr = AddrWidth::I32;
  StringEncoding encoding = StringEncoding::Utf8;
  // The spec's deterministic profile: every NaN lifted or lowered becomes the
  // canonical NaN. When off, NaN bit patterns pass through unchanged.
  bool canonicalize_nan = true;
};

// How a stream or future copy ended: the reference's CopyResult, whose
// values are the codes a copy's event carries to the guest.
enum class CopyStatus : uint8_t {
  Completed = 0,  // the copy moved what it could
  Dropped = 1,    // the other end is gone: no more elements will come (or go)
  Cancelled = 2,  // cancelled (by the host, for the host's ends)
};

// How a copy ended, and how many elements it moved.
struct CopyOutcome {
  CopyStatus status = CopyStatus::Completed;
  uint64_t count = 0;
};

class GuestMemory {
 public:
  virtual ~GuestMemory() = default;
  // The whole linear memory now. Re-read after realloc: it may move or grow.
  virtual std::span<uint8_t> bytes() = 0;
  // The canon `realloc` option. Throws Error (Trap) if the guest traps or
  // when no realloc is available.
  virtual uint64_t realloc(uint64_t old_ptr, uint64_t old_size, uint32_t align,
                           uint64_t new_size) = 0;
};

// Maps handle indices at the boundary (own, borrow, stream, future,
// error-context). Without hooks the index passes through unchanged.
class HandleHooks {
 public:
  virtual ~HandleHooks() = default;
  virtual uint32_t lift_handle(const Type& type, uint32_t index) = 0;
  virtual uint32_t lower_handle(const Type& type, uint32_t index) = 0;
};

// The state of one lift or lower operation.
class AbiContext {
 public:
  AbiContext(GuestMemory* memory, CanonOptions options, HandleHooks* hooks = nullptr)
      : memory_(memory), options_(options), hooks_(hooks) {
    refresh();
  }

  const CanonOptions& options() const { return options_; }
  HandleHooks* hooks() const { return hooks_; }
  // The resource types the typed handles of one typed call stand for
  // (typed::Own, typed::Borrow): set by the call for its typed lowers and
  // loads, null otherwise.
  const typed::HandleTypes* typed_handles() const { return typed_handles_; }
  void set_typed_handles(const typed::HandleTypes* handles) { typed_handles_ = handles; }

  // Base and size of memory, valid until the next realloc.
  uint8_t* base() const { return base_; }
  uint64_t size() const { return size_; }
  // Inline, as the constructor: every call makes a context.
  void refresh() {
    if (!memory_) return;
    const auto bytes = memory_->bytes();
    base_ = bytes.data();
    size_ = bytes.size();
  }
  // Calls realloc and refreshes the memory view.
  uint64_t realloc(uint64_t old_ptr, uint64_t old_size, uint32_t align, uint64_t new_size);
  void require_memory(const char* why) const {
    if (!memory_) no_memory(why);
  }
  bool has_memory() const { return memory_ != nullptr; }

  // The host bytes one lift through this context may allocate (strings,
  // lists, the items of compound values); past it the lift traps. A guest
  // can make a small memory lift large: a list of strings that all alias
  // one long string.
  uint64_t lift_limit() const { return lift_limit_; }
  void set_lift_limit(uint64_t bytes) { lift_limit_ = bytes; }
  // The trap of a lift that would pass the limit.
  [[noreturn]] void lift_limit_reached(uint64_t bytes) const;

 private:
  [[noreturn]] static void no_memory(const char* why);
  GuestMemory* memory_;
  CanonOptions options_;
  HandleHooks* hooks_;
  const typed::HandleTypes* typed_handles_ = nullptr;
  uint8_t* base_ = nullptr;
  uint64_t size_ = 0;
  uint64_t lift_limit_ = UINT64_MAX;
};

namespace detail {
struct Program;
}

// Lift and lower of one value type for one address width, compiled once.
// Offsets, discriminant widths, case tables and bulk-copy decisions are
// constants of the compiled program; nothing walks the type per element.
class ValueAbi {
 public:
  ValueAbi(TypeRef type, AddrWidth width);
  ~ValueAbi();
  ValueAbi(ValueAbi&&) noexcept;
  ValueAbi& operator=(ValueAbi&&) noexcept;

  const TypeRef& type() const { return type_; }
  const Layout& layout() const { return type_->layout(width_); }
  AddrWidth width() const { return width_; }

  // load / store at `ptr`, which must be aligned and in bounds (else a trap).
  Val load(AbiContext& cx, uint64_t ptr) const;
  void store(AbiContext& cx, const Val& value, uint64_t ptr) const;

  // lift_flat / lower_flat over layout().flat_count core values; the type's
  // flattening must be listed (flat_count <= kMaxListedFlat).
  Val lift_flat(AbiContext& cx, std::span<const uint64_t> flat) const;
  void lower_flat(AbiContext& cx, const Val& value, std::vector<uint64_t>& out) const;

  const detail::Program& program() const { return *program_; }

 private:
  TypeRef type_;
  AddrWidth width_;
  std::unique_ptr<detail::Program> program_;
};

enum class AbiSide : uint8_t { Lift, Lower };  // canon lift (exports) or canon lower (imports)

struct CoreSignature {
  std::vector<CoreType> params;
  std::vector<CoreType> results;
};

// Parameter and result passing of one function type under one set of
// options: flat when it fits (16 params / 1 result; 4 params for async
// lowers), otherwise spilled through realloc or a return pointer.
class FunctionAbi {
 public:
  FunctionAbi(std::vector<TypeRef> params, std::vector<TypeRef> results, CanonOptions options,
              bool async = false);
  ~FunctionAbi();

  CoreSignature core_signature(AbiSide side) const;
  bool params_spilled(AbiSide side) const {
    return side == AbiSide::Lift ? lift_params_spilled_ : lower_params_spilled_;
  }
  bool results_spilled() const { return results_spilled_; }
  const CanonOptions& options() const { return options_; }
  std::span<const TypeRef> params() const { return params_; }
  std::span<const TypeRef> results() const { return results_; }

  // The host calls a lifted export: lower the arguments (spilling them into
  // memory allocated by realloc when they do not fit), then lift the results
  // (from flat values or through the returned pointer; for an async export,
  // from the arguments of its task.return).
  void lower_args(AbiContext& cx, std::span<const Val> args, std::vector<uint64_t>& flat) const;
  std::vector<Val> lift_results(AbiContext& cx, std::span<const uint64_t> flat) const;

  // A guest calls a lowered host import: lift the arguments, then lower the
  // results, into flat values or through the out pointer that follows the
  // flat parameters.
  std::vector<Val> lift_args(AbiContext& cx, std::span<const uint64_t> flat) const;
  // Where a lowered call's results go through memory: the out pointer among
  // its core arguments, or nullopt when the result is returned flat.
  std::optional<uint64_t> result_pointer(std::span<const uint64_t> flat_args) const;
  void lower_results(AbiContext& cx, std::span<const Val> results,
                     std::span<const uint64_t> flat_args, std::vector<uint64_t>& flat) const;

 private:
  struct Values;
  std::vector<TypeRef> params_;
  std::vector<TypeRef> results_;
  CanonOptions options_;
  bool async_;
  std::unique_ptr<Values> param_values_;
  std::unique_ptr<Values> result_values_;
  // Fixed by the types: asked on every call.
  bool lift_params_spilled_, lower_params_spilled_, results_spilled_;
};

}  // namespace cmhost::abi
