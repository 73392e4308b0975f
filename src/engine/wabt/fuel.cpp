#include "fuel.hpp"

#include <algorithm>
#include <memory>
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
#include "wabt_support.hpp"

namespace cmhost::engine::wabt_backend {
namespace {

// wabt's IR writer and destructors recurse once per nested block (about 150
// bytes of stack a level), so metering refuses deeper nesting than this. The
// interpreter's own loader is iterative and has no such limit.
constexpr unsigned kMaxMeteredNesting = 10000;

// The deepest block nesting in any function body, measured on the binary
// before any IR exists. Malformed input is left to ReadBinaryIr to report.
class NestingDepth : public wabt::BinaryReaderNop {
 public:
  static unsigned of(const uint8_t* bytes, size_t size, const wabt::ReadBinaryOptions& options) {
    NestingDepth reader;
    wabt::ReadBinary(bytes, size, &reader, options);
    return reader.deepest_;
  }

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

// Appends the fuel import after the module's other imports and returns its
// global index. Imported globals come first in the index space, so the
// module's own globals move up by one.
wabt::Index add_fuel_import(wabt::Module& module, const MeteringSites& sites) {
  const wabt::Index fuel = module.num_global_imports;
  auto shift = [fuel](wabt::Var& var) {
    if (var.is_index() && var.index() >= fuel) var.set_index(var.index() + 1);
  };
  for (wabt::Var* var : sites.global_refs) shift(*var);
  for (wabt::Export* export_ : module.exports) {
    if (export_->kind == wabt::ExternalKind::Global) shift(export_->var);
  }

  auto import = std::make_unique<wabt::GlobalImport>();
  import->module_name = kFuelImportModule;
  import->field_name = kFuelImportName;
  import->global.type = wabt::Type::I64;
  import->global.mutable_ = true;
  module.AppendField(std::make_unique<wabt::ImportModuleField>(std::move(import)));
  // AppendField lists the new global last; the writer expects imports first.
  std::rotate(module.globals.begin() + fuel, module.globals.end() - 1, module.globals.end());
  return fuel;
}

// Appends the refill import `() -> ()` after the module's other function
// imports and returns its function index; the module's own functions move
// up by one.
wabt::Index add_refill_import(wabt::Module& module, const MeteringSites& sites) {
  const wabt::Index refill = module.num_func_imports;
  auto shift = [refill](wabt::Var& var) {
    if (var.is_index() && var.index() >= refill) var.set_index(var.index() + 1);
  };
  for (wabt::Var* var : sites.func_refs) shift(*var);
  for (wabt::Export* export_ : module.exports) {
    if (export_->kind == wabt::ExternalKind::Func) shift(export_->var);
  }
  for (wabt::Var* start : module.starts) shift(*start);

  wabt::Index type_index = static_cast<wabt::Index>(module.types.size());
  for (wabt::Index i = 0; i < module.types.size(); ++i) {
    const auto* type = wabt::dyn_cast<wabt::FuncType>(module.types[i]);
    if (type && type->sig.param_types.empty() && type->sig.result_types.empty()) {
      type_index = i;
      break;
    }
  }
  if (type_index == module.types.size()) {
    auto field = std::make_unique<wabt::TypeModuleField>();
    field->type = std::make_unique<wabt::FuncType>();
    module.AppendField(std::move(field));
  }

  auto import = std::make_unique<wabt::FuncImport>();
  import->module_name = kFuelImportModule;
  import->field_name = kRefillImportName;
  import->func.decl.has_func_type = true;
  import->func.decl.type_var = wabt::Var(type_index, wabt::Location());
  module.AppendField(std::make_unique<wabt::ImportModuleField>(std::move(import)));
  // AppendField lists the new function last; imports come first.
  std::rotate(module.funcs.begin() + refill, module.funcs.end() - 1, module.funcs.end());
  return refill;
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

}  // namespace

std::vector<uint8_t> add_fuel_metering(const uint8_t* bytes, size_t size, const wabt::Features& features) {
  const wabt::ReadBinaryOptions read_options(features, nullptr, /*read_debug_names=*/false,
                                             /*stop_on_first_error=*/true,
                                             /*fail_on_custom_section_error=*/false);
  const unsigned nesting = NestingDepth::of(bytes, size, read_options);
  if (nesting > kMaxMeteredNesting) {
    throw Error(ErrorKind::Validate, "core module nests blocks " + std::to_string(nesting) +
                                         " deep; metering supports at most " +
                                         std::to_string(kMaxMeteredNesting) + " (implementation limit)");
  }

  wabt::Module module;
  wabt::Errors errors;
  if (wabt::Failed(wabt::ReadBinaryIr("module", bytes, size, read_options, &errors, &module))) {
    throw Error(ErrorKind::Decode, "malformed core module: " + describe(errors));
  }
  if (wabt::Failed(wabt::ValidateModule(&module, &errors, wabt::ValidateOptions(features)))) {
    throw Error(ErrorKind::Validate, "invalid core module: " + describe(errors));
  }

  MeteringSites sites = find_sites(module);
  const wabt::Index refill = add_refill_import(module, sites);
  const wabt::Index fuel = add_fuel_import(module, sites);
  for (wabt::Func* func : sites.calling_funcs) prepend_fuel_check(func->exprs, fuel, refill);
  for (wabt::LoopExpr* loop : sites.loops) prepend_fuel_check(loop->block.exprs, fuel, refill);

  wabt::MemoryStream stream;
  const wabt::WriteBinaryOptions write_options(features, /*canonicalize_lebs=*/true,
                                               /*relocatable=*/false, /*write_debug_names=*/false);
  if (wabt::Failed(wabt::WriteBinaryModule(&stream, &module, write_options))) {
    throw Error(ErrorKind::Validate, "core module could not be re-encoded for metering");
  }
  return std::move(stream.output_buffer().data);
}

}  // namespace cmhost::engine::wabt_backend
