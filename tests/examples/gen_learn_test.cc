// Learnability of the default generated data: the training loops of the
// reference programs (mf.rgl, sparse_lr.rgl, dense_lr.rgl), written by hand in
// float32 C++, must get close to the planted model on the files `rigel gen`
// writes with default options. These pin the generator defaults: if a default
// changes so that the examples no longer converge, this fails.
#include <gtest/gtest.h>
#include <unistd.h>

#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <string>
#include <vector>

#include "common/file.h"
#include "common/hash.h"
#include "examples/generators.h"

namespace rigel::examples {
namespace {

namespace fs = std::filesystem;

std::string TempDir(const std::string& name) {
  fs::path dir =
      fs::path(testing::TempDir()) / ("rigel_learn_" + name + "_" + std::to_string(getpid()));
  fs::remove_all(dir);
  fs::create_directories(dir);
  return dir.string();
}

// The figure `name` from `<path>.info`, as docs and tests read it.
double InfoFigure(const std::string& path, const std::string& name) {
  StatusOr<std::string> info = ReadFileToString(path + ".info");
  EXPECT_TRUE(info.ok()) << info.status().ToString();
  if (!info.ok()) return std::nan("");
  StatusOr<double> v = SummaryValue(*info, name);
  EXPECT_TRUE(v.ok()) << v.status().ToString();
  return v.ok() ? *v : std::nan("");
}

std::string Read(const std::string& path) {
  StatusOr<std::string> text = ReadFileToString(path);
  EXPECT_TRUE(text.ok()) << text.status().ToString();
  return text.ok() ? *text : std::string();
}

// The frontend's normal(mean, std, seed) initialiser (ir/param_init.h).
float NormalInit(double mean, double std, uint64_t seed, int64_t row, int64_t col) {
  return static_cast<float>(
      mean + std * NormalFromHashes(HashCoords(seed, 1, row, col), HashCoords(seed, 2, row, col)));
}

float Sigmoid(float z) { return 1.0f / (1.0f + std::exp(-z)); }

TEST(LearnabilityTest, MatrixFactorisationReachesNoiseFloor) {
  const std::string dir = TempDir("mf");
  RatingsOptions opts;
  opts.out = dir + "/ratings.csv";
  ASSERT_TRUE(GenerateRatings(opts).ok());
  const double floor = InfoFigure(opts.out, "noise floor RMSE");

  // data ratings = triples("ratings.csv", sep=",")
  std::vector<int32_t> ti, tj;
  std::vector<float> tv;
  const std::string text = Read(opts.out);
  int64_t rows = 0, cols = 0;
  for (const char* p = text.c_str(); *p;) {
    char* end;
    ti.push_back(static_cast<int32_t>(std::strtol(p, &end, 10)));
    tj.push_back(static_cast<int32_t>(std::strtol(end + 1, &end, 10)));
    tv.push_back(std::strtof(end + 1, &end));
    p = end + 1;
    rows = std::max<int64_t>(rows, ti.back() + 1);
    cols = std::max<int64_t>(cols, tj.back() + 1);
  }
  ASSERT_EQ(static_cast<int64_t>(tv.size()), opts.count);
  // data train, test = split(ratings, test=0.1, seed=7): order kept.
  std::vector<int64_t> train, test;
  for (int64_t e = 0; e < static_cast<int64_t>(tv.size()); ++e) {
    (UnitDouble(HashCoords(7, static_cast<uint64_t>(e))) < 0.1 ? test : train).push_back(e);
  }
  constexpr int K = 16;
  constexpr float lr = 0.02f, reg = 0.05f;
  constexpr int kEpochs = 20;
  std::vector<float> W(rows * K), H(cols * K);
  for (int64_t i = 0; i < rows; ++i)
    for (int k = 0; k < K; ++k) W[i * K + k] = NormalInit(0, 0.1, 1, i, k);
  for (int64_t j = 0; j < cols; ++j)
    for (int k = 0; k < K; ++k) H[j * K + k] = NormalInit(0, 0.1, 2, j, k);

  double rmse = 0.0;
  for (int ep = 0; ep < kEpochs; ++ep) {
    for (int64_t e : train) {
      float* w = &W[ti[e] * K];
      float* h = &H[tj[e] * K];
      float dot = 0.0f;
      for (int k = 0; k < K; ++k) dot += w[k] * h[k];
      const float err = tv[e] - dot;
      float wi[K];
      for (int k = 0; k < K; ++k) wi[k] = w[k];
      for (int k = 0; k < K; ++k) w[k] = wi[k] + lr * (err * h[k] - reg * wi[k]);
      for (int k = 0; k < K; ++k) h[k] = h[k] + lr * (err * wi[k] - reg * h[k]);
    }
    float sq = 0.0f;
    for (int64_t e : test) {
      const float* w = &W[ti[e] * K];
      const float* h = &H[tj[e] * K];
      float dot = 0.0f;
      for (int k = 0; k < K; ++k) dot += w[k] * h[k];
      sq += (tv[e] - dot) * (tv[e] - dot);
    }
    rmse = std::sqrt(sq / static_cast<float>(test.size()));
    std::printf("epoch %d test_rmse %.4f (%.3f x noise floor)\n", ep, rmse, rmse / floor);
  }
  std::printf("noise floor %.4f, test RMSE at epoch %d: %.4f, ratio %.4f\n", floor, kEpochs, rmse,
              rmse / floor);
  EXPECT_LE(rmse, 1.10 * floor);
  fs::remove_all(dir);
}

struct Sample {
  float label;  // 0 or 1
  std::vector<std::pair<int32_t, float>> features;
};

// libsvm(path): labels -1/+1 read as 0/1, 1-based indices shifted to 0.
std::vector<Sample> ReadLibsvm(const std::string& path) {
  std::vector<Sample> out;
  const std::string text = Read(path);
  for (const char* p = text.c_str(); *p;) {
    char* end;
    Sample s;
    s.label = std::strtol(p, &end, 10) > 0 ? 1.0f : 0.0f;
    p = end;
    while (*p == ' ') {
      int32_t index = static_cast<int32_t>(std::strtol(p + 1, &end, 10)) - 1;
      s.features.push_back({index, std::strtof(end + 1, &end)});
      p = end;
    }
    out.push_back(std::move(s));
    ++p;  // newline
  }
  return out;
}

TEST(LearnabilityTest, SparseLogisticRegressionNearPlantedAccuracy) {
  const std::string dir = TempDir("sparse");
  SparseOptions opts;
  opts.out = dir + "/train.svm";
  opts.test_out = dir + "/test.svm";
  ASSERT_TRUE(GenerateSparse(opts).ok());
  const double planted = InfoFigure(opts.out, "planted model test accuracy");
  const std::vector<Sample> train = ReadLibsvm(opts.out), test = ReadLibsvm(opts.test_out);
  ASSERT_EQ(static_cast<int64_t>(train.size()), opts.count);
  ASSERT_EQ(static_cast<int64_t>(test.size()), opts.test_count);

  // sparse_lr.rgl: w = zeros(), per-sample SGD in file order, no bias. Checked
  // with the example's settings and with a larger step and fewer epochs.
  struct Setting {
    float lr;
    int epochs;
  };
  for (Setting setting : {Setting{0.05f, 10}, Setting{0.1f, 3}}) {
    std::vector<float> w(opts.dim, 0.0f);
    double accuracy = 0.0;
    for (int ep = 0; ep < setting.epochs; ++ep) {
      for (const Sample& s : train) {
        float z = 0.0f;
        for (const auto& [f, x] : s.features) z += w[f] * x;
        const float g = Sigmoid(z) - s.label;
        for (const auto& [f, x] : s.features) w[f] -= setting.lr * g * x;
      }
      int64_t correct = 0;
      for (const Sample& s : test) {
        float z = 0.0f;
        for (const auto& [f, x] : s.features) z += w[f] * x;
        correct += (z > 0) == (s.label > 0.5f);
      }
      accuracy = static_cast<double>(correct) / static_cast<double>(test.size());
      std::printf("lr %.2f epoch %d test accuracy %.4f\n", setting.lr, ep, accuracy);
    }
    std::printf("sparse lr %.2f, %d epochs: SGD %.4f / planted %.4f = %.3f\n", setting.lr,
                setting.epochs, accuracy, planted, accuracy / planted);
    EXPECT_GE(accuracy, 0.9 * planted) << "lr " << setting.lr;
  }
  fs::remove_all(dir);
}

TEST(LearnabilityTest, DenseLogisticRegressionNearPlantedAccuracy) {
  const std::string dir = TempDir("dense");
  DenseOptions opts;
  opts.out = dir + "/dense.csv";
  ASSERT_TRUE(GenerateDense(opts).ok());
  const double planted = InfoFigure(opts.out, "planted accuracy");
  // dense_lr.rgl: data d = dense_csv(path, label=0);
  // data train, test = split(d, test=0.2, seed=3); w = zeros(); lr 0.05.
  std::vector<float> labels, x;
  const std::string text = Read(opts.out);
  for (const char* p = text.c_str(); *p;) {
    char* end;
    labels.push_back(std::strtof(p, &end));
    for (int64_t k = 0; k < opts.dim; ++k) x.push_back(std::strtof(end + 1, &end));
    p = end + 1;
  }
  const int64_t n = static_cast<int64_t>(labels.size()), dim = opts.dim;
  ASSERT_EQ(n, opts.count);
  std::vector<int64_t> train, test;
  for (int64_t r = 0; r < n; ++r) {
    (UnitDouble(HashCoords(3, static_cast<uint64_t>(r))) < 0.2 ? test : train).push_back(r);
  }
  constexpr float lr = 0.05f;
  constexpr int kEpochs = 10;
  std::vector<float> w(dim, 0.0f);
  double accuracy = 0.0;
  for (int ep = 0; ep < kEpochs; ++ep) {
    for (int64_t r : train) {
      const float* row = &x[r * dim];
      float z = 0.0f;
      for (int64_t k = 0; k < dim; ++k) z += w[k] * row[k];
      const float g = Sigmoid(z) - labels[r];
      for (int64_t k = 0; k < dim; ++k) w[k] -= lr * g * row[k];
    }
    int64_t correct = 0;
    for (int64_t r : test) {
      float z = 0.0f;
      for (int64_t k = 0; k < dim; ++k) z += w[k] * x[r * dim + k];
      correct += (z > 0) == (labels[r] > 0.5f);
    }
    accuracy = static_cast<double>(correct) / static_cast<double>(test.size());
  }
  std::printf("dense: SGD %.4f / planted %.4f = %.3f\n", accuracy, planted, accuracy / planted);
  EXPECT_GE(accuracy, 0.95 * planted);
  fs::remove_all(dir);
}

}  // namespace
}  // namespace rigel::examples
