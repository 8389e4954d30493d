// What the servers' heartbeats say of them, as the coordinator collects it
// (Coordinator::Servers) and the driver's per-epoch figures read it
// (Driver::set_servers). Value type.
#ifndef RIGEL_SCHEDULER_SERVER_FIGURES_H_
#define RIGEL_SCHEDULER_SERVER_FIGURES_H_

#include <cstdint>

namespace rigel::scheduler {

struct ServerFigures {
  double cpu_s = 0;         // CPU seconds used so far (one server's, or summed over servers)
  int64_t peak_bytes = -1;  // the most resident memory a server held (-1: unknown)
};

}  // namespace rigel::scheduler

#endif  // RIGEL_SCHEDULER_SERVER_FIGURES_H_
