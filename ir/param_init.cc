#include "ir/param_init.h"

#include <sys/stat.h>

#include <cmath>
#include <cstring>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "common/check.h"
#include "common/hash.h"
#include "common/mapped_file.h"

namespace rigel::ir {
namespace {

// The files of kFile parameters, mapped once per process and kept until it
// ends (rows are read from them whenever a process makes one), with what
// identified the file when it was mapped: a path written again since (a
// new file renamed into place) is mapped again, and the old mapping stays
// for the parameters that were made from it.
struct Mapped {
  std::shared_ptr<const MappedFile> file;
  struct stat id {};
};
std::mutex files_mu;
std::map<std::string, Mapped>& Files() {
  static auto* files = new std::map<std::string, Mapped>();
  return *files;
}
std::vector<std::shared_ptr<const MappedFile>>& Replaced() {
  static auto* replaced = new std::vector<std::shared_ptr<const MappedFile>>();
  return *replaced;
}

bool SameFile(const struct stat& a, const struct stat& b) {
  return a.st_dev == b.st_dev && a.st_ino == b.st_ino && a.st_size == b.st_size &&
         a.st_mtim.tv_sec == b.st_mtim.tv_sec && a.st_mtim.tv_nsec == b.st_mtim.tv_nsec;
}

const MappedFile* FileOf(const std::string& path) {
  std::lock_guard<std::mutex> l(files_mu);
  auto it = Files().find(path);
  return it == Files().end() ? nullptr : it->second.file.get();
}

int64_t WidthOf(const ir::ParamDecl& p) { return p.width > 0 ? p.width : 1; }

// The stored value at index `at` (row x width + col) of a kFile parameter.
float StoredValue(const ir::ParamDecl& p, const MappedFile& f, uint64_t at) {
  const char* src = f.bytes().data() + p.file_offset + 4 * at;
  if (p.file_int) {
    int32_t v = 0;
    std::memcpy(&v, src, 4);
    return static_cast<float>(v);
  }
  float v = 0;
  std::memcpy(&v, src, 4);
  return v;
}

const MappedFile& OpenedFile(const ir::ParamDecl& p, int64_t row) {
  const MappedFile* f = FileOf(p.file);
  // Both are the callers' invariants: every process opens the file before
  // it makes rows, and the executor checked the rows against the file's.
  RIGEL_CHECK_MSG(f != nullptr, "a --init-params parameter's file was not opened");
  RIGEL_CHECK_MSG(row >= 0 && row < p.file_rows, "a row beyond the --init-params file's rows");
  return *f;
}

}  // namespace

Status OpenInitialValues(const ir::ParamDecl& p) {
  if (p.init != ir::ParamDecl::kFile) return Status::Ok();
  std::lock_guard<std::mutex> l(files_mu);
  struct stat id {};
  const bool known = ::stat(p.file.c_str(), &id) == 0;
  auto it = Files().find(p.file);
  if (it == Files().end() || !known || !SameFile(it->second.id, id)) {
    RIGEL_ASSIGN_OR_RETURN(std::shared_ptr<const MappedFile> f, MappedFile::Open(p.file));
    if (it != Files().end()) {
      Replaced().push_back(std::move(it->second.file));
      Files().erase(it);
    }
    it = Files().emplace(p.file, Mapped{std::move(f), id}).first;
  }
  const uint64_t size = it->second.file->bytes().size();
  const uint64_t need = static_cast<uint64_t>(p.file_rows) * static_cast<uint64_t>(WidthOf(p)) * 4;
  if (size != p.file_bytes || p.file_offset > size || size - p.file_offset < need) {
    return FailedPrecondition(p.file + ": parameter '" + p.name +
                              "' starts from this file, which has " + std::to_string(size) +
                              " bytes here and had " + std::to_string(p.file_bytes) +
                              " when the job began (every process must read the same file)");
  }
  return Status::Ok();
}

float InitialValue(const ir::ParamDecl& p, int64_t row, int64_t col) {
  auto r = static_cast<uint64_t>(row), c = static_cast<uint64_t>(col);
  switch (p.init) {
    case ir::ParamDecl::kZeros:
      return 0.0f;
    case ir::ParamDecl::kFill:
      return static_cast<float>(p.a);
    case ir::ParamDecl::kNormal:
      return static_cast<float>(
          p.a + p.b * NormalFromHashes(HashCoords(p.seed, 1, r, c), HashCoords(p.seed, 2, r, c)));
    case ir::ParamDecl::kUniform:
      return static_cast<float>(p.a + (p.b - p.a) * UnitDouble(HashCoords(p.seed, 3, r, c)));
    case ir::ParamDecl::kRandInt:
      // floor of a value in [0, n): an integer in [0, n), exact below 2^24.
      return static_cast<float>(std::floor(UnitDouble(HashCoords(p.seed, 4, r, c)) * p.a));
    case ir::ParamDecl::kFile:
      return StoredValue(p, OpenedFile(p, row), r * static_cast<uint64_t>(WidthOf(p)) + c);
  }
  return 0.0f;
}

void InitialRow(const ir::ParamDecl& p, int64_t row, float* out) {
  const int64_t w = WidthOf(p);
  if (p.init == ir::ParamDecl::kFile) {
    // One lookup per row, not per value.
    const MappedFile& f = OpenedFile(p, row);
    const uint64_t first = static_cast<uint64_t>(row) * static_cast<uint64_t>(w);
    for (int64_t c = 0; c < w; ++c) out[c] = StoredValue(p, f, first + static_cast<uint64_t>(c));
    return;
  }
  for (int64_t c = 0; c < w; ++c) out[c] = InitialValue(p, row, c);
}

}  // namespace rigel::ir
