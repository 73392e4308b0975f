// Validation: a decoded component, type-checked and resolved into a flat
// instantiation plan per component that the runtime executes step by step.
//
// Every index space of the binary format is replayed here. Steps that create
// run-time entities (core instances, functions, resource types, component
// instances...) become Plan steps whose operands are already-resolved
// indices into those run-time index spaces; everything static (value types,
// function types, core modules, nested components, outer aliases of them) is
// resolved now and referenced directly.
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <unordered_map>
#include <utility>
#include <variant>
#include <vector>

#include "binary/binary.hpp"
#include "cmhost/abi.hpp"
#include "cmhost/types.hpp"

namespace cmhost::validate {

// ---- Resolved component-level types (public: cmhost/types.hpp) ----

using cmhost::ComponentType;
using cmhost::ExternDesc;
using cmhost::FuncType;
using cmhost::InstanceType;
using cmhost::NamedExtern;
using cmhost::to_string;

// A core function, table, memory, global or tag type, with function types
// resolved out of the module's type section.
struct CoreExtern {
  binary::Sort sort = binary::Sort::CoreFunc;  // CoreFunc, CoreTable, CoreMemory, CoreGlobal, CoreTag
  binary::CoreFuncType func;                   // CoreFunc; CoreTag's parameters
  binary::CoreTableType table;
  binary::CoreMemoryType memory;
  binary::CoreGlobalType global;
};

}  // namespace cmhost::validate

// Opaque in cmhost/types.hpp.
struct cmhost::CoreModuleType {
  using CoreExtern = validate::CoreExtern;
  struct Import {
    std::string module;
    std::string name;
    CoreExtern type;
  };
  struct Export {
    std::string name;
    CoreExtern type;
  };
  std::vector<Import> imports;
  std::vector<Export> exports;
};

namespace cmhost::validate {

using cmhost::CoreModuleType;

// Resource types are abstract: an abi::ResourceType object is the identity
// of one resource type *as seen by one component*: a definition, a
// (sub resource) import, or a type aliased out of an instance. Each
// instantiation binds these static identities to run-time resource types
// (fresh ones for definitions), so two instances of a component have
// distinct resource types while sharing one plan.

// ---- The plan ----

// Canonical options with every index resolved.
struct CanonOptions {
  abi::StringEncoding encoding = abi::StringEncoding::Utf8;
  std::optional<uint32_t> memory;       // core memory index
  abi::AddrWidth addr = abi::AddrWidth::I32;  // of that memory
  std::optional<uint32_t> realloc;      // core func index
  std::optional<uint32_t> post_return;  // core func index
  std::optional<uint32_t> callback;     // core func index
  bool async = false;
};

struct ComponentPlan;

namespace step {
// Each step appends to the run-time index space named in its comment. The run-
// time index spaces are the binary's own: index i of a run-time sort in an
// operand is the i-th definition of that sort, as in the binary. Types (sort
// Type) are static: no step appends to a type index space; steps that import,
// alias or export a type only bind or pass on resource types, and a
// SortIndex of sort Type indexes ComponentPlan::types. Core types are static
// too and never appear as operands.

// core module <- a module of Plan::modules (definition or outer alias), or,
// when `outer` is set, the run-time core module outer->index of the
// component instance outer->count levels out (0: this one). An enclosing
// component's module is only known at run time when it was imported (or
// aliased from an instance export); a nested component that outer-aliases
// it captures the enclosing instance where its step::Component ran.
struct CoreModule {
  uint32_t module = 0;
  std::optional<binary::AliasOuter> outer;
};
// core instance <- instantiate core module with (name, core instance) args
struct CoreInstantiate {
  uint32_t module = 0;
  std::vector<std::pair<std::string, uint32_t>> args;
};
// core instance <- a bag of core exports
struct CoreInlineInstance {
  struct Item {
    std::string name;
    binary::Sort sort;  // a core sort
    uint32_t index;
  };
  std::vector<Item> exports;
};
// core <sort> <- export `name` of core instance
struct CoreAliasExport {
  uint32_t instance = 0;
  std::string name;
  binary::Sort sort = binary::Sort::CoreFunc;
};
// <sort> <- the import `name` (resources: binds desc.resource, and, for an
// instance, the resource types of its exports)
struct Import {
  std::string name;
  ExternDesc desc;
};
// <sort> <- export `name` of component instance (resources: binds `resource`)
struct AliasExport {
  uint32_t instance = 0;
  std::string name;
  binary::Sort sort = binary::Sort::Func;
  abi::ResourceTypeRef resource;  // set when a resource type is aliased
};
// component <- a nested component (definition or outer alias), or, when
// `outer` is set (and `plan` null), the run-time component outer->index of
// the component instance outer->count levels out, as for CoreModule.
struct Component {
  std::shared_ptr<const ComponentPlan> plan;
  std::optional<binary::AliasOuter> outer;
};
// instance <- instantiate component with (name, item) args
struct Instantiate {
  uint32_t component = 0;
  std::vector<std::pair<std::string, binary::SortIndex>> args;
  // The instance's type as this component sees it. The resource types it
  // exports are fresh identities (one set per Instantiate step), which
  // the function types of its exports use: the runtime binds each to the
  // run-time resource type the new instance exports under that name.
  std::shared_ptr<const InstanceType> type;
};
// instance <- a bag of exports
struct InlineInstance {
  std::vector<std::pair<std::string, binary::SortIndex>> exports;
  std::shared_ptr<const InstanceType> type;  // its exports' types
};
// func <- canon lift of a core func
struct Lift {
  uint32_t core_func = 0;
  std::shared_ptr<const FuncType> type;
  CanonOptions options;
  std::shared_ptr<const abi::FunctionAbi> abi;  // compiled once, shared by every instance
};
// core func <- canon lower of a func
struct Lower {
  uint32_t func = 0;
  std::shared_ptr<const FuncType> type;
  CanonOptions options;
  binary::CoreFuncType core_type;  // the flattened signature of the new core func
  std::shared_ptr<const abi::FunctionAbi> abi;  // compiled once, shared by every instance
};
// (binds a run-time resource type) <- a resource type definition
struct ResourceDefinition {
  abi::ResourceTypeRef resource;
  binary::CoreValType rep = binary::CoreNumType::I32;
  std::optional<uint32_t> dtor;  // core func index
};
// core func <- resource.new / resource.drop / resource.rep
struct ResourceBuiltin {
  binary::CanonKind kind = binary::CanonKind::ResourceNew;
  abi::ResourceTypeRef resource;
  binary::CoreFuncType core_type;  // e.g. [rep] -> [i32] for resource.new
};
// core func <- any other canon built-in (async, threads, error-context),
// kept as decoded with its value types resolved where it has them
struct CanonBuiltin {
  binary::Canon canon;
  abi::TypeRef type;  // stream/future type, or task.return's result
  CanonOptions options;
  binary::CoreFuncType core_type;  // the built-in's signature (CanonicalABI.md)
};
// <sort> <- the export itself (exports introduce an index, like aliases)
struct Export {
  std::string name;
  binary::SortIndex target;
  // The export's type as the component's type gives it: an ascription may
  // name resource types of its own, which the runtime binds to the item's.
  ExternDesc desc;
};
// 🪙 value <- results of calling func with value args
struct Start {
  uint32_t func = 0;
  std::vector<uint32_t> args;
  uint32_t results = 0;
};
}  // namespace step

using Step = std::variant<step::CoreModule, step::CoreInstantiate, step::CoreInlineInstance,
                          step::CoreAliasExport, step::Import, step::AliasExport, step::Component,
                          step::Instantiate, step::InlineInstance, step::Lift, step::Lower,
                          step::ResourceDefinition, step::ResourceBuiltin, step::CanonBuiltin,
                          step::Export, step::Start>;

struct ComponentPlan {
  std::string name;  // from the name section, or "component"
  std::vector<Step> steps;
  ComponentType type;  // imports and exports, resolved
  // Byte offset of each step's definition, for messages.
  std::vector<size_t> step_offsets;
  // The component's type index space, resolved (every entry has sort Type);
  // operands of sort Type index it.
  std::vector<ExternDesc> types;
};

// A whole validated component: its plans and its core modules (byte ranges
// of the component bytes, the same module once even when aliased).
struct Plan {
  std::shared_ptr<const ComponentPlan> root;
  std::vector<binary::ByteRange> modules;
  // The type name an own or borrow type was written with (see
  // ComponentInfo::handle_name): handle -> (the handle, kept alive; its name).
  std::unordered_map<const abi::Type*, std::pair<abi::TypeRef, uint64_t>> handle_names;
};

// Validates `component` (decoded from `bytes`). Throws cmhost::Error
// (ErrorKind::Validate) with the byte offset and the reason.
Plan validate_component(const binary::Component& component, std::span<const uint8_t> bytes);

// A readable listing of a plan, one step per line, for debugging.
std::string to_string(const Plan& plan);

// Type-checking helpers for linking (the runtime checks what the host
// supplies for the root component's imports with these).

// Why `actual` is not a subtype of `expected`, or nullopt when it is.
// Resource types compare by identity, as they are; abstract resource types
// bound inside instance and component types are matched up as instantiation
// does. Functions compare exactly (as wasmtime does).
std::optional<std::string> subtype_mismatch(const ExternDesc& actual, const ExternDesc& expected);

// Why `args` cannot instantiate a component of type `type`: the one check
// both validation (of `instantiate` in a component) and linking (of what an
// embedder supplies) make. The component's imported resource types are
// bound to the arguments' of the same names first, then every import with
// an argument must be satisfied by it (imports without one are not checked
// here: the caller reports what is missing). This is the linker's form: an
// argument written with the component's own imported resources (a host
// function or stub that adopts the import's type) has them bound the same
// way (validation's own check, of `instantiate` within a component, does
// not do that).
struct ImportMismatch {
  std::string import;   // the import's name
  std::string why;
  ExternDesc expected;  // the import's type, with the bound resources
};
std::optional<ImportMismatch> instantiation_mismatch(const ComponentType& type,
                                                     const std::map<std::string, ExternDesc>& args);

// `desc` with its resource types replaced as `resources` maps them.
ExternDesc substitute_resources(const ExternDesc& desc,
                                const std::unordered_map<const abi::ResourceType*, abi::ResourceTypeRef>& resources);

// Component text (WAT-like) for types, e.g. `(func (param "x" u32) (result string))`.
std::string to_string(const CoreExtern& type);

}  // namespace cmhost::validate
