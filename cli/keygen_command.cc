// `rigel keygen -o FILE [--force]`: writes a new cluster key file (ZeroMQ
// CURVE key pair, format in transport/auth/keyfile.h) with mode 0600. Every
// process of a cluster is given the same file (e.g. --key-file FILE); only
// holders of it can connect. An existing file is kept unless --force, which
// replaces it atomically.
//
// Output: "wrote cluster key FILE (public key ...)" on stdout; errors on
// stderr as "rigel keygen: error: MESSAGE" with exit status 1.
#include <CLI/CLI.hpp>
#include <cstdio>
#include <memory>
#include <string>

#include "cli/commands.h"
#include "transport/auth/keyfile.h"

namespace rigel::cli {
namespace {

struct KeygenState {
  std::string out;
  bool force = false;
};

int RunKeygen(const KeygenState& s) {
  auto key = transport::GenerateClusterKey();
  Status st = key.ok() ? transport::WriteKeyFile(s.out, *key, s.force) : key.status();
  if (!st.ok()) {
    std::fprintf(stderr, "rigel keygen: error: %s\n", st.message().c_str());
    return 1;
  }
  std::printf("wrote cluster key %s (public key %s)\n", s.out.c_str(), key->public_key.c_str());
  std::fflush(stdout);
  return 0;
}

}  // namespace

void AddKeygenCommand(CLI::App& app, int* exit_code) {
  auto state = std::make_shared<KeygenState>();
  CLI::App* sub = app.add_subcommand(
      "keygen",
      "Write a new cluster key file (CURVE key pair, mode 0600); every process of a cluster "
      "needs the same file, and only holders of it can connect");
  sub->add_option("-o,--out", state->out, "Key file to write")->required();
  sub->add_flag("--force", state->force, "Replace an existing file");
  sub->callback([state, exit_code] { *exit_code = RunKeygen(*state); });
}

}  // namespace rigel::cli
