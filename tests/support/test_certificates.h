// Certificates for TLS tests, made by the openssl CLI for each run: a CA, another CA nobody
// trusts, a server certificate for 127.0.0.1 and a client certificate, all signed by the CA.
#pragma once

#include <string>

#include "tests/support/shell.h"

namespace topologyd::testing {

// Why the certificates cannot be made here ("openssl is not installed"), or "".
inline std::string TestCertificatesMissing() {
  return RunShell("command -v openssl").exit_code == 0 ? "" : "openssl is not installed";
}

// Writes into `dir`: ca.crt/.key, wrong-ca.crt/.key, server.crt/.key (subjectAltName
// IP:127.0.0.1) and client.crt/.key (subject `client_subject`). "" on success, else openssl's
// complaint. EC keys: quick to make.
inline std::string MakeTestCertificates(const std::string& dir,
                                        const std::string& client_subject = "/CN=client") {
  const std::string script = "set -e; cd " + ShellQuote(dir) + R"(
key() { openssl genpkey -algorithm EC -pkeyopt ec_paramgen_curve:P-256 -out "$1"; }
ca() { key "$1.key"; openssl req -x509 -new -key "$1.key" -out "$1.crt" -days 2 -subj "/CN=$1"; }
signed() { key "$1.key"; openssl req -new -key "$1.key" -out "$1.csr" -subj "$2"
  openssl x509 -req -in "$1.csr" -CA ca.crt -CAkey ca.key -CAcreateserial -out "$1.crt" \
    -days 2 -extfile "$1.ext"; }
ca ca; ca wrong-ca
printf 'subjectAltName=IP:127.0.0.1\nextendedKeyUsage=serverAuth\n' > server.ext
printf 'extendedKeyUsage=clientAuth\n' > client.ext
signed server /CN=server
signed client )" + ShellQuote(client_subject) +
                             "\n";
  const ShellResult made = RunShell(script);
  return made.exit_code == 0 ? "" : "openssl: " + made.err;
}

}  // namespace topologyd::testing
