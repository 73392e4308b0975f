#include "instrument.hpp"

#include <algorithm>
#include <memory>
#include <optional>
#include <string>

#include "cmhost/error.hpp"
#include <wabt/binary-reader-ir.h>
#include <wabt/binary-reader-nop.h>
#include <wabt/binary-reader.h>
#include <wabt/binary-writer.h>
#include <wabt/cast.h>
#include <wabt/expr-visitor.h>
#include <wabt/ir.h>
#include <wabt/stream.h>
#include <wabt/validator.h>
#include "../wabt_support.hpp"

namespace cmhost::engine::wabt_backend {
namespace {

// wabt's IR writer and destructors recurse once per nested block (about 150
// bytes of stack a level), so a rewrite refuses deeper nesting than this. The
// interpreter's own loader is iterative and has no such limit.
constexpr unsigned kMaxRewrittenNesting = 10000;

wabt::ReadBinaryOptions read_options(const wabt::Features& features) {
  return wabt::ReadBinaryOptions(features, nullptr, /*read_debug_names=*/false, /*stop_on_first_error=*/true,
                                 /*fail_on_custom_section_error=*/false);
}

// What the code of a module does that the rewrites care about, read from the
// binary before any IR exists: the deepest block nesting in any function
// body, and whether any grows a memory or table. Malformed input is left to
// the loaders to report.
class CodeScan : public wabt::BinaryReaderNop {
 public:
  static CodeScan of(const uint8_t* bytes, size_t size, const wabt::Features& features) {
    CodeScan reader;
    wabt::ReadBinary(bytes, size, &reader, read_options(features));
    return reader;
  }
  unsigned deepest() const { return deepest_; }
  const GrowthSites& growth() const { return growth_; }

  bool OnError(const wabt::Error&) override { return true; }  // quietly
  wabt::Result BeginFunctionBody(wabt::Index, wabt::Offset) override {
    depth_ = 0;
    return wabt::Result::Ok;
  }
  wabt::Result OnBlockExpr(wabt::Type) override { return enter(); }
  wabt::Result OnLoopExpr(wabt::Type) override { return enter(); }
  wabt::Result OnIfExpr(wabt::Type) override { return enter(); }
  wabt::Result OnTryExpr(wabt::Type) override { return enter(); }
  wabt::Result OnEndExpr() override { return leave(); }
  wabt::Result OnDelegateExpr(wabt::Index) override { return leave(); }  // ends its try
  wabt::Result OnMemoryGrowExpr(wabt::Index memory) override {
    if (std::find(growth_.memories.begin(), growth_.memories.end(), memory) == growth_.memories.end())
      growth_.memories.push_back(memory);
    return wabt::Result::Ok;
  }
  wabt::Result OnTableGrowExpr(wabt::Index) override {
    growth_.tables = true;
    return wabt::Result::Ok;
  }

 private:
  wabt::Result enter() {
    deepest_ = std::max(deepest_, ++depth_);
    return wabt::Result::Ok;
  }
  wabt::Result leave() {
    if (depth_ > 0) --depth_;
    return wabt::Result::Ok;
  }
  unsigned depth_ = 0;
  unsigned deepest_ = 0;
  GrowthSites growth_;
};

// What metering has to rewrite, found with wabt's (non-recursive) visitor:
// references to globals and functions, whose indices shift when the imports
// are added, loops, which get a fuel check at their header, and whether the
// code makes calls.
class MeteringSites : public wabt::ExprVisitor::DelegateNop {
 public:
  wabt::Result OnGlobalGetExpr(wabt::GlobalGetExpr* expr) override { return global_ref(expr->var); }
  wabt::Result OnGlobalSetExpr(wabt::GlobalSetExpr* expr) override { return global_ref(expr->var); }
  wabt::Result BeginLoopExpr(wabt::LoopExpr* expr) override {
    loops.push_back(expr);
    return wabt::Result::Ok;
  }
  wabt::Result OnCallExpr(wabt::CallExpr* expr) override { return call(&expr->var); }
  wabt::Result OnCallIndirectExpr(wabt::CallIndirectExpr*) override { return call(nullptr); }
  wabt::Result OnCallRefExpr(wabt::CallRefExpr*) override { return call(nullptr); }
  wabt::Result OnReturnCallExpr(wabt::ReturnCallExpr* expr) override { return call(&expr->var); }
  wabt::Result OnReturnCallIndirectExpr(wabt::ReturnCallIndirectExpr*) override { return call(nullptr); }
  wabt::Result OnRefFuncExpr(wabt::RefFuncExpr* expr) override {
    func_refs.push_back(&expr->var);
    return wabt::Result::Ok;
  }

  // Returns whether `exprs` contains a call.
  bool visit(wabt::ExprList& exprs) {
    makes_calls_ = false;
    wabt::ExprVisitor visitor(this);
    visitor.VisitExprList(exprs);
    return makes_calls_;
  }

  std::vector<wabt::Var*> global_refs;
  std::vector<wabt::Var*> func_refs;
  std::vector<wabt::LoopExpr*> loops;
  // Functions whose entry is metered: those that make calls. Any unbounded
  // run passes a loop header or a call cycle infinitely often, and a call
  // cycle runs through functions that call, so leaf functions (the typical
  // small export) are left as they are.
  std::vector<wabt::Func*> calling_funcs;

 private:
  wabt::Result global_ref(wabt::Var& var) {
    global_refs.push_back(&var);
    return wabt::Result::Ok;
  }
  wabt::Result call(wabt::Var* callee) {
    if (callee) func_refs.push_back(callee);
    makes_calls_ = true;
    return wabt::Result::Ok;
  }

  bool makes_calls_ = false;
};

MeteringSites find_sites(wabt::Module& module) {
  MeteringSites sites;
  for (size_t i = module.num_func_imports; i < module.funcs.size(); ++i) {
    wabt::Func* func = module.funcs[i];
    if (sites.visit(func->exprs)) sites.calling_funcs.push_back(func);
  }
  // Constant expressions may read imported globals too.
  for (size_t i = module.num_global_imports; i < module.globals.size(); ++i) {
    sites.visit(module.globals[i]->init_expr);
  }
  for (wabt::ElemSegment* segment : module.elem_segments) {
    sites.visit(segment->offset);
    for (wabt::ExprList& expr : segment->elem_exprs) sites.visit(expr);
  }
  for (wabt::DataSegment* segment : module.data_segments) sites.visit(segment->offset);
  return sites;
}

// Moves every reference at or above `index` of one index space up by one
// (the code's, the exports' and, for functions, the start's), making room
// for an import there.
void make_room(wabt::Module& module, const std::vector<wabt::Var*>& refs, wabt::ExternalKind kind, wabt::Index index) {
  auto shift = [index](wabt::Var& var) {
    if (var.is_index() && var.index() >= index) var.set_index(var.index() + 1);
  };
  for (wabt::Var* var : refs) shift(*var);
  for (wabt::Export* export_ : module.exports) {
    if (export_->kind == kind) shift(export_->var);
  }
  if (kind == wabt::ExternalKind::Func)
    for (wabt::Var* start : module.starts) shift(*start);
}

// Appends the fuel import after the module's other imports and returns its
// global index. Imported globals come first in the index space, so the
// module's own globals move up by one.
wabt::Index add_fuel_import(wabt::Module& module, const MeteringSites& sites) {
  const wabt::Index fuel = module.num_global_imports;
  make_room(module, sites.global_refs, wabt::ExternalKind::Global, fuel);

  auto import = std::make_unique<wabt::GlobalImport>();
  import->module_name = kEngineImportModule;
  import->field_name = engine_import_name(EngineImport::Fuel);
  import->global.type = wabt::Type::I64;
  import->global.mutable_ = true;
  module.AppendField(std::make_unique<wabt::ImportModuleField>(std::move(import)));
  // AppendField lists the new global last; the writer expects imports first.
  std::rotate(module.globals.begin() + fuel, module.globals.end() - 1, module.globals.end());
  return fuel;
}

// The index of a function type with these parameters and results, added
// when the module has none.
wabt::Index func_type_index(wabt::Module& module, const wabt::TypeVector& params, const wabt::TypeVector& results) {
  for (wabt::Index i = 0; i < module.types.size(); ++i) {
    const auto* type = wabt::dyn_cast<wabt::FuncType>(module.types[i]);
    if (type && type->sig.param_types == params && type->sig.result_types == results) return i;
  }
  auto field = std::make_unique<wabt::TypeModuleField>();
  auto type = std::make_unique<wabt::FuncType>();
  type->sig.param_types = params;
  type->sig.result_types = results;
  field->type = std::move(type);
  module.AppendField(std::move(field));
  return static_cast<wabt::Index>(module.types.size() - 1);
}

// Appends an engine function import after the module's other function
// imports and returns its function index; the module's own functions move
// up by one.
wabt::Index add_func_import(wabt::Module& module, const MeteringSites& sites, EngineImport which,
                            const wabt::TypeVector& params, const wabt::TypeVector& results) {
  const wabt::Index index = module.num_func_imports;
  make_room(module, sites.func_refs, wabt::ExternalKind::Func, index);

  const wabt::Index type_index = func_type_index(module, params, results);
  auto import = std::make_unique<wabt::FuncImport>();
  import->module_name = kEngineImportModule;
  import->field_name = engine_import_name(which);
  import->func.decl.has_func_type = true;
  import->func.decl.type_var = wabt::Var(type_index, wabt::Location());
  import->func.decl.sig.param_types = params;
  import->func.decl.sig.result_types = results;
  module.AppendField(std::make_unique<wabt::ImportModuleField>(std::move(import)));
  // AppendField lists the new function last; imports come first.
  std::rotate(module.funcs.begin() + index, module.funcs.end() - 1, module.funcs.end());
  return index;
}

// fuel -= 1; if (fuel < 0) refill()
wabt::ExprList fuel_check(wabt::Index fuel, wabt::Index refill) {
  const wabt::Location nowhere;
  wabt::ExprList check;
  check.push_back(std::make_unique<wabt::GlobalGetExpr>(wabt::Var(fuel, nowhere)));
  check.push_back(std::make_unique<wabt::ConstExpr>(wabt::Const::I64(1)));
  check.push_back(std::make_unique<wabt::BinaryExpr>(wabt::Opcode::I64Sub));
  check.push_back(std::make_unique<wabt::GlobalSetExpr>(wabt::Var(fuel, nowhere)));
  check.push_back(std::make_unique<wabt::GlobalGetExpr>(wabt::Var(fuel, nowhere)));
  check.push_back(std::make_unique<wabt::ConstExpr>(wabt::Const::I64(0)));
  check.push_back(std::make_unique<wabt::CompareExpr>(wabt::Opcode::I64LtS));
  auto slice_spent = std::make_unique<wabt::IfExpr>();
  slice_spent->true_.exprs.push_back(std::make_unique<wabt::CallExpr>(wabt::Var(refill, nowhere)));
  check.push_back(std::move(slice_spent));
  return check;
}

void prepend_fuel_check(wabt::ExprList& exprs, wabt::Index fuel, wabt::Index refill) {
  wabt::ExprList check = fuel_check(fuel, refill);
  exprs.splice(exprs.begin(), check);
}

// Every memory.grow and table.grow in the module's function bodies, with the
// list that holds it. A walk with its own stack: bodies nest deeply.
struct GrowSite {
  wabt::ExprList* list;
  wabt::ExprList::iterator at;
  EngineImport guard;
  wabt::Index object;  // the memory or table grown
};

std::vector<GrowSite> find_grows(wabt::Module& module) {
  std::vector<GrowSite> sites;
  std::vector<wabt::ExprList*> lists;
  for (size_t i = module.num_func_imports; i < module.funcs.size(); ++i) lists.push_back(&module.funcs[i]->exprs);
  while (!lists.empty()) {
    wabt::ExprList* list = lists.back();
    lists.pop_back();
    for (auto it = list->begin(); it != list->end(); ++it) {
      switch (it->type()) {
        case wabt::ExprType::Block: lists.push_back(&wabt::cast<wabt::BlockExpr>(&*it)->block.exprs); break;
        case wabt::ExprType::Loop: lists.push_back(&wabt::cast<wabt::LoopExpr>(&*it)->block.exprs); break;
        case wabt::ExprType::If: {
          auto* if_ = wabt::cast<wabt::IfExpr>(&*it);
          lists.push_back(&if_->true_.exprs);
          lists.push_back(&if_->false_);
          break;
        }
        case wabt::ExprType::Try: {
          auto* try_ = wabt::cast<wabt::TryExpr>(&*it);
          lists.push_back(&try_->block.exprs);
          for (wabt::Catch& catch_ : try_->catches) lists.push_back(&catch_.exprs);
          break;
        }
        case wabt::ExprType::MemoryGrow: {
          const wabt::Index memory = wabt::cast<wabt::MemoryGrowExpr>(&*it)->memidx.index();
          const bool is64 = memory < module.memories.size() && module.memories[memory]->page_limits.is_64;
          sites.push_back({list, it, is64 ? EngineImport::MemoryGrow64 : EngineImport::MemoryGrow32, memory});
          break;
        }
        case wabt::ExprType::TableGrow: {
          const wabt::Index table = wabt::cast<wabt::TableGrowExpr>(&*it)->var.index();
          const bool externs = table < module.tables.size() && module.tables[table]->elem_type == wabt::Type::ExternRef;
          sites.push_back({list, it, externs ? EngineImport::TableGrowExternref : EngineImport::TableGrowFuncref, table});
          break;
        }
        default: break;
      }
    }
  }
  return sites;
}

// The parameters and results of a growth guard.
void guard_signature(EngineImport guard, wabt::TypeVector& params, wabt::TypeVector& results) {
  using wabt::Type;
  switch (guard) {
    case EngineImport::MemoryGrow64: params = {Type::I64, Type::I32}, results = {Type::I64}; break;
    case EngineImport::TableGrowFuncref: params = {Type::FuncRef, Type::I32, Type::I32}, results = {Type::I32}; break;
    case EngineImport::TableGrowExternref: params = {Type::ExternRef, Type::I32, Type::I32}, results = {Type::I32}; break;
    default: params = {Type::I32, Type::I32}, results = {Type::I32}; break;
  }
}

}  // namespace

const char* engine_import_name(EngineImport import) {
  switch (import) {
    case EngineImport::Refill: return "refill";
    case EngineImport::MemoryGrow32: return "memory.grow";
    case EngineImport::MemoryGrow64: return "memory.grow64";
    case EngineImport::TableGrowFuncref: return "table.grow-funcref";
    case EngineImport::TableGrowExternref: return "table.grow-externref";
    case EngineImport::Fuel: return "fuel";
  }
  return "?";
}

GrowthSites find_growth(const uint8_t* bytes, size_t size, const wabt::Features& features) {
  return CodeScan::of(bytes, size, features).growth();
}

InstrumentedModule instrument(const uint8_t* bytes, size_t size, const wabt::Features& features,
                              Instrumentation what) {
  const unsigned nesting = CodeScan::of(bytes, size, features).deepest();
  if (nesting > kMaxRewrittenNesting) {
    throw Error(ErrorKind::Validate, "core module nests blocks " + std::to_string(nesting) + " deep; " +
                                         (what.meter ? "metering" : "growth checks") + " support at most " +
                                         std::to_string(kMaxRewrittenNesting) + " (implementation limit)");
  }

  wabt::Module module;
  wabt::Errors errors;
  if (wabt::Failed(wabt::ReadBinaryIr("module", bytes, size, read_options(features), &errors, &module))) {
    throw Error(ErrorKind::Decode, "malformed core module: " + describe(errors));
  }
  if (wabt::Failed(wabt::ValidateModule(&module, &errors, wabt::ValidateOptions(features)))) {
    throw Error(ErrorKind::Validate, "invalid core module: " + describe(errors));
  }

  InstrumentedModule out;
  MeteringSites sites = find_sites(module);
  const std::vector<GrowSite> grows = what.guard_growth ? find_grows(module) : std::vector<GrowSite>{};
  // Function imports first (each added after the last), then the global.
  std::optional<wabt::Index> refill;
  if (what.meter) {
    refill = add_func_import(module, sites, EngineImport::Refill, {}, {});
    out.imports.push_back(EngineImport::Refill);
  }
  wabt::Index guard_index[4] = {};
  bool guard_used[4] = {};
  for (const GrowSite& site : grows) guard_used[static_cast<int>(site.guard) - 1] = true;
  for (int g = 0; g < 4; ++g) {
    if (!guard_used[g]) continue;
    const auto guard = static_cast<EngineImport>(g + 1);
    wabt::TypeVector params, results;
    guard_signature(guard, params, results);
    guard_index[g] = add_func_import(module, sites, guard, params, results);
    out.imports.push_back(guard);
  }
  if (what.meter) {
    const wabt::Index fuel = add_fuel_import(module, sites);
    out.imports.push_back(EngineImport::Fuel);
    for (wabt::Func* func : sites.calling_funcs) prepend_fuel_check(func->exprs, fuel, *refill);
    for (wabt::LoopExpr* loop : sites.loops) prepend_fuel_check(loop->block.exprs, fuel, *refill);
  }
  // memory.grow M  ->  i32.const M; call guard   (the operands stay on the stack)
  const wabt::Location nowhere;
  for (const GrowSite& site : grows) {
    const auto next = site.list->erase(site.at);
    site.list->insert(next, std::make_unique<wabt::ConstExpr>(wabt::Const::I32(site.object)));
    site.list->insert(next, std::make_unique<wabt::CallExpr>(
                                wabt::Var(guard_index[static_cast<int>(site.guard) - 1], nowhere)));
  }

  wabt::MemoryStream stream;
  const wabt::WriteBinaryOptions write_options(features, /*canonicalize_lebs=*/true,
                                               /*relocatable=*/false, /*write_debug_names=*/false);
  if (wabt::Failed(wabt::WriteBinaryModule(&stream, &module, write_options))) {
    throw Error(ErrorKind::Validate, "core module could not be re-encoded for instrumentation");
  }
  out.bytes = std::move(stream.output_buffer().data);
  return out;
}

}  // namespace cmhost::engine::wabt_backend
