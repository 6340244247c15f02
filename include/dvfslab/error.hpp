#pragma once
// Typed errors. Every message says what went wrong and what the user can do about
// it; the command line prints it as one line and exits with the class's code.
#include <stdexcept>
#include <string>

namespace dvfslab {

// Exit codes of the dvfslab binary (documented in docs/cli.md).
enum class ExitCode : int {
  ok = 0,
  failure = 1,                   // any other error
  usage = 2,                     // bad command line
  config = 3,                    // bad plan, setting or input file
  no_driver = 4,                 // no NVIDIA driver / NVML library
  permission = 5,                // the driver refused a control call, or read-only mode
  not_supported = 6,             // the GPU or driver lacks a feature
  gpu_lost = 7,                  // the GPU fell off the bus
  store = 8,                     // database error
  busy = 9,                      // another dvfslab process holds the GPU
  slurm = 10,                    // `slurm`: Slurm's commands are missing or refused a request
  command_not_executable = 126,  // `measure`: the program exists but cannot run (as shells do)
  command_not_found = 127,       // `measure`: no such program (as shells do)
  interrupted = 130,             // SIGINT / SIGTERM
};

class Error : public std::runtime_error {
 public:
  explicit Error(const std::string& message, ExitCode code = ExitCode::failure)
      : std::runtime_error(message), code_(code) {}
  ExitCode code() const noexcept { return code_; }

 private:
  ExitCode code_;
};

class UsageError : public Error {
 public:
  explicit UsageError(const std::string& message) : Error(message, ExitCode::usage) {}
};

// A bad plan, option value or input file; `where` is "file:line:column" when known.
class ConfigError : public Error {
 public:
  explicit ConfigError(const std::string& message) : Error(message, ExitCode::config) {}
  ConfigError(const std::string& where, const std::string& message)
      : Error(where + ": " + message, ExitCode::config) {}
};

class DriverNotFoundError : public Error {
 public:
  explicit DriverNotFoundError(const std::string& message) : Error(message, ExitCode::no_driver) {}
};

class PermissionError : public Error {
 public:
  explicit PermissionError(const std::string& message) : Error(message, ExitCode::permission) {}
};

class NotSupportedError : public Error {
 public:
  explicit NotSupportedError(const std::string& message) : Error(message, ExitCode::not_supported) {}
};

class GpuLostError : public Error {
 public:
  explicit GpuLostError(const std::string& message) : Error(message, ExitCode::gpu_lost) {}
};

class StoreError : public Error {
 public:
  explicit StoreError(const std::string& message) : Error(message, ExitCode::store) {}
};

class BusyError : public Error {
 public:
  explicit BusyError(const std::string& message) : Error(message, ExitCode::busy) {}
};

// `dvfslab measure` could not start the program it was asked to run.
class CommandStartError : public Error {
 public:
  CommandStartError(const std::string& message, ExitCode code) : Error(message, code) {}
};

class InterruptedError : public Error {
 public:
  explicit InterruptedError(const std::string& message) : Error(message, ExitCode::interrupted) {}
};

}  // namespace dvfslab
