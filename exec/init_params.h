// `--init-params FILE`: parameters start from the values of a file that
// `--save-params` wrote (or numpy.savez, exec/param_file.h) instead of their
// initialisers: a warm start, or an evaluation-only run of a trained model.
//
// UseInitParams reads the file's directory (ListParams: no values are held)
// and makes each parameter it names of kind ir::ParamDecl::kFile, whose rows
// are then read in place wherever a process makes them (a whole copy, a
// worker's rows, a server's shard: ir/param_init.h). Every entry must name a
// parameter of the program, 1-D or 2-D as declared, with its width and its
// element type (f32, or i32 for an i32 parameter); parameters the file does
// not name keep their initialisers. The rows, which may depend on the data,
// are checked once they are known (CheckInitRows). Every process of a job
// calls it on the same file (the workers check its fingerprint).
//
// Errors: those of exec::ListParams (NotFound, IoError, InvalidArgument for
// a file that is not one); InvalidArgument naming the file and the entry
// when an entry does not fit the program; from CheckInitRows,
// InvalidArgument naming both row counts. Thread-compatible.
#ifndef RIGEL_EXEC_INIT_PARAMS_H_
#define RIGEL_EXEC_INIT_PARAMS_H_

#include <cstdint>
#include <string>
#include <vector>

#include "common/status.h"
#include "ir/ir.h"

namespace rigel::exec {

// Returns the names of the parameters the file sets, in the program's order.
StatusOr<std::vector<std::string>> UseInitParams(const std::string& path, ir::Program* prog);

// A parameter read from a file (kFile) must have the file's rows: `rows` as
// this run computes them. Ok for any other kind.
Status CheckInitRows(const ir::ParamDecl& p, int64_t rows);

}  // namespace rigel::exec

#endif  // RIGEL_EXEC_INIT_PARAMS_H_
