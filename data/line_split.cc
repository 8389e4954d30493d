#include "data/line_split.h"

#include <algorithm>
#include <cstring>
#include <functional>
#include <string>
#include <utility>

#include "common/file.h"

namespace rigel::data {

namespace {

Status CheckPart(int part, int parts) {
  if (parts < 1) return InvalidArgument("a data file cut into " + std::to_string(parts) + " parts");
  if (part < 0 || part >= parts) {
    return InvalidArgument("part " + std::to_string(part) + " of a data file cut into " +
                           std::to_string(parts) + " parts (0 to " + std::to_string(parts - 1) +
                           ")");
  }
  return Status::Ok();
}

// The first line start at or after byte x of a text of `size` bytes whose
// first '\n' at or after byte `from` is found by `newline` (-1: none).
StatusOr<int64_t> LineStartAtOrAfter(int64_t x, int64_t size,
                                     const std::function<StatusOr<int64_t>(int64_t)>& newline) {
  if (x <= 0) return 0;
  if (x >= size) return size;
  // x is a line start when the byte before it ends a line.
  RIGEL_ASSIGN_OR_RETURN(int64_t nl, newline(x - 1));
  return nl < 0 ? size : nl + 1;
}

StatusOr<ByteRange> Split(int64_t size, int part, int parts,
                          const std::function<StatusOr<int64_t>(int64_t)>& newline) {
  RIGEL_RETURN_IF_ERROR(CheckPart(part, parts));
  ByteRange r;
  RIGEL_ASSIGN_OR_RETURN(r.begin, LineStartAtOrAfter(NominalCut(size, part, parts), size, newline));
  RIGEL_ASSIGN_OR_RETURN(r.end,
                         LineStartAtOrAfter(NominalCut(size, part + 1, parts), size, newline));
  return r;
}

// Where words are cut: after a space, tab or newline. The tokens loader
// also ends words at '\v', '\f' and '\r', but error messages show what
// follows a bad byte up to a space, tab, '\r' or newline
// (text_scanner.h), and a part must show what the whole file shows.
bool IsBlankByte(char c) { return c == ' ' || c == '\t' || c == '\n'; }

// The offset of the first '\n' (`words`: blank) at or after `from` in `f`;
// -1 when there is none. Reads 64 KiB at a time: a line can be longer than
// a part.
StatusOr<int64_t> NextBreak(const ReadOnlyFile& f, int64_t from, bool words) {
  constexpr int64_t kChunk = 64 * 1024;
  std::string buf(kChunk, '\0');
  for (int64_t at = from; at < f.size();) {
    RIGEL_ASSIGN_OR_RETURN(int64_t got, f.ReadAt(at, buf.data(), kChunk));
    if (got == 0) break;  // the file shrank: it ends here
    const char* b = buf.data();
    const char* hit =
        words ? std::find_if(b, b + got, IsBlankByte)
              : static_cast<const char*>(std::memchr(b, '\n', static_cast<size_t>(got)));
    if (hit != nullptr && hit != b + got) return at + (hit - b);
    at += got;
  }
  return -1;
}

}  // namespace

int64_t NominalCut(int64_t size, int part, int parts) {
  // size = q * parts + r: size * part / parts = q * part + r * part / parts,
  // with no product as large as size * part.
  const int64_t q = size / parts, r = size % parts;
  return q * part + r * part / parts;
}

StatusOr<ByteRange> SplitLines(std::string_view text, int part, int parts) {
  return Split(static_cast<int64_t>(text.size()), part, parts,
               [&](int64_t from) -> StatusOr<int64_t> {
                 const size_t nl = text.find('\n', static_cast<size_t>(from));
                 return nl == std::string_view::npos ? -1 : static_cast<int64_t>(nl);
               });
}

StatusOr<ByteRange> SplitFileLines(const std::string& path, int part, int parts) {
  RIGEL_RETURN_IF_ERROR(CheckPart(part, parts));
  RIGEL_ASSIGN_OR_RETURN(ReadOnlyFile f, ReadOnlyFile::Open(path));
  return Split(f.size(), part, parts, [&](int64_t from) { return NextBreak(f, from, false); });
}

StatusOr<ByteRange> SplitWords(std::string_view text, int part, int parts) {
  return Split(static_cast<int64_t>(text.size()), part, parts,
               [&](int64_t from) -> StatusOr<int64_t> {
                 const auto it = std::find_if(text.begin() + from, text.end(), IsBlankByte);
                 return it == text.end() ? -1 : static_cast<int64_t>(it - text.begin());
               });
}

StatusOr<ByteRange> SplitFileWords(const std::string& path, int part, int parts) {
  RIGEL_RETURN_IF_ERROR(CheckPart(part, parts));
  RIGEL_ASSIGN_OR_RETURN(ReadOnlyFile f, ReadOnlyFile::Open(path));
  return Split(f.size(), part, parts, [&](int64_t from) { return NextBreak(f, from, true); });
}

StatusOr<std::string> ReadFileRange(const std::string& path, ByteRange range) {
  if (range.begin < 0 || range.end < range.begin) {
    return InvalidArgument(path + ": bytes " + std::to_string(range.begin) + " to " +
                           std::to_string(range.end) + " are not a range");
  }
  RIGEL_ASSIGN_OR_RETURN(ReadOnlyFile f, ReadOnlyFile::Open(path));
  std::string out(static_cast<size_t>(range.size()), '\0');
  for (int64_t done = 0; done < range.size();) {
    RIGEL_ASSIGN_OR_RETURN(int64_t got,
                           f.ReadAt(range.begin + done, out.data() + done, range.size() - done));
    if (got == 0) {
      return OutOfRange(path + ": ends at byte " + std::to_string(range.begin + done) +
                        ", before byte " + std::to_string(range.end) + " of the part asked for");
    }
    done += got;
  }
  return out;
}

}  // namespace rigel::data
