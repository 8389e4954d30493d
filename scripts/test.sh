#!/usr/bin/env bash
# Builds Rigel and runs its test suite; exits non-zero on any failure.
#
#   scripts/test.sh              Release build in build/, ctest
#   scripts/test.sh --sanitize   clang + ASan/UBSan + libFuzzer build in
#                                build-sanitize/, ctest (less the full-size
#                                model-accuracy runs), loop bodies
#                                interpreted (RIGEL_JIT=off) but in the jit/
#                                registrations, then parser_fuzz,
#                                loader_fuzz, transport_fuzz and jit_fuzz for
#                                --fuzz-seconds (default 60) each, seeded from
#                                examples/*.rgl and tests/fuzz/seeds/
#
# Environment: RIGEL_SKIP_SETUP=1 skips scripts/setup.sh; RIGEL_TEST_TIMEOUT sets
# ctest's per-test timeout in seconds (default 300, 900 with --sanitize);
# RIGEL_JOBS sets build and test parallelism (default 2).
set -euo pipefail

usage() {
  sed -n '2,13p' "$0" | sed 's/^# \{0,1\}//'
}

sanitize=0
fuzz_seconds=60
while [[ $# -gt 0 ]]; do
  case "$1" in
    --sanitize) sanitize=1 ;;
    --fuzz-seconds)
      [[ $# -ge 2 && "$2" =~ ^[0-9]+$ ]] || { echo "test.sh: --fuzz-seconds needs a number" >&2; exit 2; }
      fuzz_seconds=$2; shift ;;
    --fuzz-seconds=*)
      fuzz_seconds=${1#*=}
      [[ "$fuzz_seconds" =~ ^[0-9]+$ ]] || { echo "test.sh: --fuzz-seconds needs a number" >&2; exit 2; } ;;
    -h|--help) usage; exit 0 ;;
    *) echo "test.sh: unknown argument '$1'" >&2; usage >&2; exit 2 ;;
  esac
  shift
done

cd "$(dirname "${BASH_SOURCE[0]}")/.."
root=$(pwd)
jobs=${RIGEL_JOBS:-2}

if [[ $sanitize -eq 1 ]]; then
  mode=sanitize
  build_dir=build-sanitize
  total=5
  timeout=${RIGEL_TEST_TIMEOUT:-900}
  export CC=clang CXX=clang++
  # Line tables only: stack traces keep file and line, and the build takes
  # far less time than with full debug information.
  cmake_args=(-DCMAKE_BUILD_TYPE=RelWithDebInfo -DRIGEL_SANITIZE=ON -DRIGEL_FUZZ=ON
              -DRIGEL_BUILD_BENCH=OFF
              "-DCMAKE_C_FLAGS_RELWITHDEBINFO=-O2 -gline-tables-only -DNDEBUG"
              "-DCMAKE_CXX_FLAGS_RELWITHDEBINFO=-O2 -gline-tables-only -DNDEBUG")
  # Model-accuracy runs on full-size data (real a9a, LDA's 200k tokens, many
  # epochs) take 40-180 s each under the sanitizers and run the code paths
  # that smaller tests run here too (ModelsV2.LdaSoftmaxAndFmRunOnAFewRows...
  # runs those three programs small); they run in the release suite. The
  # kill and recovery tests run in both. The job under 8 CPU hogs is a test
  # of timing, not of memory: the release suite runs it. The comparisons of
  # the JIT with the interpreter over every example (4.5 to 5 min each here)
  # run in the release suite; Jit.EveryInstructionShape... and the faults
  # compare the tiers here.
  ctest_exclude='^(jit/)?(ModelsV2\.(LdaKeepsItsCounts|SoftmaxReaches|FactorizationMachineBeats)|Distributed\.(FmAndSvmOnA9a|FmAndSvmOnGenerated|SparseLrOnA9a|Word2vec)|DisablePasses\.EveryExampleProgram|Jit\.EveryExample.*|Examples\.Word2vecLoss|Quality/QualityTest\..*|Operations\.ACheckpointedJobUnderEightCpuHogs.*)'
  # Halt on the first report; later entries win, so the caller's settings
  # (if any) override these.
  export ASAN_OPTIONS="halt_on_error=1:detect_leaks=1:check_initialization_order=1:detect_stack_use_after_return=1${ASAN_OPTIONS:+:$ASAN_OPTIONS}"
  export UBSAN_OPTIONS="halt_on_error=1:print_stacktrace=1${UBSAN_OPTIONS:+:$UBSAN_OPTIONS}"
  # Loop bodies run in the interpreter here, whose opcode handlers are
  # compiled with the sanitizers' checks; the JIT's code is not (its bitcode
  # is built without them, and LLVM adds none), so a body run compiled would
  # read and write rows unchecked. The tier's own code (the compile thread,
  # the switch, the host calls from compiled code) runs under the sanitizers
  # in the jit/ registrations of kernel_test, exec_test and worker_test
  # (RIGEL_JIT=on), in Jit.* and in jit_fuzz, which run both tiers.
  export RIGEL_JIT=off
else
  mode=release
  build_dir=build
  total=4
  timeout=${RIGEL_TEST_TIMEOUT:-300}
  cmake_args=(-DCMAKE_BUILD_TYPE=Release)
  ctest_exclude='^$'
fi

step=0
stage_start=$SECONDS
stage() {
  step=$((step + 1))
  stage_start=$SECONDS
  echo
  echo "==> [$step/$total] $* ($mode)"
}
stage_done() {
  echo "==> [$step/$total] done in $((SECONDS - stage_start)) s"
}
fail() {
  echo
  echo "==> FAILED at stage $step/$total: $*" >&2
  exit 1
}

stage "setup: system packages"
if [[ "${RIGEL_SKIP_SETUP:-0}" == 1 ]]; then
  echo "skipped (RIGEL_SKIP_SETUP=1)"
else
  scripts/setup.sh || fail "scripts/setup.sh"
fi
stage_done

stage "configure: cmake -S . -B $build_dir -G Ninja ${cmake_args[*]}"
cmake -S . -B "$build_dir" -G Ninja "${cmake_args[@]}" || fail "cmake configure"
stage_done

stage "build: ninja -C $build_dir -j$jobs"
cmake --build "$build_dir" -- -j"$jobs" || fail "build"
stage_done

stage "test: ctest --test-dir $build_dir -j$jobs --timeout $timeout"
ctest --test-dir "$build_dir" --output-on-failure --no-tests=error \
      -j"$jobs" --timeout "$timeout" -E "$ctest_exclude" || fail "ctest"
stage_done

if [[ $sanitize -eq 1 ]]; then
  stage "fuzz: parser_fuzz, loader_fuzz, transport_fuzz and jit_fuzz for ${fuzz_seconds} s each"
  work=$(mktemp -d "${TMPDIR:-/tmp}/rigel-fuzz.XXXXXX")
  trap 'rm -rf "$work"' EXIT
  artifacts="$root/$build_dir/fuzz-artifacts"
  rm -rf "$artifacts"
  # fuzz TARGET DICT SEED...: runs TARGET on a fresh corpus seeded from the
  # SEED files, with the libFuzzer dictionary DICT ('' for none).
  fuzz() {
    local target=$1 dict=$2
    shift 2
    local fuzzer="$build_dir/bin/$target"
    [[ -x "$fuzzer" ]] || fail "$fuzzer was not built (is RIGEL_FUZZ on and the compiler clang?)"
    local corpus="$work/$target"
    mkdir -p "$corpus" "$artifacts/$target"
    [[ $# -gt 0 ]] && cp -- "$@" "$corpus"/
    local flags=(-max_total_time="$fuzz_seconds" -timeout=10 -rss_limit_mb=2048
                 -print_final_stats=1 -artifact_prefix="$artifacts/$target/")
    [[ -z "$dict" ]] || flags+=(-dict="$dict")
    echo "$target: $# seed(s)${dict:+, dictionary $dict}"
    local log="$root/$build_dir/$target.log"
    set +e
    # UCX (linked into the transport) catches fatal signals itself unless
    # told not to, and libFuzzer then never writes the crashing input.
    UCX_HANDLE_ERRORS=none "$fuzzer" "$corpus" "${flags[@]}" >"$log" 2>&1
    local rc=$?
    set -e
    local found=() f
    for f in "$artifacts/$target"/*; do
      [[ -e "$f" ]] && found+=("$f")
    done
    if [[ $rc -ne 0 || ${#found[@]} -gt 0 ]]; then
      tail -n 80 "$log" >&2
      echo "fuzzer exit status $rc; full log: $log" >&2
      for f in "${found[@]}"; do
        echo "reproduce: $fuzzer $f" >&2
      done
      fail "$target found a crash, hang, leak or sanitizer report"
    fi
    grep -E '^(Done|stat::number_of_executed_units|stat::peak_rss_mb)' "$log" || true
    echo "$target: corpus grew to $(find "$corpus" -type f | wc -l) input(s); log: $log"
  }
  shopt -s nullglob
  fuzz parser_fuzz tests/fuzz/rgl.dict examples/*.rgl tests/fuzz/seeds/parser/*
  fuzz loader_fuzz '' tests/fuzz/seeds/loader/*
  fuzz transport_fuzz '' tests/fuzz/seeds/transport/*
  fuzz jit_fuzz ''
  shopt -u nullglob
  stage_done
fi

echo
echo "==> all $total stages passed ($mode, $((SECONDS)) s)"
