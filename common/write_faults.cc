#include "common/write_faults.h"

#include <atomic>

#include "common/check.h"

namespace rigel {
namespace {

// An atomic pointer rather than a mutex: writers on every thread read it on
// each write, and outside tests it is always null.
std::atomic<const WriteFaultRule*> installed{nullptr};

}  // namespace

ScopedWriteFault::ScopedWriteFault(WriteFaultRule rule) {
  const WriteFaultRule* none = nullptr;
  const bool first = installed.compare_exchange_strong(none, new WriteFaultRule(std::move(rule)));
  RIGEL_CHECK_MSG(first, "a write fault rule is already installed");
}

ScopedWriteFault::~ScopedWriteFault() { delete installed.exchange(nullptr); }

int InjectedWriteFault(const std::string& path, WriteOp op, size_t bytes) {
  const WriteFaultRule* rule = installed.load(std::memory_order_acquire);
  return rule == nullptr ? 0 : (*rule)(path, op, bytes);
}

}  // namespace rigel
