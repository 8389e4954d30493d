#include "exec/param_file.h"

#include <array>
#include <bit>
#include <cmath>
#include <cstring>
#include <memory>
#include <set>
#include <string_view>

#include "common/file.h"
#include "common/mapped_file.h"

namespace rigel::exec {
namespace {

// Values are copied to and from the file byte for byte: NPY's '<f4'/'<i4'
// and ZIP's integers are little-endian, as every host Rigel runs on is.
static_assert(std::endian::native == std::endian::little);

constexpr uint32_t kMax32 = 0xFFFFFFFF;  // a ZIP field at this value: see ZIP64
constexpr uint16_t kMax16 = 0xFFFF;
constexpr uint32_t kLocalSig = 0x04034b50, kCentralSig = 0x02014b50, kEndSig = 0x06054b50;
constexpr uint32_t kZip64EndSig = 0x06064b50, kZip64LocatorSig = 0x07064b50;
// A fixed timestamp (1980-01-01 00:00, MS-DOS format): equal parameters give
// byte-equal files, so runs can be compared by checksum.
constexpr uint16_t kDosTime = 0, kDosDate = (0 << 9) | (1 << 5) | 1;
constexpr std::string_view kNpyMagic = "\x93NUMPY";

// CRC-32 (ISO-HDLC, as ZIP uses), one table lookup per byte.
uint32_t Crc32(std::string_view bytes) {
  static const std::array<uint32_t, 256> table = [] {
    std::array<uint32_t, 256> t{};
    for (uint32_t i = 0; i < 256; ++i) {
      uint32_t c = i;
      for (int k = 0; k < 8; ++k) c = (c & 1) ? 0xEDB88320u ^ (c >> 1) : c >> 1;
      t[i] = c;
    }
    return t;
  }();
  uint32_t c = 0xFFFFFFFFu;
  for (unsigned char b : bytes) c = table[(c ^ b) & 0xFF] ^ (c >> 8);
  return c ^ 0xFFFFFFFFu;
}

template <typename T>
void Put(std::string* out, T v) {
  out->append(reinterpret_cast<const char*>(&v), sizeof(T));
}

// Reads a little-endian T at `pos` of `s`; false when it runs past the end.
template <typename T>
bool Get(std::string_view s, uint64_t pos, T* v) {
  if (pos > s.size() || s.size() - pos < sizeof(T)) return false;
  std::memcpy(v, s.data() + pos, sizeof(T));
  return true;
}

Status CheckParam(const SavedParam& p, std::set<std::string>* seen) {
  // A blank, '/' or '\' would make the entry a path, or a key numpy splits.
  if (p.name.empty() || p.name.find_first_of(" \t\n/\\") != std::string::npos) {
    return InvalidArgument("parameter name '" + p.name + "' cannot be saved");
  }
  if (!seen->insert(p.name).second) {
    return InvalidArgument("parameter name '" + p.name + "' appears twice");
  }
  if (p.rows < 0 || p.width < 1 || static_cast<int64_t>(p.values.size()) != p.rows * p.width) {
    return InvalidArgument("parameter '" + p.name + "' has " + std::to_string(p.values.size()) +
                           " values, not " + std::to_string(p.rows) + " x " +
                           std::to_string(p.width));
  }
  if (!p.is_int) return Status::Ok();
  for (float v : p.values) {
    if (std::nearbyint(v) != v || v < -2147483648.0f || v >= 2147483648.0f) {
      return InvalidArgument("i32 parameter '" + p.name + "' holds " + std::to_string(v) +
                             ", not an int32");
    }
  }
  return Status::Ok();
}

// The NPY 1.0 preamble: magic, version, header length, and the header dict
// padded with blanks to end in '\n' at a multiple of 64 bytes, as numpy does
// so that the data are aligned when the file is mapped.
std::string NpyHeader(const SavedParam& p) {
  std::string dict = std::string("{'descr': '") + (p.is_int ? "<i4" : "<f4") +
                     "', 'fortran_order': False, 'shape': (" + std::to_string(p.rows) +
                     (p.is_2d || p.width != 1 ? ", " + std::to_string(p.width) + ")" : ",)") +
                     ", }";
  const size_t fixed = kNpyMagic.size() + 2 + 2;
  dict.append(63 - (fixed + dict.size()) % 64, ' ');
  dict += '\n';
  std::string out(kNpyMagic);
  out += '\x01';
  out += '\x00';
  Put<uint16_t>(&out, static_cast<uint16_t>(dict.size()));
  return out + dict;
}

void AppendValues(const SavedParam& p, std::string* out) {
  if (!p.is_int) {
    out->append(reinterpret_cast<const char*>(p.values.data()), p.values.size() * sizeof(float));
    return;
  }
  for (float v : p.values) Put<int32_t>(out, static_cast<int32_t>(v));
}

struct Entry {
  std::string name;
  uint32_t crc = 0;
  uint64_t size = 0;    // stored: compressed and uncompressed alike
  uint64_t offset = 0;  // of its local header
};

// A local header, its name and (ZIP64) extra field, then the NPY array. The
// CRC is patched in once the data are there.
Entry AppendEntry(const SavedParam& p, std::string* out) {
  Entry e{p.name + ".npy", 0, 0, out->size()};
  const std::string npy = NpyHeader(p);
  e.size = npy.size() + p.values.size() * 4;
  const bool zip64 = e.size >= kMax32;
  Put<uint32_t>(out, kLocalSig);
  Put<uint16_t>(out, zip64 ? 45 : 20);  // version needed: 4.5 for ZIP64
  Put<uint16_t>(out, 0);                // flags
  Put<uint16_t>(out, 0);                // stored
  Put<uint16_t>(out, kDosTime);
  Put<uint16_t>(out, kDosDate);
  const size_t crc_at = out->size();
  Put<uint32_t>(out, 0);
  Put<uint32_t>(out, zip64 ? kMax32 : static_cast<uint32_t>(e.size));
  Put<uint32_t>(out, zip64 ? kMax32 : static_cast<uint32_t>(e.size));
  Put<uint16_t>(out, static_cast<uint16_t>(e.name.size()));
  Put<uint16_t>(out, zip64 ? 20 : 0);
  out->append(e.name);
  if (zip64) {
    Put<uint16_t>(out, 1);  // the ZIP64 extra field: both sizes
    Put<uint16_t>(out, 16);
    Put<uint64_t>(out, e.size);
    Put<uint64_t>(out, e.size);
  }
  const size_t data_at = out->size();
  out->append(npy);
  AppendValues(p, out);
  e.crc = Crc32(std::string_view(*out).substr(data_at));
  std::memcpy(out->data() + crc_at, &e.crc, 4);
  return e;
}

// A central directory record; sizes and offset past 32 bits move to a ZIP64
// extra field (in the order the format fixes), their fields set to all ones.
void AppendCentral(const Entry& e, std::string* out) {
  const bool big = e.size >= kMax32, far = e.offset >= kMax32;
  const uint16_t extra = (big ? 16 : 0) + (far ? 8 : 0);
  Put<uint32_t>(out, kCentralSig);
  Put<uint16_t>(out, (3 << 8) | 45);  // made by: Unix, so the mode below counts
  Put<uint16_t>(out, big || far ? 45 : 20);
  Put<uint16_t>(out, 0);
  Put<uint16_t>(out, 0);
  Put<uint16_t>(out, kDosTime);
  Put<uint16_t>(out, kDosDate);
  Put<uint32_t>(out, e.crc);
  Put<uint32_t>(out, big ? kMax32 : static_cast<uint32_t>(e.size));
  Put<uint32_t>(out, big ? kMax32 : static_cast<uint32_t>(e.size));
  Put<uint16_t>(out, static_cast<uint16_t>(e.name.size()));
  Put<uint16_t>(out, extra > 0 ? extra + 4 : 0);
  Put<uint16_t>(out, 0);               // comment
  Put<uint16_t>(out, 0);               // disk
  Put<uint16_t>(out, 0);               // internal attributes
  Put<uint32_t>(out, 0100644u << 16);  // a regular file, rw-r--r--
  Put<uint32_t>(out, far ? kMax32 : static_cast<uint32_t>(e.offset));
  out->append(e.name);
  if (extra == 0) return;
  Put<uint16_t>(out, 1);
  Put<uint16_t>(out, extra);
  if (big) {
    Put<uint64_t>(out, e.size);
    Put<uint64_t>(out, e.size);
  }
  if (far) Put<uint64_t>(out, e.offset);
}

// The end records: ZIP64's record and locator first when the count, size or
// offset of the central directory does not fit the classic one.
void AppendEnd(uint64_t count, uint64_t cd_offset, std::string* out) {
  const uint64_t cd_size = out->size() - cd_offset;
  const bool zip64 = count >= kMax16 || cd_size >= kMax32 || cd_offset >= kMax32;
  if (zip64) {
    const uint64_t at = out->size();
    Put<uint32_t>(out, kZip64EndSig);
    Put<uint64_t>(out, 44);  // the record's size after this field
    Put<uint16_t>(out, (3 << 8) | 45);
    Put<uint16_t>(out, 45);
    Put<uint32_t>(out, 0);
    Put<uint32_t>(out, 0);
    Put<uint64_t>(out, count);
    Put<uint64_t>(out, count);
    Put<uint64_t>(out, cd_size);
    Put<uint64_t>(out, cd_offset);
    Put<uint32_t>(out, kZip64LocatorSig);
    Put<uint32_t>(out, 0);
    Put<uint64_t>(out, at);
    Put<uint32_t>(out, 1);  // disks
  }
  Put<uint32_t>(out, kEndSig);
  Put<uint16_t>(out, 0);
  Put<uint16_t>(out, 0);
  Put<uint16_t>(out, zip64 ? kMax16 : static_cast<uint16_t>(count));
  Put<uint16_t>(out, zip64 ? kMax16 : static_cast<uint16_t>(count));
  Put<uint32_t>(out, zip64 ? kMax32 : static_cast<uint32_t>(cd_size));
  Put<uint32_t>(out, zip64 ? kMax32 : static_cast<uint32_t>(cd_offset));
  Put<uint16_t>(out, 0);  // comment
}

// ---------------------------------------------------------------- reading

// What ReadParams reports: the file, and what is wrong with it.
struct Bad {
  const std::string& path;
  Status operator()(const std::string& why) const {
    return InvalidArgument(path + ": not a parameter file (.npz) rigel reads: " + why);
  }
};

struct CentralDir {
  uint64_t count = 0, offset = 0;
};

// The end record, found from the end of the file (a comment may follow it),
// and ZIP64's when its fields are all ones.
StatusOr<CentralDir> FindCentralDir(std::string_view s, const Bad& bad) {
  if (s.size() < 22) return bad("too short for a ZIP archive");
  uint64_t end = s.size() - 22;
  const uint64_t lowest = end > kMax16 ? end - kMax16 : 0;
  uint32_t sig = 0;
  while (!(Get(s, end, &sig) && sig == kEndSig)) {
    if (end == lowest) return bad("no ZIP end record (not a ZIP archive)");
    --end;
  }
  uint16_t count16 = 0;
  uint32_t offset32 = 0;
  Get(s, end + 10, &count16);
  Get(s, end + 16, &offset32);
  CentralDir cd{count16, offset32};
  if (count16 != kMax16 && offset32 != kMax32) return cd;
  uint64_t at = 0;
  if (end < 20 || !Get(s, end - 20, &sig) || sig != kZip64LocatorSig || !Get(s, end - 12, &at) ||
      !Get(s, at, &sig) || sig != kZip64EndSig || !Get(s, at + 32, &cd.count) ||
      !Get(s, at + 48, &cd.offset)) {
    return bad("a broken ZIP64 end record");
  }
  return cd;
}

// The bytes of one stored entry: where its central record at `*pos` says,
// checked against its CRC. Advances `*pos` to the next record.
StatusOr<std::string_view> EntryData(std::string_view s, uint64_t* pos, std::string* name,
                                     const Bad& bad) {
  uint32_t sig = 0, crc = 0, packed32 = 0, size32 = 0, offset32 = 0;
  uint16_t flags = 0, method = 0, name_len = 0, extra_len = 0, comment_len = 0;
  const uint64_t p = *pos;
  if (!Get(s, p, &sig) || sig != kCentralSig || !Get(s, p + 8, &flags) ||
      !Get(s, p + 10, &method) || !Get(s, p + 16, &crc) || !Get(s, p + 20, &packed32) ||
      !Get(s, p + 24, &size32) || !Get(s, p + 28, &name_len) || !Get(s, p + 30, &extra_len) ||
      !Get(s, p + 32, &comment_len) || !Get(s, p + 42, &offset32) ||
      s.size() - p - 46 < uint64_t{name_len} + extra_len + comment_len) {
    return bad("a broken central directory record at byte " + std::to_string(p));
  }
  *name = std::string(s.substr(p + 46, name_len));
  if (flags & 1) return bad("entry '" + *name + "' is encrypted");
  if (method != 0) {
    return bad("entry '" + *name + "' is compressed (numpy.savez_compressed); only stored " +
               "entries (numpy.savez) are read");
  }
  // Stored: the compressed size is the size; ZIP64 puts the fields at all
  // ones, in this order, in its extra field.
  uint64_t size = packed32, unused = 0, offset = offset32;
  for (uint64_t x = p + 46 + name_len; x + 4 <= p + 46 + name_len + extra_len;) {
    uint16_t id = 0, len = 0;
    Get(s, x, &id);
    Get(s, x + 2, &len);
    uint64_t at = x + 4;
    if (id == 1 && size32 == kMax32 && Get(s, at, &unused)) at += 8;
    if (id == 1 && packed32 == kMax32 && Get(s, at, &size)) at += 8;
    if (id == 1 && offset32 == kMax32) Get(s, at, &offset);
    x += 4 + len;
  }
  *pos = p + 46 + name_len + extra_len + comment_len;
  uint16_t local_name = 0, local_extra = 0;
  if (!Get(s, offset, &sig) || sig != kLocalSig || !Get(s, offset + 26, &local_name) ||
      !Get(s, offset + 28, &local_extra)) {
    return bad("entry '" + *name + "' has no local header at byte " + std::to_string(offset));
  }
  const uint64_t data = offset + 30 + local_name + local_extra;
  if (data > s.size() || s.size() - data < size) return bad("entry '" + *name + "' is truncated");
  std::string_view bytes = s.substr(data, size);
  if (Crc32(bytes) != crc) return bad("entry '" + *name + "' fails its CRC-32 check (damaged)");
  return bytes;
}

// The value after `'key':` in an NPY header dict, up to the next ',' (past a
// closing ')' for the shape tuple).
std::string DictValue(std::string_view dict, std::string_view key) {
  size_t at = std::string_view::npos;
  for (char quote : {'\'', '"'}) {
    std::string quoted(1, quote);
    quoted.append(key);
    quoted += quote;
    if (at == std::string_view::npos) at = dict.find(quoted);
  }
  if (at == std::string_view::npos) return "";
  at = dict.find(':', at);
  if (at == std::string_view::npos) return "";
  size_t from = dict.find_first_not_of(' ', at + 1);
  if (from == std::string_view::npos) return "";
  const size_t to = dict[from] == '(' ? dict.find(')', from) + 1 : dict.find(',', from);
  if (to == std::string_view::npos || to == 0) return "";
  std::string v(dict.substr(from, to - from));
  while (!v.empty() && v.back() == ' ') v.pop_back();
  return v;
}

// The shape tuple "(R,)" or "(R, W)" as rows and width; false otherwise.
bool ParseShape(const std::string& shape, SavedParam* p) {
  std::vector<int64_t> dims;
  size_t i = 1;
  while (shape.size() >= 2 && shape.front() == '(' && i < shape.size() - 1) {
    while (shape[i] == ' ' || shape[i] == ',') ++i;
    if (shape[i] == ')') break;
    size_t used = 0;
    try {
      dims.push_back(std::stoll(shape.substr(i), &used));
    } catch (...) {
      return false;
    }
    i += used;
  }
  if (dims.empty() || dims.size() > 2 || dims[0] < 0 || (dims.size() == 2 && dims[1] < 1)) {
    return false;
  }
  p->rows = dims[0];
  p->width = dims.size() == 2 ? dims[1] : 1;
  p->is_2d = dims.size() == 2;
  return true;
}

// The header of one NPY array (versions 1 to 3: 2 or 4 bytes of header
// length) of a parameter named `p->name`: its dtype and shape into `*p` (no
// values), and where its values begin in `npy`, checked to hold them all.
StatusOr<uint64_t> ParseNpyHeader(std::string_view npy, SavedParam* p, const Bad& bad) {
  const std::string what = "array '" + p->name + "'";
  uint8_t major = 0;
  uint32_t header_len = 0;
  uint16_t len16 = 0;
  if (npy.substr(0, kNpyMagic.size()) != kNpyMagic || !Get(npy, 6, &major) || major < 1 ||
      major > 3 || !(major == 1 ? Get(npy, 8, &len16) : Get(npy, 8, &header_len))) {
    return bad(what + " is not in NPY format");
  }
  if (major == 1) header_len = len16;
  const uint64_t data_at = (major == 1 ? 10 : 12) + uint64_t{header_len};
  if (data_at > npy.size()) return bad(what + " has a truncated NPY header");
  const std::string_view dict = npy.substr(data_at - header_len, header_len);
  const std::string descr = DictValue(dict, "descr"), order = DictValue(dict, "fortran_order");
  if (descr != "'<f4'" && descr != "'<i4'") {
    return bad(what + " has dtype " + descr + "; only '<f4' (float32) and '<i4' (int32) are read");
  }
  if (order != "False") return bad(what + " is not in C order (fortran_order " + order + ")");
  if (!ParseShape(DictValue(dict, "shape"), p)) {
    return bad(what + " has shape " + DictValue(dict, "shape") + "; only 1-D and 2-D are read");
  }
  p->is_int = descr == "'<i4'";
  // rows * width checked against the bytes without overflowing first.
  const uint64_t bytes = npy.size() - data_at;
  const uint64_t rows = static_cast<uint64_t>(p->rows), width = static_cast<uint64_t>(p->width);
  if ((rows > 0 && width > bytes / 4 / rows) || rows * width * 4 != bytes) {
    return bad(what + " holds " + std::to_string(bytes) + " bytes of data for " +
               std::to_string(p->rows) + " x " + std::to_string(p->width) + " values");
  }
  return data_at;
}

// An i32 array's values must be ints a parameter holds as floats.
Status CheckInts(std::string_view values, const std::string& name, const Bad& bad) {
  for (uint64_t at = 0; at + 4 <= values.size(); at += 4) {
    int32_t v = 0;
    Get(values, at, &v);
    // Parameters hold ints as floats, exact up to 2^24 in magnitude.
    if (v > (1 << 24) || v < -(1 << 24)) {
      return bad("array '" + name + "' holds " + std::to_string(v) +
                 ", beyond the ints a parameter holds");
    }
  }
  return Status::Ok();
}

// One NPY array as a parameter named `p->name`, values included.
Status ParseNpy(std::string_view npy, SavedParam* p, const Bad& bad) {
  RIGEL_ASSIGN_OR_RETURN(const uint64_t data_at, ParseNpyHeader(npy, p, bad));
  const uint64_t n = static_cast<uint64_t>(p->rows) * static_cast<uint64_t>(p->width);
  p->values.resize(n);
  if (!p->is_int) {
    // (An empty parameter's values have no buffer: memcpy of null is UB.)
    if (n > 0) std::memcpy(p->values.data(), npy.data() + data_at, n * 4);
    return Status::Ok();
  }
  RIGEL_RETURN_IF_ERROR(CheckInts(npy.substr(data_at), p->name, bad));
  for (uint64_t i = 0; i < n; ++i) {
    int32_t v = 0;
    Get(npy, data_at + 4 * i, &v);
    p->values[i] = static_cast<float>(v);
  }
  return Status::Ok();
}

// Each entry of an archive in this format: its parameter's name and its NPY
// bytes, in the archive's order.
StatusOr<std::vector<std::pair<std::string, std::string_view>>> Entries(std::string_view s,
                                                                        const Bad& bad) {
  if (s.starts_with("rigel-params ")) {
    return bad("it is in the old 'rigel-params 1' format, which is no longer read");
  }
  RIGEL_ASSIGN_OR_RETURN(CentralDir cd, FindCentralDir(s, bad));
  std::vector<std::pair<std::string, std::string_view>> out;
  std::set<std::string> seen;
  uint64_t pos = cd.offset;
  for (uint64_t k = 0; k < cd.count; ++k) {
    std::string name;
    RIGEL_ASSIGN_OR_RETURN(std::string_view npy, EntryData(s, &pos, &name, bad));
    if (!name.ends_with(".npy") || name.size() == 4) {
      return bad("entry '" + name + "' is not NAME.npy");
    }
    name.resize(name.size() - 4);
    if (!seen.insert(name).second) return bad("entry '" + name + ".npy' appears twice");
    out.emplace_back(std::move(name), npy);
  }
  return out;
}

}  // namespace

Status WriteParams(const std::string& path, const std::vector<SavedParam>& params) {
  std::set<std::string> seen;
  for (const SavedParam& p : params) RIGEL_RETURN_IF_ERROR(CheckParam(p, &seen));
  std::string out;
  std::vector<Entry> entries;
  for (const SavedParam& p : params) entries.push_back(AppendEntry(p, &out));
  const uint64_t cd_offset = out.size();
  for (const Entry& e : entries) AppendCentral(e, &out);
  AppendEnd(entries.size(), cd_offset, &out);
  return WriteFileAtomically(path, out);
}

StatusOr<std::vector<SavedParam>> ReadParams(const std::string& path) {
  RIGEL_ASSIGN_OR_RETURN(std::string text, ReadFileToString(path));
  const Bad bad{path};
  RIGEL_ASSIGN_OR_RETURN(auto entries, Entries(text, bad));
  std::vector<SavedParam> out;
  for (auto& [name, npy] : entries) {
    SavedParam p;
    p.name = std::move(name);
    RIGEL_RETURN_IF_ERROR(ParseNpy(npy, &p, bad));
    out.push_back(std::move(p));
  }
  return out;
}

StatusOr<std::vector<ParamEntry>> ListParams(const std::string& path) {
  // Mapped, not read: a large table's pages are touched once for the CRC
  // and then left to the page cache.
  RIGEL_ASSIGN_OR_RETURN(std::shared_ptr<const MappedFile> file, MappedFile::Open(path));
  const std::string_view s = file->bytes();
  const Bad bad{path};
  RIGEL_ASSIGN_OR_RETURN(auto entries, Entries(s, bad));
  std::vector<ParamEntry> out;
  for (auto& [name, npy] : entries) {
    SavedParam p;
    p.name = name;
    RIGEL_ASSIGN_OR_RETURN(const uint64_t data_at, ParseNpyHeader(npy, &p, bad));
    if (p.is_int) RIGEL_RETURN_IF_ERROR(CheckInts(npy.substr(data_at), p.name, bad));
    out.push_back({std::move(name), p.rows, p.width, p.is_int, p.is_2d,
                   static_cast<uint64_t>(npy.data() - s.data()) + data_at});
  }
  return out;
}

}  // namespace rigel::exec
