// Kernel::Compile: copies the loop and runs the pass pipeline on it
// (kernel/passes/pipeline.h), which lowers it to bytecode.
#include "kernel/jit/jit.h"
#include "kernel/kernel_impl.h"
#include "kernel/passes/pipeline.h"
#include "kernel/tier.h"

namespace rigel::kernel {

Kernel::Impl::Impl() = default;
Kernel::Impl::~Impl() = default;

Kernel::Kernel(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}
Kernel::~Kernel() = default;
Kernel::Kernel(Kernel&&) noexcept = default;
Kernel& Kernel::operator=(Kernel&&) noexcept = default;

StatusOr<Kernel> Kernel::Compile(const ir::Program& prog, int loop, const WidthFn& widths,
                                 const CompileOptions& opts) {
  // The passes rewrite a copy of the loop.
  return CompileBody(prog, loop, prog.loops[loop], /*key_slice=*/false, widths, opts);
}

StatusOr<Kernel> Kernel::CompileBody(const ir::Program& prog, int loop, ir::Loop body,
                                     bool key_slice, const WidthFn& widths,
                                     const CompileOptions& opts) {
  auto impl = std::make_unique<Impl>();
  impl->prog = &prog;
  impl->loop = loop;
  impl->data = prog.loops[loop].data;
  impl->kind = prog.data[impl->data].kind;
  impl->key_slice = key_slice;
  impl->rewritten = std::move(body);
  RIGEL_RETURN_IF_ERROR(passes::RunPipeline(opts, widths, impl.get()));
  JitMode mode = JitMode::kOff;
  if (opts.jit) {
    mode = *opts.jit;
  } else {
    RIGEL_ASSIGN_OR_RETURN(mode, DefaultJitMode());
  }
  impl->tier = std::make_shared<Tier>(*impl, mode);
  return Kernel(std::move(impl));
}

size_t Kernel::code_size() const { return impl_->code.size(); }

TierReport Kernel::tier() const { return impl_->tier->Report(); }

StatusOr<std::string> Kernel::JitIr() const {
  RIGEL_ASSIGN_OR_RETURN(jit::Compiled c, jit::Compile(*impl_, /*want_ir=*/true));
  return std::move(c.ir);
}

}  // namespace rigel::kernel
