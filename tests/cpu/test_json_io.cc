// JSON at peerlink's boundary (core/json_io.hpp): bounded parsing, messages that quote little and name the
// field, type and range checks that never truncate or wrap, and writing from any bytes.
#include <gtest/gtest.h>

#include <string>

#include <nlohmann/json.hpp>

#include "core/json_io.hpp"
#include "core/text.hpp"
#include "peerlink/error.hpp"

namespace peerlink {
namespace {

using Json = nlohmann::json;

// The message of the InvalidInput error `body` throws; fails the test when it throws nothing else.
template <typename Body>
std::string invalidInput(Body body) {
  try {
    body();
  } catch (const Error& error) {
    EXPECT_EQ(error.code(), ErrorCode::InvalidInput) << error.what();
    return error.what();
  }
  ADD_FAILURE() << "no error";
  return {};
}

TEST(JsonParse, DeepNestingIsRejectedBeforeParsing) {
  // The issue's 70,000 brackets overflowed the stack when a message dumped the value.
  const std::string deep = std::string(70000, '[') + std::string(70000, ']');
  const std::string message = invalidInput([&] { parseJson(deep, "d.json"); });
  EXPECT_NE(message.find("d.json: not JSON: line 1, column 65: nested more than 64 levels deep"), std::string::npos)
      << message;
  EXPECT_LT(message.size(), 200u);
  // 64 levels are fine; brackets inside strings do not count.
  EXPECT_NO_THROW(parseJson(std::string(64, '[') + std::string(64, ']'), "ok.json"));
  EXPECT_NO_THROW(parseJson("[\"" + std::string(100, '[') + "\\\"[\"]", "ok.json"));
  const std::string objects = [] {
    std::string text;
    for (int i = 0; i < 65; ++i) text += "{\"a\":";
    return text + "1" + std::string(65, '}');
  }();
  EXPECT_NE(invalidInput([&] { parseJson(objects, "o.json"); }).find("nested more than 64"), std::string::npos);
}

TEST(JsonParse, TooManyValuesAreRejectedBeforeParsing) {
  std::string many = "[";
  for (std::size_t i = 0; i <= kMaxJsonValues; ++i) many += "{},";
  many += "{}]";
  const std::string message = invalidInput([&] { parseJson(many, "m.json"); });
  EXPECT_NE(message.find("m.json: not JSON: more than 8388608 values"), std::string::npos) << message;
}

TEST(JsonParse, LibraryMessagesAreShortAndUntagged) {
  for (const std::string& text : {std::string("1e999"), std::string("[-1e999]"), std::string("\"caf\xe9\""),
                                  "\"" + std::string(100000, 'x'), std::string("{\"a\":\x01}"), std::string("")}) {
    const std::string message = invalidInput([&] { parseJson(text, "f.json"); });
    EXPECT_EQ(message.rfind("f.json: not JSON: ", 0), 0u) << message;
    EXPECT_EQ(message.find("[json.exception"), std::string::npos) << message;
    EXPECT_LT(message.size(), 400u) << message;
    EXPECT_EQ(printable(message, message.size()), message) << "control characters in " << message;
  }
  EXPECT_NE(invalidInput([] { parseJson("1e999", "f"); }).find("number overflow parsing '1e999'"), std::string::npos);
  EXPECT_NE(invalidInput([] { parseJson("\"caf\xe9\"", "f"); }).find("ill-formed UTF-8"), std::string::npos);
  EXPECT_NE(invalidInput([] { parseJson(" \n", "f"); }).find("the file is empty"), std::string::npos);
}

TEST(JsonExcerpt, ShortAndPrintable) {
  EXPECT_EQ(jsonExcerpt(Json(1.5)), "1.5");
  EXPECT_EQ(jsonExcerpt(Json("abc")), "\"abc\"");
  EXPECT_EQ(jsonExcerpt(Json::array()), "[]");
  EXPECT_EQ(jsonExcerpt(Json::parse("[1,2]")), "[1,2]");
  EXPECT_EQ(jsonExcerpt(Json::parse("[[1],2]")), "an array of 2 element(s)");
  EXPECT_EQ(jsonExcerpt(Json::parse("{\"a\":\"b\"}")), "an object of 1 member(s)");
  EXPECT_EQ(jsonExcerpt(Json("a\x1b[2Jb")), "\"a\\x1b[2Jb\"");
  const std::string longText = jsonExcerpt(Json(std::string(10000, 'y')));
  EXPECT_LT(longText.size(), 80u) << longText;
  EXPECT_NE(longText.find("(10000 bytes)"), std::string::npos) << longText;
}

TEST(JsonText, AnyBytesAreWrittenNeverThrown) {
  // Invalid UTF-8 from a file name, an environment value or a GPU name: replaced, not an exception after
  // the work is done.
  const Json document = {{"file", "caf\xe9.json"}, {"name", std::string("\xff\xfe", 2)}};
  std::string text;
  ASSERT_NO_THROW(text = jsonText(document, -1));
  EXPECT_EQ(text, "{\"file\":\"caf\xef\xbf\xbd.json\",\"name\":\"\xef\xbf\xbd\xef\xbf\xbd\"}");
  EXPECT_NO_THROW(Json::parse(text));
  const nlohmann::ordered_json ordered = {{"b", "\xc3"}};
  EXPECT_NO_THROW(jsonText(ordered));
}

TEST(JsonNode, ErrorsNameTheDocumentAndThePath) {
  const Json document = Json::parse(R"({"cells": [{"src": 1}, {"src": 1.5, "name": "a\u001bb"}], "n": -3})");
  const JsonNode root(document, "run.json");
  const std::vector<JsonNode> cells = root.required("cells").elements(10);
  ASSERT_EQ(cells.size(), 2u);
  EXPECT_EQ(cells[0].required("src").integer(0, 3), 1);
  EXPECT_EQ(invalidInput([&] { cells[1].required("median_us"); }),
            "run.json: cells[1].median_us: required field is missing");
  EXPECT_EQ(invalidInput([&] { cells[1].required("src").integer(0, 3); }),
            "run.json: cells[1].src: expected an integer, got 1.5");
  EXPECT_EQ(invalidInput([&] { cells[0].required("src").integer(2, 3); }),
            "run.json: cells[0].src: 1 is out of range (2..3)");
  EXPECT_EQ(invalidInput([&] { root.required("n").unsignedInteger(); }),
            "run.json: n: expected a non-negative integer, got -3");
  EXPECT_EQ(invalidInput([&] { cells[1].required("name").name(); }),
            "run.json: cells[1].name: \"a\\x1bb\" has a control character (byte 0x1b at offset 1)");
  EXPECT_EQ(cells[1].required("name").text(), "a\\x1bb");
  EXPECT_EQ(invalidInput([&] { root.required("cells").elements(1); }),
            "run.json: cells: 2 elements, more than the 1 allowed here");
  EXPECT_EQ(invalidInput([&] { root.required("n").elements(1); }), "run.json: n: expected an array, got -3");
  EXPECT_EQ(invalidInput([&] { root.required("cells").member("x"); }),
            "run.json: cells: expected an object, got an array of 2 element(s)");
}

TEST(JsonNode, IntegersNeverWrapOrTruncate) {
  const Json document = Json::parse(R"([2147483647, 18446744073709551615, -9223372036854775808, 1e3, 0, -1])");
  const std::vector<JsonNode> values = JsonNode(document, "v.json").elements(6);
  EXPECT_NE(invalidInput([&] { values[0].smallInteger(-1, 3); }).find("2147483647 is out of range (-1..3)"),
            std::string::npos);
  EXPECT_NE(invalidInput([&] { values[1].integer(0, 100); }).find("18446744073709551615 is out of range"),
            std::string::npos);
  EXPECT_EQ(values[1].unsignedInteger(), 18446744073709551615ull);
  EXPECT_NE(invalidInput([&] { values[1].unsignedInteger(1000); }).find("out of range (0..1000)"), std::string::npos);
  EXPECT_EQ(values[2].integer(std::numeric_limits<std::int64_t>::min(), 0), std::numeric_limits<std::int64_t>::min());
  EXPECT_NE(invalidInput([&] { values[3].integer(0, 10000); }).find("expected an integer, got 1000.0"),
            std::string::npos);
  EXPECT_DOUBLE_EQ(values[3].number(0, 1e4), 1000.0);
  EXPECT_NE(invalidInput([&] { values[5].number(0, 1); }).find("-1 is out of range (0..1)"), std::string::npos);
  EXPECT_EQ(values[4].unsignedInteger(0), 0u);
}

TEST(Printable, ControlCharactersAreShownAndLongTextIsCut) {
  EXPECT_EQ(printable("plain text"), "plain text");
  EXPECT_EQ(printable("a\nb\tc\x7f"), "a\\x0ab\\x09c\\x7f");
  EXPECT_EQ(printable("\xc2\x9b"
                      "31m"),
            "\\xc2\\x9b31m");                               // C1 CSI as UTF-8
  EXPECT_EQ(printable("caf\xc3\xa9"), "caf\xc3\xa9");       // other UTF-8 stays
  EXPECT_EQ(printable("caf\xe9.json"), "caf\\xe9.json");    // bytes that are not UTF-8 are shown
  EXPECT_EQ(printable("\xed\xa0\x80"), "\\xed\\xa0\\x80");  // a surrogate is not UTF-8
  EXPECT_EQ(printable("\xf0\x9f\x98\x80!"), "\xf0\x9f\x98\x80!");
  EXPECT_EQ(printable(std::string(300, 'z'), 10), "zzzzzzzzzz... (300 bytes)");
}

}  // namespace
}  // namespace peerlink
