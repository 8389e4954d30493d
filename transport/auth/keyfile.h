// The cluster key: one ZeroMQ CURVE key pair shared by every process of a
// cluster, kept in a key file written by `rigel keygen`.
//
// How it is used (transport/zmq/transport.h): every listening socket is a
// CURVE server with the cluster secret key; every connecting socket is a CURVE
// client that expects the cluster public key as the server key and presents
// the cluster key pair as its own. The ZAP handler (zmq/context.h) accepts a
// client only if the key it proved it holds is the cluster public key, so only
// holders of the key file can talk to the cluster. Traffic is encrypted.
//
// Key file format (text, mode 0600):
//   # comment lines and blank lines are ignored
//   public-key = <40 characters of Z85>
//   secret-key = <40 characters of Z85>
// Both keys must be present exactly once, and the public key must be the one
// derived from the secret key.
//
// Thread-safety: all functions are thread-safe.
#ifndef RIGEL_TRANSPORT_AUTH_KEYFILE_H_
#define RIGEL_TRANSPORT_AUTH_KEYFILE_H_

#include <string>
#include <string_view>

#include "common/status.h"

namespace rigel::transport {

struct ClusterKey {
  std::string public_key;  // Z85 text, 40 characters
  std::string secret_key;  // Z85 text, 40 characters
};

// A fresh random key pair (libsodium via libzmq). Returns Unimplemented if
// libzmq was built without CURVE.
StatusOr<ClusterKey> GenerateClusterKey();

// The key file text for `key`.
std::string FormatKeyFile(const ClusterKey& key);

// Parses key file text; `path` only names the file in error messages.
// Returns InvalidArgument ("PATH:LINE: ...") for anything malformed.
StatusOr<ClusterKey> ParseKeyFile(std::string_view text, const std::string& path);

// Writes `key` to `path` with mode 0600. Without `overwrite`, an existing file
// is left alone and FailedPrecondition returned; with it, the file is replaced
// atomically (temp file + rename). IoError for other failures.
Status WriteKeyFile(const std::string& path, const ClusterKey& key, bool overwrite);

// Reads and parses the key file at `path`. Returns NotFound if it does not
// exist and FailedPrecondition if group or others may read or write it (a
// cluster key readable by others is not a secret).
StatusOr<ClusterKey> ReadKeyFile(const std::string& path);

}  // namespace rigel::transport

#endif  // RIGEL_TRANSPORT_AUTH_KEYFILE_H_
