#include "lib/curl_easy/curl_easy.h"

#include <mutex>

namespace topologyd::curl_easy {
namespace {

size_t CollectBody(char* data, size_t size, size_t count, void* user) {
  auto* body = static_cast<ResponseBody*>(user);
  const size_t n = size * count;
  if (body->text.size() + n > body->limit) {
    body->too_large = true;
    return 0;  // makes curl stop with CURLE_WRITE_ERROR
  }
  body->text.append(data, n);
  return n;
}

}  // namespace

void AppendHeader(Headers& headers, const std::string& line) {
  if (headers) headers.reset(curl_slist_append(headers.release(), line.c_str()));
}

absl::StatusOr<Handle> NewHandle() {
  static std::once_flag once;
  std::call_once(once, [] { curl_global_init(CURL_GLOBAL_DEFAULT); });
  Handle handle(curl_easy_init());
  if (!handle) return absl::ResourceExhaustedError("cannot create a curl handle");
  return handle;
}

void SetCommonOptions(CURL* h, const std::string& url, std::chrono::milliseconds timeout,
                      char* error, curl_slist* headers, ResponseBody* body) {
  const long timeout_ms = static_cast<long>(timeout.count());
  curl_easy_setopt(h, CURLOPT_URL, url.c_str());
  curl_easy_setopt(h, CURLOPT_PROTOCOLS_STR, "https,http");
  curl_easy_setopt(h, CURLOPT_NOSIGNAL, 1L);  // no SIGALRM for timeouts
  curl_easy_setopt(h, CURLOPT_TIMEOUT_MS, timeout_ms);
  curl_easy_setopt(h, CURLOPT_CONNECTTIMEOUT_MS, timeout_ms);
  curl_easy_setopt(h, CURLOPT_ERRORBUFFER, error);
  curl_easy_setopt(h, CURLOPT_HTTPHEADER, headers);
  curl_easy_setopt(h, CURLOPT_USERAGENT, "topologyd");
  curl_easy_setopt(h, CURLOPT_WRITEFUNCTION, CollectBody);
  curl_easy_setopt(h, CURLOPT_WRITEDATA, body);
}

void SetTlsOptions(CURL* h, const TlsOptions& tls) {
  auto blob = [](const std::string& pem) {
    return curl_blob{const_cast<char*>(pem.data()), pem.size(), CURL_BLOB_COPY};
  };
  if (tls.insecure_skip_verify) {
    curl_easy_setopt(h, CURLOPT_SSL_VERIFYPEER, 0L);
    curl_easy_setopt(h, CURLOPT_SSL_VERIFYHOST, 0L);
  } else if (!tls.ca_pem.empty()) {
    // Only the given CAs, as client-go does with a cluster's CA: no system bundle besides.
    curl_blob ca = blob(tls.ca_pem);
    curl_easy_setopt(h, CURLOPT_CAINFO_BLOB, &ca);
    curl_easy_setopt(h, CURLOPT_CAINFO, static_cast<char*>(nullptr));
    curl_easy_setopt(h, CURLOPT_CAPATH, static_cast<char*>(nullptr));
  }
  if (!tls.client_certificate_pem.empty()) {
    curl_blob cert = blob(tls.client_certificate_pem);
    curl_blob key = blob(tls.client_key_pem);
    curl_easy_setopt(h, CURLOPT_SSLCERT_BLOB, &cert);
    curl_easy_setopt(h, CURLOPT_SSLCERTTYPE, "PEM");
    curl_easy_setopt(h, CURLOPT_SSLKEY_BLOB, &key);
    curl_easy_setopt(h, CURLOPT_SSLKEYTYPE, "PEM");
  }
}

}  // namespace topologyd::curl_easy
