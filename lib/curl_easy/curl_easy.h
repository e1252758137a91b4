// The part of a libcurl easy transfer our HTTP clients share: process-wide initialisation
// once, owning handles, the options every request sets, and a response body with a size limit
// (a broken or hostile server cannot make the daemon buffer without bound).
#pragma once

#include <curl/curl.h>

#include <chrono>
#include <cstddef>
#include <memory>
#include <string>

#include "absl/status/statusor.h"

namespace topologyd::curl_easy {

struct HandleDeleter {
  void operator()(CURL* curl) const { curl_easy_cleanup(curl); }
};
using Handle = std::unique_ptr<CURL, HandleDeleter>;

struct HeadersDeleter {
  void operator()(curl_slist* list) const { curl_slist_free_all(list); }
};
// Null after a failed append: check before use.
using Headers = std::unique_ptr<curl_slist, HeadersDeleter>;

// Appends `line` ("Name: value"); a failed append leaves `headers` null.
void AppendHeader(Headers& headers, const std::string& line);

// Collected by the transfer; `too_large` once it would pass `limit` (the transfer then stops).
struct ResponseBody {
  explicit ResponseBody(size_t limit_bytes) : limit(limit_bytes) {}
  std::string text;
  size_t limit;
  bool too_large = false;
};

// A new easy handle (curl_global_init the first time). RESOURCE_EXHAUSTED when curl has none.
absl::StatusOr<Handle> NewHandle();

// The options of every request: `url` over http or https only, no signals (threads are safe),
// `timeout` for connecting and for the whole transfer, curl's message into `error` (at least
// CURL_ERROR_SIZE bytes), `headers`, our user agent, and the body into `body`. Every pointer
// must outlive the transfer.
void SetCommonOptions(CURL* h, const std::string& url, std::chrono::milliseconds timeout,
                      char* error, curl_slist* headers, ResponseBody* body);

// How a request checks the server and shows itself over https. The PEM texts are copied by
// curl: they need not outlive the transfer.
struct TlsOptions {
  bool insecure_skip_verify = false;   // no check of the server at all
  std::string ca_pem;                  // only these CAs; empty = the system's
  std::string client_certificate_pem;  // with client_key_pem: TLS client authentication
  std::string client_key_pem;
  friend bool operator==(const TlsOptions&, const TlsOptions&) = default;
};

void SetTlsOptions(CURL* h, const TlsOptions& tls);

}  // namespace topologyd::curl_easy
