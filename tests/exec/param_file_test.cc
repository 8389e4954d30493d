// --save-params files (exec/param_file.h): NumPy .npz archives that
// ReadParams reads back bit for bit and numpy.load reads row for row, and
// the errors for files that are not.
#include "exec/param_file.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <cerrno>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <limits>
#include <sstream>
#include <string>
#include <vector>

#include "common/file.h"
#include "common/write_faults.h"
#include "exec/output_check.h"
#include "exec/vectors_file.h"

namespace rigel::exec {
namespace {

constexpr char kPython[] = "/usr/bin/python3";

std::string TempPath(const std::string& name) {
  return ::testing::TempDir() + "/param_file_test." + std::to_string(getpid()) + "." + name;
}

// 1-D and 2-D, f32 and i32, a 2-D parameter of width 1, an empty one, and
// floats whose bits must survive (signed zero, extremes, a subnormal, NaN).
std::vector<SavedParam> Sample() {
  const float inf = std::numeric_limits<float>::infinity();
  std::vector<SavedParam> ps;
  ps.push_back({"w", 6, 1, {1.5f, -0.0f, 3.4e38f, 1e-45f, inf, std::nanf("")}, false, false});
  ps.push_back({"W", 3, 4, {}, false, true});
  for (int i = 0; i < 12; ++i) ps.back().values.push_back(0.1f * i - 0.5f);
  ps.push_back({"nk", 4, 1, {0, 7, -3, 16777216}, true, false});
  ps.push_back({"ndk", 2, 3, {1, 2, 3, -4, 5, -16777216}, true, true});
  ps.push_back({"col", 3, 1, {0.25f, 0.5f, 0.75f}, false, true});
  ps.push_back({"none", 0, 1, {}, false, false});
  return ps;
}

bool SameBits(float a, float b) { return std::memcmp(&a, &b, sizeof(float)) == 0; }

void ExpectSame(const std::vector<SavedParam>& got, const std::vector<SavedParam>& want) {
  ASSERT_EQ(got.size(), want.size());
  for (size_t i = 0; i < want.size(); ++i) {
    SCOPED_TRACE(want[i].name);
    EXPECT_EQ(got[i].name, want[i].name);
    EXPECT_EQ(got[i].rows, want[i].rows);
    EXPECT_EQ(got[i].width, want[i].width);
    EXPECT_EQ(got[i].is_int, want[i].is_int);
    EXPECT_EQ(got[i].is_2d, want[i].is_2d);
    ASSERT_EQ(got[i].values.size(), want[i].values.size());
    for (size_t k = 0; k < want[i].values.size(); ++k) {
      EXPECT_TRUE(SameBits(got[i].values[k], want[i].values[k]))
          << k << ": " << got[i].values[k] << " vs " << want[i].values[k];
    }
  }
}

TEST(ParamFile, ReadsBackWhatItWroteBitForBit) {
  const std::string path = TempPath("params");  // no .npz: written as named
  ASSERT_TRUE(WriteParams(path, Sample()).ok());
  auto text = ReadFileToString(path);
  ASSERT_TRUE(text.ok());
  EXPECT_TRUE(text->starts_with("PK\x03\x04"));
  auto got = ReadParams(path);
  ASSERT_TRUE(got.ok()) << got.status().message();
  ExpectSame(*got, Sample());
  // Equal parameters, equal bytes (a fixed timestamp in the archive).
  ASSERT_TRUE(WriteParams(path + ".npz", Sample()).ok());
  EXPECT_EQ(*ReadFileToString(path + ".npz"), *text);
  // No parameters: an empty archive.
  ASSERT_TRUE(WriteParams(path, {}).ok());
  auto none = ReadParams(path);
  ASSERT_TRUE(none.ok()) << none.status().message();
  EXPECT_TRUE(none->empty());
  std::remove(path.c_str());
  std::remove((path + ".npz").c_str());
}

TEST(ParamFile, RefusesParametersItCannotWrite) {
  const std::string path = TempPath("refused");
  auto refused = [&](std::vector<SavedParam> ps, const std::string& says) {
    Status st = WriteParams(path, ps);
    EXPECT_EQ(st.code(), StatusCode::kInvalidArgument) << says;
    EXPECT_NE(st.message().find(says), std::string::npos) << st.message();
  };
  refused({{"a b", 1, 1, {1}}}, "'a b' cannot be saved");
  refused({{"a/b", 1, 1, {1}}}, "'a/b' cannot be saved");
  refused({{"", 1, 1, {1}}}, "'' cannot be saved");
  refused({{"a", 1, 1, {1}}, {"a", 1, 1, {2}}}, "'a' appears twice");
  refused({{"a", 2, 3, {1, 2}}}, "has 2 values, not 2 x 3");
  refused({{"n", 2, 1, {1, 2.5f}, true}}, "holds 2.5");
  refused({{"n", 1, 1, {3e9f}, true}}, "not an int32");
  EXPECT_FALSE(ReadFileToString(path).ok()) << "a refused write left a file";
  Status io = WriteParams("/nonexistent-dir/p.npz", Sample());
  EXPECT_EQ(io.code(), StatusCode::kIoError) << io.message();
}

// Writes `bytes` to a file and expects ReadParams to refuse it with an
// InvalidArgument naming the file and saying `says`.
void ExpectUnreadable(const std::string& name, const std::string& bytes, const std::string& says) {
  const std::string path = TempPath(name);
  ASSERT_TRUE(WriteFileAtomically(path, bytes).ok());
  auto got = ReadParams(path);
  ASSERT_FALSE(got.ok()) << name;
  EXPECT_EQ(got.status().code(), StatusCode::kInvalidArgument) << name;
  EXPECT_NE(got.status().message().find(path), std::string::npos) << got.status().message();
  EXPECT_NE(got.status().message().find(says), std::string::npos) << got.status().message();
  std::remove(path.c_str());
}

// The model files a run writes after training (--save-params, and
// --save-vectors' text files, exec/vectors_file.h) on a full disk and a
// failing device: the flag, the path and the reason; the file that was
// there before stays.
TEST(ParamFile, AModelFileOnAFullOrFailingDiskSaysSoAndKeepsTheOldFile) {
  const std::string npz = TempPath("old.npz"), vec = TempPath("old.vec");
  ASSERT_TRUE(WriteFileAtomically(npz, "old").ok());
  ASSERT_TRUE(WriteFileAtomically(vec, "old").ok());
  for (int err : {ENOSPC, EIO}) {
    ScopedWriteFault fault([&](const std::string& path, WriteOp op, size_t) {
      return op == WriteOp::kWrite && (path == npz || path == vec) ? err : 0;
    });
    const std::string why = std::string(": write failed: ") + std::strerror(err) +
                            "; the trained values were not saved";
    Status params = SaveFailed("--save-params", WriteParams(npz, Sample()));
    EXPECT_EQ(params.message(), "--save-params " + npz + why);
    Status vectors =
        SaveFailed("--save-vectors", WriteVectors(vec, nullptr, {"emb", 2, 2, {1, 2, 3, 4}}));
    EXPECT_EQ(vectors.message(), "--save-vectors " + vec + why);
    EXPECT_EQ(*ReadFileToString(npz), "old");
    EXPECT_EQ(*ReadFileToString(vec), "old");
  }
  // /dev/full itself, as a user would name it.
  EXPECT_EQ(WriteParams("/dev/full", Sample()).message(),
            "/dev/full: write failed: No space left on device");
}

TEST(ParamFile, NamesTheFileAndTheFaultOfWhatItCannotRead) {
  const std::string path = TempPath("good");
  ASSERT_TRUE(WriteParams(path, Sample()).ok());
  const std::string good = *ReadFileToString(path);
  std::remove(path.c_str());
  ExpectUnreadable("empty", "", "too short");
  ExpectUnreadable("text", std::string(100, 'x'), "not a ZIP archive");
  ExpectUnreadable("old", "rigel-params 1 0\n", "old 'rigel-params 1' format");
  ExpectUnreadable("cut", good.substr(0, good.size() / 2), "not a ZIP archive");
  // The end record intact, the data cut short (the central directory too).
  ExpectUnreadable("hole", good.substr(0, 200) + good.substr(good.size() - 22), "broken central");
  // One flipped bit in the first array's values.
  std::string flipped = good;
  flipped[good.find("\n", good.find("NUMPY")) + 1] ^= 1;
  ExpectUnreadable("flipped", flipped, "fails its CRC-32 check");
  EXPECT_EQ(ReadParams(TempPath("absent")).status().code(), StatusCode::kNotFound);
}

// ------------------------------------------------------------------ NumPy

// Why a NumPy test cannot run: Debian's python3 or its numpy is absent
// (`python3` on PATH may be another interpreter without it); "" when it can.
std::string NumpyMissing() {
  if (access(kPython, X_OK) != 0) return std::string(kPython) + " is absent";
  if (std::system((std::string(kPython) + " -c 'import numpy' 2>/dev/null").c_str()) != 0) {
    return std::string("numpy is absent for ") + kPython + " (apt-get install python3-numpy)";
  }
  return "";
}

// Runs `script` with kPython and `arg`; its stdout (stderr after it).
std::string RunPython(const std::string& script, const std::string& arg, int* rc) {
  const std::string py = TempPath("script.py"), out = TempPath("script.out");
  std::ofstream(py) << script;
  *rc = std::system((std::string(kPython) + " " + py + " " + arg + " >" + out + " 2>&1").c_str());
  auto text = ReadFileToString(out);
  std::remove(py.c_str());
  std::remove(out.c_str());
  return text.ok() ? *text : "";
}

// Per array in file order: "NAME DTYPE SHAPE", then one line per row of
// values in float.hex (exact); a 1-D array is one row of all its values.
constexpr char kDump[] = R"(
import sys, numpy
with numpy.load(sys.argv[1]) as f:
    for name in f.files:
        a = f[name]
        assert a.flags['C_CONTIGUOUS']
        print(name, a.dtype.str, 'x'.join(map(str, a.shape)) + ('x' if a.ndim == 1 else ''))
        for row in (a.reshape(1, -1) if a.ndim == 1 else a):
            print(' '.join(float(v).hex() for v in row))
)";

TEST(ParamFile, NumpyLoadsEveryValueRowForRow) {
  if (std::string why = NumpyMissing(); !why.empty()) GTEST_SKIP() << why;
  const std::string path = TempPath("for-numpy");
  const std::vector<SavedParam> want = Sample();
  ASSERT_TRUE(WriteParams(path, want).ok());
  int rc = 0;
  std::istringstream dump(RunPython(kDump, path, &rc));
  ASSERT_EQ(rc, 0) << dump.str();
  for (const SavedParam& p : want) {
    SCOPED_TRACE(p.name);
    std::string line;
    ASSERT_TRUE(std::getline(dump, line));
    const std::string shape =
        std::to_string(p.rows) + "x" + (p.is_2d ? std::to_string(p.width) : "");
    EXPECT_EQ(line, p.name + " " + (p.is_int ? "<i4" : "<f4") + " " + shape);
    // A 1-D array is one row (an empty line for an empty one).
    const int64_t rows = p.is_2d ? p.rows : 1, width = p.is_2d ? p.width : p.rows;
    for (int64_t r = 0; r < rows; ++r) {
      ASSERT_TRUE(std::getline(dump, line));
      std::istringstream values(line);
      for (int64_t k = 0; k < width; ++k) {
        std::string hex;
        ASSERT_TRUE(values >> hex) << "row " << r << ": " << line;
        const float got = std::strtof(hex.c_str(), nullptr), v = p.values[r * width + k];
        EXPECT_TRUE(std::isnan(v) ? std::isnan(got) : SameBits(got, v))
            << "row " << r << " column " << k << ": " << hex << " vs " << v;
      }
    }
  }
  std::string rest;
  EXPECT_FALSE(std::getline(dump, rest)) << "numpy found more: " << rest;
  std::remove(path.c_str());
}

TEST(ParamFile, ReadsWhatNumpySavezWritesAndRefusesWhatItCannotHold) {
  if (std::string why = NumpyMissing(); !why.empty()) GTEST_SKIP() << why;
  const std::string dir = TempPath("");  // a prefix of file names
  int rc = 0;
  std::string err = RunPython(R"(
import sys, numpy as np
d = sys.argv[1]
np.savez(d + 'np.npz', a=np.arange(6, dtype='<f4').reshape(2, 3) / 4,
         b=np.array([5, -6], dtype='<i4'))
np.savez_compressed(d + 'zipped.npz', a=np.zeros(3, dtype='<f4'))
np.savez(d + 'f8.npz', a=np.zeros(3))
np.savez(d + 'fortran.npz', a=np.asfortranarray(np.zeros((2, 3), dtype='<f4')))
np.savez(d + 'cube.npz', a=np.zeros((2, 2, 2), dtype='<f4'))
np.savez(d + 'big.npz', a=np.array([2**24 + 1], dtype='<i4'))
)",
                              dir, &rc);
  ASSERT_EQ(rc, 0) << err;
  auto got = ReadParams(dir + "np.npz");
  ASSERT_TRUE(got.ok()) << got.status().message();
  ExpectSame(*got, {{"a", 2, 3, {0, 0.25f, 0.5f, 0.75f, 1, 1.25f}, false, true},
                    {"b", 2, 1, {5, -6}, true, false}});
  auto refused = [&](const std::string& name, const std::string& says) {
    auto r = ReadParams(dir + name);
    EXPECT_EQ(r.status().code(), StatusCode::kInvalidArgument) << name;
    EXPECT_NE(r.status().message().find(dir + name), std::string::npos) << r.status().message();
    EXPECT_NE(r.status().message().find(says), std::string::npos) << r.status().message();
    std::remove((dir + name).c_str());
  };
  refused("zipped.npz", "compressed");
  refused("f8.npz", "dtype '<f8'");
  refused("fortran.npz", "not in C order");
  refused("cube.npz", "shape (2, 2, 2)");
  refused("big.npz", "holds 16777217");
  std::remove((dir + "np.npz").c_str());
}

}  // namespace
}  // namespace rigel::exec
