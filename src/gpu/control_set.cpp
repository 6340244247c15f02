#include "gpu/control_set.hpp"

#include <algorithm>
#include <nlohmann/json.hpp>
#include <stdexcept>

namespace dvfslab {

ControlSet::ControlSet(std::vector<std::unique_ptr<GpuControl>> members) : members_(std::move(members)) {}

std::vector<std::string> ControlSet::knobs() const {
  std::vector<std::string> all;
  for (const auto& member : members_) {
    for (std::string& knob : member->knobs()) all.push_back(std::move(knob));
  }
  return all;
}

nlohmann::json ControlSet::save() {
  nlohmann::json saved = nlohmann::json::object();
  for (const auto& member : members_) saved.update(member->save());
  return saved;
}

void ControlSet::apply(const Setting& setting, const nlohmann::json& saved, Changes& changes) {
  for (const auto& member : members_) member->apply(setting, saved, changes);
}

void ControlSet::forget_applied() {
  for (const auto& member : members_) member->forget_applied();
}

GpuControl& ControlSet::owner(const std::string& knob) const {
  for (const auto& member : members_) {
    const std::vector<std::string> own = member->knobs();
    if (std::find(own.begin(), own.end(), knob) != own.end()) return *member;
  }
  throw std::invalid_argument("unknown knob \"" + knob + "\"");
}

std::vector<std::string> ControlSet::owned(const GpuControl& member, const std::vector<std::string>& touched) {
  const std::vector<std::string> own = member.knobs();
  std::vector<std::string> out;
  for (const std::string& knob : touched) {
    if (std::find(own.begin(), own.end(), knob) != own.end()) out.push_back(knob);
  }
  return out;
}

ControlStep ControlSet::restore_step(const std::string& knob, const nlohmann::json& saved) {
  return owner(knob).restore_step(knob, saved);
}

bool ControlSet::as_found(const std::string& knob, const nlohmann::json& saved) {
  return owner(knob).as_found(knob, saved);
}

void ControlSet::check_saved(const nlohmann::json& saved, const std::vector<std::string>& touched) const {
  for (const std::string& knob : touched) owner(knob);
  for (const auto& member : members_) member->check_saved(saved, owned(*member, touched));
}

std::optional<std::string> ControlSet::implausible(const nlohmann::json& saved,
                                                   const std::vector<std::string>& touched) {
  for (const auto& member : members_) {
    if (auto why = member->implausible(saved, owned(*member, touched))) return why;
  }
  return std::nullopt;
}

}  // namespace dvfslab
