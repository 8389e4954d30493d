// libFuzzer target for the data loaders: any bytes, parsed as a triples,
// libsvm, tokens or dense_csv file (and then split), must come back as a
// Status (an error naming the line, or a data set), never a crash, hang, leak,
// sanitizer report or an allocation out of proportion to the input; and read
// in parts it must give exactly what a whole load gives.
// The first two bytes choose the loader and its options; the rest is the file.
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

#include "data/dataset.h"
#include "data/part_load.h"

namespace {

constexpr size_t kMaxInputBytes = 64 * 1024;

// Separators worth trying: the documented ones and some that collide with
// number syntax.
constexpr char kSeps[8] = {',', '\t', ' ', ';', '-', '.', '\n', '0'};

template <typename T>
void Check(const rigel::StatusOr<T>& r) {
  // An error must say what is wrong: an empty message is a bug too.
  if (!r.ok() && r.status().message().empty()) __builtin_trap();
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size < 2 || size > kMaxInputBytes) return 0;
  const uint8_t kind = data[0] & 3, opt = data[1];
  const std::string_view text(reinterpret_cast<const char*>(data) + 2, size - 2);
  static const std::string kPath = "fuzz.txt";
  rigel::StatusOr<rigel::data::Dataset> d = rigel::Internal("unset");
  switch (kind) {
    case 0:
      d = rigel::data::ParseTriples(
          text, kPath,
          {.sep = kSeps[opt & 7], .base = (opt >> 3) & 1, .skip_header = (opt & 16) != 0});
      break;
    case 1:
      d = rigel::data::ParseLibsvm(text, kPath, {.base = (opt >> 3) & 1});
      break;
    case 2:
      d = rigel::data::ParseTokens(text, kPath, {.min_count = opt & 7});
      break;
    default:
      d = rigel::data::ParseDenseCsv(
          text, kPath,
          {.label = (opt >> 5) & 3, .sep = kSeps[opt & 7], .skip_header = (opt & 16) != 0});
      break;
  }
  Check(d);
  if (d.ok()) Check(rigel::data::SplitDataset(*d, (opt % 10) / 10.0, opt));
  // Read in 2 to 5 parts, as a job's workers read it (data/part_load.h), the
  // file must give the same data set, warnings and error message.
  rigel::data::LoadSpec spec = rigel::data::LoadSpec::Of(rigel::data::TriplesOptions{
      .sep = kSeps[opt & 7], .base = (opt >> 3) & 1, .skip_header = (opt & 16) != 0});
  if (kind == 1)
    spec = rigel::data::LoadSpec::Of(rigel::data::LibsvmOptions{.base = (opt >> 3) & 1});
  if (kind == 2) spec = rigel::data::LoadSpec::Of(rigel::data::TokensOptions{.min_count = opt & 7});
  if (kind == 3) {
    spec = rigel::data::LoadSpec::Of(rigel::data::DenseCsvOptions{
        .label = (opt >> 5) & 3, .sep = kSeps[opt & 7], .skip_header = (opt & 16) != 0});
  }
  const int parts = 2 + ((data[0] >> 2) & 3);
  rigel::StatusOr<rigel::data::Dataset> p = rigel::data::LoadInParts(text, kPath, spec, parts);
  if (p.ok() != d.ok()) __builtin_trap();
  if (!d.ok() && p.status().message() != d.status().message()) __builtin_trap();
  if (d.ok() && (rigel::data::DatasetDigest(*p) != rigel::data::DatasetDigest(*d) ||
                 p->warnings != d->warnings)) {
    __builtin_trap();
  }
  return 0;
}
