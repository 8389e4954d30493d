// `rigel gen KIND --out PATH [options]`: writes the seeded synthetic data sets
// of examples/generators.h. Each kind is a nested CLI11 subcommand, so
// `rigel gen --help` lists the kinds and `rigel gen KIND --help` shows only the
// options that apply to it, with their defaults.
//
// Output: the summary lines ("name: value") go to stdout and, unless
// --no-info is given, to `<out>.info` (for `sparse`, `multiclass`, `fm` and
// `ctr`, next to the train file).
// Errors go to stderr as "rigel gen KIND: error: MESSAGE" with exit status 1.
#include <CLI/CLI.hpp>
#include <cstdio>
#include <memory>
#include <string>

#include "cli/commands.h"
#include "examples/generators.h"

namespace rigel::cli {
namespace {

using examples::GenReport;

// Prints the summary or the error and returns the exit status.
int Finish(const std::string& kind, const StatusOr<GenReport>& report) {
  if (!report.ok()) {
    std::fprintf(stderr, "rigel gen %s: error: %s\n", kind.c_str(),
                 report.status().ToString().c_str());
    return 1;
  }
  for (const std::string& line : report->summary) std::printf("%s\n", line.c_str());
  std::fflush(stdout);
  return 0;
}

// Options every kind has. `no_info` is kept apart from the options struct
// because the flag is negative and CLI11 binds flags to true.
template <typename Options>
struct KindState {
  Options opts;
  bool no_info = false;
};

template <typename Options>
void AddCommonOptions(CLI::App* sub, KindState<Options>* state, const char* out_help) {
  sub->add_option("--out", state->opts.out, out_help)->required();
  sub->add_option("--seed", state->opts.seed, "Seed of every random draw")->capture_default_str();
  sub->add_flag("--no-info", state->no_info, "Do not write the summary to <out>.info");
}

void AddRatings(CLI::App* gen, int* exit_code) {
  auto state = std::make_shared<KindState<examples::RatingsOptions>>();
  examples::RatingsOptions& o = state->opts;
  CLI::App* sub = gen->add_subcommand(
      "ratings",
      "Low-rank matrix plus noise as `i,j,v` lines, Zipf-skewed rows and columns "
      "(matrix factorisation); prints the noise floor RMSE");
  AddCommonOptions(sub, state.get(), "Output CSV file");
  sub->add_option("--rows", o.rows, "Number of rows (users)")->capture_default_str();
  sub->add_option("--cols", o.cols, "Number of columns (items)")->capture_default_str();
  sub->add_option("--count", o.count, "Number of distinct (i, j) entries")->capture_default_str();
  sub->add_option("--rank", o.rank, "Rank of the planted model")->capture_default_str();
  sub->add_option("--mu", o.mu, "Global mean added to every rating")->capture_default_str();
  sub->add_option("--factor-std", o.factor_std, "Standard deviation of factor entries")
      ->capture_default_str();
  sub->add_option("--row-bias", o.row_bias_std, "Standard deviation of per-row offsets")
      ->capture_default_str();
  sub->add_option("--noise", o.noise, "Standard deviation of the Gaussian noise")
      ->capture_default_str();
  sub->add_option("--zipf", o.zipf, "Zipf exponent of row and column popularity")
      ->capture_default_str();
  sub->callback([state, exit_code] {
    state->opts.write_info = !state->no_info;
    *exit_code = Finish("ratings", examples::GenerateRatings(state->opts));
  });
}

void AddSparse(CLI::App* gen, int* exit_code) {
  auto state = std::make_shared<KindState<examples::SparseOptions>>();
  examples::SparseOptions& o = state->opts;
  CLI::App* sub = gen->add_subcommand(
      "sparse",
      "Sparse binary classification in libsvm format (labels -1/+1, 1-based) from "
      "a planted logistic model; prints the planted model's test accuracy");
  AddCommonOptions(sub, state.get(), "Output train file (libsvm)");
  sub->add_option("--test-out", o.test_out, "Output test file (libsvm)")->required();
  sub->add_option("--count", o.count, "Train samples")->capture_default_str();
  sub->add_option("--test-count", o.test_count, "Test samples")->capture_default_str();
  sub->add_option("--dim", o.dim, "Number of features")->capture_default_str();
  sub->add_option("--nnz", o.nnz, "Mean active features per sample")->capture_default_str();
  sub->add_option("--zipf", o.zipf, "Zipf exponent of feature popularity")->capture_default_str();
  sub->add_option("--weight-std", o.weight_std, "Standard deviation of planted weights")
      ->capture_default_str();
  sub->add_option("--real-fraction", o.real_fraction,
                  "Fraction of features with real (not binary) values")
      ->capture_default_str();
  sub->callback([state, exit_code] {
    state->opts.write_info = !state->no_info;
    *exit_code = Finish("sparse", examples::GenerateSparse(state->opts));
  });
}

void AddCorpus(CLI::App* gen, int* exit_code) {
  auto state = std::make_shared<KindState<examples::CorpusOptions>>();
  examples::CorpusOptions& o = state->opts;
  CLI::App* sub = gen->add_subcommand(
      "corpus", "Whitespace-separated tokens `w123` with topical co-occurrence (word2vec)");
  AddCommonOptions(sub, state.get(), "Output text file");
  sub->add_option("--vocab", o.vocab, "Vocabulary size")->capture_default_str();
  sub->add_option("--tokens", o.tokens, "Number of tokens")->capture_default_str();
  sub->add_option("--topics", o.topics, "Number of topics")->capture_default_str();
  sub->add_option("--stop-words", o.stop_words, "Number of global stop words")
      ->capture_default_str();
  sub->add_option("--stop-fraction", o.stop_fraction, "Fraction of tokens that are stop words")
      ->capture_default_str();
  sub->add_option("--zipf", o.zipf, "Zipf exponent of word frequency within a topic")
      ->capture_default_str();
  sub->callback([state, exit_code] {
    state->opts.write_info = !state->no_info;
    *exit_code = Finish("corpus", examples::GenerateCorpus(state->opts));
  });
}

void AddDense(CLI::App* gen, int* exit_code) {
  auto state = std::make_shared<KindState<examples::DenseOptions>>();
  examples::DenseOptions& o = state->opts;
  CLI::App* sub = gen->add_subcommand(
      "dense",
      "Dense classification CSV (label 0/1 in column 0, then the features) from a "
      "planted logistic model; prints the planted accuracy");
  AddCommonOptions(sub, state.get(), "Output CSV file");
  sub->add_option("--count", o.count, "Number of rows")->capture_default_str();
  sub->add_option("--dim", o.dim, "Number of features")->capture_default_str();
  sub->add_option("--scale", o.scale, "Standard deviation of w.x (class separation)")
      ->capture_default_str();
  sub->callback([state, exit_code] {
    state->opts.write_info = !state->no_info;
    *exit_code = Finish("dense", examples::GenerateDense(state->opts));
  });
}

void AddClusters(CLI::App* gen, int* exit_code) {
  auto state = std::make_shared<KindState<examples::ClustersOptions>>();
  examples::ClustersOptions& o = state->opts;
  CLI::App* sub = gen->add_subcommand(
      "clusters",
      "Gaussian clusters as CSV `cluster,x0,...` around planted centres (k-means), centres in "
      "<out>.centres; prints the planted inertia");
  AddCommonOptions(sub, state.get(), "Output CSV file");
  sub->add_option("--count", o.count, "Number of points")->capture_default_str();
  sub->add_option("--dim", o.dim, "Number of coordinates")->capture_default_str();
  sub->add_option("--k", o.k, "Number of clusters")->capture_default_str();
  sub->add_option("--spread", o.spread, "Standard deviation of a point around its centre")
      ->capture_default_str();
  sub->add_option("--separation", o.separation,
                  "Centre coordinates are uniform in [-separation, separation]")
      ->capture_default_str();
  sub->callback([state, exit_code] {
    state->opts.write_info = !state->no_info;
    *exit_code = Finish("clusters", examples::GenerateClusters(state->opts));
  });
}

void AddMulticlass(CLI::App* gen, int* exit_code) {
  auto state = std::make_shared<KindState<examples::MulticlassOptions>>();
  examples::MulticlassOptions& o = state->opts;
  CLI::App* sub = gen->add_subcommand(
      "multiclass",
      "Sparse multiclass data in libsvm format (labels 0..classes-1, 1-based) drawn from a "
      "planted softmax model; prints the planted model's test accuracy");
  AddCommonOptions(sub, state.get(), "Output train file (libsvm)");
  sub->add_option("--test-out", o.test_out, "Output test file (libsvm)")->required();
  sub->add_option("--count", o.count, "Train samples")->capture_default_str();
  sub->add_option("--test-count", o.test_count, "Test samples")->capture_default_str();
  sub->add_option("--dim", o.dim, "Number of features")->capture_default_str();
  sub->add_option("--classes", o.classes, "Number of classes")->capture_default_str();
  sub->add_option("--nnz", o.nnz, "Mean active features per sample")->capture_default_str();
  sub->add_option("--zipf", o.zipf, "Zipf exponent of feature popularity")->capture_default_str();
  sub->add_option("--weight-std", o.weight_std, "Standard deviation of planted weights")
      ->capture_default_str();
  sub->add_option("--real-fraction", o.real_fraction,
                  "Fraction of features with real (not binary) values")
      ->capture_default_str();
  sub->callback([state, exit_code] {
    state->opts.write_info = !state->no_info;
    *exit_code = Finish("multiclass", examples::GenerateMulticlass(state->opts));
  });
}

void AddFm(CLI::App* gen, int* exit_code) {
  auto state = std::make_shared<KindState<examples::FmOptions>>();
  examples::FmOptions& o = state->opts;
  CLI::App* sub = gen->add_subcommand(
      "fm",
      "Sparse binary classification in libsvm format (labels 0/1, 1-based) from a planted "
      "factorization machine with dominant pairwise interactions; prints the planted model's "
      "and its linear part's test accuracy");
  AddCommonOptions(sub, state.get(), "Output train file (libsvm)");
  sub->add_option("--test-out", o.test_out, "Output test file (libsvm)")->required();
  sub->add_option("--count", o.count, "Train samples")->capture_default_str();
  sub->add_option("--test-count", o.test_count, "Test samples")->capture_default_str();
  sub->add_option("--dim", o.dim, "Number of features")->capture_default_str();
  sub->add_option("--nnz", o.nnz, "Active features per sample")->capture_default_str();
  sub->add_option("--factors", o.factors, "Rank of the pairwise interactions")
      ->capture_default_str();
  sub->add_option("--linear-std", o.linear_std, "Standard deviation of linear weights")
      ->capture_default_str();
  sub->add_option("--factor-std", o.factor_std, "Half the standard deviation of the pairwise term")
      ->capture_default_str();
  sub->add_option("--zipf", o.zipf, "Zipf exponent of feature popularity")->capture_default_str();
  sub->callback([state, exit_code] {
    state->opts.write_info = !state->no_info;
    *exit_code = Finish("fm", examples::GenerateFm(state->opts));
  });
}

void AddCtr(CLI::App* gen, int* exit_code) {
  auto state = std::make_shared<KindState<examples::CtrOptions>>();
  examples::CtrOptions& o = state->opts;
  CLI::App* sub = gen->add_subcommand(
      "ctr",
      "Click-through data in the Criteo layout (tab-separated label 0/1, 13 counts, 26 "
      "categorical ids as 8 hex digits, empty when missing) from a planted factorization "
      "machine; prints the planted model's test log loss and AUC");
  AddCommonOptions(sub, state.get(), "Output train file (Criteo TSV)");
  sub->add_option("--test-out", o.test_out, "Output test file (Criteo TSV)")->required();
  sub->add_option("--rows", o.rows, "Train samples")->capture_default_str();
  sub->add_option("--test-rows", o.test_rows, "Test samples")->capture_default_str();
  sub->add_option("--cardinality", o.cardinality,
                  "Values of the largest categorical field (field k has cardinality^((k+1)/26), "
                  "at least 4)")
      ->capture_default_str();
  sub->add_option("--zipf", o.zipf, "Zipf exponent of categorical value popularity")
      ->capture_default_str();
  sub->add_option("--missing", o.missing, "Probability that a field is empty")
      ->capture_default_str();
  sub->add_option("--latent", o.latent, "Width of the planted factors")->capture_default_str();
  sub->callback([state, exit_code] {
    state->opts.write_info = !state->no_info;
    *exit_code = Finish("ctr", examples::GenerateCtr(state->opts));
  });
}

void AddDocs(CLI::App* gen, int* exit_code) {
  auto state = std::make_shared<KindState<examples::DocsOptions>>();
  examples::DocsOptions& o = state->opts;
  CLI::App* sub = gen->add_subcommand(
      "docs",
      "Topic-model corpus, one document of words `w123` per line, from planted topics (LDA), "
      "which go to <out>.topics");
  AddCommonOptions(sub, state.get(), "Output text file");
  sub->add_option("--docs", o.docs, "Number of documents")->capture_default_str();
  sub->add_option("--topics", o.topics, "Number of topics")->capture_default_str();
  sub->add_option("--vocab", o.vocab, "Vocabulary size")->capture_default_str();
  sub->add_option("--doc-len", o.doc_len,
                  "Mean document length (uniform in [doc-len/2, 3*doc-len/2])")
      ->capture_default_str();
  sub->add_option("--alpha", o.alpha, "Dirichlet parameter of the topic mixtures")
      ->capture_default_str();
  sub->add_option("--topic-words", o.topic_words, "Words with nonzero probability per topic")
      ->capture_default_str();
  sub->callback([state, exit_code] {
    state->opts.write_info = !state->no_info;
    *exit_code = Finish("docs", examples::GenerateDocs(state->opts));
  });
}

}  // namespace

void AddGenCommand(CLI::App& app, int* exit_code) {
  CLI::App* gen = app.add_subcommand(
      "gen",
      "Write seeded synthetic data for the example programs. Kinds: ratings, sparse, corpus, "
      "dense, clusters, multiclass, fm, ctr, docs. The same options always give the same bytes.");
  gen->require_subcommand(1);
  AddRatings(gen, exit_code);
  AddSparse(gen, exit_code);
  AddCorpus(gen, exit_code);
  AddDense(gen, exit_code);
  AddClusters(gen, exit_code);
  AddMulticlass(gen, exit_code);
  AddFm(gen, exit_code);
  AddCtr(gen, exit_code);
  AddDocs(gen, exit_code);
}

}  // namespace rigel::cli
