// FakePlacement: an in-memory PlacementTransport that answers the calls the sync makes as
// Placement 8.0.0 does (status codes, error codes, generations), records every request, and can
// simulate a concurrent writer: the next N generation-checked writes find the generation bumped.
#pragma once

#include <map>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "nlohmann/json.hpp"

#include "lib/placement/sync.h"

namespace topologyd::placement::testing {

class FakePlacement : public PlacementTransport {
 public:
  struct Rp {
    std::string name;
    std::optional<std::string> parent;
    int64_t generation = 0;
    nlohmann::json inventories = nlohmann::json::object();
    std::set<std::string> traits;
    std::map<std::string, int64_t> usages;
  };

  absl::StatusOr<HttpResponse> Send(const HttpRequest& request,
                                    const std::string& microversion) override;

  // Requests that are not GETs.
  std::vector<HttpRequest> Writes() const;

  std::string max_version = "1.39";
  std::set<std::string> classes = {"PCPU", "VCPU", "MEMORY_MB"};
  std::set<std::string> traits = {"HW_NUMA_ROOT", "COMPUTE_MANAGED_PCI_DEVICE"};
  std::map<std::string, Rp> providers;  // by uuid
  std::vector<HttpRequest> requests;
  int conflicts_to_inject = 0;  // before that many generation-checked writes, bump generation
  // Returned for every request whose path starts with the key (a broken server).
  std::map<std::string, HttpResponse> overrides;

 private:
  std::string RootOf(const std::string& uuid) const;
  HttpResponse ProviderJson(const std::string& uuid) const;
};

}  // namespace topologyd::placement::testing
