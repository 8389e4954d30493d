// Every repository path the documentation names must exist.
//
// Scanned: README.md, docs/*.md, examples/README.md, and the comments (not
// the code) of every *.h under the source folders (the top-level folders
// with a CMakeLists.txt). The source tree is RIGEL_SOURCE_DIR, a compile
// definition set by rigel_cc_test (cmake/RigelHelpers.cmake).
//
// What counts as a repository path:
// - A word made of letters, digits and `_ . - / * ? < > + ~ @` (plus `{a,b}`
//   groups), with a '/', whose first component is an entry of the repository
//   root as listed when the test runs: `worker/runner.cc`, `docs/dsl.md`,
//   `scripts/rigel-launch`, `examples/data/`. Trailing dots (end of a
//   sentence) and a leading "./" are dropped; `<worker/x.h>` loses its angle
//   brackets. A ":N" after the word names line N, and the file must have at
//   least N lines (":N:M" is line and column).
// - The target of a Markdown link, `[text](target)`, relative to the
//   document's folder (`#anchor` dropped; anchors are not checked).
// Not checked:
// - Words whose first component is not a root entry: `DESIGN.md` and
//   `DSL.md` (they live in ../shared, outside the repository, which CI does
//   not have), `../shared/data/a9a`, absolute paths (`/data/ml-1m.csv`),
//   paths relative to a program (`data/ratings.csv`), bare file names
//   (`plan.json`, `access.h`: their folder is only given by the context).
// - URLs (`scheme://...`).
// - Paths that the repository's .gitignore ignores: build outputs
//   (`build/bin/rigel`, `build-sanitize/...`) and run directories (`runs/...`).
//   The exception is `examples/data/`, which the build generates: a file
//   named there must be an output of examples/CMakeLists.txt.
// - Prose alternatives outside code spans: a bare `A/B` whose two parts are
//   both root folders ("worker/server -> scheduler"). Inside backticks it is
//   a path and is checked.
// Patterns are checked, not skipped: `*`, `?` and placeholders (`<layer>`, or
// an all-capitals component such as `KIND`) match any name, and at least one
// file or folder must match (`tests/<layer>/*_test.cc`); each alternative of a
// `{a,b}` group must match on its own (`tests/{worker,cli}`).
// Fenced blocks count as code spans; Markdown links are read outside them.
// A header made by configure_file is named by its include path
// (`common/config.h`) and counts as existing when `common/config.h.in` does.
#include <fnmatch.h>
#include <glob.h>
#include <gtest/gtest.h>
#include <stdlib.h>

#include <algorithm>
#include <cctype>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <set>
#include <sstream>
#include <string>
#include <string_view>
#include <vector>

namespace rigel {
namespace {

namespace fs = std::filesystem;

// A word of a document that may name a path.
struct Mention {
  std::string word;      // as written, without a ":N" suffix
  int line = 0;          // 1-based line of the document
  int target_line = 0;   // N of "word:N"; 0 when absent
  bool in_code = false;  // inside a `code span` or a fenced block
  bool link = false;     // the target of a Markdown link
};

// What the checks need to know about a source tree.
struct Repo {
  fs::path root;
  std::set<std::string> entries;     // names at the root
  std::set<std::string> folders;     // the subset that are folders
  std::vector<std::string> ignored;  // .gitignore patterns
  std::string example_outputs;       // text of examples/CMakeLists.txt
};

std::string ReadFile(const fs::path& p) {
  std::ifstream in(p, std::ios::binary);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

bool IsPathChar(char c) {
  return std::isalnum(static_cast<unsigned char>(c)) ||
         (c != '\0' && std::strchr("_.-/*?<>+~@", c) != nullptr);
}

// End of the word that starts at `i`; `{...}` groups without spaces are part
// of it.
size_t WordEnd(std::string_view line, size_t i) {
  size_t j = i;
  while (j < line.size()) {
    if (line[j] == '{') {
      size_t close = line.find('}', j);
      if (close == std::string_view::npos ||
          line.substr(j, close - j).find_first_of(" \t`") != std::string_view::npos) {
        break;
      }
      j = close + 1;
    } else if (IsPathChar(line[j])) {
      ++j;
    } else {
      break;
    }
  }
  return j;
}

// Reads a ":N" suffix at `*j`, moving `*j` past it; returns N, or 0 when
// there is none. A further ":M" (a column) is left to the caller.
int LineSuffix(std::string_view line, size_t* j) {
  if (*j + 1 >= line.size() || line[*j] != ':' ||
      !std::isdigit(static_cast<unsigned char>(line[*j + 1]))) {
    return 0;
  }
  int n = 0;
  for (++*j; *j < line.size() && std::isdigit(static_cast<unsigned char>(line[*j])); ++*j) {
    n = std::min(n * 10 + (line[*j] - '0'), 100000000);
  }
  return n;
}

bool IsUrl(std::string_view s) { return s.find("://") != std::string_view::npos; }

// Adds the mentions of one line; `span` is the open-backtick state, carried
// over lines of one paragraph.
void ScanLine(std::string_view line, int line_no, bool fence, bool* span,
              std::vector<Mention>* out) {
  size_t i = 0;
  while (i < line.size()) {
    const char c = line[i];
    if (c == '`') {
      if (!fence) *span = !*span;
      ++i;
      continue;
    }
    if (c == '(' && i > 0 && line[i - 1] == ']' && !fence && !*span) {
      size_t close = line.find(')', i);
      if (close != std::string_view::npos) {
        std::string target(line.substr(i + 1, close - i - 1));
        if (!target.empty() && !IsUrl(target)) out->push_back({target, line_no, 0, false, true});
        i = close + 1;
        continue;
      }
    }
    size_t end = (c == '{' || IsPathChar(c)) ? WordEnd(line, i) : i;
    if (end == i) {
      ++i;
      continue;
    }
    if (line.substr(end, 3) == "://") {  // a URL: skip to its end
      while (end < line.size() && !std::isspace(static_cast<unsigned char>(line[end])) &&
             line[end] != ')' && line[end] != '`' && line[end] != '>') {
        ++end;
      }
      i = end;
      continue;
    }
    Mention m{std::string(line.substr(i, end - i)), line_no, 0, fence || *span, false};
    m.target_line = LineSuffix(line, &end);
    out->push_back(std::move(m));
    i = end;
  }
}

// Every word of a Markdown text (or of a header's comment text) that may
// name a path. Fenced blocks are code; a blank line closes an open backtick.
std::vector<Mention> ScanText(std::string_view text) {
  std::vector<Mention> out;
  bool fence = false, span = false;
  int line_no = 0;
  size_t pos = 0;
  while (pos <= text.size()) {
    size_t nl = text.find('\n', pos);
    if (nl == std::string_view::npos) nl = text.size();
    std::string_view line = text.substr(pos, nl - pos);
    pos = nl + 1;
    ++line_no;
    size_t first = line.find_first_not_of(" \t\r");
    if (first == std::string_view::npos) {
      span = false;
    } else if (line.substr(first, 3) == "```") {
      fence = !fence;
      span = false;
    } else {
      ScanLine(line, line_no, fence, &span, &out);
    }
  }
  return out;
}

// The comments of C++ source, line for line: code, string and character
// literals become nothing, so "#include \"worker/x.h\"" names nothing.
std::string CommentText(std::string_view src) {
  enum State { kCode, kLine, kBlock, kString, kChar, kRaw } st = kCode;
  std::string out, raw_end;
  for (size_t i = 0; i < src.size(); ++i) {
    const char c = src[i];
    const char next = i + 1 < src.size() ? src[i + 1] : '\0';
    const bool after_word =
        i > 0 && (std::isalnum(static_cast<unsigned char>(src[i - 1])) || src[i - 1] == '_');
    if (c == '\n') {
      out += '\n';
      if (st == kLine || st == kString || st == kChar) st = kCode;
      continue;
    }
    switch (st) {
      case kCode:
        if (c == '/' && (next == '/' || next == '*')) {
          st = next == '/' ? kLine : kBlock;
          out += ' ';
          ++i;
        } else if (c == 'R' && next == '"' && !after_word) {
          size_t open = src.find('(', i + 2);
          if (open == std::string_view::npos) return out;
          raw_end = ")";
          raw_end.append(src.substr(i + 2, open - i - 2)).push_back('"');
          st = kRaw;
          i = open;
        } else if (c == '"') {
          st = kString;
        } else if (c == '\'' && !after_word) {  // not a digit separator
          st = kChar;
        }
        break;
      case kLine:
        out += c;
        break;
      case kBlock:
        if (c == '*' && next == '/') {
          st = kCode;
          out += ' ';
          ++i;
        } else {
          out += c;
        }
        break;
      case kString:
      case kChar:
        if (c == '\\' && next != '\n') {
          ++i;
        } else if (c == (st == kString ? '"' : '\'')) {
          st = kCode;
        }
        break;
      case kRaw:
        if (src.substr(i, raw_end.size()) == raw_end) {
          i += raw_end.size() - 1;
          st = kCode;
        }
        break;
    }
  }
  return out;
}

std::vector<std::string> SplitPath(std::string_view p) {
  std::vector<std::string> parts;
  size_t pos = 0;
  while (pos <= p.size()) {
    size_t slash = p.find('/', pos);
    if (slash == std::string_view::npos) slash = p.size();
    parts.emplace_back(p.substr(pos, slash - pos));
    pos = slash + 1;
  }
  return parts;
}

bool IsPlaceholder(const std::string& part) {
  if (part.size() >= 2 && part.front() == '<' && part.back() == '>') return true;
  return part.size() >= 2 && std::isupper(static_cast<unsigned char>(part[0])) &&
         std::all_of(part.begin(), part.end(), [](char c) {
           return std::isupper(static_cast<unsigned char>(c)) ||
                  std::isdigit(static_cast<unsigned char>(c)) || c == '_';
         });
}

bool IsPattern(std::string_view p) {
  if (p.find_first_of("*?{") != std::string_view::npos) return true;
  for (const std::string& part : SplitPath(p)) {
    if (IsPlaceholder(part)) return true;
  }
  return false;
}

// Whether a .gitignore pattern ignores `path` (repository-relative): an
// anchored pattern ("/build*/") matches the leading components, any other
// one a single component.
bool Ignored(const Repo& repo, const std::string& path) {
  std::vector<std::string> parts = SplitPath(path);
  for (std::string pat : repo.ignored) {
    while (!pat.empty() && pat.back() == '/') pat.pop_back();
    if (pat.empty()) continue;
    if (pat.front() == '/' || pat.find('/') != std::string::npos) {
      if (pat.front() == '/') pat.erase(0, 1);
      size_t n = SplitPath(pat).size();
      if (n > parts.size()) continue;
      std::string lead = parts[0];
      for (size_t k = 1; k < n; ++k) lead += "/" + parts[k];
      if (fnmatch(pat.c_str(), lead.c_str(), 0) == 0) return true;
    } else {
      for (const std::string& part : parts) {
        if (!part.empty() && fnmatch(pat.c_str(), part.c_str(), 0) == 0) return true;
      }
    }
  }
  return false;
}

// "a/./b/../c" -> "a/c"; an escape above the root gives "".
std::string Normalize(const std::string& p) {
  std::vector<std::string> out;
  for (const std::string& part : SplitPath(p)) {
    if (part == ".") continue;
    if (part == "..") {
      if (out.empty()) return "";
      out.pop_back();
      continue;
    }
    out.push_back(part);
  }
  std::string s;
  for (size_t k = 0; k < out.size(); ++k) s += (k ? "/" : "") + out[k];
  return s;
}

// The repository-relative path a mention names, or "" when it names none
// (see the rules at the top). `doc` is the document's own path.
std::string NamedPath(const Mention& m, const std::string& doc, const Repo& repo) {
  std::string w = m.word;
  if (m.link) {
    w = w.substr(0, w.find('#'));
    if (w.empty() || w.front() == '/') return "";
    size_t slash = doc.rfind('/');
    bool dir = w.back() == '/';
    w = Normalize((slash == std::string::npos ? "" : doc.substr(0, slash + 1)) + w);
    return w.empty() ? "" : w + (dir ? "/" : "");
  }
  while (!w.empty() && w.back() == '.') w.pop_back();
  if (w.size() > 2 && w.front() == '<' && w.find('>') == w.size() - 1) {
    w = w.substr(1, w.size() - 2);
  }
  if (w.rfind("./", 0) == 0) w.erase(0, 2);
  size_t slash = w.find('/');
  if (slash == std::string::npos || slash == 0) return "";
  if (!repo.entries.count(w.substr(0, slash))) return "";
  std::vector<std::string> parts = SplitPath(w);
  if (!m.in_code && parts.size() == 2 && repo.folders.count(parts[0]) &&
      repo.folders.count(parts[1])) {
    return "";  // "worker/server": prose
  }
  return w;
}

// "a{b,c}d{e,f}" -> abde, abdf, acde, acdf: every alternative must match,
// not only one of them.
std::vector<std::string> ExpandBraces(const std::string& pat) {
  size_t open = pat.find('{');
  size_t close = open == std::string::npos ? open : pat.find('}', open);
  if (close == std::string::npos) return {pat};
  std::vector<std::string> out;
  std::string body = pat.substr(open + 1, close - open - 1);
  size_t pos = 0;
  while (pos <= body.size()) {
    size_t comma = body.find(',', pos);
    if (comma == std::string::npos) comma = body.size();
    for (std::string& rest : ExpandBraces(pat.substr(close + 1))) {
      out.push_back(pat.substr(0, open) + body.substr(pos, comma - pos) + rest);
    }
    pos = comma + 1;
  }
  return out;
}

int CountLines(const std::string& text) {
  int n = static_cast<int>(std::count(text.begin(), text.end(), '\n'));
  return n + (!text.empty() && text.back() != '\n' ? 1 : 0);
}

// Why `path` (repository-relative) is broken, or "" when it is not.
std::string Problem(const std::string& path, int target_line, const Repo& repo) {
  const std::string data_dir = "examples/data/";
  if (path.rfind(data_dir, 0) == 0 && path.size() > data_dir.size()) {
    std::string rest = path.substr(data_dir.size());
    return repo.example_outputs.find("/" + rest) == std::string::npos
               ? "is not generated by examples/CMakeLists.txt"
               : "";
  }
  if (Ignored(repo, path)) return "";
  if (IsPattern(path)) {
    std::string pat;
    for (const std::string& part : SplitPath(path)) {
      pat += (pat.empty() ? "" : "/") + (IsPlaceholder(part) ? std::string("*") : part);
    }
    for (const std::string& alt : ExpandBraces(pat)) {
      glob_t g;
      int rc = glob((repo.root.string() + "/" + alt).c_str(), GLOB_NOSORT, nullptr, &g);
      globfree(&g);
      if (rc != 0)
        return alt == pat ? "matches no file or folder" : "matches no file or folder for " + alt;
    }
    return "";
  }
  const bool folder = path.back() == '/';
  const std::string file = folder ? path.substr(0, path.size() - 1) : path;
  fs::path p = repo.root / file;
  std::error_code ec;
  if (!fs::exists(p, ec)) {
    return !folder && fs::exists(repo.root / (file + ".in"), ec) ? "" : "does not exist";
  }
  if (folder && !fs::is_directory(p, ec)) return "is not a folder";
  if (target_line > 0) {
    int lines = CountLines(ReadFile(p));
    if (lines < target_line) {
      std::ostringstream why;
      why << "has " << lines << " lines, so no line " << target_line;
      return why.str();
    }
  }
  return "";
}

// "DOC:LINE: `PATH` PROBLEM" for each broken path that `text` names. A
// header (`doc` ending in ".h") is read for its comments only. `*checked`, if
// given, counts the paths checked.
std::vector<std::string> BrokenPaths(const std::string& doc, std::string_view text,
                                     const Repo& repo, int* checked = nullptr) {
  const bool header = doc.size() > 2 && doc.compare(doc.size() - 2, 2, ".h") == 0;
  std::vector<std::string> out;
  for (const Mention& m : ScanText(header ? CommentText(text) : std::string(text))) {
    std::string path = NamedPath(m, doc, repo);
    if (path.empty()) continue;
    if (checked) ++*checked;
    std::string why = Problem(path, m.target_line, repo);
    if (why.empty()) continue;
    std::ostringstream line;
    line << doc << ":" << m.line << ": `" << path;
    if (m.target_line) line << ":" << m.target_line;
    line << "` " << why;
    out.push_back(line.str());
  }
  return out;
}

Repo LoadRepo(const fs::path& root) {
  Repo repo;
  repo.root = root;
  for (const auto& e : fs::directory_iterator(root)) {
    std::string name = e.path().filename().string();
    repo.entries.insert(name);
    if (e.is_directory()) repo.folders.insert(name);
  }
  std::istringstream ignore(ReadFile(root / ".gitignore"));
  for (std::string line; std::getline(ignore, line);) {
    if (!line.empty() && line[0] != '#' && line[0] != '!') repo.ignored.push_back(line);
  }
  repo.example_outputs = ReadFile(root / "examples/CMakeLists.txt");
  return repo;
}

// The documents to scan, repository-relative, sorted.
std::vector<std::string> Documents(const Repo& repo) {
  std::vector<std::string> docs = {"README.md", "examples/README.md"};
  for (const auto& e : fs::directory_iterator(repo.root / "docs")) {
    if (e.path().extension() == ".md") docs.push_back("docs/" + e.path().filename().string());
  }
  for (const std::string& top : repo.folders) {
    if (!fs::exists(repo.root / top / "CMakeLists.txt") || Ignored(repo, top + "/")) continue;
    for (const auto& e : fs::recursive_directory_iterator(repo.root / top)) {
      std::string rel = fs::relative(e.path(), repo.root).string();
      if (e.is_regular_file() && e.path().extension() == ".h" && !Ignored(repo, rel)) {
        docs.push_back(rel);
      }
    }
  }
  std::sort(docs.begin(), docs.end());
  return docs;
}

TEST(DocPaths, EveryPathNamedInTheDocsExists) {
  Repo repo = LoadRepo(RIGEL_SOURCE_DIR);
  std::vector<std::string> docs = Documents(repo);
  int headers = 0, checked = 0;
  std::vector<std::string> broken;
  for (const std::string& doc : docs) {
    if (doc.size() > 2 && doc.compare(doc.size() - 2, 2, ".h") == 0) ++headers;
    for (std::string& b : BrokenPaths(doc, ReadFile(repo.root / doc), repo, &checked)) {
      broken.push_back(std::move(b));
    }
  }
  std::string list;
  for (const std::string& b : broken) list += "  " + b + "\n";
  EXPECT_TRUE(broken.empty()) << broken.size() << " path(s) named in the docs do not exist:\n"
                              << list;
  // A scanner that finds nothing would pass everything.
  EXPECT_GE(docs.size() - headers, 10u);
  EXPECT_GE(headers, 50);
  EXPECT_GE(checked, 200) << checked;
}

// A small source tree for the scanner's own tests.
class DocPathsScanner : public testing::Test {
 protected:
  void SetUp() override {
    // Its own folder: ctest -j runs this fixture's tests in parallel processes.
    std::string tmpl = (fs::path(testing::TempDir()) / "doc_paths_repo-XXXXXX").string();
    ASSERT_NE(mkdtemp(tmpl.data()), nullptr);
    root_ = tmpl;
    for (const char* dir :
         {"worker", "server", "docs", "scripts", "tests/worker", "tests/cli", "examples"}) {
      fs::create_directories(root_ / dir);
    }
    Write("worker/runner.cc", "a\nb\nc\n");
    Write("worker/runner.h", "x\n");
    Write("scripts/rigel-launch", "#!/bin/sh\n");
    Write("tests/worker/runner_test.cc", "x\n");
    Write("docs/other.md", "");
    Write("worker/config.h.in", "");
    Write(".gitignore", "/build*/\n/examples/data/\n/runs/\n*.profraw\n");
    Write("examples/CMakeLists.txt", "OUTPUTS ${RIGEL_EXAMPLE_DATA}/ratings.csv\n");
    fs::create_directories(root_ / "build/bin");
    repo_ = LoadRepo(root_);
  }
  void TearDown() override { fs::remove_all(root_); }
  void Write(const std::string& rel, const std::string& text) {
    std::ofstream(root_ / rel) << text;
  }
  std::vector<std::string> Broken(const std::string& doc, const std::string& text) {
    return BrokenPaths(doc, text, repo_);
  }

  fs::path root_;
  Repo repo_;
};

using Lines = std::vector<std::string>;

TEST_F(DocPathsScanner, ReportsAMissingPathWithItsDocumentAndLine) {
  EXPECT_EQ(Broken("README.md", "See `worker/runner.cc` and\nworker/no_such_file.cc.\n"),
            Lines{"README.md:2: `worker/no_such_file.cc` does not exist"});
}

TEST_F(DocPathsScanner, ExistingFilesFoldersAndScriptsPass) {
  EXPECT_EQ(Broken("README.md",
                   "worker/runner.cc, `worker/`, (scripts/rigel-launch) and\n"
                   "./worker/runner.h; <worker/runner.h> tests/worker/runner_test.cc:1\n"),
            Lines{});
}

TEST_F(DocPathsScanner, AFileIsNotAFolder) {
  EXPECT_EQ(Broken("README.md", "`worker/runner.cc/`"),
            Lines{"README.md:1: `worker/runner.cc/` is not a folder"});
}

TEST_F(DocPathsScanner, LineSuffixMustBeInsideTheFile) {
  EXPECT_EQ(Broken("docs/a.md", "`worker/runner.cc:3` `worker/runner.cc:2:7` worker/runner.cc:4"),
            Lines{"docs/a.md:1: `worker/runner.cc:4` has 3 lines, so no line 4"});
}

TEST_F(DocPathsScanner, PatternsMustMatchSomething) {
  EXPECT_EQ(Broken("README.md",
                   "`tests/<layer>/*_test.cc` `worker/runner.{h,cc}` `worker/runner.*`\n"
                   "`tests/{worker,cli}` `tests/KIND/` `worker/*.rs`\n"),
            Lines{"README.md:2: `worker/*.rs` matches no file or folder"});
  // Every alternative of a brace group must match.
  EXPECT_EQ(Broken("README.md", "`tests/{worker,nope}/`"),
            Lines{"README.md:1: `tests/{worker,nope}/` matches no file or folder for tests/nope/"});
}

TEST_F(DocPathsScanner, IgnoresWhatIsNotARepositoryPath) {
  EXPECT_EQ(Broken("README.md",
                   "https://example.com/worker/x.cc `http://h/docs/y.md` DESIGN.md DSL.md\n"
                   "/worker/abs.cc ../shared/data/a9a data/ratings.csv plan.json\n"
                   "`build/bin/rigel` build-sanitize/fuzz-artifacts/TARGET/ runs/<time>/\n"
                   "worker/x.profraw worker/server -> scheduler; 1/2 and/or\n"),
            Lines{});
}

TEST_F(DocPathsScanner, TwoRootFoldersAreAPathInsideBackticks) {
  EXPECT_EQ(Broken("README.md", "worker/server and `worker/server`\n"),
            Lines{"README.md:1: `worker/server` does not exist"});
}

TEST_F(DocPathsScanner, ExampleDataMustBeGeneratedByTheBuild) {
  EXPECT_EQ(Broken("examples/README.md",
                   "examples/data/ratings.csv `examples/data/`\nexamples/data/nope.csv\n"),
            Lines{"examples/README.md:2: `examples/data/nope.csv` is not generated by "
                  "examples/CMakeLists.txt"});
}

TEST_F(DocPathsScanner, ConfiguredHeaderCountsByItsTemplate) {
  EXPECT_EQ(Broken("README.md", "`worker/config.h` `worker/other.h`\n"),
            Lines{"README.md:1: `worker/other.h` does not exist"});
}

TEST_F(DocPathsScanner, FencedBlocksAndMarkdownLinks) {
  EXPECT_EQ(Broken("docs/a.md",
                   "```\nrigel run worker/gone.rgl\n```\n"
                   "[o](other.md#x) [r](../worker/runner.cc) [n](none.md) [u](https://x/y)\n"),
            (Lines{"docs/a.md:2: `worker/gone.rgl` does not exist",
                   "docs/a.md:4: `docs/none.md` does not exist"}));
}

TEST_F(DocPathsScanner, HeadersAreReadForTheirCommentsOnly) {
  EXPECT_EQ(Broken("worker/x.h",
                   "#include \"worker/missing_include.h\"\n"
                   "const char* s = \"// worker/in_string.h\";\n"
                   "char q = '\"'; int n = 1'000;  // see worker/runner.h\n"
                   "/* a block naming\n   worker/gone_block.h */ int x;\n"
                   "auto r = R\"(worker/raw.h)\";  // and worker/gone_line.cc:2\n"),
            (Lines{"worker/x.h:5: `worker/gone_block.h` does not exist",
                   "worker/x.h:6: `worker/gone_line.cc:2` does not exist"}));
}

}  // namespace
}  // namespace rigel
