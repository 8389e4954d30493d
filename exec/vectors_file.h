// Trained embeddings in word2vec's text format: what
// `rigel run --save-vectors PARAM=FILE` writes for a 2-D parameter, or a 1-D
// one with one row per word of a tokens data set (docs/operations.md,
// "Model files").
//
// Format: a line "ROWS WIDTH", then per row, in row order, a line
// "NAME v1 ... vWIDTH": NAME the row's word when the rows are a tokens data
// set's vocabulary (CORPUS.vocab rows), else the row id (0, 1, ...). Each
// value is the shortest text that reads back as the same float32. Written
// atomically, so a failed run leaves no half file.
//
// Thread-compatible value functions.
#ifndef RIGEL_EXEC_VECTORS_FILE_H_
#define RIGEL_EXEC_VECTORS_FILE_H_

#include <string>
#include <vector>

#include "common/status.h"
#include "data/dataset.h"
#include "exec/param_file.h"
#include "ir/ir.h"

namespace rigel::exec {

// One `--save-vectors PARAM=FILE` request, resolved against a program.
struct VectorsRequest {
  int param = -1;  // the parameter saved
  int data = -1;   // the tokens data set whose vocab numbers its rows; -1: row ids
  std::string path;
};

// Parses `PARAM=FILE` specs. InvalidArgument naming the spec when it has no
// '=', names no parameter, or the parameter is 1-D and its row count is not
// `D.vocab` for a tokens data set D.
StatusOr<std::vector<VectorsRequest>> ParseSaveVectors(const ir::Program& prog,
                                                       const std::vector<std::string>& specs);

// Writes `p` to `path` in the format above, naming row r by `words->words[r]`
// (then p.rows must be words->words.size()), or by r when `words` is null.
// InvalidArgument when the sizes do not match or a word holds a blank;
// IoError when writing fails.
Status WriteVectors(const std::string& path, const data::Dataset* words, const SavedParam& p);

}  // namespace rigel::exec

#endif  // RIGEL_EXEC_VECTORS_FILE_H_
