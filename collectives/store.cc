#include "collectives/store.h"

#include <fmt/format.h>
#include <unistd.h>

#include <atomic>
#include <cctype>
#include <cstdint>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <thread>

namespace rigel::collectives {

namespace fs = std::filesystem;
using Clock = std::chrono::steady_clock;

namespace {
Status Missing(const std::string& key, std::chrono::milliseconds timeout) {
  return Unavailable(
      fmt::format("rendezvous: key '{}' was not set within {} ms (a rank did not "
                  "join)",
                  key, timeout.count()));
}
}  // namespace

Status MemoryStore::Set(const std::string& key, const std::string& value) {
  {
    MutexLock l(&mu_);
    values_[key] = value;
  }
  cv_.NotifyAll();
  return Status::Ok();
}

StatusOr<std::string> MemoryStore::Get(const std::string& key, std::chrono::milliseconds timeout) {
  MutexLock l(&mu_);
  const auto deadline = Clock::now() + timeout;
  while (values_.count(key) == 0) {
    if (cv_.WaitUntil(&mu_, deadline) == std::cv_status::timeout) break;
  }
  if (values_.count(key) == 0) return Missing(key, timeout);
  return values_[key];
}

FileStore::FileStore(std::string dir) : dir_(std::move(dir)) {}

std::string FileStore::Path(const std::string& key) const {
  // Keys carry '/' and ':'; file names get them hex-escaped. A leading '.' is
  // escaped too, so that no key names the directory itself ("", ".", "..")
  // or a temporary file of Set (those start with '.'); the empty key is "%",
  // which no escaped non-empty key is.
  if (key.empty()) return (fs::path(dir_) / "%").string();
  std::string name;
  for (unsigned char c : key) {
    if (std::isalnum(c) || c == '-' || c == '_' || (c == '.' && !name.empty())) {
      name += static_cast<char>(c);
    } else {
      name += fmt::format("%{:02x}", c);
    }
  }
  return (fs::path(dir_) / name).string();
}

Status FileStore::Set(const std::string& key, const std::string& value) {
  std::error_code ec;
  fs::create_directories(dir_, ec);
  if (ec) return IoError("rendezvous: cannot create " + dir_ + ": " + ec.message());
  const fs::path path = Path(key);
  // Unique per process and per call, so that threads (or processes) setting
  // one key at once do not write or rename each other's temporary file.
  static std::atomic<uint64_t> sequence{0};
  const std::string tmp =
      (path.parent_path() /
       fmt::format(".{}.tmp.{}.{}", path.filename().string(), getpid(), sequence.fetch_add(1)))
          .string();
  {
    std::ofstream out(tmp, std::ios::binary | std::ios::trunc);
    out.write(value.data(), static_cast<std::streamsize>(value.size()));
    out.close();
    if (!out.good()) {
      fs::remove(tmp, ec);
      return IoError("rendezvous: cannot write " + tmp);
    }
  }
  fs::rename(tmp, path, ec);
  if (ec) {
    const std::string why = ec.message();
    fs::remove(tmp, ec);
    return IoError("rendezvous: cannot rename " + tmp + ": " + why);
  }
  return Status::Ok();
}

StatusOr<std::string> FileStore::Get(const std::string& key, std::chrono::milliseconds timeout) {
  const std::string path = Path(key);
  const auto deadline = Clock::now() + timeout;
  auto pause = std::chrono::microseconds(200);
  while (true) {
    std::ifstream in(path, std::ios::binary);
    if (in.is_open()) {
      std::ostringstream s;
      s << in.rdbuf();
      return s.str();
    }
    if (Clock::now() >= deadline) return Missing(key, timeout);
    std::this_thread::sleep_for(pause);
    pause = std::min(pause * 2, std::chrono::microseconds(20000));
  }
}

}  // namespace rigel::collectives
