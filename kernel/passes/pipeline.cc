#include "kernel/passes/pipeline.h"

#include <algorithm>

#include "common/config.h"
#include "ir/verify.h"
#include "kernel/lower/lower.h"
#include "kernel/verify.h"

namespace rigel::kernel::passes {

const std::vector<const Pass*>& Pipeline() {
  static const std::vector<const Pass*> passes = {
      // IR stage.
      &MergeReads(),
      &FoldConstants(),
      // Bytecode stage, after the lowering.
      &ReadViews(),
      &FuseRowWrites(),
      &CopiesToViews(),
      &FuseRowViews(),
      &FuseDot(),
      &SpecialiseRowKernels(),
  };
  return passes;
}

Status CheckPassNames(const std::vector<std::string>& names, bool allow_all) {
  for (const std::string& name : names) {
    if (allow_all && name == "all") continue;
    const auto& all = Pipeline();
    if (std::any_of(all.begin(), all.end(), [&](const Pass* p) { return p->name() == name; })) {
      continue;
    }
    std::string valid;
    for (const Pass* p : all) valid += (valid.empty() ? "" : ", ") + std::string(p->name());
    if (allow_all) valid += " (or all)";
    return InvalidArgument("unknown pass '" + name + "'; the passes are: " + valid);
  }
  return Status::Ok();
}

bool VerifyByDefault() {
#if !defined(NDEBUG) || RIGEL_SANITIZE
  return true;
#else
  return false;
#endif
}

namespace {

int CountIr(const std::vector<ir::Inst>& body) {
  int n = 0;
  for (const ir::Inst& in : body) n += 1 + CountIr(in.body) + CountIr(in.else_body);
  return n;
}

bool Named(const std::vector<std::string>& names, std::string_view name, bool or_all) {
  return std::any_of(names.begin(), names.end(),
                     [&](const std::string& n) { return n == name || (or_all && n == "all"); });
}

// One run of the pipeline over one loop.
class Runner {
 public:
  Runner(const CompileOptions& opts, const WidthFn& widths, Kernel::Impl* k)
      : opts_(opts), widths_(widths), k_(k), verify_(opts.verify.value_or(VerifyByDefault())) {}

  Status Run(const std::vector<const Pass*>& passes) {
    RIGEL_RETURN_IF_ERROR(CheckPassNames(opts_.disable, /*allow_all=*/false));
    RIGEL_RETURN_IF_ERROR(CheckPassNames(opts_.print_after, /*allow_all=*/true));
    RIGEL_RETURN_IF_ERROR(VerifyIr("before the first pass"));
    bool lowered = false;
    for (const Pass* pass : passes) {
      if (pass->stage() == Stage::kBytecode && !lowered) {
        RIGEL_RETURN_IF_ERROR(LowerNow());
        lowered = true;
      } else if (pass->stage() == Stage::kIr && lowered) {
        return Internal("kernel compiler: IR pass '" + std::string(pass->name()) +
                        "' is listed after a bytecode pass");
      }
      RIGEL_RETURN_IF_ERROR(RunOne(*pass));
    }
    if (!lowered) RIGEL_RETURN_IF_ERROR(LowerNow());
    lower::LayOutArena(k_);
    RIGEL_RETURN_IF_ERROR(VerifyCode("after the arena layout", /*laid_out=*/true));
    if (opts_.stats) opts_.stats(k_->loop, reports_);
    return Status::Ok();
  }

 private:
  std::string What() const {
    return (k_->key_slice ? "the key slice of loop " : "loop ") + std::to_string(k_->loop);
  }

  Status VerifyIr(const std::string& when) const {
    if (!verify_) return Status::Ok();
    ir::VerifyOptions vo;
    vo.key_slice = k_->key_slice;
    Status st = ir::VerifyLoop(*k_->prog, k_->rewritten, vo);
    if (st.ok()) return st;
    return Internal("kernel compiler: the IR of " + What() + " is invalid " + when + ": " +
                    st.message());
  }

  Status VerifyCode(const std::string& when, bool laid_out) const {
    if (!verify_) return Status::Ok();
    Status st = VerifyBytecode(*k_, laid_out);
    if (st.ok()) return st;
    return Internal("kernel compiler: the bytecode of " + What() + " is invalid " + when + ": " +
                    st.message());
  }

  Status LowerNow() {
    RIGEL_RETURN_IF_ERROR(lower::Lower(widths_, k_));
    return VerifyCode("after the lowering", /*laid_out=*/false);
  }

  int Size(Stage stage) const {
    return stage == Stage::kIr ? CountIr(k_->rewritten.body) : static_cast<int>(k_->code.size());
  }

  Status RunOne(const Pass& pass) {
    PassReport report;
    report.pass = std::string(pass.name());
    report.ran = !Named(opts_.disable, pass.name(), /*or_all=*/false);
    if (!report.ran) {
      reports_.push_back(std::move(report));
      return Status::Ok();
    }
    const int before = Size(pass.stage());
    if (pass.stage() == Stage::kIr) {
      static_cast<const IrPass&>(pass).Run(*k_->prog, k_->key_slice, &k_->rewritten, &report.stats);
    } else {
      static_cast<const BytecodePass&>(pass).Run(k_, &report.stats);
    }
    if (!report.stats.empty()) {
      report.stats.Add("instructions before", before);
      report.stats.Add("instructions after", Size(pass.stage()));
    }
    reports_.push_back(std::move(report));
    const std::string when = "after pass '" + std::string(pass.name()) + "'";
    RIGEL_RETURN_IF_ERROR(pass.stage() == Stage::kIr ? VerifyIr(when)
                                                     : VerifyCode(when, /*laid_out=*/false));
    if (opts_.print && Named(opts_.print_after, pass.name(), /*or_all=*/true)) {
      opts_.print(std::string(pass.name()),
                  pass.stage() == Stage::kIr
                      ? ir::PrintLoop(*k_->prog, k_->rewritten)
                      : "bytecode loop " + std::to_string(k_->loop) + "\n" + Disassemble(*k_));
    }
    return Status::Ok();
  }

  const CompileOptions& opts_;
  const WidthFn& widths_;
  Kernel::Impl* k_;
  const bool verify_;
  std::vector<PassReport> reports_;
};

}  // namespace

Status RunPipeline(const CompileOptions& opts, const WidthFn& widths, Kernel::Impl* k,
                   const std::vector<const Pass*>& passes) {
  return Runner(opts, widths, k).Run(passes);
}

}  // namespace rigel::kernel::passes
