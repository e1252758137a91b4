#include "tests/support/kube/local_get.h"

#include <curl/curl.h>

#include <chrono>
#include <thread>

#include "absl/strings/str_cat.h"

#include "lib/curl_easy/curl_easy.h"
#include "tests/support/containerd/subprocess.h"

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

absl::Status WaitUntilAnswers(pid_t& pid, const std::string& program, const std::string& url,
                              const std::string& want, std::chrono::seconds patience,
                              const std::function<std::string()>& log) {
  const auto until = std::chrono::steady_clock::now() + patience;
  absl::StatusOr<std::string> answer;
  while (std::chrono::steady_clock::now() < until) {
    if (containerd::WaitForChild(pid, std::chrono::milliseconds(0))) {
      pid = -1;
      return absl::InternalError(absl::StrCat(program, " exited at start:\n", log()));
    }
    answer = LocalGet(url, 1 << 20);
    if (answer.ok() && *answer == want) return absl::OkStatus();
    std::this_thread::sleep_for(std::chrono::milliseconds(200));
  }
  return absl::DeadlineExceededError(absl::StrCat(
      program, " did not answer ", url, " with \"", want, "\" within ", patience.count(),
      " s: ", answer.ok() ? *answer : answer.status().ToString(), "\n", log()));
}

}  // namespace topologyd::testing::kube
