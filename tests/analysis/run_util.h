// Helpers shared by the schedule-order tests: compile a program from text
// and run it serially in a given order.
#ifndef RIGEL_TESTS_ANALYSIS_RUN_UTIL_H_
#define RIGEL_TESTS_ANALYSIS_RUN_UTIL_H_

#include <gtest/gtest.h>

#include <functional>
#include <sstream>
#include <string>
#include <vector>

#include "exec/executor.h"
#include "frontend/compile.h"

namespace rigel::analysis {

inline ir::Program Compile(const std::string& text) {
  auto prog = frontend::CompileText(text, "t.rgl", {});
  EXPECT_TRUE(prog.ok()) << prog.status().message();
  return std::move(prog).value();
}

// Runs `prog` serially; loop 0 in `order0` when given. Returns param 0.
inline std::vector<float> RunWith(
    const ir::Program& prog,
    std::function<StatusOr<std::vector<int64_t>>(const data::Dataset&)> order0) {
  exec::ExecutorOptions opts;
  std::ostringstream sink;
  opts.out = &sink;
  if (order0) {
    opts.order = [order0](int loop, const data::Dataset& d) -> StatusOr<std::vector<int64_t>> {
      if (loop != 0) return std::vector<int64_t>{};
      return order0(d);
    };
  }
  auto ex = exec::SerialExecutor::Create(prog, opts);
  EXPECT_TRUE(ex.ok()) << ex.status().message();
  Status st = (*ex)->Run();
  EXPECT_TRUE(st.ok()) << st.message();
  return (*ex)->param(0);
}

}  // namespace rigel::analysis

#endif  // RIGEL_TESTS_ANALYSIS_RUN_UTIL_H_
