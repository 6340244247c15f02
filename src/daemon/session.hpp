#pragma once
// One client connection's requests: who it is, what the policy grants it, its
// lease, and the answer to each request. Every change and refusal goes to the
// audit log. Ending the session (connection closed for any reason) restores every
// GPU of its lease before the GPUs can be leased again.
#include <filesystem>
#include <map>
#include <memory>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "daemon/audit_log.hpp"
#include "daemon/lease.hpp"
#include "daemon/policy.hpp"
#include "daemon/protocol.hpp"

namespace dvfslab::daemon {

// What every session of one daemon shares.
struct DaemonContext {
  Policy policy;
  std::string policy_source;               // the policy file, for messages
  std::vector<std::unique_ptr<Gpu>> gpus;  // every GPU served, in index order
  std::filesystem::path state_dir;
  AuditLog* audit = nullptr;
  std::map<std::string, const PeerIdentity*> lease_holders;  // GPU UUID -> the peer whose lease has it
};

class Session {
 public:
  Session(PeerIdentity peer, DaemonContext& context);
  // Restores and releases the lease, if any.
  ~Session();
  Session(const Session&) = delete;
  Session& operator=(const Session&) = delete;

  // The answer to one request payload. A peer the policy does not name is refused
  // and the session asks to be closed (wants_close).
  nlohmann::json handle(const std::string& payload);
  bool wants_close() const { return wants_close_; }

  // Restores every GPU of the lease and releases it, logging `why` ("disconnect",
  // "expired", "shutdown"). Nothing without a lease.
  void end_lease(const std::string& why);
  std::optional<Lease::TimePoint> lease_expires_at() const;

  const PeerIdentity& peer() const { return peer_; }

 private:
  nlohmann::json hello();
  nlohmann::json take_lease(const LeaseRequest& request);
  nlohmann::json apply(const ApplyRequest& request);
  nlohmann::json restore();
  nlohmann::json release();
  nlohmann::json refuse(const std::string& request, const std::string& gpu, const std::string& why);
  Gpu* find_gpu(const std::string& name) const;
  std::string describe_holder(const PeerIdentity& holder) const;

  PeerIdentity peer_;
  DaemonContext& context_;
  std::unique_ptr<Lease> lease_;
  bool lease_expired_ = false;
  bool wants_close_ = false;
};

}  // namespace dvfslab::daemon
