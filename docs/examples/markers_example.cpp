// Reports progress to `dvfslab measure` through the marker protocol.
//   dvfslab measure --skip-iters 1 -- ./markers_example 20
// Without dvfslab (DVFSLAB_MARK_FD unset) it runs the same and reports nothing.
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <thread>

namespace {

// One write() per line: lines from a single writer never interleave.
void mark(int fd, const std::string& line) {
  if (fd < 0) return;
  const std::string text = line + "\n";
  if (::write(fd, text.data(), text.size()) < 0) std::perror("marker write");
}

}  // namespace

int main(int argc, char** argv) {
  const int steps = argc > 1 ? std::atoi(argv[1]) : 20;
  const int batch = 64;
  const char* fd_text = std::getenv("DVFSLAB_MARK_FD");
  const int fd = fd_text ? std::atoi(fd_text) : -1;

  mark(fd, "dvfslab:begin train");
  for (int step = 0; step < steps; ++step) {
    std::this_thread::sleep_for(std::chrono::milliseconds(10));  // one training step would run here
    mark(fd, "dvfslab:iter 1 items " + std::to_string(batch));
  }
  mark(fd, "dvfslab:end train");
  if (fd >= 0) ::close(fd);  // ends the steady-state window before tear-down
  return 0;
}
