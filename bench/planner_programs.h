// The programs issue 31's figures are measured on (bench/planner.cc,
// bench/planner_tune.cc), with the overrides that keep each run short.
#ifndef RIGEL_BENCH_PLANNER_PROGRAMS_H_
#define RIGEL_BENCH_PLANNER_PROGRAMS_H_

#include <string>
#include <vector>

namespace rigel::bench {

// A program, its --set overrides and its driver's epochs: a prediction
// counts the same epochs as the run has (`explain --epochs`), so that both
// cover the same part of training (LDA's samples settle: later sweeps change
// fewer rows).
struct PlannerProgram {
  std::string name, path;
  std::vector<std::string> sets;
  int epochs = 5;
};

// `src`: the source tree (RIGEL_SOURCE_DIR).
inline std::vector<PlannerProgram> PlannerPrograms(const std::string& src) {
  const std::string ex = src + "/examples/", progs = src + "/tests/e2e/programs/";
  return {
      {"mf", ex + "mf.rgl", {"EPOCHS=5"}},
      {"bias", ex + "bias.rgl", {"EPOCHS=5"}},
      {"kmeans", ex + "kmeans.rgl", {"ITERS=5"}},
      {"dense_lr", ex + "dense_lr.rgl", {"EPOCHS=5"}},
      {"sparse_lr", ex + "sparse_lr.rgl", {"EPOCHS=5"}},
      {"softmax", ex + "softmax.rgl", {"EPOCHS=5"}},
      {"fm",
       progs + "fm.rgl",
       {"train.path=" + ex + "data/fm.svm", "test.path=" + ex + "data/fm_test.svm", "EPOCHS=5"}},
      {"lda", ex + "lda.rgl", {"ITERS=10"}, 10},
      {"word2vec", ex + "word2vec.rgl", {"EPOCHS=3"}, 3},
      {"rowsum", progs + "rowsum.rgl", {}, 3},
  };
}

}  // namespace rigel::bench

#endif  // RIGEL_BENCH_PLANNER_PROGRAMS_H_
