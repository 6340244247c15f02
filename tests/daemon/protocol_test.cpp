// The wire protocol: frames cut from a byte stream however it arrives, oversized
// frames refused before they are read, and requests checked against their schema.
#include <gtest/gtest.h>

#include "daemon/protocol.hpp"

namespace dvfslab::daemon {
namespace {

std::string refusal(const std::string& payload) {
  try {
    parse_request(payload);
  } catch (const ProtocolError& e) {
    return e.what();
  }
  return "accepted";
}

TEST(DaemonProtocol, FramesAreCutFromAStreamByteByByte) {
  const std::string stream = encode_frame({{"a", 1}}) + encode_frame({{"b", 2}});
  FrameReader reader;
  std::vector<std::string> payloads;
  for (char byte : stream) {
    reader.feed(&byte, 1);
    while (auto payload = reader.next()) payloads.push_back(*payload);
  }
  EXPECT_EQ(payloads, (std::vector<std::string>{R"({"a":1})", R"({"b":2})"}));
  EXPECT_FALSE(reader.partial());
}

TEST(DaemonProtocol, AnOversizedFrameIsRefusedFromItsHeader) {
  FrameReader reader;
  reader.feed("\x00\x01\x00\x01", 4);
  EXPECT_THROW(reader.next(), ProtocolError);
}

TEST(DaemonProtocol, RequestsAreCheckedAgainstTheirSchema) {
  const Request lease = parse_request(R"({"version":1,"op":"lease","gpus":["0","GPU-ab"]})");
  ASSERT_TRUE(std::holds_alternative<LeaseRequest>(lease));
  EXPECT_EQ(std::get<LeaseRequest>(lease).gpus, (std::vector<std::string>{"0", "GPU-ab"}));
  const Request apply = parse_request(
      R"({"version":1,"op":"apply","settings":[{"gpu":"0","sm_mhz":1200,"mem_mhz":null,"power_limit_w":400}]})");
  const Setting setting = std::get<ApplyRequest>(apply).settings.at(0).setting;
  EXPECT_EQ(setting, (Setting{1200, std::nullopt, 400}));

  EXPECT_EQ(refusal(R"({"op":"hello"})"), "request: missing field 'version'");
  EXPECT_EQ(refusal(R"({"version":1,"op":"hello","uid":0})"), "hello: unknown field 'uid'");
  EXPECT_EQ(refusal(R"({"version":1,"op":"lease","gpus":[]})"),
            "lease: 'gpus' must be a list of 1 to 256 GPU indices or UUIDs");
  EXPECT_EQ(refusal(R"({"version":1,"op":"lease","gpus":[0]})"),
            "lease: a GPU is named by its index or UUID as a string of 1 to 128 bytes");
  EXPECT_EQ(refusal(R"({"version":1,"op":"apply","settings":[{"gpu":"0","sm_mhz":1200.5}]})"),
            "apply: 'sm_mhz' must be a whole number of MHz from 1 to 100000, or null");
  EXPECT_EQ(refusal(R"({"version":1,"op":"apply","settings":[{"gpu":"0","pl":1}]})"),
            "apply: unknown field 'pl'");
  EXPECT_EQ(refusal(R"({"version":"1","op":"hello"})"),
            "unsupported protocol version \"1\" (this daemon speaks 1)");
}

}  // namespace
}  // namespace dvfslab::daemon
