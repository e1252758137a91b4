// `topoctl explain -f POD` against the daemon: the decision Admit would make, with no state
// change, plus every provider's hints and each merge.
//
// The reply is read back into the domain value (lib/rpc ExplainResponseToResult) and
// rendered by lib/admission/admission_json.h, the offline explain's renderer, so
// --output json|yaml prints exactly the offline document, and the table
// (support_explain_table.h) is the offline one.
#pragma once

#include <string>

#include "nlohmann/json.hpp"

#include "tools/topoctl/command.h"
#include "topologyd/v1/topologyd.pb.h"

namespace topoctl {

// Runs the command: reads `pod_file` ("-" = stdin), calls Explain on g.socket, prints the
// result in g.format(). Exit codes: 0 the pod would be admitted, 1 it would be refused (the
// explanation is still printed; reason and message also on stderr) or the request failed.
// A manifest without metadata.uid is explained under the uid "topoctl-explain", as offline.
int RunOnlineExplain(const GlobalOptions& g, const std::string& pod_file);

// The JSON document above, built from the daemon's reply alone; null for a reply
// ExplainResponseToResult cannot read.
nlohmann::json ExplainResponseToJson(const topologyd::v1::ExplainResponse& response);

}  // namespace topoctl
