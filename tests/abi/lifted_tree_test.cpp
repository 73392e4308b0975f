// Lifted trees: a lifted value's item arrays, long strings and small number
// lists live in one arena. Values moved out of the tree keep it alive,
// copies leave it, mutation and traps part way still drop every heap string
// (checked under ASan, which gives arena chunks back to the heap at once,
// with leak detection).
#include <gtest/gtest.h>

#include <cstring>
#include <string>
#include <vector>

#include "../support/expect_error.hpp"
#include "cmhost/abi.hpp"

namespace cmhost::abi {
namespace {

TypeRef row_type() {
  return Type::record({{"id", Type::u32()}, {"label", Type::string()}, {"tags", Type::list(Type::string())}});
}

Val row(uint32_t id, const std::string& label, std::vector<std::string> tags) {
  std::vector<Val> t;
  for (auto& s : tags) t.push_back(Val::string(s));
  return Val::record({Val::u32(id), Val::string(label), Val::list(std::move(t))});
}

const std::string kLong(100, 'L');  // longer than a Val keeps inline: in the arena (lifted) or on the heap
const std::string kHuge(5000, 'H');  // too big to share the arena's chunks: on the heap even when lifted

// Stores `v` and lifts it back.
struct RoundTrip {
  explicit RoundTrip(const TypeRef& t) : type(t), abi(t, AddrWidth::I32), mem(1 << 24, 8) {}
  Val lift(const Val& v) { return load(store(v)); }
  uint64_t store(const Val& v) {
    const Layout& l = type->layout(AddrWidth::I32);
    const uint64_t ptr = mem.realloc(0, 0, l.align, l.size);
    AbiContext cx(&mem, CanonOptions{});
    abi.store(cx, v, ptr);
    return ptr;
  }
  Val load(uint64_t ptr) {
    AbiContext cx(&mem, CanonOptions{});
    return abi.load(cx, ptr);
  }
  // Overwrites 4 bytes at `offset` into the elements of the list stored at `ptr`.
  void corrupt_list(uint64_t ptr, uint64_t offset, uint32_t value) {
    uint32_t elements;
    std::memcpy(&elements, mem.bytes().data() + ptr, 4);
    std::memcpy(mem.bytes().data() + elements + offset, &value, 4);
  }
  TypeRef type;
  ValueAbi abi;
  HostMemory mem;
};

// With long_labels, some labels and every second tag are long strings (in
// the arena when lifted) and some labels huge ones (on the heap); without,
// the lifted tree holds nothing that needs freeing.
std::string label_for(size_t i, bool long_labels) {
  if (long_labels && i % 5 == 1) return kHuge;
  if (long_labels && i % 3 == 0) return kLong;
  return "r" + std::to_string(i);
}
Val rows(size_t n, bool long_labels) {
  std::vector<Val> out;
  for (size_t i = 0; i < n; ++i) out.push_back(row(uint32_t(i), label_for(i, long_labels), {"a", long_labels ? kLong : "b"}));
  return Val::list(std::move(out));
}

TEST(LiftedTree, EqualsWhatWasStored) {
  RoundTrip rt(Type::list(row_type()));
  for (bool long_labels : {false, true}) {
    const Val v = rows(3000, long_labels);  // enough items for several arena chunks
    EXPECT_EQ(rt.lift(v), v);
  }
}

// A variant whose main case is a record: the case's slot and the record's
// fields are lifted into one block.
TypeRef op_type() { return Type::variant({{"row", row_type()}, {"n", Type::u32()}, {"none", nullptr}}); }
Val ops(size_t n, bool long_labels) {
  std::vector<Val> out;
  for (size_t i = 0; i < n; ++i) {
    if (i % 3 == 0) out.push_back(Val::variant(0, row(uint32_t(i), label_for(i, long_labels), {"a", "b"})));
    else if (i % 3 == 1) out.push_back(Val::variant(1, Val::u32(uint32_t(i))));
    else out.push_back(Val::variant(2));
  }
  return Val::list(std::move(out));
}

TEST(LiftedTree, VariantsOfRecordsEqualWhatWasStored) {
  RoundTrip rt(Type::list(op_type()));
  for (bool long_labels : {false, true}) {
    const Val v = ops(3000, long_labels);
    const Val tree = rt.lift(v);
    EXPECT_EQ(tree, v);
    // A row with a short or long label (in the arena) needs no freeing; one
    // with a huge label (on the heap) does, and so does its case.
    // The case's record and its fields share one block.
    const Val* record = tree.items()[3].payload();
    EXPECT_EQ(record->items().data(), record + 1);
    EXPECT_TRUE(tree.items()[3].arena_droppable());
    EXPECT_EQ(tree.items()[6].payload()->arena_droppable(), !long_labels);
    EXPECT_EQ(tree.items()[6].arena_droppable(), !long_labels);
  }
}

TEST(LiftedTree, RecordPayloadMovedOutOutlivesTheTree) {
  RoundTrip rt(Type::list(op_type()));
  Val kept;
  {
    Val tree = rt.lift(ops(30, true));
    kept = std::move(tree.items_mut()[6]);
  }
  EXPECT_EQ(kept, Val::variant(0, row(6, label_for(6, true), {"a", "b"})));
  Val record;
  {
    Val tree = rt.lift(ops(30, true));
    record = std::move(tree.items_mut()[3].items_mut()[0]);  // the payload alone, out of its block
  }
  EXPECT_EQ(record, row(3, label_for(3, true), {"a", "b"}));
}

TEST(LiftedTree, TrapInAVariantsRecordDropsWhatWasBuilt) {
  RoundTrip rt(Type::list(op_type()));
  const uint64_t ptr = rt.store(ops(60, true));
  // Corrupt the label length of the last element's row (element 57): the
  // lift traps inside that record, its id already built, after 57 elements
  // with heap strings among them.
  const Layout& op = rt.type->element()->layout(AddrWidth::I32);
  rt.corrupt_list(ptr, 57 * op.size + op.payload_offset + 8, 1u << 30);
  EXPECT_ERROR(rt.load(ptr), ErrorKind::Trap);
}

TEST(LiftedTree, ArenaStringsAndListsNeedNoWalk) {
  // Rows whose long labels, tags and number lists are all in the arena drop
  // without a walk; a row with a huge (heap) label does not.
  const TypeRef t = Type::list(Type::record({{"label", Type::string()}, {"ids", Type::list(Type::u32())}}));
  RoundTrip rt(t);
  std::vector<uint32_t> ids(100, 7);
  std::vector<Val> in;
  for (const std::string* s : {&kLong, &kHuge})
    in.push_back(Val::record({Val::string(*s), Val::packed_list(ValKind::U32, ids.data(), ids.size())}));
  const Val tree = rt.lift(Val::list(in));
  ASSERT_EQ(tree, Val::list(in));
  EXPECT_TRUE(tree.items()[0].arena_droppable());
  EXPECT_TRUE(tree.items()[0].items()[0].arena_droppable());
  EXPECT_TRUE(tree.items()[0].items()[1].arena_droppable());
  EXPECT_FALSE(tree.items()[1].arena_droppable());
}

TEST(LiftedTree, ItemMovedOutOutlivesTheTree) {
  RoundTrip rt(Type::list(row_type()));
  Val kept;
  {
    Val tree = rt.lift(rows(100, true));
    kept = std::move(tree.items_mut()[3]);
  }  // the tree is gone; its arena stays while `kept` refers to it
  EXPECT_EQ(kept, row(3, kLong, {"a", kLong}));
  Val moved_again = std::move(kept);
  EXPECT_EQ(moved_again.items()[2].items()[1].as_string(), kLong);
}

TEST(LiftedTree, LongStringMovedOutOutlivesTheTree) {
  RoundTrip rt(Type::list(row_type()));
  Val label, tag;
  {
    Val tree = rt.lift(rows(30, true));
    label = std::move(tree.items_mut()[3].items_mut()[1]);
    tag = std::move(tree.items_mut()[4].items_mut()[2].items_mut()[1]);
  }
  EXPECT_EQ(label.as_string(), kLong);
  tag = Val(tag);  // a copy leaves the arena
  EXPECT_EQ(tag.as_string(), kLong);
  label = Val();
}

TEST(LiftedTree, RootsInTheArenaKeepIt) {
  RoundTrip strings(Type::string());
  const Val text = strings.lift(Val::string(kLong));
  EXPECT_EQ(text.as_string(), kLong);

  RoundTrip numbers(Type::list(Type::u32()));
  std::vector<uint32_t> ids(200);
  for (uint32_t i = 0; i < ids.size(); ++i) ids[i] = i * 7;
  const Val list = numbers.lift(Val::packed_list(ValKind::U32, ids.data(), ids.size()));
  ASSERT_TRUE(list.is_packed());
  EXPECT_EQ(list.list_size(), 200u);
  EXPECT_EQ(list.list_element(199).as_u32(), 199u * 7);
}

TEST(LiftedTree, NumberListMovedOutOutlivesTheTree) {
  const TypeRef t = Type::list(Type::record({{"id", Type::u32()}, {"children", Type::list(Type::u32())}}));
  RoundTrip rt(t);
  std::vector<Val> in;
  for (uint32_t i = 0; i < 20; ++i) {
    std::vector<uint32_t> children(i, i);  // 0..19 children: inline, then in the arena
    in.push_back(Val::record({Val::u32(i), Val::packed_list(ValKind::U32, children.data(), children.size())}));
  }
  Val children;
  {
    Val tree = rt.lift(Val::list(in));
    EXPECT_EQ(tree, Val::list(in));
    children = std::move(tree.items_mut()[19].items_mut()[1]);
  }
  ASSERT_EQ(children.list_size(), 19u);
  EXPECT_EQ(children.list_element(18).as_u32(), 19u);
}

TEST(LiftedTree, CopiesAreIndependent) {
  RoundTrip rt(Type::list(row_type()));
  Val copy;
  {
    const Val tree = rt.lift(rows(10, true));
    copy = tree;
    Val item_copy = tree.items()[9];
    EXPECT_EQ(item_copy, row(9, kLong, {"a", kLong}));
  }
  EXPECT_EQ(copy, rows(10, true));
}

TEST(LiftedTree, ItemsReplacedAfterLiftingAreDropped) {
  RoundTrip rt(Type::list(row_type()));
  Val tree = rt.lift(rows(10, false));
  // A heap string put into a tree that needed no walk to drop: the tree must
  // now free it (ASan's leak check fails otherwise).
  tree.items_mut()[0].items_mut()[1] = Val::string(kLong);
  tree.items_mut()[1] = row(1, kLong, {kLong});
  EXPECT_EQ(tree.items()[0].items()[1].as_string(), kLong);
  Val other = rt.lift(rows(3, true));
  tree.items_mut()[2] = std::move(other.items_mut()[0]);  // an item of another tree
  other = Val();
  EXPECT_EQ(tree.items()[2], row(0, kLong, {"a", kLong}));
}

TEST(LiftedTree, TrapPartWayDropsWhatWasBuilt) {
  RoundTrip rt(Type::list(row_type()));
  const uint64_t ptr = rt.store(rows(50, true));
  // Corrupt the last row's label length: the lift traps after building 49
  // rows, their heap strings (the huge labels) included.
  rt.corrupt_list(ptr, 49 * row_type()->layout(AddrWidth::I32).size + 8, 1u << 30);
  EXPECT_ERROR(rt.load(ptr), ErrorKind::Trap);
}

TEST(LiftedTree, FlatResultsToo) {
  const TypeRef t = Type::tuple({Type::string(), Type::list(Type::string()), Type::option(Type::u8())});
  ValueAbi abi(t, AddrWidth::I32);
  HostMemory mem(1 << 16, 8);
  AbiContext cx(&mem, CanonOptions{});
  const Val v = Val::tuple({Val::string(kLong), Val::list({Val::string(kLong), Val::string("b")}), Val::some(Val::u8(7))});
  std::vector<uint64_t> flat;
  abi.lower_flat(cx, v, flat);
  Val lifted = abi.lift_flat(cx, flat);
  EXPECT_EQ(lifted, v);
  Val option = std::move(lifted.items_mut()[2]);
  lifted = Val();
  EXPECT_EQ(option.payload()->as_u8(), 7);
}

}  // namespace
}  // namespace cmhost::abi
