// `rigel devices`: how many CUDA devices this host has, as `--device cuda`
// counts them (collectives/devices.h). scripts/rigel-ssh runs it on each
// host that gets workers of a --device cuda job before it starts any rank.
//
// Output: one line on stdout, "N CUDA device(s)", followed by " (NOTE)" when
// there is a note (why there is none, or the test hook that set the count),
// e.g. "0 CUDA devices (cudaGetDeviceCount says no CUDA-capable device is
// detected (cudaErrorNoDevice))"; the count is the line's first word. Errors
// (a build without CUDA, a bad RIGEL_FAKE_CUDA_DEVICES) on stderr as
// "rigel devices: MESSAGE" with exit status 1.
#include <iostream>

#include "cli/commands.h"
#include "collectives/devices.h"

namespace rigel::cli {

void AddDevicesCommand(CLI::App& app, int* exit_code) {
  CLI::App* sub = app.add_subcommand(
      "devices", "print how many CUDA devices this host has for --device cuda (NCCL)");
  sub->callback([exit_code] {
    auto devices = collectives::CountCudaDevices();
    if (!devices.ok()) {
      std::cerr << "rigel devices: " << devices.status().message() << "\n";
      *exit_code = 1;
      return;
    }
    std::cout << devices->count << " CUDA device" << (devices->count == 1 ? "" : "s")
              << (devices->note.empty() ? "" : " (" + devices->note + ")") << "\n";
  });
}

}  // namespace rigel::cli
