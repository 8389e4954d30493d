// Trained parameters on disk: what `rigel run --save-params FILE` writes
// (serial and distributed runs alike) and tests compare.
//
// Format: NumPy's .npz (numpy.load reads it): a ZIP archive, entries stored
// uncompressed (ZIP64 only when an entry or the archive reaches 4 GiB), with
// one entry "NAME.npy" per parameter in declaration order. Each is an NPY
// version 1.0 array in C order: dtype '<f4', or '<i4' for an i32 parameter;
// shape (rows,) for a 1-D parameter, (rows, width) for a 2-D one. The file is
// written at `path` as given: no ".npz" is appended (numpy.load recognises
// the archive by its contents, not its name). Written atomically (a temporary
// file renamed into place), so a failed run never leaves half a file. Layout
// and a Python example: docs/operations.md, "Model files".
//
// Thread-compatible value functions.
#ifndef RIGEL_EXEC_PARAM_FILE_H_
#define RIGEL_EXEC_PARAM_FILE_H_

#include <cstdint>
#include <string>
#include <vector>

#include "common/status.h"

namespace rigel::exec {

struct SavedParam {
  std::string name;
  int64_t rows = 0;
  int64_t width = 1;          // 1 for a 1-D parameter
  std::vector<float> values;  // rows * width, row-major
  bool is_int = false;        // an i32 parameter: values are exact integers
  bool is_2d = false;         // declared [rows, width]; a width above 1 implies it
};

// IoError when the file cannot be written; InvalidArgument when a
// parameter's values do not have rows * width entries, its name is empty,
// repeated or holds a blank, a '/' or a '\', or an i32 parameter holds a
// value that is not an integer in int32's range.
Status WriteParams(const std::string& path, const std::vector<SavedParam>& params);

// Reads a file in this format, also one numpy.savez wrote with arrays of
// those dtypes and shapes (an i32 value must be exact as a float). NotFound/
// IoError when unreadable; InvalidArgument naming the file and what is wrong
// when it is not (not a ZIP archive, truncated, a compressed entry, a CRC
// mismatch, an NPY header of another dtype, order or rank).
StatusOr<std::vector<SavedParam>> ReadParams(const std::string& path);

// Where each parameter's values lie in such a file, so that a process can
// read rows in place (ir::ParamDecl::kFile) instead of holding the file:
// rows * width little-endian values of 4 bytes from byte `offset`, f32 or
// (is_int) i32.
struct ParamEntry {
  std::string name;
  int64_t rows = 0;
  int64_t width = 1;
  bool is_int = false;
  bool is_2d = false;
  uint64_t offset = 0;
};

// The entries of the file at `path`, checked as ReadParams checks them
// (CRC-32 and ints included), in the file's order; the same errors.
StatusOr<std::vector<ParamEntry>> ListParams(const std::string& path);

}  // namespace rigel::exec

#endif  // RIGEL_EXEC_PARAM_FILE_H_
