// ParseMergeRequest and Merge() on a fuzzed `topoctl merge` request. The merge result must equal
// the brute-force reference (tests/unit/hints/reference_merge.h) where that is cheap enough,
// and both reach engines must agree with the automatic choice.
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string_view>

#include "lib/hints/merge.h"
#include "lib/hints/merge_internal.h"
#include "lib/hints/merge_json.h"
#include "tests/unit/hints/reference_merge.h"

using namespace topologyd::hints;

namespace {

void PrintResult(const MergeResult& result) {
  if (result.hint.affinity) {
    fprintf(stderr, "affinity 0x%llx",
            static_cast<unsigned long long>(result.hint.affinity->bits()));
  } else {
    fprintf(stderr, "affinity nil");
  }
  fprintf(stderr, " preferred %d admit %d", result.hint.preferred, result.admit);
}

void ExpectEqual(const MergeResult& actual, const MergeResult& expected, const char* what) {
  if (actual == expected) return;
  fprintf(stderr, "%s mismatch: ", what);
  PrintResult(actual);
  fprintf(stderr, " vs ");
  PrintResult(expected);
  fprintf(stderr, "\n");
  abort();
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  const auto request = ParseMergeRequest(text);
  if (!request.ok()) return 0;
  const MergeInput& input = request->input;
  const MergeResult result = Merge(input);
  (void)AffinityIds(result.hint, request->node_ids);
  (void)MergeResultToJson(result, request->node_ids);
  // The brute force and the dense engine are exponential in the node count: only small inputs.
  if (input.num_nodes <= 10 && reference::PermutationCount(input) <= 20000) {
    ExpectEqual(result, reference::ReferenceMerge(input), "fast vs reference");
  }
  if (input.num_nodes <= 12) {
    ExpectEqual(result, internal::MergeWithEngineForTest(input, internal::ReachEngine::kSparse),
                "auto vs sparse");
    ExpectEqual(result, internal::MergeWithEngineForTest(input, internal::ReachEngine::kDense),
                "auto vs dense");
  }
  return 0;
}
