#!/usr/bin/env bash
# Installs every Debian package Rigel builds, tests or fuzzes with.
# Idempotent: when everything is already installed it only checks (no apt-get
# update, no network) and prints one line. Needs root or sudo to install.
set -euo pipefail

PACKAGES=(
  # toolchain
  build-essential cmake ninja-build pkg-config
  clang libclang-rt-14-dev # libFuzzer + ASan/UBSan runtimes for clang 14
  # tests and benchmarks
  libgtest-dev libgmock-dev libbenchmark-dev gnuplot-nox # gnuplot: scripts/plot-schedules.sh
  python3-numpy # the test that loads --save-params output (tests/exec/param_file_test.cc)
  # common / frontend / cli
  libcli11-dev nlohmann-json3-dev libfmt-dev libspdlog-dev libxxhash-dev
  # transport, server, collectives
  libzmq3-dev cppzmq-dev capnproto libcapnp-dev libtbb-dev libsodium-dev
  # the ucx transport: shared memory, RDMA verbs (InfiniBand, RoCE), TCP
  libucx-dev libibverbs-dev librdmacm-dev libgloo-dev
  # the JIT tier for loop bodies (kernel/jit/): ORC LLJIT from LLVM 19, and
  # clang 19 to compile the interpreter's opcodes to the bitcode it inlines
  llvm-19-dev clang-19
  # bench/allreduce's reference: mpirun and MPI_Allreduce (CMake builds
  # bench/allreduce_mpi only when it finds MPI)
  openmpi-bin libopenmpi-dev
  # bench/models' peers: fastText (skip-gram) and LIBLINEAR
  fasttext liblinear-tools
  # launching over ssh (scripts/rigel-ssh) and its test, which runs sshd in
  # network namespaces
  openssh-client openssh-server
  # srun and its test, which starts a single-node Slurm of its own
  slurm-wlm munge
)

missing=()
for pkg in "${PACKAGES[@]}"; do
  status=$(dpkg-query -W -f='${Status}' "$pkg" 2>/dev/null || true)
  if [[ "$status" != "install ok installed" ]]; then
    missing+=("$pkg")
  fi
done

if [[ ${#missing[@]} -eq 0 ]]; then
  echo "setup.sh: all ${#PACKAGES[@]} packages already present"
  exit 0
fi

SUDO=()
if [[ $(id -u) -ne 0 ]]; then
  if command -v sudo >/dev/null 2>&1; then
    SUDO=(sudo)
  else
    echo "setup.sh: missing packages (${missing[*]}) and not root, no sudo" >&2
    exit 1
  fi
fi

printf "setup.sh: installing %s package(s): %s ... " "${#missing[@]}" "${missing[*]}"
log=$(mktemp)
trap 'rm -f "$log"' EXIT
if ! { "${SUDO[@]}" apt-get update -qq &&
       "${SUDO[@]}" env DEBIAN_FRONTEND=noninteractive \
         apt-get install -y -qq --no-install-recommends "${missing[@]}"; } >"$log" 2>&1; then
  echo "failed" >&2
  cat "$log" >&2
  echo "setup.sh: apt-get failed" >&2
  exit 1
fi
echo "done"
