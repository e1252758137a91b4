#include "tests/support/kube/local_get.h"

#include <curl/curl.h>

#include <chrono>

#include "absl/strings/str_cat.h"

#include "lib/curl_easy/curl_easy.h"

namespace topologyd::testing::kube {

absl::StatusOr<std::string> LocalGet(const std::string& url, size_t limit_bytes) {
  auto handle = curl_easy::NewHandle();
  if (!handle.ok()) return handle.status();
  char error[CURL_ERROR_SIZE] = {};
  curl_easy::ResponseBody body(limit_bytes);
  curl_easy::SetCommonOptions(handle->get(), url, std::chrono::seconds(5), error, nullptr, &body);
  curl_easy::SetTlsOptions(handle->get(), {.insecure_skip_verify = true});
  if (curl_easy_perform(handle->get()) != CURLE_OK) {
    return absl::UnavailableError(absl::StrCat("GET ", url, ": ", error));
  }
  long code = 0;
  curl_easy_getinfo(handle->get(), CURLINFO_RESPONSE_CODE, &code);
  if (code != 200) {
    return absl::UnavailableError(absl::StrCat("GET ", url, ": HTTP ", code, ": ", body.text));
  }
  return body.text;
}

}  // namespace topologyd::testing::kube
