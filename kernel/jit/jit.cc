// The JIT engine: one ORC LLJIT per process, targeting the host CPU, and the
// lowering of a body's bytecode to a function that calls the bitcode's opcode
// functions (kernel/jit/ops_bitcode.cc) in bytecode order.
//
// Why this shape: the opcode functions are the interpreter's own source, so
// the two tiers cannot drift apart, and every operand of an instruction is a
// load from a constant copy of the bytecode, which LLVM folds: the calls
// inline, the handlers' `o + 1` and jump targets become direct branches,
// slot numbers become fixed offsets, and the row kernels (instantiated from
// the instruction's term counts, kernel/row_calls.h) are unrolled for the
// width the compiler picked them for. The Machine is copied into the
// function's own frame, so its fields live in registers.
#include "kernel/jit/jit.h"

#include <llvm/Bitcode/BitcodeReader.h>
#include <llvm/ExecutionEngine/Orc/ExecutionUtils.h>
#include <llvm/ExecutionEngine/Orc/JITTargetMachineBuilder.h>
#include <llvm/ExecutionEngine/Orc/LLJIT.h>
#include <llvm/ExecutionEngine/Orc/ThreadSafeModule.h>
#include <llvm/IR/Constants.h>
#include <llvm/IR/DiagnosticInfo.h>
#include <llvm/IR/IRBuilder.h>
#include <llvm/IR/LLVMContext.h>
#include <llvm/IR/Module.h>
#include <llvm/IR/Verifier.h>
#include <llvm/Passes/PassBuilder.h>
#include <llvm/Support/MemoryBuffer.h>
#include <llvm/Support/TargetSelect.h>
#include <llvm/Support/raw_ostream.h>
#include <llvm/Target/TargetMachine.h>
#include <llvm/Transforms/IPO/AlwaysInliner.h>
#include <llvm/Transforms/IPO/GlobalDCE.h>

#include <algorithm>
#include <chrono>
#include <cstring>
#include <memory>
#include <mutex>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "common/hash.h"
#include "kernel/jit/layout.h"
#include "kernel/operands.h"

// The bitcode, embedded at build time (kernel/CMakeLists.txt).
extern "C" const unsigned char rigel_ops_bitcode[];
extern "C" const size_t rigel_ops_bitcode_size;

namespace rigel::kernel::jit {
namespace {

// Called by compiled bodies (ops_bitcode.cc): a data set held in part, a
// worker's cache counting its rows' writes.
int64_t LocalSlow(const data::Dataset* d, int64_t e) { return d->LocalSlow(e); }
void TrackRow(const RowTracker* t, int64_t row) {
  ParamBinding p;
  p.tracker = t;
  ops::Track(p, row);
}

std::string ToString(llvm::Error e) {
  std::string s;
  llvm::raw_string_ostream os(s);
  os << e;
  return s;
}

constexpr uint64_t kHostLayout[kLayoutFields] = {RIGEL_JIT_LAYOUT_VALUES};

// A compiled body and the bytecode it was compiled from (a hash may collide).
struct CacheEntry {
  std::string bytes;
  BodyFn fn;
};

class Engine {
 public:
  // The process's engine, or why there is none.
  static StatusOr<Engine*> Get() {
    static std::once_flag once;
    static Engine* engine = nullptr;
    static Status why = Status::Ok();
    std::call_once(once, [] {
      auto e = std::unique_ptr<Engine>(new Engine);
      why = e->Init();
      if (why.ok()) engine = e.release();
    });
    if (!why.ok()) return why;
    return engine;
  }

  StatusOr<Compiled> Compile(const Kernel::Impl& k, bool want_ir) {
    std::lock_guard<std::mutex> lock(mu_);
    std::string bytes = ConstantCode(k);
    const uint64_t key = HashCoords(0x6a6974, std::hash<std::string_view>{}(bytes), bytes.size());
    auto hit = cache_.find(key);
    if (hit != cache_.end() && hit->second.bytes == bytes && !want_ir) {
      Compiled c;
      c.fn = hit->second.fn;
      c.cached = true;
      return c;
    }
    using Clock = std::chrono::steady_clock;
    auto ms = [](Clock::time_point from, Clock::time_point to) {
      return std::chrono::duration<double, std::milli>(to - from).count();
    };
    const auto start = Clock::now();
    const std::string name = "rigel_body_" + std::to_string(next_id_++);
    auto ctx = std::make_unique<llvm::LLVMContext>();
    // LLVM's remarks and warnings (a loop it could not vectorise) are about
    // our code, not the user's: never printed. Errors come back as Status.
    ctx->setDiagnosticHandlerCallBack([](const llvm::DiagnosticInfo*, void*) {});
    RIGEL_ASSIGN_OR_RETURN(std::unique_ptr<llvm::Module> m, Lower(k, bytes, name, *ctx));
    const auto lowered = Clock::now();
    Optimise(*m);
    const auto optimised = Clock::now();
    Compiled out;
    out.lower_ms = ms(start, lowered);
    out.optimise_ms = ms(lowered, optimised);
    out.instructions = m->getFunction(name)->getInstructionCount();
    if (want_ir) {
      llvm::raw_string_ostream os(out.ir);
      m->print(os, nullptr);
    }
    if (hit != cache_.end() && hit->second.bytes == bytes) {
      out.fn = hit->second.fn;
      out.cached = true;
      return out;
    }
    if (llvm::Error e =
            jit_->addIRModule(llvm::orc::ThreadSafeModule(std::move(m), std::move(ctx)))) {
      return Internal("JIT: adding the module failed: " + ToString(std::move(e)));
    }
    // The lookup generates the machine code and links it.
    auto addr = jit_->lookup(name);
    if (!addr) return Internal("JIT: " + ToString(addr.takeError()));
    out.fn = addr->toPtr<BodyFn>();
    const auto done = Clock::now();
    out.codegen_ms = ms(optimised, done);
    out.compile_ms = ms(start, done);
    if (hit == cache_.end()) cache_.emplace(key, CacheEntry{std::move(bytes), out.fn});
    return out;
  }

 private:
  Engine() = default;

  Status Init() {
    if (llvm::InitializeNativeTarget() || llvm::InitializeNativeTargetAsmPrinter()) {
      return FailedPrecondition("JIT: LLVM has no code generator for this machine");
    }
    auto jtmb = llvm::orc::JITTargetMachineBuilder::detectHost();
    if (!jtmb) return FailedPrecondition("JIT: " + ToString(jtmb.takeError()));
    jtmb->setCodeGenOptLevel(llvm::CodeGenOptLevel::Default);
    cpu_ = jtmb->getCPU();
    features_ = jtmb->getFeatures().getString();
    auto tm = jtmb->createTargetMachine();
    if (!tm) return FailedPrecondition("JIT: " + ToString(tm.takeError()));
    tm_ = std::move(*tm);
    auto jit = llvm::orc::LLJITBuilder().setJITTargetMachineBuilder(std::move(*jtmb)).create();
    if (!jit) return FailedPrecondition("JIT: " + ToString(jit.takeError()));
    jit_ = std::move(*jit);
    // libm, libc and libstdc++ (expf, memcpy, operator new) come from the
    // process; the one host function of Rigel's the bitcode calls is
    // defined by address.
    llvm::orc::JITDylib& jd = jit_->getMainJITDylib();
    auto search = llvm::orc::DynamicLibrarySearchGenerator::GetForCurrentProcess(
        jit_->getDataLayout().getGlobalPrefix());
    if (!search) return FailedPrecondition("JIT: " + ToString(search.takeError()));
    jd.addGenerator(std::move(*search));
    llvm::orc::SymbolMap host;
    for (const auto& [symbol, address] :
         {std::pair<const char*, void*>{"rigel_jit_local_slow",
                                        reinterpret_cast<void*>(&LocalSlow)},
          {"rigel_jit_track", reinterpret_cast<void*>(&TrackRow)}}) {
      host[jit_->mangleAndIntern(symbol)] = {
          llvm::orc::ExecutorAddr::fromPtr(address),
          llvm::JITSymbolFlags::Exported | llvm::JITSymbolFlags::Callable};
    }
    if (llvm::Error e = jd.define(llvm::orc::absoluteSymbols(std::move(host)))) {
      return FailedPrecondition("JIT: " + ToString(std::move(e)));
    }
    // Check the bitcode once, here, so that a bad one disables the tier
    // with its reason instead of failing every compile.
    llvm::LLVMContext ctx;
    RIGEL_ASSIGN_OR_RETURN(std::unique_ptr<llvm::Module> m, LoadBitcode(ctx));
    return Status::Ok();
  }

  StatusOr<std::unique_ptr<llvm::Module>> LoadBitcode(llvm::LLVMContext& ctx) const {
    llvm::MemoryBufferRef buf(
        llvm::StringRef(reinterpret_cast<const char*>(rigel_ops_bitcode), rigel_ops_bitcode_size),
        "ops_bitcode.bc");
    // Lazily: a function's body is read when it is materialised, and a body
    // uses a few of the opcodes (Lower).
    auto m = llvm::getLazyBitcodeModule(buf, ctx);
    if (!m) return FailedPrecondition("JIT: the embedded bitcode: " + ToString(m.takeError()));
    llvm::GlobalVariable* layout = (*m)->getGlobalVariable("rigel_jit_layout");
    auto* values = layout
                       ? llvm::dyn_cast_or_null<llvm::ConstantDataArray>(layout->getInitializer())
                       : nullptr;
    if (values == nullptr || values->getNumElements() != kLayoutFields) {
      return FailedPrecondition("JIT: the embedded bitcode has no rigel_jit_layout");
    }
    for (int f = 0; f < kLayoutFields; ++f) {
      if (values->getElementAsInteger(f) != kHostLayout[f]) {
        return FailedPrecondition(
            "JIT: the bitcode's compiler laid out the interpreter's structures otherwise than this "
            "program's (field " +
            std::to_string(f) +
            " of kernel/jit/layout.h: " + std::to_string(values->getElementAsInteger(f)) +
            " against " + std::to_string(kHostLayout[f]) + ")");
      }
    }
    (*m)->setDataLayout(jit_->getDataLayout());
    (*m)->setTargetTriple(jit_->getTargetTriple().str());
    return std::move(*m);
  }

  // The bytecode as it is embedded in the compiled body: each instruction's
  // fields, padding zeroed (so equal bodies give equal bytes), and VOp::k
  // holding the width its row kernel was picked for (kernel/row_calls.h)
  // instead of a host pointer; then the terms of its linear combinations.
  static std::string ConstantCode(const Kernel::Impl& k) {
    std::string bytes(k.code.size() * sizeof(VOp) + k.terms.size() * sizeof(Term), '\0');
    if (!k.terms.empty()) {
      std::memcpy(bytes.data() + k.code.size() * sizeof(VOp), k.terms.data(),
                  k.terms.size() * sizeof(Term));
    }
    for (size_t i = 0; i < k.code.size(); ++i) {
      const VOp& o = k.code[i];
      VOp c;
      std::memset(static_cast<void*>(&c), 0, sizeof c);
      c.code = o.code;
      c.fn = o.fn;
      c.d = o.d;
      c.a = o.a;
      c.b = o.b;
      c.c = o.c;
      c.n = o.n;
      c.aux = o.aux;
      c.t = o.t;
      c.loc = o.loc;
      c.k.width = 0;
      switch (o.code) {
        case kWrRowPair:
          c.k.width = k.prog->params[o.aux].width;
          break;
        case kVLin:
        case kWrRowLin:
        case kWrWholeLin:
        case kDot:
        case kNorm:
        case kDotOp:
        case kVMove:
        case kRdRowCopy:
        case kRdWholeCopy:
          c.k.width = o.n;
          break;
        default:
          break;
      }
      std::memcpy(bytes.data() + i * sizeof(VOp), &c, sizeof c);
    }
    return bytes;
  }

  // Erases the functions of `m` other than `keep` that nothing uses, until
  // none is left.
  static void EraseUnused(llvm::Module& m, llvm::Function* keep) {
    for (bool erased = true; erased;) {
      erased = false;
      for (auto it = m.begin(); it != m.end();) {
        llvm::Function& f = *it++;
        f.removeDeadConstantUsers();  // the erased table's initializer
        if (&f != keep && f.use_empty() && !f.isDeclaration()) {
          f.eraseFromParent();
          erased = true;
        }
      }
    }
  }

  // The body function `name` in a copy of the bitcode module:
  //   int name(Machine* m) { Machine l = *m; l.code = vops; <ops>; }
  // where each instruction i is `r = op_i(&l, &vops[i])` followed by a branch
  // to i + 1 or its jump target by r, and any other r (the handlers'
  // kFaultedOp) copies l back to *m and returns 1.
  StatusOr<std::unique_ptr<llvm::Module>> Lower(const Kernel::Impl& k, const std::string& bytes,
                                                const std::string& name,
                                                llvm::LLVMContext& ctx) const {
    RIGEL_ASSIGN_OR_RETURN(std::unique_ptr<llvm::Module> m, LoadBitcode(ctx));
    llvm::GlobalVariable* table = m->getGlobalVariable("rigel_jit_ops");
    auto* ops =
        table ? llvm::dyn_cast_or_null<llvm::ConstantArray>(table->getInitializer()) : nullptr;
    if (ops == nullptr || ops->getNumOperands() != ops::kFaulted) {
      return FailedPrecondition("JIT: the embedded bitcode has no table of opcodes");
    }
    std::vector<llvm::Function*> handler(ops::kFaulted, nullptr);
    for (unsigned c = 0; c < ops::kFaulted; ++c) {
      handler[c] = llvm::dyn_cast<llvm::Function>(ops->getOperand(c)->stripPointerCasts());
    }
    // The table and the layout were for finding; what stays is what the
    // body calls.
    table->eraseFromParent();
    m->getGlobalVariable("rigel_jit_layout")->eraseFromParent();

    llvm::Type* i8 = llvm::Type::getInt8Ty(ctx);
    llvm::Type* i32 = llvm::Type::getInt32Ty(ctx);
    llvm::Type* i64 = llvm::Type::getInt64Ty(ctx);
    llvm::PointerType* ptr = llvm::PointerType::getUnqual(ctx);
    const auto* raw = reinterpret_cast<const uint8_t*>(bytes.data());
    const size_t code_bytes = k.code.size() * sizeof(VOp);
    auto* code = llvm::ConstantDataArray::get(ctx, llvm::ArrayRef<uint8_t>(raw, code_bytes));
    auto* vops = new llvm::GlobalVariable(*m, code->getType(), /*isConstant=*/true,
                                          llvm::GlobalValue::PrivateLinkage, code, "rigel_vops");
    vops->setAlignment(llvm::Align(alignof(VOp)));
    // The terms too, so that their slots and vectors are constants (a
    // byte, never read, when there are none).
    std::vector<uint8_t> term_bytes(raw + code_bytes, raw + bytes.size());
    if (term_bytes.empty()) term_bytes.push_back(0);
    auto* term_data = llvm::ConstantDataArray::get(ctx, llvm::ArrayRef<uint8_t>(term_bytes));
    auto* terms =
        new llvm::GlobalVariable(*m, term_data->getType(), /*isConstant=*/true,
                                 llvm::GlobalValue::PrivateLinkage, term_data, "rigel_terms");
    terms->setAlignment(llvm::Align(alignof(Term)));
    auto at = [&](int64_t i) -> llvm::Constant* {
      return llvm::ConstantExpr::getInBoundsGetElementPtr(
          i8, vops, llvm::ConstantInt::get(i64, i * static_cast<int64_t>(sizeof(VOp))));
    };

    // The body: one element, on the machine it is given.
    auto* body =
        llvm::Function::Create(llvm::FunctionType::get(i32, {ptr}, false),
                               llvm::GlobalValue::InternalLinkage, name + "_element", m.get());
    body->addFnAttr(llvm::Attribute::AlwaysInline);
    llvm::Argument* lm = body->getArg(0);
    const int64_t n = static_cast<int64_t>(k.code.size());
    auto* entry = llvm::BasicBlock::Create(ctx, "entry", body);
    std::vector<llvm::BasicBlock*> block(n + 1);
    for (int64_t i = 0; i < n; ++i) {
      block[i] = llvm::BasicBlock::Create(ctx, "i" + std::to_string(i), body);
    }
    block[n] = llvm::BasicBlock::Create(ctx, "done", body);
    auto* fault = llvm::BasicBlock::Create(ctx, "fault", body);
    llvm::IRBuilder<> b(entry);
    b.CreateBr(block[0]);
    for (int64_t i = 0; i < n; ++i) {
      const VOp& o = k.code[i];
      b.SetInsertPoint(block[i]);
      if (o.code == kEnd) {
        b.CreateBr(block[n]);
        continue;
      }
      llvm::Function* h = o.code < ops::kFaulted ? handler[o.code] : nullptr;
      if (h == nullptr) {
        return FailedPrecondition(std::string("JIT: no compiled form of instruction '") +
                                  CodeName(o.code) + "'");
      }
      llvm::Value* next = b.CreateCall(h, {lm, at(i)});
      llvm::BasicBlock* other = fault;
      if (IsJump(o.code)) {
        if (o.n < 0 || o.n > n) return Internal("JIT: a jump outside the body");
        other = llvm::BasicBlock::Create(ctx, "i" + std::to_string(i) + ".jump", body);
      }
      b.CreateCondBr(b.CreateICmpEQ(next, at(i + 1)), block[i + 1], other);
      if (other != fault) {
        b.SetInsertPoint(other);
        b.CreateCondBr(b.CreateICmpEQ(next, at(o.n)), block[o.n], fault);
      }
    }
    b.SetInsertPoint(block[n]);
    b.CreateRet(llvm::ConstantInt::get(i32, 0));
    b.SetInsertPoint(fault);
    b.CreateRet(llvm::ConstantInt::get(i32, 1));

    // The entry (jit::BodyFn): the machine, its slots and its vectors
    // copied into this frame, where nothing outside sees them, so that they
    // become registers; then the element loop (rigel_jit_drive) over the
    // body, both inlined.
    llvm::Function* drive = m->getFunction("rigel_jit_drive");
    if (drive == nullptr || drive->isDeclaration()) {
      return FailedPrecondition("JIT: the embedded bitcode has no element loop");
    }
    drive->setLinkage(llvm::GlobalValue::InternalLinkage);
    drive->addFnAttr(llvm::Attribute::AlwaysInline);
    std::vector<int32_t> var_slots(k.var_slots.begin(), k.var_slots.end());
    if (var_slots.empty()) var_slots.push_back(0);
    auto* vars = new llvm::GlobalVariable(
        *m, llvm::ArrayType::get(i32, var_slots.size()), /*isConstant=*/true,
        llvm::GlobalValue::PrivateLinkage,
        llvm::ConstantDataArray::get(ctx, llvm::ArrayRef<int32_t>(var_slots)), "rigel_vars");
    auto* fn =
        llvm::Function::Create(llvm::FunctionType::get(i32, {ptr, ptr, ptr, i64, i64}, false),
                               llvm::GlobalValue::ExternalLinkage, name, m.get());
    llvm::Argument* arg = fn->getArg(0);
    b.SetInsertPoint(llvm::BasicBlock::Create(ctx, "entry", fn));
    const llvm::Align word(8);
    auto copy = [&](int64_t bytes, llvm::Value* from) {
      llvm::AllocaInst* a = b.CreateAlloca(llvm::ArrayType::get(i8, std::max<int64_t>(8, bytes)));
      a->setAlignment(llvm::Align(16));
      if (bytes > 0) b.CreateMemCpy(a, word, from, word, bytes);
      return a;
    };
    auto field = [&](llvm::Value* machine, size_t offset) {
      return b.CreateConstInBoundsGEP1_64(i8, machine, offset);
    };
    llvm::AllocaInst* local = copy(sizeof(ops::Machine), arg);
    llvm::Value* slots = copy(static_cast<int64_t>(k.num_slots) * sizeof(Slot),
                              b.CreateLoad(ptr, field(arg, offsetof(ops::Machine, S))));
    llvm::Value* vecs = copy(static_cast<int64_t>(k.num_vecs) * sizeof(float*),
                             b.CreateLoad(ptr, field(arg, offsetof(ops::Machine, V))));
    b.CreateStore(slots, field(local, offsetof(ops::Machine, S)));
    b.CreateStore(vecs, field(local, offsetof(ops::Machine, V)));
    b.CreateStore(at(0), field(local, offsetof(ops::Machine, code)));
    b.CreateStore(terms, field(local, offsetof(ops::Machine, terms)));
    llvm::Value* end = b.CreateCall(
        drive, {local, fn->getArg(1), llvm::ConstantInt::get(i32, static_cast<int>(k.kind)), vars,
                fn->getArg(2), fn->getArg(3), fn->getArg(4), body});
    auto* ok = llvm::BasicBlock::Create(ctx, "ok", fn);
    auto* stopped = llvm::BasicBlock::Create(ctx, "stopped", fn);
    b.CreateCondBr(b.CreateICmpEQ(end, llvm::ConstantInt::get(i32, 0)), ok, stopped);
    b.SetInsertPoint(ok);
    b.CreateRet(end);
    // The element and the fault go back to the caller (Kernel::RunSome).
    b.SetInsertPoint(stopped);
    b.CreateStore(b.CreateLoad(i64, field(local, offsetof(ops::Machine, e))),
                  field(arg, offsetof(ops::Machine, e)));
    b.CreateMemCpy(field(arg, offsetof(ops::Machine, fault)), word,
                   field(local, offsetof(ops::Machine, fault)), word, sizeof(ops::Fault));
    b.CreateRet(end);

    // The opcodes the body does not use go, unread: most of the bitcode.
    // Then the rest is read, and what nothing calls goes too.
    for (llvm::Function* h : handler) {
      if (h == nullptr) continue;
      h->removeDeadConstantUsers();  // the erased table's initializer
      if (h->use_empty()) h->eraseFromParent();
    }
    handler.clear();
    if (llvm::Error e = m->materializeAll()) {
      return Internal("JIT: reading the bitcode: " + ToString(std::move(e)));
    }
    EraseUnused(*m, fn);
    // Every function is compiled for this CPU (the bitcode was built for
    // any x86-64), and the handlers exist only to be inlined.
    for (llvm::Function& f : *m) {
      if (f.isDeclaration()) continue;
      f.addFnAttr("target-cpu", cpu_);
      f.addFnAttr("target-features", features_);
      f.removeFnAttr("tune-cpu");
      if (&f != fn) f.setLinkage(llvm::GlobalValue::InternalLinkage);
    }
    for (llvm::Function& f : *m) {
      if (&f == fn || f.isDeclaration() || !f.getName().starts_with("_ZN5rigel6kernel3jit")) {
        continue;
      }
      f.removeFnAttr(llvm::Attribute::NoInline);
      f.addFnAttr(llvm::Attribute::AlwaysInline);
    }
    std::string problems;
    llvm::raw_string_ostream os(problems);
    if (llvm::verifyModule(*m, &os))
      return Internal("JIT: the lowered module is not valid: " + problems);
    return m;
  }

  void Optimise(llvm::Module& m) const {
    llvm::LoopAnalysisManager lam;
    llvm::FunctionAnalysisManager fam;
    llvm::CGSCCAnalysisManager cgam;
    llvm::ModuleAnalysisManager mam;
    llvm::PassBuilder pb(tm_.get());
    pb.registerModuleAnalyses(mam);
    pb.registerCGSCCAnalyses(cgam);
    pb.registerFunctionAnalyses(fam);
    pb.registerLoopAnalyses(lam);
    pb.crossRegisterProxies(lam, fam, cgam, mam);
    // The handlers are inlined first, while they are still generic: the
    // default pipeline would simplify each one on its own (every row kernel
    // of every count) before inlining it where its operands are constants.
    llvm::ModulePassManager mpm;
    mpm.addPass(llvm::AlwaysInlinerPass());
    mpm.addPass(llvm::GlobalDCEPass());
    // O2: O1, and a short pipeline of the passes that matter here (SROA,
    // instcombine, full unrolling, GVN), halved the optimiser's time on the
    // examples' largest bodies but not the code generator's, which then had
    // more to do: 52-63 ms in all against 56-78 ms, and bodies that ran up
    // to 1.3x slower.
    mpm.addPass(pb.buildPerModuleDefaultPipeline(llvm::OptimizationLevel::O2));
    mpm.run(m, mam);
  }

  std::mutex mu_;
  std::unique_ptr<llvm::orc::LLJIT> jit_;
  std::unique_ptr<llvm::TargetMachine> tm_;
  std::string cpu_, features_;
  std::unordered_map<uint64_t, CacheEntry> cache_;
  int64_t next_id_ = 0;
};

}  // namespace

Status Available() { return Engine::Get().status(); }

StatusOr<Compiled> Compile(const Kernel::Impl& k, bool want_ir) {
  if (k.key_slice) return Unimplemented("key slices run interpreted");
  RIGEL_ASSIGN_OR_RETURN(Engine * e, Engine::Get());
  return e->Compile(k, want_ir);
}

}  // namespace rigel::kernel::jit
