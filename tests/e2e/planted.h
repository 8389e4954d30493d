// Planted structure for quality tests: random walks over a graph whose nodes
// fall in communities, and how well saved embeddings find them.
#ifndef RIGEL_TESTS_E2E_PLANTED_H_
#define RIGEL_TESTS_E2E_PLANTED_H_

#include <cmath>
#include <cstdint>
#include <fstream>
#include <random>
#include <string>
#include <vector>

namespace rigel::testing {

// `walks` walks of `length` nodes "n<id>", one per line, over `nodes` nodes
// in `communities` communities (id mod communities): each step stays in the
// node's community with probability `stay`, else goes to any node. The
// smaller `stay`, the weaker the signal.
inline void WriteCommunityWalks(const std::string& path, int nodes, int communities, int walks,
                                int length, double stay, uint32_t seed) {
  std::ofstream out(path);
  std::mt19937 rng(seed);
  std::uniform_real_distribution<double> unit(0.0, 1.0);
  for (int w = 0; w < walks; ++w) {
    int node = static_cast<int>(rng() % static_cast<uint32_t>(nodes));
    for (int s = 0; s < length; ++s) {
      out << (s ? " " : "") << "n" << node;
      const int community = node % communities;
      if (unit(rng) < stay) {
        node = community +
               communities * static_cast<int>(rng() % static_cast<uint32_t>(nodes / communities));
      } else {
        node = static_cast<int>(rng() % static_cast<uint32_t>(nodes));
      }
    }
    out << "\n";
  }
}

// The share of nodes whose nearest other node by cosine (embeddings read
// from a --save-vectors file of nodes "n<id>") is in the same planted
// community (id mod `communities`).
inline double NearestNeighbourAccuracy(const std::string& path, int communities) {
  std::ifstream in(path);
  int64_t n = 0, d = 0;
  in >> n >> d;
  std::vector<int> community;
  std::vector<std::vector<double>> v;
  for (int64_t r = 0; r < n; ++r) {
    std::string word;
    in >> word;
    community.push_back(std::stoi(word.substr(1)) % communities);
    std::vector<double> row(static_cast<size_t>(d));
    double norm = 0;
    for (double& x : row) {
      in >> x;
      norm += x * x;
    }
    for (double& x : row) x /= std::sqrt(norm) + 1e-12;
    v.push_back(std::move(row));
  }
  int right = 0;
  for (size_t a = 0; a < v.size(); ++a) {
    double best = -2;
    size_t at = a;
    for (size_t b = 0; b < v.size(); ++b) {
      if (b == a) continue;
      double dot = 0;
      for (int64_t k = 0; k < d; ++k) dot += v[a][k] * v[b][k];
      if (dot > best) best = dot, at = b;
    }
    right += community[at] == community[a];
  }
  return v.empty() ? 0 : static_cast<double>(right) / static_cast<double>(v.size());
}

}  // namespace rigel::testing

#endif  // RIGEL_TESTS_E2E_PLANTED_H_
