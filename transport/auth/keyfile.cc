#include "transport/auth/keyfile.h"

#include <fcntl.h>
#include <fmt/format.h>
#include <sys/stat.h>
#include <unistd.h>
#include <zmq.h>

#include <cerrno>
#include <cstring>
#include <string>

namespace rigel::transport {
namespace {

constexpr size_t kZ85KeyChars = 40;

bool IsZ85Key(std::string_view s) {
  uint8_t bin[32];
  if (s.size() != kZ85KeyChars) return false;
  std::string z(s);  // zmq_z85_decode needs a terminated string
  return zmq_z85_decode(bin, z.c_str()) != nullptr;
}

std::string_view Trim(std::string_view s) {
  while (!s.empty() && (s.front() == ' ' || s.front() == '\t' || s.front() == '\r'))
    s.remove_prefix(1);
  while (!s.empty() && (s.back() == ' ' || s.back() == '\t' || s.back() == '\r'))
    s.remove_suffix(1);
  return s;
}

Status WriteAll(int fd, const std::string& text, const std::string& path) {
  size_t done = 0;
  while (done < text.size()) {
    ssize_t n = ::write(fd, text.data() + done, text.size() - done);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return IoError(fmt::format("{}: write failed: {}", path, std::strerror(errno)));
    done += static_cast<size_t>(n);
  }
  if (::fsync(fd) != 0)
    return IoError(fmt::format("{}: fsync failed: {}", path, std::strerror(errno)));
  return Status::Ok();
}

}  // namespace

StatusOr<ClusterKey> GenerateClusterKey() {
  char pub[41], sec[41];
  if (zmq_curve_keypair(pub, sec) != 0) {
    return Unimplemented(
        fmt::format("cannot make a CURVE key pair: {}", zmq_strerror(zmq_errno())));
  }
  return ClusterKey{pub, sec};
}

std::string FormatKeyFile(const ClusterKey& key) {
  return fmt::format(
      "# Rigel cluster key (ZeroMQ CURVE, Z85), written by `rigel keygen`.\n"
      "# Every process of the cluster needs this file; anyone who has it can join.\n"
      "# Keep it private (mode 0600).\n"
      "public-key = {}\n"
      "secret-key = {}\n",
      key.public_key, key.secret_key);
}

StatusOr<ClusterKey> ParseKeyFile(std::string_view text, const std::string& path) {
  ClusterKey key;
  int line_no = 0;
  while (!text.empty()) {
    ++line_no;
    size_t nl = text.find('\n');
    std::string_view line = Trim(text.substr(0, nl));
    text = nl == std::string_view::npos ? std::string_view() : text.substr(nl + 1);
    if (line.empty() || line.front() == '#') continue;
    size_t eq = line.find('=');
    if (eq == std::string_view::npos) {
      return InvalidArgument(
          fmt::format("{}:{}: expected 'public-key = ...' or 'secret-key = ...'", path, line_no));
    }
    std::string_view name = Trim(line.substr(0, eq));
    std::string_view value = Trim(line.substr(eq + 1));
    std::string* slot = name == "public-key"   ? &key.public_key
                        : name == "secret-key" ? &key.secret_key
                                               : nullptr;
    if (slot == nullptr) {
      return InvalidArgument(fmt::format("{}:{}: unknown setting '{}'", path, line_no, name));
    }
    if (!slot->empty()) {
      return InvalidArgument(fmt::format("{}:{}: '{}' given twice", path, line_no, name));
    }
    if (!IsZ85Key(value)) {
      return InvalidArgument(
          fmt::format("{}:{}: '{}' is not a 40-character Z85 key", path, line_no, name));
    }
    *slot = std::string(value);
  }
  if (key.public_key.empty() || key.secret_key.empty()) {
    return InvalidArgument(fmt::format("{}: needs both public-key and secret-key", path));
  }
  char derived[41];
  if (zmq_curve_public(derived, key.secret_key.c_str()) != 0) {
    return Unimplemented(
        fmt::format("{}: cannot check the key pair: {}", path, zmq_strerror(zmq_errno())));
  }
  if (key.public_key != derived) {
    return InvalidArgument(fmt::format("{}: public-key does not belong to secret-key", path));
  }
  return key;
}

Status WriteKeyFile(const std::string& path, const ClusterKey& key, bool overwrite) {
  const std::string text = FormatKeyFile(key);
  // Without overwrite, O_EXCL makes "exists" and "create" one atomic step. With
  // it, a temp file renamed over the target: never a half-written key file,
  // and the new file has mode 0600 even if the old one did not.
  const std::string target = overwrite ? fmt::format("{}.tmp.{}", path, ::getpid()) : path;
  int fd = ::open(target.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
  if (fd < 0) {
    if (errno == EEXIST && !overwrite) {
      return FailedPrecondition(fmt::format("{} already exists (use --force to replace it)", path));
    }
    return IoError(fmt::format("{}: cannot create: {}", target, std::strerror(errno)));
  }
  Status st = WriteAll(fd, text, target);
  if (::close(fd) != 0 && st.ok()) {
    st = IoError(fmt::format("{}: close failed: {}", target, std::strerror(errno)));
  }
  if (st.ok() && overwrite && ::rename(target.c_str(), path.c_str()) != 0) {
    st = IoError(fmt::format("{}: cannot replace: {}", path, std::strerror(errno)));
  }
  if (!st.ok()) ::unlink(target.c_str());
  return st;
}

StatusOr<ClusterKey> ReadKeyFile(const std::string& path) {
  int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) {
    if (errno == ENOENT) return NotFound(fmt::format("{}: no such key file", path));
    return IoError(fmt::format("{}: cannot open: {}", path, std::strerror(errno)));
  }
  struct stat st;
  if (::fstat(fd, &st) != 0) {
    int err = errno;
    ::close(fd);
    return IoError(fmt::format("{}: cannot stat: {}", path, std::strerror(err)));
  }
  if ((st.st_mode & 077) != 0) {
    ::close(fd);
    return FailedPrecondition(
        fmt::format("{}: key file is accessible by group or others (mode {:04o}); run chmod 600 {}",
                    path, st.st_mode & 07777, path));
  }
  std::string text;
  char buf[4096];
  while (true) {
    ssize_t n = ::read(fd, buf, sizeof buf);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) {
      int err = errno;
      ::close(fd);
      return IoError(fmt::format("{}: read failed: {}", path, std::strerror(err)));
    }
    if (n == 0) break;
    text.append(buf, static_cast<size_t>(n));
    if (text.size() > 64 * 1024) {
      ::close(fd);
      return InvalidArgument(fmt::format("{}: too large for a key file", path));
    }
  }
  ::close(fd);
  return ParseKeyFile(text, path);
}

}  // namespace rigel::transport
