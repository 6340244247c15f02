#include "dvfslab/writer_registry.hpp"

#include <gtest/gtest.h>

#include <functional>
#include <sstream>
#include <string>

#include "dvfslab/error.hpp"

namespace dvfslab {
namespace {

WriterRegistry<int> two_writers() {
  WriterRegistry<int> writers("number");
  writers.add({"decimal", "base ten", [](int value, std::ostream& out) { out << value; }});
  writers.add({"hex", "base sixteen", [](int value, std::ostream& out) { out << std::hex << value; }});
  return writers;
}

std::string error_of(const std::function<void()>& action) {
  try {
    action();
  } catch (const ConfigError& e) {
    return e.what();
  }
  return "(no error)";
}

TEST(WriterRegistry, AWriterIsFoundByItsNameAndWrites) {
  const WriterRegistry<int> writers = two_writers();
  std::ostringstream out;
  writers.find("hex").write(255, out);
  EXPECT_EQ(out.str(), "ff");
}

TEST(WriterRegistry, HelpAndChoicesListTheWritersInTheOrderTheyWereAdded) {
  WriterRegistry<int> writers = two_writers();
  writers.add({"roman", "up to 3", [](int, std::ostream& out) { out << "I"; }});
  EXPECT_EQ(writers.choices(), "decimal, hex or roman");
  EXPECT_EQ(writers.help(), "decimal (base ten), hex (base sixteen) or roman (up to 3)");
  EXPECT_EQ(writers.names(), (std::vector<std::string>{"decimal", "hex", "roman"}));
}

TEST(WriterRegistry, AnUnknownNameIsOneErrorListingTheChoices) {
  const WriterRegistry<int> writers = two_writers();
  EXPECT_EQ(error_of([&] { writers.find("octal"); }), "unknown number format 'octal': choose decimal or hex");
}

TEST(WriterRegistry, ASecondWriterOfTheSameNameIsRefusedAndTheFirstStays) {
  WriterRegistry<int> writers = two_writers();
  EXPECT_EQ(error_of([&] {
              writers.add({"hex", "again", [](int, std::ostream&) {}});
            }),
            "number format 'hex' is registered already");
  std::ostringstream out;
  writers.find("hex").write(16, out);
  EXPECT_EQ(out.str(), "10");
}

TEST(WriterRegistry, AWriterWithoutANameOrAFunctionIsRefused) {
  WriterRegistry<int> writers("number");
  EXPECT_EQ(error_of([&] {
              writers.add({"", "nameless", [](int, std::ostream&) {}});
            }),
            "a number writer needs a name");
  EXPECT_EQ(error_of([&] {
              writers.add({"empty", "no function", {}});
            }),
            "number writer 'empty' has no write function");
  EXPECT_TRUE(writers.names().empty());
}

}  // namespace
}  // namespace dvfslab
