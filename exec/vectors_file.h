// Trained embeddings in word2vec's text format: what
// `rigel run --save-vectors PARAM=FILE` writes for a parameter with one row
// per word of a tokens data set (DSL.md "Running").
//
// Format: a line "V D", then per word, in token id order, a line
// "word v1 ... vD" with each value in the shortest text that reads back as
// the same float32. Written atomically, so a failed run leaves no half file.
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
  int data = -1;   // the tokens data set whose vocab numbers its rows
  std::string path;
};

// Parses `PARAM=FILE` specs. InvalidArgument naming the spec when it has no
// '=', names no parameter, or the parameter's row count is not `D.vocab` for
// a tokens data set D (the words come from there).
StatusOr<std::vector<VectorsRequest>> ParseSaveVectors(const ir::Program& prog,
                                                       const std::vector<std::string>& specs);

// Writes `p` (p.rows == words.words.size()) to `path` in the format above,
// with the words of the tokens data set `words`. InvalidArgument when the
// sizes do not match or a word holds a blank; IoError when writing fails.
Status WriteVectors(const std::string& path, const data::Dataset& words, const SavedParam& p);

}  // namespace rigel::exec

#endif  // RIGEL_EXEC_VECTORS_FILE_H_
