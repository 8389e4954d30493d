// Byte ranges of a text file cut at line starts, as Hadoop's input splits
// are (issue 32: each worker reads only its part of a data file). Part k of
// n is nominally the bytes [size * k / n, size * (k + 1) / n); it holds the
// lines that start there, whole: a line belongs to the part where its first
// byte is, however far it runs into the next part. Lines end at '\n' ('\r'
// before it stays part of the line, as the loaders read CRLF files); a last
// line without '\n' is a line. The parts of one file are contiguous, cover it
// exactly, and each begins at a line start; a part may be empty (a file of
// fewer bytes than parts, or one long line).
//
// SplitLines works on text in memory; SplitFileLines finds the same range in
// a file by reading only from the nominal cuts to the next '\n' (64 KiB at a
// time), and ReadFileRange reads the part's bytes, so that a worker never
// reads the whole file.
//
// Errors: InvalidArgument for parts < 1 or part outside [0, parts); a file's
// NotFound and IoError (naming the path) as common/file.h's
// ReadFileToString. A file that changes between calls gives ranges of the
// file as it was at each call: the data's digest is the caller's check.
//
// Thread-safe: pure functions of their arguments and the file.
#ifndef RIGEL_DATA_LINE_SPLIT_H_
#define RIGEL_DATA_LINE_SPLIT_H_

#include <cstdint>
#include <string>
#include <string_view>

#include "common/status.h"

namespace rigel::data {

// Bytes [begin, end) of a file: whole lines.
struct ByteRange {
  int64_t begin = 0;
  int64_t end = 0;
  int64_t size() const { return end - begin; }
  bool operator==(const ByteRange&) const = default;
};

// The first byte of part `part` of `parts` nominal cuts of `size` bytes
// (size * part / parts, rounded down, without overflow).
int64_t NominalCut(int64_t size, int part, int parts);

StatusOr<ByteRange> SplitLines(std::string_view text, int part, int parts);
StatusOr<ByteRange> SplitFileLines(const std::string& path, int part, int parts);
// The same cut between words: a part begins at the first byte at or after
// its nominal cut that follows a space, tab or newline; a word belongs to
// the part where it starts, and no word is cut.
StatusOr<ByteRange> SplitWords(std::string_view text, int part, int parts);
StatusOr<ByteRange> SplitFileWords(const std::string& path, int part, int parts);
// The bytes of `range` of the file at `path`; OutOfRange when the file is
// shorter than range.end.
StatusOr<std::string> ReadFileRange(const std::string& path, ByteRange range);

}  // namespace rigel::data

#endif  // RIGEL_DATA_LINE_SPLIT_H_
