// The policy file: strict parsing with errors naming file:line:column, and the
// first rule naming both the user and the GPU deciding what that user may do.
#include <gtest/gtest.h>

#include "daemon/policy.hpp"
#include "dvfslab/error.hpp"

namespace dvfslab::daemon {
namespace {

std::string parse_error(const std::string& text) {
  try {
    parse_policy_text(text, "policy.toml");
  } catch (const ConfigError& e) {
    return e.what();
  }
  return "no error";
}

GpuIdentity gpu(int index, const std::string& uuid) {
  GpuIdentity identity;
  identity.index = index;
  identity.uuid = uuid;
  return identity;
}

PeerIdentity peer(const std::string& user, std::vector<std::string> groups = {}) {
  PeerIdentity identity;
  identity.user = user;
  identity.groups = std::move(groups);
  return identity;
}

TEST(DaemonPolicy, TheMinimalPolicyGivesTheUserControlOfEveryGpuWithinTheGpusOwnLimits) {
  const Policy policy = parse_policy_text("[[rule]]\nusers = [\"alice\"]\ngpus = \"all\"\n", "policy.toml");
  const auto grant = grant_for(policy, peer("alice"), gpu(3, "GPU-abc"));
  ASSERT_TRUE(grant);
  EXPECT_TRUE(grant->control);
  EXPECT_FALSE(grant->sm_mhz);
  EXPECT_FALSE(grant->mem_mhz);
  EXPECT_FALSE(grant->power_limit_w);
  EXPECT_FALSE(grant->max_lease_seconds);
  EXPECT_EQ(grant->rule_where, "policy.toml:1:1");
  EXPECT_FALSE(grant_for(policy, peer("bob"), gpu(0, "GPU-abc")));
  EXPECT_FALSE(names_peer(policy, peer("bob")));
  EXPECT_FALSE(policy.socket_group);
}

TEST(DaemonPolicy, TheFirstRuleNamingUserAndGpuDecides) {
  const Policy policy = parse_policy_text(
      "[daemon]\nsocket_group = \"gpu\"\nmax_connections_per_user = 4\n"
      "[[rule]]\ngroups = [\"ml\"]\ngpus = [0, \"GPU-ABC\"]\nsm_mhz = [900, 1500]\npower_limit_w = [200, "
      "450.5]\n"
      "max_lease_seconds = 3600\n"
      "[[rule]]\ngroups = [\"ml\"]\ngpus = \"all\"\nread_only = true\n",
      "policy.toml");
  EXPECT_EQ(policy.socket_group, "gpu");
  EXPECT_EQ(policy.max_connections_per_user, 4);
  const auto by_uuid = grant_for(policy, peer("carol", {"users", "ml"}), gpu(2, "abc"));
  ASSERT_TRUE(by_uuid);
  EXPECT_TRUE(by_uuid->control);
  EXPECT_EQ(by_uuid->sm_mhz->max, 1500);
  EXPECT_EQ(by_uuid->power_limit_w->max_w, 450.5);
  EXPECT_EQ(by_uuid->max_lease_seconds, 3600);
  const auto other = grant_for(policy, peer("carol", {"ml"}), gpu(1, "GPU-def"));
  ASSERT_TRUE(other);
  EXPECT_FALSE(other->control);
  EXPECT_FALSE(grant_for(policy, peer("carol", {"users"}), gpu(0, "GPU-abc")));
}

TEST(DaemonPolicy, MistakesAreRefusedNamingThePlace) {
  EXPECT_EQ(parse_error("[[rule]]\nusers = [\"alice\"]\ngpus = \"all\"\nsm_mhz = [1500, 1000]\n"),
            "policy.toml:4:10: 'sm_mhz' must be [min, max] with 0 < min <= max (MHz); got [1500, 1000]");
  EXPECT_EQ(parse_error("[[rule]]\nusers = [\"alice\"]\ngpus = \"all\"\nsm_mhz_max = 1500\n"),
            "policy.toml:4:14: unknown key 'sm_mhz_max' in [[rule]]: valid keys are users, groups, gpus, "
            "read_only, sm_mhz, mem_mhz, power_limit_w, max_lease_seconds");
  EXPECT_EQ(parse_error("[[rule]]\nusers = [\"alice\"]\n"),
            "policy.toml:1:1: a [[rule]] must say which GPUs it covers: 'gpus = \"all\"' or 'gpus = [0, 1]'");
  EXPECT_EQ(
      parse_error("[[rule]]\ngpus = \"all\"\n"),
      "policy.toml:1:1: a [[rule]] must name whom it applies to: 'users = [\"alice\"]' and/or 'groups = "
      "[\"ml\"]'");
  EXPECT_EQ(parse_error("[[rule]]\nusers = \"alice\"\ngpus = \"all\"\n"),
            "policy.toml:2:9: 'users' must be a list of names, e.g. [\"alice\"]");
  EXPECT_EQ(parse_error("[[rule]]\nusers = [\"alice\"]\ngpus = \"some\"\n"),
            "policy.toml:3:8: 'gpus' must be \"all\" or a list of GPU indices and UUIDs, e.g. [0, "
            "\"GPU-8f6c...\"]");
  EXPECT_EQ(parse_error("[[rule]]\nusers = [\"alice\"]\ngpus = \"all\"\nread_only = 1\n"),
            "policy.toml:4:13: 'read_only' must be true or false");
  EXPECT_EQ(parse_error("[daemon]\nsocket_group = \"gpu\"\n"),
            "policy.toml: the policy has no rules: add a [[rule]] with 'users' (or 'groups') and 'gpus'");
  EXPECT_NE(parse_error("[[rule]\nusers = 1").find("policy.toml:1:"), std::string::npos);
}

}  // namespace
}  // namespace dvfslab::daemon
