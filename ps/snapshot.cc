#include "ps/snapshot.h"

#define XXH_INLINE_ALL
#include <fmt/format.h>
#include <xxhash.h>

#include <algorithm>
#include <cstring>

#include "common/file.h"

namespace rigel::ps {

namespace {

constexpr char kMagic[8] = {'R', 'I', 'G', 'E', 'L', 'R', 'O', 'W'};
constexpr char kEnd[8] = {'R', 'I', 'G', 'E', 'L', 'E', 'N', 'D'};
constexpr uint32_t kVersion = 1;
constexpr size_t kHeaderBytes = 8 + 4 + 4 + 8 + 4;
constexpr size_t kTrailerBytes = 8 + 8;

template <typename T>
void Put(std::string* out, T v) {
  out->append(reinterpret_cast<const char*>(&v), sizeof v);
}

// Reads the file's bytes in order, failing (instead of reading past the end)
// when a section claims more than is there.
class Reader {
 public:
  Reader(const std::string& bytes, size_t end) : bytes_(bytes), end_(end) {}
  template <typename T>
  bool Get(T* v) {
    if (end_ - pos_ < sizeof(T)) return false;
    std::memcpy(v, bytes_.data() + pos_, sizeof(T));
    pos_ += sizeof(T);
    return true;
  }
  bool GetArray(void* out, uint64_t count, size_t size) {
    if (count > (end_ - pos_) / size) return false;
    std::memcpy(out, bytes_.data() + pos_, count * size);
    pos_ += count * size;
    return true;
  }
  uint64_t left() const { return end_ - pos_; }

 private:
  const std::string& bytes_;
  size_t end_;
  size_t pos_ = 0;
};

}  // namespace

uint64_t Checksum(const std::string& bytes) { return XXH64(bytes.data(), bytes.size(), 0); }

std::string RowsFileName(uint64_t seq, int server) {
  return fmt::format("ckpt-{:06d}.server-{}.rows", seq, server);
}

StatusOr<SnapshotFile> WriteRowsFile(const std::string& dir, const std::string& name, uint64_t seq,
                                     int server, const std::vector<SnapshotSection>& sections) {
  // The rows are written from the sections themselves, not from an
  // assembled copy: a server's file is its whole shard, and the copy's
  // allocation and freeing took time from the job's epoch.
  std::string header;
  header.append(kMagic, 8);
  Put(&header, kVersion);
  Put(&header, static_cast<uint32_t>(server));
  Put(&header, seq);
  const auto written = std::count_if(sections.begin(), sections.end(),
                                     [](const SnapshotSection& s) { return !s.keys.empty(); });
  Put(&header, static_cast<uint32_t>(written));
  std::vector<std::string> section_headers(sections.size());
  std::vector<std::string_view> pieces = {header};
  SnapshotFile f;
  f.name = name;
  f.bytes = kTrailerBytes;
  for (size_t k = 0; k < sections.size(); ++k) {
    const SnapshotSection& s = sections[k];
    if (s.keys.empty()) continue;
    Put(&section_headers[k], s.param);
    Put(&section_headers[k], s.width);
    Put(&section_headers[k], static_cast<uint64_t>(s.keys.size()));
    pieces.push_back(section_headers[k]);
    pieces.emplace_back(reinterpret_cast<const char*>(s.keys.data()),
                        s.keys.size() * sizeof(int64_t));
    pieces.emplace_back(reinterpret_cast<const char*>(s.values.data()),
                        s.values.size() * sizeof(float));
    f.rows += s.keys.size();
  }
  XXH64_state_t state;
  XXH64_reset(&state, 0);
  for (std::string_view p : pieces) {
    XXH64_update(&state, p.data(), p.size());
    f.bytes += p.size();
  }
  f.checksum = XXH64_digest(&state);
  std::string trailer;
  Put(&trailer, f.checksum);
  trailer.append(kEnd, 8);
  pieces.push_back(trailer);
  // Checkpoints retire old rows files as spares (scheduler/checkpoint.h):
  // overwriting one costs the machine about 40% less CPU time than a new
  // file (bench/durable_write.cc).
  RIGEL_RETURN_IF_ERROR(WriteFileDataDurably(dir + "/" + name, pieces, /*reuse_spare=*/true));
  return f;
}

StatusOr<std::vector<SnapshotSection>> ReadRowsFile(const std::string& dir,
                                                    const SnapshotFile& file) {
  const std::string path = dir + "/" + file.name;
  RIGEL_ASSIGN_OR_RETURN(std::string bytes, ReadFileToString(path));
  auto damaged = [&](const std::string& why) {
    return IoError(path + ": damaged checkpoint file: " + why);
  };
  if (bytes.size() != file.bytes) {
    return damaged(fmt::format("{} bytes, the manifest says {}{}", bytes.size(), file.bytes,
                               bytes.size() < file.bytes ? " (truncated)" : ""));
  }
  if (bytes.size() < kHeaderBytes + kTrailerBytes || std::memcmp(bytes.data(), kMagic, 8) != 0 ||
      std::memcmp(bytes.data() + bytes.size() - 8, kEnd, 8) != 0) {
    return damaged("not a rows file (its first or last 8 bytes are wrong)");
  }
  const size_t body = bytes.size() - kTrailerBytes;
  uint64_t stored = 0;
  std::memcpy(&stored, bytes.data() + body, 8);
  const uint64_t actual = XXH64(bytes.data(), body, 0);
  if (stored != actual || stored != file.checksum) {
    return damaged(fmt::format("checksum {:016x}, the file says {:016x} and the manifest {:016x}",
                               actual, stored, file.checksum));
  }
  Reader r(bytes, body);
  char magic[8];
  uint32_t version = 0, server = 0, count = 0;
  uint64_t seq = 0;
  r.GetArray(magic, 8, 1);
  r.Get(&version);
  r.Get(&server);
  r.Get(&seq);
  r.Get(&count);
  if (version != kVersion) {
    return damaged(fmt::format("format version {}, this build reads {}", version, kVersion));
  }
  std::vector<SnapshotSection> out(count);
  uint64_t rows = 0;
  for (uint32_t k = 0; k < count; ++k) {
    SnapshotSection& s = out[k];
    uint64_t n = 0;
    if (!r.Get(&s.param) || !r.Get(&s.width) || !r.Get(&n) || s.width == 0) {
      return damaged(fmt::format("section {} has a malformed header", k));
    }
    s.keys.resize(n);
    if (!r.GetArray(s.keys.data(), n, sizeof(int64_t)) || n > r.left() / 4 / s.width) {
      return damaged(fmt::format("section {} claims {} rows; the file is shorter", k, n));
    }
    s.values.resize(n * s.width);
    r.GetArray(s.values.data(), n * s.width, sizeof(float));
    rows += n;
  }
  if (r.left() != 0) return damaged(fmt::format("{} bytes after the last section", r.left()));
  if (rows != file.rows) {
    return damaged(fmt::format("{} rows, the manifest says {}", rows, file.rows));
  }
  return out;
}

}  // namespace rigel::ps
