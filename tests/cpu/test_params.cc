#include <gtest/gtest.h>

#include <chrono>
#include <cstdlib>
#include <fstream>
#include <iterator>
#include <set>

#include "peerlink/error.hpp"
#include "peerlink/params.hpp"

namespace peerlink {
namespace {

ErrorCode codeOf(const std::function<void()>& action, std::string* message = nullptr) {
  try {
    action();
  } catch (const Error& error) {
    if (message != nullptr) *message = error.what();
    return error.code();
  }
  ADD_FAILURE() << "no Error thrown";
  return ErrorCode::Internal;
}

TEST(ParamRegistry, EveryParameterIsDeclaredOnceWithDescriptionAndValidDefault) {
  std::set<std::string> names;
  for (const ParamSpec& spec : paramRegistry()) {
    EXPECT_EQ(spec.name.rfind("PEERLINK_", 0), 0u) << spec.name;
    EXPECT_TRUE(names.insert(spec.name).second) << spec.name << " declared twice";
    EXPECT_FALSE(spec.description.empty()) << spec.name;
    EXPECT_EQ(canonicalParamValue(spec, spec.defaultValue), spec.defaultValue) << spec.name;
    if (spec.type == ParamType::Enum || spec.type == ParamType::List) {
      EXPECT_FALSE(spec.allowed.empty());
    }
  }
  EXPECT_GE(names.size(), 5u);
}

TEST(Params, DefaultsComeFromTheRegistry) {
  const Params params;
  EXPECT_EQ(params.getString("PEERLINK_DEBUG"), "WARN");
  EXPECT_TRUE(params.getBool("PEERLINK_NVML"));
  EXPECT_EQ(params.getString("PEERLINK_SYSFS_ROOT"), "/sys");
  for (const ParamValue& value : params.values()) EXPECT_EQ(value.source, ParamSource::Default);
}

TEST(Params, EnvironmentValuesAreCanonicalizedAndSourced) {
  const Params params = Params::fromMap({{"PEERLINK_DEBUG", "info"},
                                         {"PEERLINK_NVML", " off "},
                                         {"PEERLINK_DEBUG_SUBSYS", "topo,P2P,topo"},
                                         {"HOME", "/root"}});
  EXPECT_EQ(params.getString("PEERLINK_DEBUG"), "INFO");
  EXPECT_FALSE(params.getBool("PEERLINK_NVML"));
  EXPECT_EQ(params.getList("PEERLINK_DEBUG_SUBSYS"), (std::vector<std::string>{"TOPO", "P2P"}));
  for (const ParamValue& value : params.values()) {
    const bool set = value.spec->name == "PEERLINK_DEBUG" || value.spec->name == "PEERLINK_NVML" ||
                     value.spec->name == "PEERLINK_DEBUG_SUBSYS";
    EXPECT_EQ(value.source, set ? ParamSource::Environment : ParamSource::Default) << value.spec->name;
  }
  EXPECT_TRUE(params.unknownVariables().empty());
}

TEST(Params, AllExpandsToEveryAllowedSubsystem) {
  const Params params = Params::fromMap({{"PEERLINK_DEBUG_SUBSYS", "all"}});
  EXPECT_EQ(params.getList("PEERLINK_DEBUG_SUBSYS"), paramSpec("PEERLINK_DEBUG_SUBSYS").allowed);
}

TEST(Params, MalformedValuesAreRejectedNamingVariableAndAllowedValues) {
  struct Case {
    const char* name;
    const char* value;
    const char* mentions;
  };
  for (const Case& c :
       {Case{"PEERLINK_DEBUG", "LOUD", "WARN, INFO, TRACE"}, Case{"PEERLINK_DEBUG", "", "WARN, INFO, TRACE"},
        Case{"PEERLINK_NVML", "2", "boolean"}, Case{"PEERLINK_NVML", "yesplease", "boolean"},
        Case{"PEERLINK_DEBUG_SUBSYS", "TOPO,NET", "INIT"}, Case{"PEERLINK_DEBUG_SUBSYS", "TOPO,,P2P", "INIT"},
        Case{"PEERLINK_DEBUG_SUBSYS", "", "INIT"}}) {
    std::string message;
    EXPECT_EQ(codeOf(
                  [&] {
                    Params::fromMap({{c.name, c.value}});
                  },
                  &message),
              ErrorCode::InvalidUsage)
        << c.name << "=" << c.value;
    EXPECT_NE(message.find(c.name), std::string::npos) << message;
    EXPECT_NE(message.find(c.mentions), std::string::npos) << message;
    EXPECT_NE(message.find(std::string("'") + c.value + "'"), std::string::npos) << message;
  }
}

TEST(Params, IntegersAreRangeCheckedAndFullyParsed) {
  ParamSpec spec{"PEERLINK_TEST_INT", ParamType::Int, "5", {}, 1, 100, "test"};
  EXPECT_EQ(canonicalParamValue(spec, "42"), "42");
  EXPECT_EQ(canonicalParamValue(spec, " 7 "), "7");
  for (const char* bad : {"0", "101", "12abc", "abc", "", "1e3", "99999999999999999999999"}) {
    std::string message;
    EXPECT_EQ(codeOf([&] { canonicalParamValue(spec, bad); }, &message), ErrorCode::InvalidUsage) << bad;
    EXPECT_NE(message.find("1..100"), std::string::npos) << message;
  }
}

// An integer may have to be a multiple of a step, with 0 allowed beside its range (a built-in choice): the
// ring chunk the rings can move is checked when the setting is read, wherever it is used later.
TEST(Params, IntegersMayNeedAStepAndAllowZeroBesideTheirRange) {
  ParamSpec spec{"PEERLINK_TEST_INT", ParamType::Int, "0", {}, 1024, 1048576, "test", ParamAudience::Tuning, 16, true};
  EXPECT_EQ(describeAllowed(spec), "0, or an integer in 1024..1048576, a multiple of 16");
  for (const char* good : {"0", "1024", "4096", "1048576"}) EXPECT_EQ(canonicalParamValue(spec, good), good);
  for (const char* bad : {"16", "1008", "1030", "4100", "1048592", "-16"}) {
    std::string message;
    EXPECT_EQ(codeOf([&] { canonicalParamValue(spec, bad); }, &message), ErrorCode::InvalidUsage) << bad;
    EXPECT_NE(message.find("a multiple of 16"), std::string::npos) << message;
  }
  for (const char* bad : {"100", "1000", "4100"}) {
    std::string message;
    EXPECT_EQ(codeOf(
                  [&] {
                    Params::fromMap({{"PEERLINK_COLL_RING_CHUNK", bad}});
                  },
                  &message),
              ErrorCode::InvalidUsage)
        << bad;
    EXPECT_NE(message.find("PEERLINK_COLL_RING_CHUNK"), std::string::npos) << message;
  }
  EXPECT_EQ(Params::fromMap({{"PEERLINK_COLL_RING_CHUNK", "2048"}}).getInt("PEERLINK_COLL_RING_CHUNK"), 2048);
}

// A size in bytes may be written as nccl-tests and the CLI's flags take it, K, M and G being powers of 1024; its
// canonical form is the number of bytes, checked like any integer.
TEST(Params, SizesInBytesTakeSuffixes) {
  ParamSpec spec{"PEERLINK_TEST_BYTES", ParamType::Int, "1048576", {},  1048576, 4294967296, "test",
                 ParamAudience::Tuning, 1048576,        false,     true};
  EXPECT_EQ(describeAllowed(spec),
            "a size in 1048576..4294967296 bytes (K, M, G: 1024, 1024^2, 1024^3), a multiple of 1048576");
  EXPECT_EQ(canonicalParamValue(spec, "512M"), "536870912");
  EXPECT_EQ(canonicalParamValue(spec, "4g"), "4294967296");
  EXPECT_EQ(canonicalParamValue(spec, "1024K"), "1048576");
  EXPECT_EQ(canonicalParamValue(spec, "128MB"), "134217728");
  EXPECT_EQ(canonicalParamValue(spec, " 2M "), "2097152");
  EXPECT_EQ(canonicalParamValue(spec, "3145728"), "3145728");
  for (const char* bad : {"512X", "1536K", "8G", "5G", "M", "-1M", "1.5M", "2MM", "99999999999999999999G"}) {
    std::string message;
    EXPECT_EQ(codeOf([&] { canonicalParamValue(spec, bad); }, &message), ErrorCode::InvalidUsage) << bad;
    EXPECT_NE(message.find("K, M, G"), std::string::npos) << message;
  }
  EXPECT_EQ(Params::fromMap({{"PEERLINK_COLL_STAGING_WINDOW", "256M"}}).getInt("PEERLINK_COLL_STAGING_WINDOW"),
            std::int64_t{256} << 20);
  EXPECT_EQ(Params::fromMap({{"PEERLINK_NET_CHUNK_BYTES", "64K"}}).getInt("PEERLINK_NET_CHUNK_BYTES"), 65536);
  std::string message;
  EXPECT_EQ(codeOf(
                [&] {
                  Params::fromMap({{"PEERLINK_TIMEOUT_MS", "10K"}});
                },
                &message),
            ErrorCode::InvalidUsage)
      << "a count that is not of bytes takes no suffix";
}

// Every parameter says whom it is for; `peerlink env` shows users' by default (test_cli.cc).
TEST(Params, EveryParameterHasAnAudience) {
  int users = 0;
  for (const ParamSpec& spec : paramRegistry()) {
    const std::string audience = paramAudienceName(spec.audience);
    EXPECT_TRUE(audience == "user" || audience == "tuning" || audience == "testing") << spec.name;
    users += spec.audience == ParamAudience::User ? 1 : 0;
  }
  EXPECT_GT(users, 0);
  EXPECT_LT(users, static_cast<int>(paramRegistry().size()));
  EXPECT_EQ(paramSpec("PEERLINK_DEBUG").audience, ParamAudience::User);
  EXPECT_EQ(paramSpec("PEERLINK_COLL_RING_CHUNK").audience, ParamAudience::Tuning);
  EXPECT_EQ(paramSpec("PEERLINK_FAULT_DROP_FLAG").audience, ParamAudience::Testing);
}

TEST(Params, UnknownPeerlinkVariablesAreReportedWithASuggestion) {
  const Params params = Params::fromMap({{"PEERLINK_DEBGU", "INFO"}, {"PEERLINK_WHATEVER_ELSE", "1"}});
  ASSERT_EQ(params.unknownVariables().size(), 2u);
  EXPECT_NE(params.unknownVariables()[0].find("did you mean PEERLINK_DEBUG?"), std::string::npos);
  EXPECT_NE(params.unknownVariables()[1].find("peerlink env"), std::string::npos);
  EXPECT_EQ(params.getString("PEERLINK_DEBUG"), "WARN");
}

// A name or value from a hostile environment: a megabyte long, with terminal escapes. The warning and the
// error stay short and printable, and no edit distance over the whole name is computed.
TEST(Params, HugeOrEscapedNamesAndValuesStayShortAndPrintable) {
  const auto start = std::chrono::steady_clock::now();
  const Params params = Params::fromMap({{"PEERLINK_" + std::string(1 << 20, 'X'), "1"}, {"PEERLINK_\x1b[2J", "1"}});
  EXPECT_LT(std::chrono::steady_clock::now() - start, std::chrono::seconds(1));
  ASSERT_EQ(params.unknownVariables().size(), 2u);
  for (const std::string& warning : params.unknownVariables()) {
    EXPECT_LT(warning.size(), 200u) << warning;
    EXPECT_EQ(warning.find('\x1b'), std::string::npos) << warning;
  }
  try {
    Params::fromMap({{"PEERLINK_DEBUG", std::string(1 << 20, 'y') + "\x1b"}});
    ADD_FAILURE() << "accepted";
  } catch (const Error& error) {
    EXPECT_LT(std::string(error.what()).size(), 300u);
  }
}

TEST(Params, OverridesAreValidatedAndMarked) {
  Params params;
  params.set("PEERLINK_TOPO_FILE", "x.json");
  EXPECT_EQ(params.getString("PEERLINK_TOPO_FILE"), "x.json");
  EXPECT_EQ(codeOf([&] { params.set("PEERLINK_DEBUG", "LOUD"); }), ErrorCode::InvalidUsage);
  EXPECT_EQ(params.getString("PEERLINK_DEBUG"), "WARN");
  for (const ParamValue& value : params.values()) {
    EXPECT_EQ(value.source, value.spec->name == "PEERLINK_TOPO_FILE" ? ParamSource::Override : ParamSource::Default);
  }
}

TEST(Params, UndeclaredOrMistypedLookupsAreInternalErrors) {
  const Params params;
  EXPECT_EQ(codeOf([&] { params.getBool("PEERLINK_NOT_DECLARED"); }), ErrorCode::Internal);
  EXPECT_EQ(codeOf([&] { params.getBool("PEERLINK_DEBUG"); }), ErrorCode::Internal);
  EXPECT_EQ(codeOf([&] { params.getInt("PEERLINK_NVML"); }), ErrorCode::Internal);
  EXPECT_EQ(codeOf([&] { params.getList("PEERLINK_DEBUG"); }), ErrorCode::Internal);
}

TEST(Params, FromEnvironmentReadsTheProcessEnvironment) {
  ::setenv("PEERLINK_DEBUG", "trace", 1);
  const Params params = Params::fromEnvironment();
  ::unsetenv("PEERLINK_DEBUG");
  EXPECT_EQ(params.getString("PEERLINK_DEBUG"), "TRACE");
}

}  // namespace
}  // namespace peerlink

namespace peerlink {
namespace {

// docs/parameters.md is generated from `peerlink env --json`; this keeps it from drifting.
TEST(ParamDocs, EveryParameterIsDocumentedWithItsDefaultAndDescription) {
  std::ifstream file(std::string(PEERLINK_SOURCE_DIR) + "/docs/parameters.md");
  ASSERT_TRUE(file.good());
  const std::string doc((std::istreambuf_iterator<char>(file)), std::istreambuf_iterator<char>());
  for (const ParamSpec& spec : paramRegistry()) {
    const std::string defaultText = spec.defaultValue.empty() ? "(empty)" : spec.defaultValue;
    EXPECT_NE(doc.find("| `" + spec.name + "` | `" + defaultText + "` |"), std::string::npos)
        << spec.name << " (regenerate docs/parameters.md as its header says)";
    EXPECT_NE(doc.find(spec.description), std::string::npos) << spec.name << " description";
  }
}

}  // namespace
}  // namespace peerlink
