// transport_fuzz_seeds DIR: writes the seed inputs of tests/fuzz/transport_fuzz.cc
// (its input layout) for a sample message of every body type: NAME (one-way,
// each payload frame on its own), NAME-packed (small frames inside the header
// frame) and NAME-request. Run it after a change of the wire format and commit
// the files: `build/bin/transport_fuzz_seeds tests/fuzz/seeds/transport`.
// CodecTest.FuzzSeedsDecode fails while the committed seeds are stale.
#include <cstdio>
#include <fstream>
#include <string>
#include <vector>

#include "tests/transport/test_util.h"

namespace {

using namespace rigel::transport;

// The fuzzer's layout: frame count, a uint16 length per frame, the header,
// the frames.
std::string Layout(std::span<const std::byte> header, const std::vector<Buffer>& frames) {
  std::string out(1, static_cast<char>(frames.size()));
  for (const Buffer& f : frames) {
    out.push_back(static_cast<char>(f.size() & 0xff));
    out.push_back(static_cast<char>(f.size() >> 8));
  }
  out.append(reinterpret_cast<const char*>(header.data()), header.size());
  for (const Buffer& f : frames) out.append(reinterpret_cast<const char*>(f.data()), f.size());
  return out;
}

std::string Plain(OutMessage m, wire::Kind kind, uint64_t id) {
  m.header().setKind(kind);
  m.header().setRequestId(id);
  std::vector<std::byte> header(EncodedHeaderSize(m));
  EncodeHeader(m, header);
  return Layout(header, m.frames());
}

std::string Packed(OutMessage m) {
  Frame0 plan = PlanFrame0(m, Limits{});
  Buffer first = EncodeFrame0ToBuffer(m, plan);
  std::vector<Buffer> rest(m.frames().begin() + static_cast<long>(plan.packed), m.frames().end());
  return Layout({first.data(), first.size()}, rest);
}

bool Write(const std::string& path, const std::string& bytes) {
  std::ofstream f(path, std::ios::binary);
  f << bytes;
  return static_cast<bool>(f);
}

}  // namespace

int main(int argc, char** argv) {
  if (argc != 2) {
    std::fprintf(stderr, "usage: transport_fuzz_seeds DIR\n");
    return 2;
  }
  const std::string dir = argv[1];
  int written = 0;
  for (uint64_t t : rigel::transport::testing::AllTypes()) {
    const std::string name = dir + "/" + TypeName(t);
    if (!Write(name, Plain(rigel::transport::testing::MakeSample(t, 1), wire::Kind::ONE_WAY, 0)) ||
        !Write(name + "-packed", Packed(rigel::transport::testing::MakeSample(t, 2))) ||
        !Write(name + "-request",
               Plain(rigel::transport::testing::MakeSample(t, 3), wire::Kind::REQUEST, 7))) {
      std::fprintf(stderr, "transport_fuzz_seeds: cannot write %s\n", name.c_str());
      return 1;
    }
    written += 3;
  }
  std::printf("transport_fuzz_seeds: %d seeds in %s\n", written, dir.c_str());
  return 0;
}
