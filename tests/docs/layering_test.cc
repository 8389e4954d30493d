// The layering of the source folders: every `#include "FOLDER/..."` in a
// layer folder must name its own folder or one it may depend on.
//
// The rules are the table of docs/architecture.md's "Layers" section: a row
// `| `NAME/` | holds | may depend on |` whose last cell lists folders in
// backticks (`—` for none). A folder may include the folders its cell names
// and, through them, everything those may include (the arrows' transitive
// closure); `common/` is open to all. Checked folders are the table's rows;
// `tests/`, `bench/`, `examples/`, `scripts/` and `docs/` are not layers and
// are not read. A top-level folder with a CMakeLists.txt and C++ sources that
// the table does not name is an error too, so a new layer cannot skip it.
// The source tree is RIGEL_SOURCE_DIR (cmake/RigelHelpers.cmake).
//
// Second rule, for the pluggable folders (`transport/`, `collectives/`):
// their sub-folders hold backends and private parts, so a file outside such
// a folder includes only its root headers, plus the sub-folders it shares on
// purpose (transport's `auth/` key files and `wire/` schema). Files under
// `tests/` and `bench/` may include backends directly and are not read.
//
// Third rule: JSON text is parsed only by common/'s reader
// (`common/json_reader.h`), whose errors name the file and the field. A file
// outside `common/` that calls nlohmann's parser (`json::parse`,
// `json::accept`, `json::sax_parse`, `json::from_cbor` and the other
// `from_` readers) is reported with its line; `tests/`, `bench/`, run
// outputs and build folders are not read. Writing JSON is allowed anywhere.
#include <gtest/gtest.h>
#include <stdlib.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <map>
#include <regex>
#include <set>
#include <sstream>
#include <string>
#include <vector>

namespace rigel {
namespace {

namespace fs = std::filesystem;

// Folders that hold no library or role code.
const std::set<std::string> kNotLayers = {"tests", "bench", "examples", "scripts",
                                          "docs",  "cmake", "build",    "runs"};

struct Table {
  std::map<std::string, std::set<std::string>> deps;  // folder -> direct arrows
  std::vector<std::string> errors;
};

// Reads the "Layers" table of `doc`.
Table ReadTable(const fs::path& doc) {
  Table t;
  std::ifstream in(doc);
  if (!in) {
    t.errors.push_back(doc.string() + ": cannot read");
    return t;
  }
  std::string line;
  bool in_section = false;
  int n = 0;
  const std::regex row(R"(^\| `([a-z_]+)/` \|.*\| ([^|]*) \|\s*$)");
  const std::regex name("`([a-z_]+)/?`");
  while (std::getline(in, line)) {
    ++n;
    if (line.rfind("## ", 0) == 0) in_section = line == "## Layers";
    std::smatch m;
    if (!in_section || !std::regex_match(line, m, row)) continue;
    std::set<std::string>& d = t.deps[m[1]];
    std::string cell = m[2];
    for (std::sregex_iterator it(cell.begin(), cell.end(), name), end; it != end; ++it) {
      d.insert((*it)[1]);
    }
    if (d.empty() && cell.find("—") == std::string::npos) {
      t.errors.push_back(doc.string() + ":" + std::to_string(n) + ": `" + m[1].str() +
                         "/` has no folders in its last cell (write — for none)");
    }
  }
  if (t.deps.empty()) t.errors.push_back(doc.string() + ": no \"## Layers\" table rows found");
  for (const auto& [folder, d] : t.deps) {
    for (const std::string& to : d) {
      if (!t.deps.count(to)) {
        t.errors.push_back(doc.string() + ": `" + folder + "/` may depend on `" + to +
                           "/`, which is not a row of the table");
      }
    }
  }
  return t;
}

// Everything `folder` may include: itself, common, and the closure of its
// arrows. Reports a cycle through `errors`.
std::set<std::string> Allowed(const Table& t, const std::string& folder,
                              std::vector<std::string>* errors) {
  std::set<std::string> seen = {folder, "common"};
  std::vector<std::string> stack(t.deps.at(folder).begin(), t.deps.at(folder).end());
  while (!stack.empty()) {
    std::string f = stack.back();
    stack.pop_back();
    if (f == folder) {
      errors->push_back("`" + folder + "/` depends on itself through its arrows (a cycle)");
      continue;
    }
    if (!seen.insert(f).second) continue;
    auto it = t.deps.find(f);
    if (it != t.deps.end()) stack.insert(stack.end(), it->second.begin(), it->second.end());
  }
  return seen;
}

// Checks every source file of the tree at `root` against the table in
// `root`/docs/architecture.md; returns one line per violation.
std::vector<std::string> CheckTree(const fs::path& root) {
  Table t = ReadTable(root / "docs" / "architecture.md");
  std::vector<std::string> out = t.errors;
  if (t.deps.empty()) return out;
  std::set<std::string> top;  // top-level folders, to tell includes of our code apart
  for (const auto& e : fs::directory_iterator(root)) {
    if (e.is_directory()) top.insert(e.path().filename().string());
  }
  for (const std::string& f : top) {
    if (t.deps.count(f) || kNotLayers.count(f) || f[0] == '.' || f.rfind("build", 0) == 0) continue;
    if (!fs::exists(root / f / "CMakeLists.txt")) continue;
    for (const auto& e : fs::recursive_directory_iterator(root / f)) {
      std::string ext = e.path().extension().string();
      if (ext == ".h" || ext == ".cc") {
        out.push_back("`" + f + "/` has C++ sources but is not a row of the Layers table");
        break;
      }
    }
  }
  const std::regex include(R"(^\s*#\s*include\s+"([a-z_]+)/)");
  for (const auto& [folder, unused] : t.deps) {
    if (!fs::is_directory(root / folder)) {
      out.push_back("`" + folder + "/` is a row of the Layers table but not a folder");
      continue;
    }
    std::set<std::string> allowed = Allowed(t, folder, &out);
    std::vector<fs::path> files;
    for (const auto& e : fs::recursive_directory_iterator(root / folder)) {
      std::string ext = e.path().extension().string();
      if (e.is_regular_file() && (ext == ".h" || ext == ".cc")) files.push_back(e.path());
    }
    std::sort(files.begin(), files.end());
    for (const fs::path& p : files) {
      std::ifstream in(p);
      std::string line;
      int n = 0;
      while (std::getline(in, line)) {
        ++n;
        std::smatch m;
        if (!std::regex_search(line, m, include)) continue;
        std::string to = m[1];
        if (!top.count(to) || allowed.count(to)) continue;
        out.push_back(fs::relative(p, root).string() + ":" + std::to_string(n) + ": `" + folder +
                      "/` may not include `" + to + "/` (" + line.substr(m.position(0)) + ")");
      }
    }
  }
  return out;
}

// A folder whose sub-folders are backends or private parts, and the
// sub-folders that code outside it may include all the same.
struct Pluggable {
  std::string folder;
  std::set<std::string> shared;
};
const std::vector<Pluggable> kPluggable = {
    {"transport", {"auth", "wire"}},  // key files (`rigel keygen`), the wire schema
    {"collectives", {}},
};

// The .h and .cc files of the tree at `root`, sorted, outside the top-level
// folders in `skip`, hidden folders and build outputs.
std::vector<fs::path> SourcesOutside(const fs::path& root, const std::set<std::string>& skip) {
  std::vector<fs::path> files;
  for (const auto& top : fs::directory_iterator(root)) {
    const std::string name = top.path().filename().string();
    if (!top.is_directory() || name[0] == '.' || name.rfind("build", 0) == 0 || skip.count(name)) {
      continue;
    }
    for (const auto& e : fs::recursive_directory_iterator(top.path())) {
      std::string ext = e.path().extension().string();
      if (e.is_regular_file() && (ext == ".h" || ext == ".cc")) files.push_back(e.path());
    }
  }
  std::sort(files.begin(), files.end());
  return files;
}

// Top-level folders whose files may include backends (they test or time
// them one by one), and run outputs, which hold no sources of ours.
const std::set<std::string> kMayIncludeBackends = {"tests", "bench", "runs"};

// Checks every source file of the tree at `root` outside the folders above
// and build outputs: an `#include "FOLDER/SUB/..."` of a pluggable FOLDER
// from a file outside it must name a shared SUB. One line per violation.
std::vector<std::string> CheckBackendIncludes(const fs::path& root) {
  const std::vector<fs::path> files = SourcesOutside(root, kMayIncludeBackends);
  const std::regex include(R"(^\s*#\s*include\s+"([a-z_]+)/([A-Za-z0-9_]+)/)");
  std::vector<std::string> out;
  for (const fs::path& p : files) {
    const fs::path rel = fs::relative(p, root);
    const std::string owner = rel.begin()->string();
    std::ifstream in(p);
    std::string line;
    int n = 0;
    while (std::getline(in, line)) {
      ++n;
      std::smatch m;
      if (!std::regex_search(line, m, include)) continue;
      for (const Pluggable& f : kPluggable) {
        if (m[1] != f.folder || owner == f.folder || f.shared.count(m[2])) continue;
        out.push_back(rel.string() + ":" + std::to_string(n) + ": `" + f.folder + "/" + m[2].str() +
                      "/` is private to `" + f.folder + "/`; include the folder's root headers (" +
                      line.substr(m.position(0)) + ")");
      }
    }
  }
  return out;
}

// Top-level folders that may parse JSON as they like: the reader's own, and
// those that are not read for the rules above.
const std::set<std::string> kMayParseJson = {"common", "tests", "bench", "runs"};

// Checks every source file of the tree at `root` outside the folders above,
// hidden folders and build outputs for calls of nlohmann's parser. One line
// per call: "FILE:LINE: ...".
std::vector<std::string> CheckJsonParsing(const fs::path& root) {
  const std::vector<fs::path> files = SourcesOutside(root, kMayParseJson);
  // nlohmann::json and nlohmann::ordered_json, spelt in full or not.
  const std::regex parse(R"(json\s*::\s*(parse|accept|sax_parse|from_[a-z_]+)\b)");
  std::vector<std::string> out;
  for (const fs::path& p : files) {
    std::ifstream in(p);
    std::string line;
    int n = 0;
    while (std::getline(in, line)) {
      ++n;
      std::smatch m;
      if (!std::regex_search(line, m, parse)) continue;
      out.push_back(fs::relative(p, root).string() + ":" + std::to_string(n) + ": parses JSON (" +
                    m[0].str() + "); read it with ParseJson (common/json_reader.h)");
    }
  }
  return out;
}

std::string Join(const std::vector<std::string>& v) {
  std::string s;
  for (const std::string& x : v) s += "  " + x + "\n";
  return s;
}

TEST(Layering, EveryIncludeFollowsTheTableInArchitectureMd) {
  std::vector<std::string> bad = CheckTree(RIGEL_SOURCE_DIR);
  EXPECT_TRUE(bad.empty()) << bad.size() << " layering violation(s):\n" << Join(bad);
}

TEST(Layering, NoFileOutsideTransportOrCollectivesIncludesTheirBackends) {
  std::vector<std::string> bad = CheckBackendIncludes(RIGEL_SOURCE_DIR);
  EXPECT_TRUE(bad.empty()) << bad.size() << " include(s) of a backend sub-folder:\n" << Join(bad);
}

TEST(Layering, OnlyCommonParsesJson) {
  std::vector<std::string> bad = CheckJsonParsing(RIGEL_SOURCE_DIR);
  EXPECT_TRUE(bad.empty()) << bad.size() << " JSON parser call(s) outside common/:\n" << Join(bad);
}

// A throw-away source tree for the checker's own tests.
class LayeringChecker : public ::testing::Test {
 protected:
  void SetUp() override {
    std::string tmpl = (fs::temp_directory_path() / "rigel-layering-XXXXXX").string();
    ASSERT_NE(mkdtemp(tmpl.data()), nullptr);
    root_ = tmpl;
    Write("docs/architecture.md",
          "# A\n\n## Layers\n\n| folder | holds | may depend on |\n|---|---|---|\n"
          "| `common/` | basics | — |\n"
          "| `ir/` | the IR | `common` |\n"
          "| `kernel/` | bytecode | `ir` |\n"
          "| `exec/` | running | `kernel` |\n"
          "| `worker/` | a role | `exec` |\n\n## Next\n\n| `tests/` | x | `worker` |\n");
    for (const char* f : {"common", "ir", "kernel", "exec", "worker"}) {
      Write(std::string(f) + "/CMakeLists.txt", "");
    }
  }
  void TearDown() override { fs::remove_all(root_); }
  void Write(const std::string& rel, const std::string& text) {
    fs::create_directories((root_ / rel).parent_path());
    std::ofstream(root_ / rel) << text;
  }
  fs::path root_;
};

TEST_F(LayeringChecker, ArrowsAndTheirClosureAreAllowed) {
  Write("exec/run.cc", "#include \"exec/run.h\"\n#include \"kernel/k.h\"\n#include \"ir/ir.h\"\n");
  Write("kernel/k.h", "#include <vector>\n#include \"common/status.h\"\n#include \"gtest/x.h\"\n");
  EXPECT_EQ(CheckTree(root_), std::vector<std::string>{});
}

TEST_F(LayeringChecker, AnUpwardIncludeIsReportedWithFileAndLine) {
  Write("kernel/run.cc", "// x\n#include \"kernel/k.h\"\n#include \"exec/executor.h\"\n");
  std::vector<std::string> bad = CheckTree(root_);
  ASSERT_EQ(bad.size(), 1u) << Join(bad);
  EXPECT_EQ(bad[0],
            "kernel/run.cc:3: `kernel/` may not include `exec/` (#include \"exec/executor.h\")");
}

TEST_F(LayeringChecker, ARoleIsIncludedByNoLibrary) {
  Write("exec/sub/deep.h", "#include \"worker/runner.h\"\n");
  std::vector<std::string> bad = CheckTree(root_);
  ASSERT_EQ(bad.size(), 1u) << Join(bad);
  EXPECT_NE(bad[0].find("exec/sub/deep.h:1: `exec/` may not include `worker/`"), std::string::npos);
}

TEST_F(LayeringChecker, AFolderMissingFromTheTableIsReported) {
  Write("ps/CMakeLists.txt", "");
  Write("ps/client.cc", "#include \"ir/ir.h\"\n");
  std::vector<std::string> bad = CheckTree(root_);
  ASSERT_EQ(bad.size(), 1u) << Join(bad);
  EXPECT_EQ(bad[0], "`ps/` has C++ sources but is not a row of the Layers table");
}

TEST_F(LayeringChecker, UnknownArrowsAndCyclesAreReported) {
  Write("docs/architecture.md",
        "## Layers\n| `common/` | x | — |\n| `ir/` | x | `kernel`, `nowhere` |\n"
        "| `kernel/` | x | `ir` |\n| `exec/` | x | `kernel` |\n| `worker/` | x | `exec` |\n");
  std::vector<std::string> bad = CheckTree(root_);
  std::string all = Join(bad);
  EXPECT_NE(all.find("`ir/` may depend on `nowhere/`, which is not a row"), std::string::npos)
      << all;
  EXPECT_NE(all.find("`ir/` depends on itself through its arrows (a cycle)"), std::string::npos)
      << all;
}

TEST_F(LayeringChecker, ABackendIncludedFromOutsideItsFolderIsReportedWithFileAndLine) {
  Write("worker/run.cc",
        "#include \"collectives/communicator.h\"\n"
        "#include \"collectives/nccl/communicator.h\"\n");
  Write("exec/sub/io.h", "// x\n\n#include \"transport/zmq/transport.h\"\n");
  Write("ir/x.h", "#include \"transport/internal/core.h\"\n");
  std::vector<std::string> bad = CheckBackendIncludes(root_);
  ASSERT_EQ(bad.size(), 3u) << Join(bad);
  EXPECT_EQ(bad[0],
            "exec/sub/io.h:3: `transport/zmq/` is private to `transport/`; include the folder's "
            "root headers (#include \"transport/zmq/transport.h\")");
  EXPECT_NE(bad[1].find("ir/x.h:1: `transport/internal/` is private"), std::string::npos) << bad[1];
  EXPECT_NE(bad[2].find("worker/run.cc:2: `collectives/nccl/` is private to `collectives/`"),
            std::string::npos)
      << bad[2];
}

TEST_F(LayeringChecker, RootHeadersSharedSubFoldersTheFolderItselfAndTestsMayIncludeThem) {
  Write("transport/create.cc", "#include \"transport/zmq/transport.h\"\n");
  Write("collectives/world.cc", "#include \"collectives/mpi/world.h\"\n");
  Write("worker/job.cc",
        "#include \"collectives/world.h\"\n#include \"transport/create.h\"\n"
        "#include \"transport/wire/envelope.capnp.h\"\n#include \"transport/auth/keyfile.h\"\n");
  Write("tests/transport/zmq_test.cc", "#include \"transport/zmq/transport.h\"\n");
  Write("bench/allreduce.cc", "#include \"collectives/nccl/communicator.h\"\n");
  Write("build/generated/x.cc", "#include \"collectives/gloo/mesh.h\"\n");
  EXPECT_EQ(CheckBackendIncludes(root_), std::vector<std::string>{});
}

TEST_F(LayeringChecker, JsonParsedOutsideCommonIsReportedWithFileAndLine) {
  Write("scheduler/checkpoint.cc", "// x\n  json j = json::parse(text);\n");
  Write("cli/plot.cc", "auto j = nlohmann::ordered_json::parse(line, nullptr, false);\n");
  Write("ir/x.h", "\n\nbool ok = nlohmann::json::accept(s);\n");
  Write("exec/sub/y.cc", "auto v = json::from_cbor(bytes);\nauto w = json :: sax_parse(t, &h);\n");
  std::vector<std::string> bad = CheckJsonParsing(root_);
  ASSERT_EQ(bad.size(), 5u) << Join(bad);
  EXPECT_EQ(bad[0],
            "cli/plot.cc:1: parses JSON (json::parse); read it with ParseJson "
            "(common/json_reader.h)");
  EXPECT_NE(bad[1].find("exec/sub/y.cc:1: parses JSON (json::from_cbor)"), std::string::npos)
      << bad[1];
  EXPECT_NE(bad[2].find("exec/sub/y.cc:2: parses JSON (json :: sax_parse)"), std::string::npos)
      << bad[2];
  EXPECT_NE(bad[3].find("ir/x.h:3: parses JSON (json::accept)"), std::string::npos) << bad[3];
  EXPECT_NE(bad[4].find("scheduler/checkpoint.cc:2: parses JSON (json::parse)"), std::string::npos)
      << bad[4];
}

TEST_F(LayeringChecker, CommonTestsAndWritingJsonMayDoAsTheyLike) {
  Write("common/json_reader.cc", "tree = nlohmann::ordered_json::parse(b, e, nullptr, false);\n");
  Write("tests/analysis/plan_test.cc", "json j = json::parse(PlanToJson(prog, plan));\n");
  Write("bench/planner.cc", "auto j = nlohmann::json::parse(line);\n");
  Write("build/x/gen.cc", "json::parse(x);\n");
  Write(".hidden/y.cc", "json::parse(x);\n");
  Write("exec/log.cc",
        "nlohmann::json j = nlohmann::json::object();\nout << j.dump();\n"
        "auto p = json::parser_callback_t();\nParseJson(text, path);\n");
  EXPECT_EQ(CheckJsonParsing(root_), std::vector<std::string>{});
}

TEST_F(LayeringChecker, AMissingTableIsAnError) {
  Write("docs/architecture.md", "# nothing here\n");
  std::vector<std::string> bad = CheckTree(root_);
  ASSERT_EQ(bad.size(), 1u) << Join(bad);
  EXPECT_NE(bad[0].find("no \"## Layers\" table rows found"), std::string::npos);
}

}  // namespace
}  // namespace rigel
