// Who runs a process: the owner of its /proc entry, by name, so that the exporter
// can say which user's dvfslab changed a GPU.
#include <pwd.h>
#include <sys/stat.h>

#include <string>
#include <vector>

#include "dvfslab/exporter.hpp"

namespace dvfslab {

std::string process_user(int pid) {
  struct stat status {};
  if (pid <= 0 || ::stat(("/proc/" + std::to_string(pid)).c_str(), &status) != 0) return "";
  passwd entry{};
  passwd* found = nullptr;
  std::vector<char> buffer(16384);
  if (::getpwuid_r(status.st_uid, &entry, buffer.data(), buffer.size(), &found) != 0 || found == nullptr)
    return std::to_string(status.st_uid);  // a user without a name (a container's) is still told apart
  return found->pw_name;
}

}  // namespace dvfslab
