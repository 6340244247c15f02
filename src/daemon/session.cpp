#include "daemon/session.hpp"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <set>

#include "dvfslab/error.hpp"

namespace dvfslab::daemon {
namespace {

using nlohmann::json;

json range_json(const std::optional<IntRange>& range) {
  return range ? json::array({range->min, range->max}) : json(nullptr);
}

json grant_json(const GpuIdentity& gpu, const std::optional<Grant>& grant) {
  json entry = {{"index", gpu.index}, {"uuid", gpu.uuid}, {"name", gpu.name}};
  if (!grant) {
    entry["access"] = "none";
    return entry;
  }
  entry["access"] = grant->control ? "control" : "read";
  entry["sm_mhz"] = range_json(grant->sm_mhz);
  entry["mem_mhz"] = range_json(grant->mem_mhz);
  entry["power_limit_w"] = grant->power_limit_w
                               ? json::array({grant->power_limit_w->min_w, grant->power_limit_w->max_w})
                               : json(nullptr);
  entry["max_lease_seconds"] = grant->max_lease_seconds ? json(*grant->max_lease_seconds) : json(nullptr);
  return entry;
}

json effective_json(const GpuIdentity& gpu, const EffectiveSetting& effective) {
  const auto optional = [](const auto& value) { return value ? json(*value) : json(nullptr); };
  return {{"gpu", gpu.uuid},
          {"sm_mhz", optional(effective.sm_mhz)},
          {"mem_mhz", optional(effective.mem_mhz)},
          {"power_limit_w", optional(effective.power_limit_w)}};
}

std::string describe_setting(const Setting& setting) {
  const auto knob = [](const std::optional<int>& value) {
    return value ? std::to_string(*value) : "default";
  };
  return fmt::format("sm={} mem={} pl={}", knob(setting.sm_mhz), knob(setting.mem_mhz),
                     knob(setting.power_limit_w));
}

}  // namespace

Session::Session(PeerIdentity peer, DaemonContext& context) : peer_(std::move(peer)), context_(context) {}

Session::~Session() {
  end_lease("disconnect");
  context_.audit->write({.peer = &peer_, .request = "disconnect", .gpu = "-", .result = "ok"});
}

json Session::handle(const std::string& payload) {
  Request request;
  try {
    request = parse_request(payload);
  } catch (const ProtocolError& e) {
    return refuse("malformed", "-", e.what());
  }
  if (!names_peer(context_.policy, peer_)) {
    wants_close_ = true;
    return refuse(
        request_name(request), "-",
        fmt::format("user {} (uid {}) is not named in the policy {}; ask the administrator to add a "
                    "[[rule]] for you",
                    peer_.user, peer_.uid, context_.policy_source));
  }
  if (lease_expired_ && !std::holds_alternative<HelloRequest>(request) &&
      !std::holds_alternative<LeaseRequest>(request)) {
    lease_expired_ = false;
    return refuse(
        request_name(request), "-",
        "your lease reached the policy's max_lease_seconds and its GPUs were restored; take a new lease");
  }
  return std::visit(
      [this](const auto& typed) -> json {
        using Type = std::decay_t<decltype(typed)>;
        if constexpr (std::is_same_v<Type, HelloRequest>) return hello();
        if constexpr (std::is_same_v<Type, LeaseRequest>) return take_lease(typed);
        if constexpr (std::is_same_v<Type, ApplyRequest>) return apply(typed);
        if constexpr (std::is_same_v<Type, RestoreRequest>) return restore();
        if constexpr (std::is_same_v<Type, ReleaseRequest>) return release();
      },
      request);
}

json Session::refuse(const std::string& request, const std::string& gpu, const std::string& why) {
  context_.audit->write({.peer = &peer_, .request = request, .gpu = gpu, .result = "refused: " + why});
  return error_response(why);
}

Gpu* Session::find_gpu(const std::string& name) const {
  for (const auto& gpu : context_.gpus) {
    if (gpu_entry_matches(name, gpu->identity())) return gpu.get();
  }
  return nullptr;
}

std::string Session::describe_holder(const PeerIdentity& holder) const {
  return fmt::format("user {} (uid {}, pid {})", holder.user, holder.uid, holder.pid);
}

json Session::hello() {
  json gpus = json::array();
  for (const auto& gpu : context_.gpus)
    gpus.push_back(grant_json(gpu->identity(), grant_for(context_.policy, peer_, gpu->identity())));
  return ok_response({{"user", peer_.user}, {"uid", peer_.uid}, {"gpus", gpus}});
}

json Session::take_lease(const LeaseRequest& request) {
  const std::string names = fmt::format("{}", fmt::join(request.gpus, ","));
  if (lease_) return refuse("lease", names, "you hold a lease already; release it before taking another");
  std::vector<Gpu*> gpus;
  std::vector<Grant> grants;
  std::optional<int> max_seconds;
  std::set<Gpu*> seen;
  for (const std::string& name : request.gpus) {
    Gpu* gpu = find_gpu(name);
    if (gpu == nullptr) {
      std::vector<std::string> present;
      for (const auto& known : context_.gpus)
        present.push_back(fmt::format("{} ({})", known->identity().index, known->identity().uuid));
      return refuse("lease", name,
                    fmt::format("no GPU '{}' here; the daemon serves {}", name, fmt::join(present, ", ")));
    }
    const GpuIdentity& identity = gpu->identity();
    if (!seen.insert(gpu).second)
      return refuse("lease", identity.uuid,
                    fmt::format("GPU {} is named twice in the lease", identity.index));
    const std::optional<Grant> grant = grant_for(context_.policy, peer_, identity);
    if (!grant || !grant->control)
      return refuse(
          "lease", identity.uuid,
          fmt::format("the policy does not let user {} change GPU {} ({}){}", peer_.user, identity.index,
                      identity.uuid,
                      grant ? fmt::format(" (read only, rule at {})", grant->rule_where) : std::string()));
    if (const auto holder = context_.lease_holders.find(identity.uuid);
        holder != context_.lease_holders.end())
      return refuse("lease", identity.uuid,
                    fmt::format("GPU {} ({}) is leased by {}; try again when that job ends", identity.index,
                                identity.uuid, describe_holder(*holder->second)));
    if (grant->max_lease_seconds)
      max_seconds = std::min(max_seconds.value_or(*grant->max_lease_seconds), *grant->max_lease_seconds);
    gpus.push_back(gpu);
    grants.push_back(*grant);
  }
  std::optional<Lease::TimePoint> expires_at;
  if (max_seconds) expires_at = std::chrono::steady_clock::now() + std::chrono::seconds(*max_seconds);
  try {
    lease_ = std::make_unique<Lease>(gpus, grants, context_.state_dir, expires_at);
  } catch (const Error& e) {
    return refuse("lease", names, e.what());
  }
  lease_expired_ = false;
  json leased = json::array();
  for (Gpu* gpu : gpus) {
    context_.lease_holders[gpu->identity().uuid] = &peer_;
    context_.audit->write({.peer = &peer_, .request = "lease", .gpu = gpu->identity().uuid, .result = "ok"});
    leased.push_back(
        {{"index", gpu->identity().index}, {"uuid", gpu->identity().uuid}, {"name", gpu->identity().name}});
  }
  return ok_response(
      {{"gpus", leased}, {"max_lease_seconds", max_seconds ? json(*max_seconds) : json(nullptr)}});
}

json Session::apply(const ApplyRequest& request) {
  if (!lease_) return refuse("apply", "-", "take a lease on the GPUs first (op \"lease\")");
  const std::vector<Gpu*>& gpus = lease_->gpus();
  std::vector<std::optional<Setting>> settings(gpus.size());
  for (const GpuSetting& entry : request.settings) {
    const Gpu* gpu = find_gpu(entry.gpu);
    const auto position = std::find(gpus.begin(), gpus.end(), gpu);
    if (gpu == nullptr || position == gpus.end())
      return refuse("apply", entry.gpu, fmt::format("GPU '{}' is not in your lease", entry.gpu));
    auto& slot = settings[static_cast<std::size_t>(position - gpus.begin())];
    if (slot) return refuse("apply", entry.gpu, fmt::format("GPU '{}' is named twice", entry.gpu));
    slot = entry.setting;
  }
  std::vector<Setting> complete;
  for (std::size_t i = 0; i < gpus.size(); ++i) {
    if (!settings[i])
      return refuse("apply", gpus[i]->identity().uuid,
                    fmt::format("'settings' has no entry for leased GPU {} ({})", gpus[i]->identity().index,
                                gpus[i]->identity().uuid));
    complete.push_back(*settings[i]);
  }
  std::vector<ControlState> before;
  for (Gpu* gpu : gpus) before.push_back(gpu->control_state());
  try {
    const std::vector<EffectiveSetting> effective = lease_->apply(complete);
    json answers = json::array();
    for (std::size_t i = 0; i < gpus.size(); ++i) {
      context_.audit->write({.peer = &peer_,
                             .request = "apply " + describe_setting(complete[i]),
                             .gpu = gpus[i]->identity().uuid,
                             .before = before[i],
                             .after = gpus[i]->control_state(),
                             .result = "ok"});
      answers.push_back(effective_json(gpus[i]->identity(), effective[i]));
    }
    return ok_response({{"effective", answers}});
  } catch (const Error& e) {
    for (std::size_t i = 0; i < gpus.size(); ++i)
      context_.audit->write({.peer = &peer_,
                             .request = "apply " + describe_setting(complete[i]),
                             .gpu = gpus[i]->identity().uuid,
                             .before = before[i],
                             .after = gpus[i]->control_state(),
                             .result = std::string("refused: ") + e.what()});
    return error_response(e.what());
  }
}

json Session::restore() {
  if (!lease_) return refuse("restore", "-", "you hold no lease: nothing to restore");
  std::vector<ControlState> before;
  for (Gpu* gpu : lease_->gpus()) before.push_back(gpu->control_state());
  try {
    const std::vector<RestoreReport> reports = lease_->restore();
    json actions = json::array();
    for (std::size_t i = 0; i < reports.size(); ++i) {
      Gpu* gpu = lease_->gpus()[i];
      context_.audit->write({.peer = &peer_,
                             .request = "restore",
                             .gpu = gpu->identity().uuid,
                             .before = before[i],
                             .after = gpu->control_state(),
                             .result = "ok"});
      actions.push_back({{"gpu", gpu->identity().uuid}, {"actions", reports[i].actions}});
    }
    return ok_response({{"restored", actions}});
  } catch (const Error& e) {
    context_.audit->write(
        {.peer = &peer_, .request = "restore", .gpu = "-", .result = std::string("failed: ") + e.what()});
    return error_response(e.what());
  }
}

json Session::release() {
  if (!lease_) return refuse("release", "-", "you hold no lease");
  end_lease("release");
  return ok_response();
}

void Session::end_lease(const std::string& why) {
  if (!lease_) return;
  std::vector<ControlState> before;
  for (Gpu* gpu : lease_->gpus()) before.push_back(gpu->control_state());
  std::string result = "ok";
  try {
    lease_->restore();
  } catch (const Error& e) {
    result =
        std::string("failed: ") + e.what() + " (the journal is kept; the daemon retries at its next start)";
  }
  for (std::size_t i = 0; i < lease_->gpus().size(); ++i) {
    Gpu* gpu = lease_->gpus()[i];
    context_.audit->write({.peer = &peer_,
                           .request = why + " restore",
                           .gpu = gpu->identity().uuid,
                           .before = before[i],
                           .after = gpu->control_state(),
                           .result = result});
    context_.lease_holders.erase(gpu->identity().uuid);
  }
  lease_.reset();
  lease_expired_ = why == "expired";
}

std::optional<Lease::TimePoint> Session::lease_expires_at() const {
  return lease_ ? lease_->expires_at() : std::nullopt;
}

}  // namespace dvfslab::daemon
