#include "collectives/gloo/communicator.h"

#include <fmt/format.h>
#include <gloo/allgather.h>
#include <gloo/allreduce.h>
#include <gloo/allreduce_ring_chunked.h>
#include <gloo/barrier.h>
#include <gloo/broadcast.h>
#include <gloo/common/error.h>
#include <gloo/context.h>
#include <gloo/math.h>

#include <algorithm>
#include <map>

#include "collectives/gloo/mesh.h"

namespace rigel::collectives::gloo_backend {

namespace {

// AllReduce of up to kSyncMaxFloats runs on pairs in Gloo's sync mode: the
// calling thread reads and writes the sockets itself, with no hand-off to
// Gloo's device thread. Each hand-off is a thread wake-up, slow on loaded or
// virtualised machines (bench/allreduce on the project's 2-core VM: 2.7x at
// 1 MiB, 6x at 4 KiB). A sync send blocks until written, so two ranks sending
// to each other at once must fit in the sockets' buffers: the buffer is
// reduced in pieces of at most kPieceFloats (a 2-rank ring's chunks are a
// quarter of a piece). Larger buffers go through Gloo's asynchronous ring
// with 4 MiB segments, which was faster there from 16 MiB on (0.73 vs 0.63
// of OpenMPI at 16 MiB).
constexpr size_t kPieceFloats = size_t{1} << 20;    // 4 MiB
constexpr size_t kSyncMaxFloats = size_t{2} << 20;  // 8 MiB
constexpr size_t kSegmentBytes = size_t{4} << 20;
// Ring algorithms kept per piece size before the cache is dropped (every
// rank drops it at the same call, so they stay in step).
constexpr size_t kMaxRings = 32;

class GlooCommunicator : public Communicator {
 public:
  // `context` serves Broadcast, AllGather and Barrier (Gloo's unbound-buffer
  // collectives, which need the device thread); `sync_context`, whose pairs
  // are in sync mode, serves AllReduce.
  GlooCommunicator(std::shared_ptr<::gloo::transport::Device> device,
                   std::shared_ptr<::gloo::Context> context,
                   std::shared_ptr<::gloo::Context> sync_context, std::chrono::milliseconds timeout)
      : device_(std::move(device)),
        context_(std::move(context)),
        sync_context_(std::move(sync_context)),
        timeout_(timeout) {}

  int rank() const override { return context_->rank; }
  int size() const override { return context_->size; }
  const char* backend() const override { return "gloo"; }
  Memory memory() const override { return Memory::kHost; }

  Status AllReduce(float* data, size_t count, ReduceOp op) override {
    return Guard("allreduce",
                 [&] {
                   if (count == 0 || size() == 1) return;
                   if (count > kSyncMaxFloats) {
                     ::gloo::AllreduceOptions o(context_);
                     o.setOutput(data, count);
                     o.setReduceFunction(
                         static_cast<void (*)(void*, const void*, const void*, size_t)>(
                             &::gloo::sum<float>));
                     o.setAlgorithm(::gloo::AllreduceOptions::Algorithm::RING);
                     o.setMaxSegmentSize(kSegmentBytes);
                     o.setTag(NextTag());
                     o.setTimeout(timeout_);
                     ::gloo::allreduce(o);
                     return;
                   }
                   // Gloo's ring algorithms are bound to a buffer when made, so
                   // pieces go through one scratch buffer and the algorithms
                   // are kept per piece size: every rank makes them at the same
                   // calls, which keeps Gloo's slot numbers in step.
                   if (scratch_.empty()) scratch_.resize(kPieceFloats);
                   for (size_t off = 0; off < count; off += kPieceFloats) {
                     const size_t n = std::min(kPieceFloats, count - off);
                     if (rings_.size() >= kMaxRings && !rings_.count(n)) rings_.clear();
                     auto& ring = rings_[n];
                     if (!ring) {
                       ring = std::make_unique<::gloo::AllreduceRingChunked<float>>(
                           sync_context_, std::vector<float*>{scratch_.data()},
                           static_cast<int>(n));
                     }
                     std::copy_n(data + off, n, scratch_.data());
                     ring->run();
                     std::copy_n(scratch_.data(), n, data + off);
                   }
                 })
        .and_then([&] {
          if (op == ReduceOp::kMean) {
            const float inv = 1.0f / static_cast<float>(size());
            for (size_t i = 0; i < count; ++i) data[i] *= inv;
          }
        });
  }

  Status Broadcast(float* data, size_t count, int root) override {
    if (root < 0 || root >= size()) {
      return InvalidArgument(fmt::format("broadcast: root {} is not a rank of {}", root, size()));
    }
    return Guard("broadcast",
                 [&] {
                   if (count == 0 || size() == 1) return;
                   ::gloo::BroadcastOptions o(context_);
                   o.setOutput(data, count);
                   o.setRoot(root);
                   o.setTag(NextTag());
                   o.setTimeout(timeout_);
                   ::gloo::broadcast(o);
                 })
        .result;
  }

  Status AllGather(const float* in, size_t count, float* out) override {
    return Guard("allgather",
                 [&] {
                   if (count == 0) return;
                   if (size() == 1) {
                     std::copy(in, in + count, out);
                     return;
                   }
                   ::gloo::AllgatherOptions o(context_);
                   o.setInput(const_cast<float*>(in), count);
                   o.setOutput(out, count * static_cast<size_t>(size()));
                   o.setTag(NextTag());
                   o.setTimeout(timeout_);
                   ::gloo::allgather(o);
                 })
        .result;
  }

  Status Barrier() override {
    return Guard("barrier",
                 [&] {
                   if (size() == 1) return;
                   ::gloo::BarrierOptions o(context_);
                   o.setTag(NextTag());
                   o.setTimeout(timeout_);
                   ::gloo::barrier(o);
                 })
        .result;
  }

 private:
  // The outcome of one guarded call; and_then runs `f` only after success.
  struct Outcome {
    Status result;
    template <typename F>
    Status and_then(F f) {
      if (result.ok()) f();
      return result;
    }
  };

  // Runs one Gloo call, turning its exceptions into a sticky Unavailable.
  template <typename F>
  Outcome Guard(const char* what, F f) {
    if (!failed_.ok()) return {failed_};
    SigpipeBlocker no_sigpipe;
    try {
      f();
      return {Status::Ok()};
    } catch (const std::exception& e) {
      failed_ = Unavailable(
          fmt::format("gloo {} failed on rank {} of {}: {}", what, rank(), size(), e.what()));
      return {failed_};
    }
  }

  uint32_t NextTag() { return tag_++; }

  std::shared_ptr<::gloo::transport::Device> device_;
  std::shared_ptr<::gloo::Context> context_;
  std::shared_ptr<::gloo::Context> sync_context_;
  std::chrono::milliseconds timeout_;
  std::vector<float> scratch_;
  std::map<size_t, std::unique_ptr<::gloo::Algorithm>> rings_;
  uint32_t tag_ = 0;
  Status failed_;
};

}  // namespace

StatusOr<std::unique_ptr<Communicator>> NewGlooCommunicator(Store* store,
                                                            const CommunicatorOptions& o) {
  if (o.size < 1 || o.rank < 0 || o.rank >= o.size) {
    return InvalidArgument(fmt::format("gloo: rank {} of {} is not a rank", o.rank, o.size));
  }
  RIGEL_ASSIGN_OR_RETURN(Mesh m, JoinMesh(store, o));
  return std::unique_ptr<Communicator>(new GlooCommunicator(
      std::move(m.device), std::move(m.context), std::move(m.sync_context), o.timeout));
}

}  // namespace rigel::collectives::gloo_backend
