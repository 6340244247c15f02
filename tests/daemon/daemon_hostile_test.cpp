// Hostile clients of the daemon, as a user the policy names (the worst case: a
// stranger is turned away at the first request): malformed JSON, unknown fields,
// oversized and truncated frames, slow senders, thousands of connections, a client
// that never reads, and a seeded fuzz of random frames with a bounded budget. The
// daemon stays up, others are served, and no GPU changes (setter log).
#include <gtest/gtest.h>
#include <poll.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include <fcntl.h>

#include <cstring>
#include <random>

#include "daemon/daemon_test_support.hpp"
#include "daemon/protocol.hpp"

namespace dvfslab::testing {
namespace {

using namespace std::chrono_literals;

// The daemon's --request-timeout-ms in these tests: short, so a slow sender is cut quickly.
constexpr int request_timeout_ms = 1000;

int connect_raw(const std::filesystem::path& socket) {
  sockaddr_un address{};
  address.sun_family = AF_UNIX;
  std::strncpy(address.sun_path, socket.c_str(), sizeof address.sun_path - 1);
  const int fd = ::socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (fd >= 0 && ::connect(fd, reinterpret_cast<const sockaddr*>(&address), sizeof address) == 0) return fd;
  if (fd >= 0) ::close(fd);
  return -1;
}

void send_bytes(int fd, const std::string& bytes) {
  [[maybe_unused]] const ssize_t sent = ::send(fd, bytes.data(), bytes.size(), MSG_NOSIGNAL);
}

std::string frame_of(const std::string& payload) {
  std::string frame;
  const auto size = static_cast<std::uint32_t>(payload.size());
  for (int shift : {24, 16, 8, 0}) frame.push_back(static_cast<char>((size >> shift) & 0xff));
  return frame + payload;
}

// The next answer's payload, "<closed>" when the daemon closed, "<silent>" after `limit`.
std::string answer(int fd, std::chrono::milliseconds limit = 3000ms) {
  daemon::FrameReader reader;
  const auto deadline = std::chrono::steady_clock::now() + limit;
  char buffer[4096];
  for (;;) {
    if (auto payload = reader.next()) return *payload;
    const auto left =
        std::chrono::duration_cast<std::chrono::milliseconds>(deadline - std::chrono::steady_clock::now());
    pollfd polled{fd, POLLIN, 0};
    if (left.count() <= 0 || ::poll(&polled, 1, static_cast<int>(left.count())) <= 0) return "<silent>";
    const ssize_t got = ::recv(fd, buffer, sizeof buffer, 0);
    if (got <= 0) return "<closed>";
    reader.feed(buffer, static_cast<std::size_t>(got));
  }
}

class DaemonHostileTest : public DaemonTest {
 protected:
  void SetUp() override {
    DaemonTest::SetUp();
    if (IsSkipped()) return;
    hostile = ensure_test_user(stranger_user_name);
  }

  void start_daemon_with_timeout(int timeout_ms) {
    daemon = start_daemon("[daemon]\nmax_connections_per_user = 16\n[[rule]]\nusers = [\"" + test_user_name +
                              "\", \"" + stranger_user_name + "\"]\ngpus = \"all\"\n",
                          {"--request-timeout-ms", std::to_string(timeout_ms)});
  }

  // A well-behaved client changes a GPU and gets it back, quickly: within 2 s, or
  // 6 s under AddressSanitizer, which slows every step (its fork as another user
  // included) two to three times; on 2 loaded cores 2 s was missed by 56 ms.
#if defined(__SANITIZE_ADDRESS__)
  static constexpr std::chrono::milliseconds served_within{6000};
#else
  static constexpr std::chrono::milliseconds served_within{2000};
#endif
  void expect_a_good_client_is_served() {
    const std::filesystem::path socket = daemon->socket();
    const auto start = std::chrono::steady_clock::now();
    const ChildResult good = run_as(user, [&](std::string& report) {
      DaemonConnection connection(socket, served_within);
      connection.request(lease_request({"0"}));
      connection.request(apply_request("0", 1200, std::nullopt, std::nullopt));
      connection.request({{"op", "release"}});
      report = "served";
      return 0;
    });
    EXPECT_EQ(good.report, "served") << daemon->error();
    EXPECT_LT(std::chrono::steady_clock::now() - start, served_within);
    EXPECT_TRUE(wait_for_controls(0, controls_an_administrator_left(), 1000ms));
  }

  TestUser hostile;
  std::unique_ptr<DaemonUnderTest> daemon;
};

TEST_F(DaemonHostileTest, MalformedRequestsAreAnsweredWithWhatIsWrongAndChangeNothing) {
  start_daemon_with_timeout(request_timeout_ms);
  const std::filesystem::path socket = daemon->socket();
  const ChildResult client = run_as(hostile, [&](std::string& report) {
    const int fd = connect_raw(socket);
    for (const std::string& payload :
         {std::string("{not json"), std::string("[1,2]"), std::string(R"({"version":2,"op":"hello"})"),
          std::string(R"({"version":1,"op":"hello","extra":1})"),
          std::string(R"({"version":1,"op":"lease","gpus":"0"})"),
          std::string(R"({"version":1,"op":"apply","settings":[{"gpu":"0","sm_mhz":"1200"}]})"),
          std::string(R"({"version":1,"op":"format-disk"})"), std::string(R"({"version":1,"op":"hello"})")}) {
      send_bytes(fd, frame_of(payload));
      report += answer(fd) + "\n";
    }
    ::close(fd);
    return 0;
  });
  for (const char* expected :
       {"the request is not valid JSON", "a request must be a JSON object", "unsupported protocol version 2",
        "hello: unknown field 'extra'", "lease: 'gpus' must be a list",
        "apply: 'sm_mhz' must be a whole number", "unknown op: valid ops are", "\"ok\":true"})
    EXPECT_NE(client.report.find(expected), std::string::npos) << expected << "\n" << client.report;
  EXPECT_EQ(read_setter_log(setter_log()), "");
  expect_a_good_client_is_served();
}

TEST_F(DaemonHostileTest, OversizedTruncatedAndSlowFramesEndOnlyTheirOwnConnection) {
  start_daemon_with_timeout(request_timeout_ms);
  const std::filesystem::path socket = daemon->socket();
  const ChildResult client = run_as(hostile, [&](std::string& report) {
    int fd = connect_raw(socket);
    send_bytes(fd, std::string("\x7f\xff\xff\xff", 4) + "{");
    const std::string refusal = answer(fd);
    report += "oversized: " + refusal + " then " + answer(fd) + "\n";
    ::close(fd);
    fd = connect_raw(socket);
    send_bytes(fd, frame_of(R"({"version":1,"op":"hello"})").substr(0, 12));
    ::close(fd);  // truncated, then gone
    fd = connect_raw(socket);
    send_bytes(fd, frame_of(R"({"version":1,"op":"hello"})").substr(0, 6));
    const std::string timeout = answer(fd, std::chrono::milliseconds(3 * request_timeout_ms));
    report += "slow: " + timeout + " then " + answer(fd) + "\n";
    ::close(fd);
    return 0;
  });
  EXPECT_NE(client.report.find(
                "oversized: {\"error\":\"a frame of 2147483647 bytes exceeds the limit of 65536 bytes\""),
            std::string::npos)
      << client.report;
  EXPECT_NE(
      client.report.find("} then <closed>\nslow: {\"error\":\"no complete request within 1000 ms; closing\""),
      std::string::npos)
      << client.report;
  EXPECT_NE(client.report.find("closing\",\"ok\":false,\"version\":1} then <closed>\n"), std::string::npos)
      << client.report;
  EXPECT_EQ(read_setter_log(setter_log()), "");
  expect_a_good_client_is_served();
}

TEST_F(DaemonHostileTest, ThousandsOfConnectionsAndANeverReadingClientDoNotStopOthersBeingServed) {
  // Long enough that the held connections outlive the flood.
  start_daemon_with_timeout(60000);
  const std::filesystem::path socket = daemon->socket();
  UserChild flood(hostile, [&](const auto& ready) {
    std::vector<int> held;
    int turned_away = 0;
    for (int attempt = 0; attempt < 2000; ++attempt) {
      const int fd = connect_raw(socket);
      if (fd < 0) continue;
      pollfd polled{fd, POLLIN, 0};
      // The daemon answers a connection over the limit at once and closes it.
      if (::poll(&polled, 1, held.size() < 16 ? 20 : 2000) > 0 &&
          answer(fd, 100ms).find("connections to the daemon already") != std::string::npos) {
        ++turned_away;
        ::close(fd);
      } else {
        held.push_back(fd);
      }
    }
    // Held connections: one never reads the answers to a flood of requests, the
    // others start a request and stall.
    const std::string hello = frame_of(R"({"version":1,"op":"hello"})");
    std::string flood_bytes;
    for (int i = 0; i < 20000; ++i) flood_bytes += hello;
    ::fcntl(held.front(), F_SETFL, O_NONBLOCK);
    [[maybe_unused]] const ssize_t sent =
        ::send(held.front(), flood_bytes.data(), flood_bytes.size(), MSG_NOSIGNAL);
    for (std::size_t i = 1; i < held.size(); ++i) send_bytes(held[i], hello.substr(0, 3));
    ready(std::to_string(held.size()) + " held, " + std::to_string(turned_away) + " turned away");
  });
  const std::optional<std::string> flooded = flood.wait_until_ready();
  ASSERT_TRUE(flooded);
  EXPECT_EQ(*flooded, "16 held, 1984 turned away");
  expect_a_good_client_is_served();
  EXPECT_NE(daemon->audit().find("refused: the client does not read its answers"), std::string::npos);
  const std::string setters = read_setter_log(setter_log());
  EXPECT_EQ(setters.find("device=1"), std::string::npos) << "only the good client's GPU 0 was touched";
}

TEST_F(DaemonHostileTest, SeededFuzzOfRandomFramesChangesNothingAndTheDaemonStaysUp) {
  start_daemon_with_timeout(request_timeout_ms);
  const std::filesystem::path socket = daemon->socket();
  const ChildResult fuzz = run_as(hostile, [&](std::string& report) {
    std::mt19937 random(20261203);
    const std::vector<std::string> pieces = {"{",
                                             "}",
                                             "[",
                                             "]",
                                             "\"version\":1",
                                             "\"op\":",
                                             "\"lease\"",
                                             "\"apply\"",
                                             "\"gpus\":[\"0\"]",
                                             "\"settings\":[{\"gpu\":\"0\",\"sm_mhz\":99999}]",
                                             ",",
                                             ":",
                                             "null",
                                             "1e999",
                                             "\"\\u0000\"",
                                             "-1",
                                             "true",
                                             "\xff\xfe"};
    int answered = 0, closed = 0;
    for (int trial = 0; trial < 300; ++trial) {
      const int fd = connect_raw(socket);
      if (fd < 0) return 1;
      std::string payload;
      const int count = std::uniform_int_distribution<int>(0, 12)(random);
      for (int i = 0; i < count; ++i)
        payload += pieces[std::uniform_int_distribution<std::size_t>(0, pieces.size() - 1)(random)];
      std::string bytes = frame_of(payload);
      // Every fifth frame announces a length over the limit (a longer one than sent
      // would only wait out the request timeout, which the truncated-frame test covers).
      if (trial % 5 == 0) bytes[0] = static_cast<char>(random() | 0x01);
      send_bytes(fd, bytes);
      const std::string reply = answer(fd, std::chrono::milliseconds(2 * request_timeout_ms));
      (reply == "<closed>" ? closed : answered) += 1;
      ::close(fd);
    }
    report = std::to_string(answered + closed) + " frames";
    return 0;
  });
  EXPECT_EQ(fuzz.report, "300 frames") << daemon->error();
  EXPECT_EQ(read_setter_log(setter_log()), "");
  expect_a_good_client_is_served();
}

}  // namespace
}  // namespace dvfslab::testing
