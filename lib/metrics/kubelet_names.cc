#include "lib/metrics/kubelet_names.h"

namespace topologyd::metrics::kubelet {

std::vector<double> AdmissionDurationBucketsMs() {
  std::vector<double> buckets;
  double bound = 0.05;
  for (int i = 0; i < 15; ++i, bound *= 2) buckets.push_back(bound);
  return buckets;
}

}  // namespace topologyd::metrics::kubelet
