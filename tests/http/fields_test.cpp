// Tests of wasi:http's header fields: name and value syntax, forbidden names,
// order, immutability and the size limit of FieldList.
#include <gtest/gtest.h>

#include "http/fields.hpp"

#include <memory>
#include <string>
#include <vector>

namespace cmhost::http {
namespace {

using Values = std::vector<std::string>;
using Entries = std::vector<FieldList::Entry>;

std::shared_ptr<const ForbiddenHeaders> default_forbidden() { return std::make_shared<const ForbiddenHeaders>(); }

FieldList empty_fields(size_t size_limit = FieldList::default_size_limit) {
  return FieldList(default_forbidden(), size_limit);
}

const char* const kDefaultForbidden[] = {"connection",          "keep-alive",       "proxy-authenticate",
                                         "proxy-authorization", "proxy-connection", "transfer-encoding",
                                         "upgrade",             "host",             "http2-settings"};

// The name with every other letter uppercased ("CoNnEcTiOn").
std::string mixed_case(std::string name) {
  for (size_t i = 0; i < name.size(); i += 2) {
    if (name[i] >= 'a' && name[i] <= 'z') name[i] = static_cast<char>(name[i] - 'a' + 'A');
  }
  return name;
}

TEST(HttpFieldSyntax, LowercaseTouchesOnlyAsciiLetters) {
  EXPECT_EQ(lowercase("Content-Type"), "content-type");
  EXPECT_EQ(lowercase("X-\xC3\x89T\xC3\xA9"), "x-\xC3\x89t\xC3\xA9");
  EXPECT_EQ(lowercase(""), "");
}

TEST(HttpFieldSyntax, NamesAreTokens) {
  EXPECT_TRUE(is_field_name("content-type"));
  EXPECT_TRUE(is_field_name("X-Custom_1"));
  EXPECT_TRUE(is_field_name("!#$%&'*+-.^_`|~"));
  EXPECT_FALSE(is_field_name(""));
  EXPECT_FALSE(is_field_name("x custom"));
  EXPECT_FALSE(is_field_name("x:custom"));
  EXPECT_FALSE(is_field_name("host:"));
  EXPECT_FALSE(is_field_name("caf\xC3\xA9"));
  EXPECT_FALSE(is_field_name("x\"y"));
  EXPECT_FALSE(is_field_name("x(y)"));
  EXPECT_FALSE(is_field_name(std::string("x\0y", 3)));
}

TEST(HttpFieldSyntax, ValuesAsTheHttpCrateAcceptsThem) {
  EXPECT_TRUE(is_field_value(""));
  EXPECT_TRUE(is_field_value("text/plain; charset=utf-8"));
  EXPECT_TRUE(is_field_value("a\tb"));
  EXPECT_TRUE(is_field_value("caf\xC3\xA9 \x80\xFF"));
  EXPECT_FALSE(is_field_value("a\rb"));
  EXPECT_FALSE(is_field_value("a\nb"));
  EXPECT_FALSE(is_field_value(std::string("a\0b", 3)));
  EXPECT_FALSE(is_field_value("a\x7f"));
  EXPECT_FALSE(is_field_value("\x1f"));
}

TEST(HttpForbiddenHeaders, DefaultSetInAnyCase) {
  ForbiddenHeaders forbidden;
  for (const char* name : kDefaultForbidden) {
    EXPECT_TRUE(forbidden.contains(name)) << name;
    EXPECT_TRUE(forbidden.contains(mixed_case(name))) << name;
  }
  EXPECT_FALSE(forbidden.contains("content-type"));
  EXPECT_FALSE(forbidden.contains("x-forwarded-host"));
}

TEST(HttpForbiddenHeaders, AddedNameInAnyCase) {
  ForbiddenHeaders forbidden;
  EXPECT_FALSE(forbidden.contains("x-secret"));
  forbidden.add("X-Secret");
  EXPECT_TRUE(forbidden.contains("x-secret"));
  EXPECT_TRUE(forbidden.contains("X-SECRET"));
  EXPECT_TRUE(forbidden.contains("host"));
}

TEST(HttpFields, GetAndHasIgnoreCase) {
  FieldList fields = empty_fields();
  ASSERT_EQ(fields.append("Content-Type", "text/plain"), std::nullopt);
  EXPECT_EQ(fields.get("content-type"), Values{"text/plain"});
  EXPECT_EQ(fields.get("CONTENT-TYPE"), Values{"text/plain"});
  EXPECT_TRUE(fields.has("content-TYPE"));
  EXPECT_FALSE(fields.has("content-length"));
  EXPECT_TRUE(fields.get("content-length").empty());
}

TEST(HttpFields, InvalidNameIsAbsent) {
  FieldList fields = empty_fields();
  fields.add_from_host("x-a", "1");
  EXPECT_FALSE(fields.has(""));
  EXPECT_FALSE(fields.has("x-a "));
  EXPECT_TRUE(fields.get("x-a:").empty());
}

TEST(HttpFields, EntriesHaveLowercaseNames) {
  FieldList fields = empty_fields();
  ASSERT_EQ(fields.append("X-Request-ID", "abc"), std::nullopt);
  ASSERT_EQ(fields.set("Accept", {"*/*"}), std::nullopt);
  fields.add_from_host("Server", "cmhost");
  EXPECT_EQ(fields.entries(), (Entries{{"x-request-id", "abc"}, {"accept", "*/*"}, {"server", "cmhost"}}));
}

TEST(HttpFields, AppendKeepsOrder) {
  FieldList fields = empty_fields();
  ASSERT_EQ(fields.append("a", "1"), std::nullopt);
  ASSERT_EQ(fields.append("b", "2"), std::nullopt);
  ASSERT_EQ(fields.append("A", "3"), std::nullopt);
  EXPECT_EQ(fields.entries(), (Entries{{"a", "1"}, {"b", "2"}, {"a", "3"}}));
  EXPECT_EQ(fields.get("a"), (Values{"1", "3"}));
}

TEST(HttpFields, SetReplacesWhereTheFirstValueWas) {
  FieldList fields = empty_fields();
  ASSERT_EQ(fields.append("a", "1"), std::nullopt);
  ASSERT_EQ(fields.append("b", "2"), std::nullopt);
  ASSERT_EQ(fields.append("a", "3"), std::nullopt);
  ASSERT_EQ(fields.append("c", "4"), std::nullopt);
  ASSERT_EQ(fields.set("A", {"x", "y"}), std::nullopt);
  EXPECT_EQ(fields.entries(), (Entries{{"a", "x"}, {"a", "y"}, {"b", "2"}, {"c", "4"}}));
  ASSERT_EQ(fields.set("d", {"5"}), std::nullopt);
  EXPECT_EQ(fields.entries(), (Entries{{"a", "x"}, {"a", "y"}, {"b", "2"}, {"c", "4"}, {"d", "5"}}));
}

TEST(HttpFields, SetWithNoValuesRemoves) {
  FieldList fields = empty_fields();
  ASSERT_EQ(fields.append("a", "1"), std::nullopt);
  ASSERT_EQ(fields.append("b", "2"), std::nullopt);
  ASSERT_EQ(fields.set("a", {}), std::nullopt);
  EXPECT_FALSE(fields.has("a"));
  EXPECT_EQ(fields.entries(), (Entries{{"b", "2"}}));
  EXPECT_EQ(fields.byte_size(), 2u);
}

TEST(HttpFields, InvalidNamesRefused) {
  FieldList fields = empty_fields();
  for (std::string name : {"", "x y", "x:y", "caf\xC3\xA9", "x\r"}) {
    EXPECT_EQ(fields.set(name, {"v"}), FieldError::invalid_syntax) << name;
    EXPECT_EQ(fields.append(name, "v"), FieldError::invalid_syntax) << name;
    EXPECT_EQ(fields.remove(name), FieldError::invalid_syntax) << name;
    auto removed = fields.get_and_remove(name);
    ASSERT_TRUE(std::holds_alternative<FieldError>(removed)) << name;
    EXPECT_EQ(std::get<FieldError>(removed), FieldError::invalid_syntax) << name;
  }
  EXPECT_TRUE(fields.entries().empty());
}

TEST(HttpFields, InvalidValuesRefused) {
  FieldList fields = empty_fields();
  for (const std::string& value : Values{"a\rb", "a\nb", std::string("a\0b", 3), "a\x7f"}) {
    EXPECT_EQ(fields.append("x", value), FieldError::invalid_syntax);
    EXPECT_EQ(fields.set("x", {"ok", value}), FieldError::invalid_syntax);
  }
  EXPECT_TRUE(fields.entries().empty());
  EXPECT_EQ(fields.byte_size(), 0u);
}

TEST(HttpFields, TabAndObsTextAccepted) {
  FieldList fields = empty_fields();
  ASSERT_EQ(fields.append("x", "a\tb"), std::nullopt);
  ASSERT_EQ(fields.append("x", "caf\xC3\xA9\xFF"), std::nullopt);
  EXPECT_EQ(fields.get("x"), (Values{"a\tb", "caf\xC3\xA9\xFF"}));
}

TEST(HttpFields, InvalidSyntaxBeforeForbidden) {
  FieldList fields = empty_fields();
  EXPECT_EQ(fields.set("host", {"a\nb"}), FieldError::invalid_syntax);
  EXPECT_EQ(fields.append("host", "a\nb"), FieldError::invalid_syntax);
}

TEST(HttpFields, DefaultForbiddenRefusedInAnyCase) {
  FieldList fields = empty_fields();
  fields.add_from_host("host", "example.com");  // so remove has something it must not remove
  for (const char* lower : kDefaultForbidden) {
    for (const std::string& name : {std::string(lower), mixed_case(lower)}) {
      EXPECT_EQ(fields.set(name, {"v"}), FieldError::forbidden) << name;
      EXPECT_EQ(fields.append(name, "v"), FieldError::forbidden) << name;
      EXPECT_EQ(fields.remove(name), FieldError::forbidden) << name;
      auto removed = fields.get_and_remove(name);
      ASSERT_TRUE(std::holds_alternative<FieldError>(removed)) << name;
      EXPECT_EQ(std::get<FieldError>(removed), FieldError::forbidden) << name;

      auto listed = FieldList::from_list({{"accept", "*/*"}, {name, "v"}}, default_forbidden());
      ASSERT_TRUE(std::holds_alternative<FieldError>(listed)) << name;
      EXPECT_EQ(std::get<FieldError>(listed), FieldError::forbidden) << name;
    }
  }
  EXPECT_EQ(fields.entries(), (Entries{{"host", "example.com"}}));
}

TEST(HttpFields, AddedForbiddenNameRefused) {
  auto forbidden = std::make_shared<ForbiddenHeaders>();
  forbidden->add("X-Internal");
  FieldList fields(forbidden);
  EXPECT_EQ(fields.append("x-internal", "1"), FieldError::forbidden);
  EXPECT_EQ(fields.set("X-INTERNAL", {"1"}), FieldError::forbidden);
  EXPECT_EQ(fields.append("x-other", "1"), std::nullopt);
  auto listed = FieldList::from_list({{"x-internal", "1"}}, forbidden);
  ASSERT_TRUE(std::holds_alternative<FieldError>(listed));
  EXPECT_EQ(std::get<FieldError>(listed), FieldError::forbidden);
  // The default set is unaffected by another set's additions.
  EXPECT_EQ(empty_fields().append("x-internal", "1"), std::nullopt);
}

TEST(HttpFields, NullForbiddenMeansTheDefaultSet) {
  FieldList fields(nullptr);
  ASSERT_NE(fields.forbidden(), nullptr);
  EXPECT_EQ(fields.append("connection", "close"), FieldError::forbidden);
}

TEST(HttpFields, FromListKeepsOrderAndLowercases) {
  auto listed = FieldList::from_list({{"B", "1"}, {"a", "2"}, {"b", "3"}}, default_forbidden());
  ASSERT_TRUE(std::holds_alternative<FieldList>(listed));
  const auto& fields = std::get<FieldList>(listed);
  EXPECT_EQ(fields.entries(), (Entries{{"b", "1"}, {"a", "2"}, {"b", "3"}}));
  EXPECT_FALSE(fields.immutable());
  EXPECT_EQ(fields.byte_size(), 6u);
}

TEST(HttpFields, FromListFirstFailureDecides) {
  auto syntax_first = FieldList::from_list({{"x y", "1"}, {"host", "h"}}, default_forbidden());
  ASSERT_TRUE(std::holds_alternative<FieldError>(syntax_first));
  EXPECT_EQ(std::get<FieldError>(syntax_first), FieldError::invalid_syntax);

  auto forbidden_first = FieldList::from_list({{"host", "h"}, {"x", "a\nb"}}, default_forbidden());
  ASSERT_TRUE(std::holds_alternative<FieldError>(forbidden_first));
  EXPECT_EQ(std::get<FieldError>(forbidden_first), FieldError::forbidden);

  auto bad_value = FieldList::from_list({{"x", "ok"}, {"y", "a\rb"}}, default_forbidden());
  ASSERT_TRUE(std::holds_alternative<FieldError>(bad_value));
  EXPECT_EQ(std::get<FieldError>(bad_value), FieldError::invalid_syntax);
}

TEST(HttpFields, ImmutableCheckedFirst) {
  FieldList fields = empty_fields();
  ASSERT_EQ(fields.append("a", "1"), std::nullopt);
  fields.make_immutable();
  EXPECT_TRUE(fields.immutable());
  EXPECT_EQ(fields.set("a", {"2"}), FieldError::immutable);
  EXPECT_EQ(fields.append("b", "2"), FieldError::immutable);
  EXPECT_EQ(fields.remove("a"), FieldError::immutable);
  auto removed = fields.get_and_remove("a");
  ASSERT_TRUE(std::holds_alternative<FieldError>(removed));
  EXPECT_EQ(std::get<FieldError>(removed), FieldError::immutable);
  // Before invalid syntax and forbidden names.
  EXPECT_EQ(fields.set("x y", {"a\nb"}), FieldError::immutable);
  EXPECT_EQ(fields.append("", "a\rb"), FieldError::immutable);
  EXPECT_EQ(fields.remove("host"), FieldError::immutable);
  EXPECT_EQ(fields.append("connection", "close"), FieldError::immutable);
  EXPECT_EQ(fields.entries(), (Entries{{"a", "1"}}));
  // Reading still works.
  EXPECT_EQ(fields.get("A"), Values{"1"});
}

TEST(HttpFields, CopyKeepsImmutability) {
  FieldList fields = empty_fields();
  fields.make_immutable();
  FieldList copy = fields;
  EXPECT_TRUE(copy.immutable());
  EXPECT_EQ(copy.append("a", "1"), FieldError::immutable);
}

TEST(HttpFields, MutableCopyIsMutableAndIndependent) {
  auto forbidden = std::make_shared<ForbiddenHeaders>();
  forbidden->add("x-internal");
  FieldList fields(forbidden, 64);
  ASSERT_EQ(fields.append("a", "1"), std::nullopt);
  fields.make_immutable();

  FieldList copy = fields.mutable_copy();
  EXPECT_FALSE(copy.immutable());
  EXPECT_EQ(copy.entries(), fields.entries());
  EXPECT_EQ(copy.append("b", "2"), std::nullopt);
  EXPECT_EQ(copy.get("b"), Values{"2"});
  EXPECT_FALSE(fields.has("b"));
  // Same rules and limit.
  EXPECT_EQ(copy.forbidden(), fields.forbidden());
  EXPECT_EQ(copy.append("x-internal", "1"), FieldError::forbidden);
  EXPECT_EQ(copy.size_limit(), 64u);
  EXPECT_EQ(copy.append("c", std::string(64, 'v')), FieldError::size_exceeded);
}

TEST(HttpFields, GetAndRemoveReturnsValuesAndRemoves) {
  FieldList fields = empty_fields();
  ASSERT_EQ(fields.append("a", "1"), std::nullopt);
  ASSERT_EQ(fields.append("b", "2"), std::nullopt);
  ASSERT_EQ(fields.append("a", "3"), std::nullopt);
  auto removed = fields.get_and_remove("A");
  ASSERT_TRUE(std::holds_alternative<Values>(removed));
  EXPECT_EQ(std::get<Values>(removed), (Values{"1", "3"}));
  EXPECT_FALSE(fields.has("a"));
  EXPECT_EQ(fields.entries(), (Entries{{"b", "2"}}));
  EXPECT_EQ(fields.byte_size(), 2u);

  auto none = fields.get_and_remove("missing");
  ASSERT_TRUE(std::holds_alternative<Values>(none));
  EXPECT_TRUE(std::get<Values>(none).empty());
}

TEST(HttpFields, RemoveRemovesEveryValue) {
  FieldList fields = empty_fields();
  ASSERT_EQ(fields.append("a", "1"), std::nullopt);
  ASSERT_EQ(fields.append("A", "2"), std::nullopt);
  ASSERT_EQ(fields.append("b", "3"), std::nullopt);
  EXPECT_EQ(fields.remove("a"), std::nullopt);
  EXPECT_EQ(fields.entries(), (Entries{{"b", "3"}}));
  EXPECT_EQ(fields.remove("never-there"), std::nullopt);
}

TEST(HttpFields, ByteSizeCountsNamesAndValues) {
  FieldList fields = empty_fields();
  ASSERT_EQ(fields.append("abc", "12345"), std::nullopt);
  EXPECT_EQ(fields.byte_size(), 8u);
  ASSERT_EQ(fields.set("abc", {"1", "22"}), std::nullopt);
  EXPECT_EQ(fields.byte_size(), 9u);
  fields.add_from_host("Server", "x");
  EXPECT_EQ(fields.byte_size(), 16u);
}

TEST(HttpFields, DefaultSizeLimitIs128KiB) {
  FieldList fields = empty_fields();
  EXPECT_EQ(fields.size_limit(), 128u * 1024);
  ASSERT_EQ(fields.append("x", std::string(128 * 1024 - 1, 'v')), std::nullopt);
  EXPECT_EQ(fields.append("y", ""), FieldError::size_exceeded);
}

TEST(HttpFields, AppendPastLimitRefusedAndUnchanged) {
  FieldList fields = empty_fields(20);
  ASSERT_EQ(fields.append("a", std::string(9, 'v')), std::nullopt);  // 10 bytes
  ASSERT_EQ(fields.append("b", std::string(9, 'v')), std::nullopt);   // 20: at the limit is fine
  EXPECT_EQ(fields.append("c", ""), FieldError::size_exceeded);
  EXPECT_EQ(fields.byte_size(), 20u);
  EXPECT_EQ(fields.entries().size(), 2u);
  EXPECT_FALSE(fields.has("c"));
}

TEST(HttpFields, SetPastLimitRefusedAndUnchanged) {
  FieldList fields = empty_fields(20);
  ASSERT_EQ(fields.append("a", "123"), std::nullopt);  // 4
  ASSERT_EQ(fields.append("b", "123"), std::nullopt);  // 8
  // Replacing a's 4 bytes by 2 + 11 = 13 would make 17: fine.
  ASSERT_EQ(fields.set("a", {"1", "1234567890"}), std::nullopt);
  EXPECT_EQ(fields.byte_size(), 17u);
  // Replacing those 13 bytes by 1 + 16 = 17 would make 21: refused.
  EXPECT_EQ(fields.set("a", {std::string(16, 'v')}), FieldError::size_exceeded);
  EXPECT_EQ(fields.get("a"), (Values{"1", "1234567890"}));
  EXPECT_EQ(fields.byte_size(), 17u);
}

TEST(HttpFields, SizeCheckedAfterForbidden) {
  FieldList fields = empty_fields(4);
  EXPECT_EQ(fields.append("host", "example.com"), FieldError::forbidden);
  EXPECT_EQ(fields.set("x y", {"example.com"}), FieldError::invalid_syntax);
}

TEST(HttpFields, FromListPastLimit) {
  auto listed = FieldList::from_list({{"a", "1234"}, {"b", "1234"}}, default_forbidden(), 9);
  ASSERT_TRUE(std::holds_alternative<FieldError>(listed));
  EXPECT_EQ(std::get<FieldError>(listed), FieldError::size_exceeded);

  auto fits = FieldList::from_list({{"a", "1234"}, {"b", "1234"}}, default_forbidden(), 10);
  ASSERT_TRUE(std::holds_alternative<FieldList>(fits));
  EXPECT_EQ(std::get<FieldList>(fits).byte_size(), 10u);
}

TEST(HttpFields, AddFromHostBypassesForbiddenButCounts) {
  FieldList fields = empty_fields(16);
  fields.add_from_host("Host", "example.com");
  fields.add_from_host("Transfer-Encoding", "chunked");
  EXPECT_EQ(fields.get("host"), Values{"example.com"});
  EXPECT_EQ(fields.get("transfer-encoding"), Values{"chunked"});
  EXPECT_EQ(fields.entries().front().first, "host");
  EXPECT_EQ(fields.byte_size(), 15u + 24u);
  // Past the limit now, so the guest can add nothing more.
  EXPECT_EQ(fields.append("a", ""), FieldError::size_exceeded);
  EXPECT_FALSE(fields.has("a"));
}

TEST(HttpFields, ShrinkingPastTheLimitAllowed) {
  FieldList fields = empty_fields(10);
  fields.add_from_host("x-big", std::string(20, 'v'));  // 25 bytes, past the limit
  EXPECT_EQ(fields.set("x-big", {"small"}), std::nullopt);
  EXPECT_EQ(fields.byte_size(), 10u);
  EXPECT_EQ(fields.append("y", ""), FieldError::size_exceeded);
}

}  // namespace
}  // namespace cmhost::http
