#include "frontend/diagnostics.h"

#include <algorithm>

namespace rigel::frontend {

void Diagnostics::Error(Loc loc, std::string message) {
  ++count_;
  // The same message at the same place adds nothing (recovery can revisit).
  for (const Entry& e : entries_) {
    if (e.loc.line == loc.line && e.loc.col == loc.col && e.message == message) {
      --count_;
      return;
    }
  }
  if (static_cast<int>(entries_.size()) < limit_) {
    entries_.push_back({loc, std::move(message), count_});
  }
}

std::string Diagnostics::Render() const {
  std::vector<Entry> sorted = entries_;
  std::stable_sort(sorted.begin(), sorted.end(), [](const Entry& a, const Entry& b) {
    return a.loc.line != b.loc.line ? a.loc.line < b.loc.line : a.loc.col < b.loc.col;
  });
  std::string out;
  for (const Entry& e : sorted) out += FormatDiagnostic(*source_, e.loc, e.message);
  if (count_ > static_cast<int>(entries_.size())) {
    out += source_->path() + ": " + std::to_string(count_ - entries_.size()) +
           " more errors not shown\n";
  }
  out += std::to_string(count_) + (count_ == 1 ? " error" : " errors") + " in " + source_->path() +
         "\n";
  return out;
}

}  // namespace rigel::frontend
