// Tests of validation: the plans of valid components, and the errors of
// invalid ones. The components are the WAT fixtures of
// fixtures/components.wat, assembled into fixtures.hpp by
// fixtures/generate.mjs with the pinned jco.
#include <gtest/gtest.h>

#include <set>
#include <string>
#include <vector>

#include "binary/binary.hpp"
#include "cmhost/error.hpp"
#include "validate/validate.hpp"
#include "fixtures.hpp"

namespace cmhost::validate {
namespace {

template <size_t N>
Plan validate(const uint8_t (&bytes)[N]) {
  const std::span<const uint8_t> span(bytes, N);
  return validate_component(binary::decode_component(span), span);
}

// The message of the Validate error the fixture must raise.
template <size_t N>
std::string error_of(const uint8_t (&bytes)[N]) {
  try {
    validate(bytes);
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), ErrorKind::Validate) << e.what();
    return e.what();
  }
  ADD_FAILURE() << "expected a validation error";
  return "";
}

template <typename T>
std::vector<const T*> steps_of(const ComponentPlan& plan) {
  std::vector<const T*> out;
  for (const Step& s : plan.steps)
    if (auto p = std::get_if<T>(&s)) out.push_back(p);
  return out;
}

std::string detail_text(const binary::CoreFuncType& type) {
  CoreExtern e;
  e.sort = binary::Sort::CoreFunc;
  e.func = type;
  return to_string(e);
}

const NamedExtern& find(const std::vector<NamedExtern>& list, const std::string& name) {
  for (const auto& e : list)
    if (e.name == name) return e;
  throw std::runtime_error("no extern named " + name);
}

// ---- Plans of valid components ----

TEST(ValidatePlan, LiftedFunctionSteps) {
  const Plan plan = validate(fixtures::lift_u32);
  ASSERT_TRUE(plan.root);
  const ComponentPlan& root = *plan.root;
  EXPECT_EQ(root.name, "top");
  ASSERT_EQ(plan.modules.size(), 1u);
  ASSERT_EQ(root.steps.size(), 5u);
  EXPECT_TRUE(std::holds_alternative<step::CoreModule>(root.steps[0]));
  EXPECT_TRUE(std::holds_alternative<step::CoreInstantiate>(root.steps[1]));
  const auto& alias = std::get<step::CoreAliasExport>(root.steps[2]);
  EXPECT_EQ(alias.name, "f");
  EXPECT_EQ(alias.sort, binary::Sort::CoreFunc);
  const auto& lift = std::get<step::Lift>(root.steps[3]);
  EXPECT_EQ(lift.core_func, 0u);
  ASSERT_EQ(lift.type->params.size(), 1u);
  EXPECT_EQ(lift.type->param_names[0], "x");
  EXPECT_EQ(lift.type->params[0]->kind(), abi::TypeKind::U32);
  EXPECT_EQ(lift.type->result->kind(), abi::TypeKind::U32);
  const auto& exported = std::get<step::Export>(root.steps[4]);
  EXPECT_EQ(exported.name, "f");
  EXPECT_EQ(exported.target.sort, binary::Sort::Func);
  EXPECT_EQ(exported.target.index, 0u);
  ASSERT_EQ(root.step_offsets.size(), root.steps.size());
  ASSERT_EQ(root.type.exports.size(), 1u);
  EXPECT_EQ(root.type.exports[0].desc.sort, binary::Sort::Func);
  EXPECT_EQ(to_string(root.type.exports[0].desc), "(func (param \"x\" u32) (result u32))");
}

TEST(ValidatePlan, CoreInstantiationArguments) {
  const Plan plan = validate(fixtures::core_linking);
  const auto instantiations = steps_of<step::CoreInstantiate>(*plan.root);
  ASSERT_EQ(instantiations.size(), 3u);
  EXPECT_TRUE(instantiations[0]->args.empty());
  ASSERT_EQ(instantiations[1]->args.size(), 1u);
  EXPECT_EQ(instantiations[1]->args[0], (std::pair<std::string, uint32_t>{"a", 0}));
  EXPECT_EQ(instantiations[2]->args[0], (std::pair<std::string, uint32_t>{"a", 2}));
  const auto bags = steps_of<step::CoreInlineInstance>(*plan.root);
  ASSERT_EQ(bags.size(), 1u);
  ASSERT_EQ(bags[0]->exports.size(), 1u);
  EXPECT_EQ(bags[0]->exports[0].name, "one");
  EXPECT_EQ(bags[0]->exports[0].sort, binary::Sort::CoreFunc);
  EXPECT_EQ(bags[0]->exports[0].index, 0u);
  const std::string text = to_string(plan);
  EXPECT_NE(text.find("core instance 1 = instantiate module 1 with (\"a\", core instance 0)"),
            std::string::npos)
      << text;
  EXPECT_NE(text.find("core instance 2 = exports (\"one\", core func 0)"), std::string::npos) << text;
}

TEST(ValidatePlan, CanonOptionsAreResolved) {
  const Plan plan = validate(fixtures::strings_with_libc);
  const ComponentPlan& root = *plan.root;
  const auto lowers = steps_of<step::Lower>(root);
  ASSERT_EQ(lowers.size(), 1u);
  EXPECT_EQ(lowers[0]->func, 0u);
  EXPECT_EQ(lowers[0]->options.memory, 0u);
  EXPECT_EQ(lowers[0]->options.realloc, 0u);
  EXPECT_EQ(lowers[0]->options.encoding, abi::StringEncoding::Utf8);
  EXPECT_EQ(lowers[0]->options.addr, abi::AddrWidth::I32);
  EXPECT_EQ(detail_text(lowers[0]->core_type), "(func (param i32 i32))");
  const auto lifts = steps_of<step::Lift>(root);
  ASSERT_EQ(lifts.size(), 1u);
  EXPECT_EQ(lifts[0]->core_func, 2u);
  EXPECT_EQ(lifts[0]->options.memory, 1u);
  EXPECT_EQ(lifts[0]->options.realloc, 3u);
  EXPECT_FALSE(lifts[0]->options.post_return);
  EXPECT_EQ(plan.modules.size(), 2u);
  const NamedExtern& logging = find(root.type.imports, "logging");
  EXPECT_EQ(to_string(logging.desc), "(instance (export \"log\" (func (param \"msg\" string))))");
  const auto imports = steps_of<step::Import>(root);
  ASSERT_EQ(imports.size(), 1u);
  EXPECT_EQ(imports[0]->name, "logging");
  EXPECT_EQ(imports[0]->desc.sort, binary::Sort::Instance);
}

TEST(ValidatePlan, SpilledAndFlattenedSignatures) {
  // 17 flat parameters are passed through memory: the core function takes
  // one pointer; a lowered import's signature is what the module imports.
  EXPECT_NO_THROW(validate(fixtures::spilled_params));
  EXPECT_NO_THROW(validate(fixtures::lower_signature_used));
}

TEST(ValidatePlan, LocalResourceDefinitionAndBuiltins) {
  const Plan plan = validate(fixtures::resources_local);
  const ComponentPlan& root = *plan.root;
  const auto definitions = steps_of<step::ResourceDefinition>(root);
  ASSERT_EQ(definitions.size(), 1u);
  const abi::ResourceTypeRef resource = definitions[0]->resource;
  EXPECT_EQ(resource->name, "thing");  // the name it is exported under
  EXPECT_EQ(std::get<binary::CoreNumType>(definitions[0]->rep), binary::CoreNumType::I32);
  EXPECT_EQ(definitions[0]->dtor, 0u);
  const auto builtins = steps_of<step::ResourceBuiltin>(root);
  ASSERT_EQ(builtins.size(), 3u);
  EXPECT_EQ(builtins[0]->kind, binary::CanonKind::ResourceNew);
  EXPECT_EQ(builtins[1]->kind, binary::CanonKind::ResourceRep);
  EXPECT_EQ(builtins[2]->kind, binary::CanonKind::ResourceDrop);
  for (const auto* b : builtins) EXPECT_EQ(b->resource, resource);
  EXPECT_EQ(detail_text(builtins[0]->core_type), "(func (param i32) (result i32))");
  EXPECT_EQ(detail_text(builtins[2]->core_type), "(func (param i32))");
  const NamedExtern& thing = find(root.type.exports, "thing");
  EXPECT_EQ(thing.desc.resource, resource);
  const NamedExtern& ctor = find(root.type.exports, "[constructor]thing");
  EXPECT_EQ(ctor.desc.func->result->resource(), resource);
  ASSERT_EQ(root.type.defined_resources.size(), 1u);
  EXPECT_EQ(root.type.defined_resources[0], resource);
  EXPECT_TRUE(root.type.imported_resources.empty());
}

TEST(ValidatePlan, ImportedResourcesAreBoundByImportsAndAliases) {
  const Plan plan = validate(fixtures::resource_imports);
  const ComponentPlan& root = *plan.root;
  ASSERT_EQ(root.type.imported_resources.size(), 2u);
  const auto imports = steps_of<step::Import>(root);
  ASSERT_EQ(imports.size(), 2u);
  const abi::ResourceTypeRef file = imports[0]->desc.instance->exports[0].desc.resource;
  const abi::ResourceTypeRef r = imports[1]->desc.resource;
  ASSERT_TRUE(file && r);
  EXPECT_NE(file, r);
  EXPECT_EQ(file->name, "file");
  EXPECT_EQ(r->name, "r");
  EXPECT_EQ(root.type.imported_resources[0], file);
  EXPECT_EQ(root.type.imported_resources[1], r);
  // The function in the instance type uses the same (fresh) identity.
  EXPECT_EQ(imports[0]->desc.instance->exports[1].desc.func->result->resource(), file);
  const auto aliases = steps_of<step::AliasExport>(root);
  ASSERT_EQ(aliases.size(), 1u);
  EXPECT_EQ(aliases[0]->resource, file);
  const auto drops = steps_of<step::ResourceBuiltin>(root);
  ASSERT_EQ(drops.size(), 2u);
  EXPECT_EQ(drops[0]->resource, file);
  EXPECT_EQ(drops[1]->resource, r);
  // The type index space: the instance type, r (import), file (alias).
  ASSERT_EQ(root.types.size(), 3u);
  EXPECT_TRUE(root.types[0].instance);
  EXPECT_EQ(root.types[1].resource, r);
  EXPECT_EQ(root.types[2].resource, file);
}

TEST(ValidatePlan, InstantiationSubstitutesResourceArguments) {
  EXPECT_NO_THROW(validate(fixtures::instantiate_substitutes));
}

TEST(ValidatePlan, EveryInstanceHasFreshResourceTypes) {
  const Plan plan = validate(fixtures::fresh_per_instance);
  const auto aliases = steps_of<step::AliasExport>(*plan.root);
  ASSERT_EQ(aliases.size(), 4u);
  const auto c1r1 = aliases[0]->resource, c1r2 = aliases[1]->resource,
             c2r1 = aliases[2]->resource, again = aliases[3]->resource;
  EXPECT_NE(c1r1, c1r2);
  EXPECT_NE(c1r1, c2r1);
  EXPECT_EQ(c1r1, again);  // the same instance's type, aliased twice
  // The Instantiate steps carry the instance types with those identities.
  const auto instantiations = steps_of<step::Instantiate>(*plan.root);
  ASSERT_EQ(instantiations.size(), 2u);
  EXPECT_EQ(instantiations[0]->type->find("r1")->desc.resource, c1r1);
  EXPECT_EQ(instantiations[0]->type->find("r2")->desc.resource, c1r2);
  EXPECT_EQ(instantiations[1]->type->find("r1")->desc.resource, c2r1);
  const auto children = steps_of<step::Component>(*plan.root);
  ASSERT_EQ(children.size(), 1u);
  const auto& child_type = children[0]->plan->type;
  ASSERT_EQ(child_type.defined_resources.size(), 2u);
  EXPECT_NE(child_type.defined_resources[0], c1r1);
  EXPECT_EQ(c1r1->name, "r1");
}

TEST(ValidatePlan, ExportedResourceNamesTheFunctionsThatUseIt) {
  const Plan plan = validate(fixtures::exported_resource_type);
  const ComponentType& type = plan.root->type;
  const NamedExtern& r = find(type.exports, "r");
  const NamedExtern& make = find(type.exports, "make");
  EXPECT_EQ(make.desc.func->result->kind(), abi::TypeKind::Own);
  EXPECT_EQ(make.desc.func->result->resource(), r.desc.resource);
  EXPECT_EQ(type.defined_resources.size(), 1u);
}

TEST(ValidatePlan, SubResourceAscriptionHidesTheIdentity) {
  const Plan plan = validate(fixtures::ascribed_sub_resource);
  const ComponentPlan& root = *plan.root;
  const NamedExtern& r1 = find(root.type.exports, "r1");
  const NamedExtern& r2 = find(root.type.exports, "r2");
  EXPECT_NE(r1.desc.resource, r2.desc.resource);
  EXPECT_EQ(root.type.defined_resources.size(), 2u);
  // Inside, the export's index still is the defined resource.
  const auto exports = steps_of<step::Export>(root);
  ASSERT_EQ(exports.size(), 2u);
  EXPECT_EQ(root.types.at(exports[1]->target.index).resource, r1.desc.resource);
  EXPECT_EQ(root.types.back().resource, r1.desc.resource);
}

TEST(ValidatePlan, NestedComponentsShareModules) {
  const Plan plan = validate(fixtures::nested_and_outer);
  ASSERT_EQ(plan.modules.size(), 1u);  // aliased, not copied
  const auto children = steps_of<step::Component>(*plan.root);
  ASSERT_EQ(children.size(), 1u);
  const ComponentPlan& inner = *children[0]->plan;
  EXPECT_EQ(inner.name, "inner");
  const auto modules = steps_of<step::CoreModule>(inner);
  ASSERT_EQ(modules.size(), 1u);
  EXPECT_EQ(modules[0]->module, 0u);
  EXPECT_FALSE(modules[0]->outer);
  EXPECT_EQ(steps_of<step::Instantiate>(*plan.root).size(), 2u);
}

TEST(ValidatePlan, OuterAliasOfAnImportedModuleIsResolvedAtRunTime) {
  const Plan plan = validate(fixtures::outer_imported_module);
  EXPECT_TRUE(plan.modules.empty());
  const auto children = steps_of<step::Component>(*plan.root);
  ASSERT_EQ(children.size(), 1u);
  const auto modules = steps_of<step::CoreModule>(*children[0]->plan);
  ASSERT_EQ(modules.size(), 1u);
  ASSERT_TRUE(modules[0]->outer);
  EXPECT_EQ(modules[0]->outer->count, 1u);
  EXPECT_EQ(modules[0]->outer->index, 0u);
  const NamedExtern& inner = find(plan.root->type.exports, "inner");
  EXPECT_EQ(to_string(inner.desc), "(component (export \"get\" (func (result u32))))");
  EXPECT_NE(to_string(plan).find("alias outer 1 core module 0"), std::string::npos);
}

TEST(ValidatePlan, SubtypingAllowsMoreExportsAndFewerImports) {
  EXPECT_NO_THROW(validate(fixtures::instance_subtyping));
  EXPECT_NO_THROW(validate(fixtures::component_subtyping));
}

TEST(ValidatePlan, ValueTypesAreResolved) {
  const Plan plan = validate(fixtures::values_of_every_kind);
  const ComponentType& type = plan.root->type;
  const abi::TypeRef tup = find(type.exports, "tup").desc.value;
  ASSERT_EQ(tup->kind(), abi::TypeKind::Tuple);
  EXPECT_EQ(tup->fields()[0].type->kind(), abi::TypeKind::Record);
  EXPECT_EQ(tup->fields()[1].type->kind(), abi::TypeKind::Variant);
  // The tuple uses the exported records: those carry the names.
  EXPECT_EQ(tup->fields()[0].type, find(type.exports, "rec").desc.value);
  const abi::TypeRef fixed = find(type.exports, "fixed").desc.value;
  EXPECT_EQ(fixed->kind(), abi::TypeKind::FixedList);
  EXPECT_EQ(fixed->fixed_length(), 4u);
  EXPECT_EQ(to_string(find(type.exports, "res").desc),
            "(type (eq (result (enum \"lo\" \"hi\") (error string))))");
  EXPECT_EQ(find(type.exports, "lst").desc.value->element(), tup);
}

TEST(ValidatePlan, TypeImportsAndExportsDeclareNames) {
  const Plan plan = validate(fixtures::type_names);
  const InstanceType& i = *find(plan.root->type.imports, "i").desc.instance;
  // A name of a primitive type is an object of its own, which the types
  // written with the name use, and nothing else.
  const ExternDesc& ref = find(i.exports, "ref").desc;
  EXPECT_EQ(ref.value->kind(), abi::TypeKind::U16);
  EXPECT_NE(ref.value, abi::Type::u16());
  const abi::TypeRef rec = find(i.exports, "rec").desc.value;
  EXPECT_EQ(rec->fields()[0].type, ref.value);
  EXPECT_EQ(rec->fields()[1].type, abi::Type::u16());
  // `ref` names a definition; `h` is an alias of the name `r`.
  EXPECT_NE(ref.name_id, 0u);
  EXPECT_EQ(ref.alias_of, 0u);
  const ExternDesc& r = find(i.exports, "r").desc;
  const ExternDesc& h = find(i.exports, "h").desc;
  EXPECT_NE(r.name_id, h.name_id);
  EXPECT_EQ(h.alias_of, r.name_id);
  EXPECT_EQ(h.resource, r.resource);
  // A handle keeps the name it was written with, through the fresh resource
  // types of the import.
  EXPECT_EQ(plan.handle_names.at(find(i.exports, "f").desc.func->result.get()).second, h.name_id);
  // An instance's exports alias the names of the arguments (through the
  // component's aliases of them), not those of the component's imports.
  const InstanceType& s = *find(plan.root->type.exports, "s").desc.instance;
  EXPECT_EQ(find(s.exports, "t2").desc.alias_of, ref.name_id);
  EXPECT_EQ(find(s.exports, "r2").desc.alias_of, h.name_id);
}

TEST(ValidatePlan, AsyncBuiltinsHaveTheirTypesAndOptions) {
  const Plan plan = validate(fixtures::async_builtins);
  const auto builtins = steps_of<step::CanonBuiltin>(*plan.root);
  ASSERT_EQ(builtins.size(), 7u);
  EXPECT_EQ(builtins[0]->canon.kind, binary::CanonKind::TaskReturn);
  EXPECT_EQ(builtins[0]->type->kind(), abi::TypeKind::String);
  EXPECT_TRUE(builtins[0]->options.memory);
  EXPECT_EQ(builtins[1]->canon.kind, binary::CanonKind::StreamNew);
  EXPECT_EQ(builtins[1]->type->kind(), abi::TypeKind::Stream);
  EXPECT_EQ(builtins[2]->canon.kind, binary::CanonKind::StreamRead);
  EXPECT_TRUE(builtins[2]->options.async);
  EXPECT_EQ(builtins[3]->canon.kind, binary::CanonKind::FutureRead);
  EXPECT_TRUE(builtins[3]->options.realloc);
  EXPECT_EQ(builtins[6]->canon.kind, binary::CanonKind::ContextGet);
  // Their core types are what the module imports them as.
  EXPECT_EQ(detail_text(builtins[0]->core_type), "(func (param i32 i32))");
  EXPECT_EQ(detail_text(builtins[1]->core_type), "(func (result i64))");
  EXPECT_EQ(detail_text(builtins[2]->core_type), "(func (param i32 i32 i32) (result i32))");
}

TEST(ValidatePlan, AsyncLiftWithCallback) {
  const Plan plan = validate(fixtures::async_lift_callback);
  const auto lifts = steps_of<step::Lift>(*plan.root);
  ASSERT_EQ(lifts.size(), 1u);
  EXPECT_TRUE(lifts[0]->type->async);
  EXPECT_TRUE(lifts[0]->options.async);
  EXPECT_EQ(lifts[0]->options.callback, 1u);
}

TEST(ValidatePlan, CoreSubtypingOfLimits) {
  EXPECT_NO_THROW(validate(fixtures::memory_limits_ok));
}

TEST(ValidatePlan, ExternallyVisibleTypesAndAnnotatedNames) {
  EXPECT_NO_THROW(validate(fixtures::type_exports_visible));
  const Plan plan = validate(fixtures::names_ok);
  std::vector<std::string> names;
  for (const auto& i : plan.root->type.imports) names.push_back(i.name);
  EXPECT_EQ(names, (std::vector<std::string>{"r", "[constructor]r", "[method]r.size",
                                             "[static]r.make", "wasi:io/streams@0.2.0", "r-two"}));
}

TEST(ValidatePlan, StepOffsetsFollowTheBinary) {
  const Plan plan = validate(fixtures::strings_with_libc);
  const auto& offsets = plan.root->step_offsets;
  ASSERT_EQ(offsets.size(), plan.root->steps.size());
  for (size_t i = 1; i < offsets.size(); ++i) EXPECT_LE(offsets[i - 1], offsets[i]);
  EXPECT_GT(offsets.front(), 8u);
}

// ---- Invalid components ----

struct InvalidCase {
  const char* name;
  std::string (*run)();
  const char* message;  // a part of the expected message
};

#define INVALID(fixture, part) {#fixture, [] { return error_of(fixtures::fixture); }, part}

const InvalidCase kInvalid[] = {
    INVALID(bad_index, "unknown func 5: func index out of bounds"),
    INVALID(bad_alias_sort, "export `x` for instance 0 ($i) is not a type"),
    INVALID(missing_core_export, "core instance 0 ($i) has no export named `g`"),
    INVALID(missing_core_arg, "missing module instantiation argument named `env`"),
    INVALID(core_func_mismatch, "type mismatch for export `f` of module instantiation argument `a`"),
    INVALID(memory_limits_bad, "mismatch in memory limits"),
    INVALID(global_mismatch, "global mutability"),
    INVALID(lift_signature_mismatch, "lowered parameter types `[i32]` do not match"),
    INVALID(lift_string_without_memory, "canonical option `memory` is required"),
    INVALID(lift_string_without_realloc, "canonical option `realloc` is required"),
    INVALID(lower_string_result_without_realloc, "canonical option `realloc` is required"),
    INVALID(bad_realloc_type, "`realloc` uses a core function with an incorrect signature"),
    INVALID(bad_post_return, "`post-return` uses a core function with an incorrect signature"),
    INVALID(async_on_sync_type, "the `async` canonical option requires an async function type"),
    INVALID(resource_generativity, "resource types are not the same"),
    INVALID(outer_resource_alias, "transitively refers to resources"),
    INVALID(outer_count_too_large, "invalid outer alias count of 2"),
    INVALID(missing_instantiate_arg, "missing import named `x`"),
    INVALID(instance_missing_export, "missing expected export `b`"),
    INVALID(func_param_name_mismatch, "expected parameter named `x`, found `y`"),
    INVALID(rep_of_imported_resource, "not a local resource"),
    INVALID(bad_dtor, "wrong signature for a destructor"),
    INVALID(export_unnamed_resource, "func not valid to be used as export"),
    INVALID(export_unnamed_record, "func not valid to be used as export"),
    INVALID(duplicate_names, "import name `A-B` conflicts with previous name `a-b`"),
    INVALID(method_conflicts_label, "conflicts with previous name `a`"),
    INVALID(bad_kebab, "is not a valid extern name"),
    INVALID(constructor_wrong_result, "should return `(own $T)`"),
    INVALID(static_unknown_resource, "static resource name is not known"),
    INVALID(empty_record, "record type must have at least one field"),
    INVALID(duplicate_fields, "record field name `A` conflicts with previous field name `a`"),
    INVALID(too_many_flags, "cannot have more than 32 flags"),
    INVALID(borrow_result, "function result cannot contain a `borrow` type"),
    INVALID(stream_of_char, "`stream<char>` is not valid: the Component Model rejects it for now"),
    INVALID(map_float_key, "map key type"),
    INVALID(resource_in_type, "resources can only be defined within a concrete component"),
    INVALID(bad_version_suffix_attribute, "only instances can have an `implements`"),
};

class ValidateInvalid : public testing::TestWithParam<InvalidCase> {};

TEST_P(ValidateInvalid, IsRejectedWithItsReasonAndOffset) {
  const std::string message = GetParam().run();
  EXPECT_NE(message.find(GetParam().message), std::string::npos) << message;
  EXPECT_EQ(message.rfind("at byte 0x", 0), 0u) << message;
}

INSTANTIATE_TEST_SUITE_P(Fixtures, ValidateInvalid, testing::ValuesIn(kInvalid),
                         [](const auto& info) { return std::string(info.param.name); });

// ---- Robustness ----

// Core modules are byte ranges to the decoder and are read by the
// validator's own scanner: corrupting any byte of one leaves the component
// decodable and must give a validation error (never another kind, never a
// crash) when it makes the module invalid.
TEST(ValidateRobustness, CorruptCoreModulesAreErrors) {
  const auto& original = fixtures::strings_with_libc;
  const std::span<const uint8_t> span(original, sizeof original);
  const binary::Component component = binary::decode_component(span);
  std::vector<binary::ByteRange> modules;
  for (const auto& d : component.definitions)
    if (auto m = std::get_if<binary::CoreModule>(&d.item)) modules.push_back(m->bytes);
  ASSERT_EQ(modules.size(), 2u);
  size_t rejected = 0, tries = 0;
  for (const auto& range : modules) {
    for (size_t at = range.offset + 8; at < range.offset + range.size; ++at) {
      for (uint8_t value : {uint8_t{0x00}, uint8_t{0x7f}, uint8_t{0xff}}) {
        std::vector<uint8_t> bytes(original, original + sizeof original);
        if (bytes[at] == value) continue;
        bytes[at] = value;
        ++tries;
        binary::Component decoded;
        ASSERT_NO_THROW(decoded = binary::decode_component(bytes)) << "byte " << at << " set to " << int(value);
        try {
          validate_component(decoded, bytes);
        } catch (const Error& e) {
          ASSERT_EQ(e.kind(), ErrorKind::Validate) << "byte " << at << " set to " << int(value) << ": " << e.what();
          ++rejected;
        }
      }
    }
  }
  // Bytes of code bodies may change without making the interface invalid.
  EXPECT_GT(rejected, tries / 4);
}

TEST(ValidateRobustness, TruncatedImportSectionIsAValidationError) {
  const auto& original = fixtures::missing_core_arg;  // (core module (import "env" "f" (func)))
  std::vector<uint8_t> bytes(original, original + sizeof original);
  const binary::Component component = binary::decode_component(bytes);
  const auto& module = std::get<binary::CoreModule>(component.definitions.at(0).item).bytes;
  size_t at = module.offset + 8;
  ASSERT_EQ(bytes[at], 1);  // the type section
  at += 2 + bytes[at + 1];
  ASSERT_EQ(bytes[at], 2);  // the import section: id, size, count
  bytes[at + 2] = 0x7f;
  try {
    validate_component(binary::decode_component(bytes), bytes);
    FAIL() << "accepted a truncated import section";
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), ErrorKind::Validate);
    EXPECT_NE(std::string(e.what()).find("in a core module"), std::string::npos) << e.what();
  }
}

// ---- Public helpers ----

TEST(ValidateHelpers, SubtypeMismatchOfInstances) {
  const Plan plan = validate(fixtures::strings_with_libc);
  const ExternDesc logging = find(plan.root->type.imports, "logging").desc;
  EXPECT_FALSE(subtype_mismatch(logging, logging));
  ExternDesc empty;
  empty.sort = binary::Sort::Instance;
  empty.instance = std::make_shared<InstanceType>();
  EXPECT_FALSE(subtype_mismatch(logging, empty));  // more exports is fine
  const auto why = subtype_mismatch(empty, logging);
  ASSERT_TRUE(why);
  EXPECT_EQ(*why, "missing expected export `log`");
  const ExternDesc run = find(plan.root->type.exports, "run").desc;
  const auto wrong_sort = subtype_mismatch(run, logging);
  ASSERT_TRUE(wrong_sort);
  EXPECT_EQ(*wrong_sort, "expected instance, found func");
}

TEST(ValidateHelpers, SubtypeMismatchOfFunctions) {
  auto func = [](abi::TypeRef param, abi::TypeRef result) {
    auto f = std::make_shared<FuncType>();
    f->param_names = {"x"};
    f->params = {std::move(param)};
    f->result = std::move(result);
    ExternDesc d;
    d.sort = binary::Sort::Func;
    d.func = f;
    return d;
  };
  const auto list_u8 = abi::Type::list(abi::Type::u8());
  EXPECT_FALSE(subtype_mismatch(func(list_u8, nullptr), func(abi::Type::list(abi::Type::u8()), nullptr)));
  const auto why = subtype_mismatch(func(list_u8, nullptr), func(abi::Type::string(), nullptr));
  ASSERT_TRUE(why);
  EXPECT_EQ(*why, "type mismatch in function parameter `x`: expected string, found list");
  const auto own_a = abi::Type::own(std::make_shared<abi::ResourceType>(abi::ResourceType{"a"}));
  const auto own_b = abi::Type::own(std::make_shared<abi::ResourceType>(abi::ResourceType{"b"}));
  const auto resources = subtype_mismatch(func(own_a, nullptr), func(own_b, nullptr));
  ASSERT_TRUE(resources);
  EXPECT_NE(resources->find("resource types are not the same"), std::string::npos);
  EXPECT_EQ(to_string(*func(own_a, abi::Type::u32()).func),
            "(func (param \"x\" (own $a)) (result u32))");
}

TEST(ValidateHelpers, CoreExternText) {
  const Plan plan = validate(fixtures::outer_imported_module);
  const ExternDesc m = find(plan.root->type.imports, "m").desc;
  ASSERT_EQ(m.module->exports.size(), 1u);
  EXPECT_EQ(to_string(m.module->exports[0].type), "(func (result i32))");
  EXPECT_EQ(to_string(m), "(core module (export \"get\" (func (result i32))))");
}

}  // namespace
}  // namespace cmhost::validate
