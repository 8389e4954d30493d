# Per-folder helpers in the spirit of abseil's absl_cc_library: every layer
# folder declares one library target `rigel_<name>` with the alias `rigel::<name>`.
# Headers are included as "<folder>/<file>.h" relative to the repository root.

function(rigel_cc_library)
  cmake_parse_arguments(RL "" "NAME" "SRCS;DEPS" ${ARGN})
  add_library(rigel_${RL_NAME} STATIC ${RL_SRCS})
  add_library(rigel::${RL_NAME} ALIAS rigel_${RL_NAME})
  target_include_directories(rigel_${RL_NAME} PUBLIC ${PROJECT_SOURCE_DIR}
                             ${PROJECT_BINARY_DIR}/generated)
  target_link_libraries(rigel_${RL_NAME} PUBLIC ${RL_DEPS})
endfunction()

# A layer's wire schemas: "<folder>/wire/x.capnp" -> generated/<folder>/wire/
# x.capnp.{h,c++}, included as "<folder>/wire/x.capnp.h"; the .c++ files are
# returned in OUT for the layer's library. Schemas import the transport's
# envelope as "/transport/wire/envelope.capnp".
function(rigel_capnp OUT)
  set(CAPNPC_SRC_PREFIX ${PROJECT_SOURCE_DIR})
  set(CAPNPC_OUTPUT_DIR ${PROJECT_BINARY_DIR}/generated)
  set(CAPNPC_IMPORT_DIRS ${PROJECT_SOURCE_DIR})
  file(RELATIVE_PATH folder ${PROJECT_SOURCE_DIR} ${CMAKE_CURRENT_SOURCE_DIR})
  file(MAKE_DIRECTORY ${PROJECT_BINARY_DIR}/generated/${folder}/wire)
  capnp_generate_cpp(srcs hdrs ${ARGN})
  set(${OUT} ${srcs} PARENT_SCOPE)
endfunction()

# One GoogleTest binary per layer, registered with CTest test by test. With
# JIT_TOO (and a build with LLVM) every test is registered a second time,
# named jit/SUITE.TEST, run with $RIGEL_JIT=on: every loop body it compiles
# runs as native code (kernel/jit/). A sanitizer build registers them too: its
# suite runs with $RIGEL_JIT=off otherwise (scripts/test.sh says why).
function(rigel_cc_test)
  cmake_parse_arguments(RT "JIT_TOO" "NAME" "SRCS;DEPS;LABELS" ${ARGN})
  add_executable(${RT_NAME} ${RT_SRCS})
  target_link_libraries(${RT_NAME} PRIVATE ${RT_DEPS} GTest::gtest GTest::gtest_main)
  # A test's own code is set-up and assertions; the code under test is in
  # the libraries, built as the build type says (-O3 in Release). -O1 here
  # (after the directory's -O3, so it wins) compiles a test file in about
  # two thirds of the time (tests/cluster/setup_test.cc: 9.5 s against 6.0 s
  # on the 2-core VM), which every build and every CI run pays, 79 files.
  target_compile_options(${RT_NAME} PRIVATE -O1)
  target_compile_definitions(${RT_NAME} PRIVATE
    RIGEL_SOURCE_DIR="${PROJECT_SOURCE_DIR}" RIGEL_BIN_DIR="${CMAKE_RUNTIME_OUTPUT_DIRECTORY}")
  gtest_discover_tests(${RT_NAME} DISCOVERY_TIMEOUT 60 PROPERTIES LABELS "${RT_LABELS}")
  if(RT_JIT_TOO AND RIGEL_HAVE_LLVM)
    gtest_discover_tests(${RT_NAME} DISCOVERY_TIMEOUT 60 TEST_PREFIX "jit/"
                         PROPERTIES LABELS "${RT_LABELS};jit" ENVIRONMENT "RIGEL_JIT=on")
  endif()
endfunction()

function(rigel_print_summary)
  message(STATUS "")
  message(STATUS "Rigel configuration summary")
  message(STATUS "  build type      : ${CMAKE_BUILD_TYPE}")
  message(STATUS "  compiler        : ${CMAKE_CXX_COMPILER_ID} ${CMAKE_CXX_COMPILER_VERSION}")
  message(STATUS "  native arch     : ${RIGEL_NATIVE_ARCH}")
  message(STATUS "  sanitizers      : ${RIGEL_SANITIZE}")
  message(STATUS "  libFuzzer       : ${RIGEL_FUZZ}")
  message(STATUS "  CUDA/NCCL       : ${RIGEL_HAVE_CUDA} (requested ${RIGEL_WITH_CUDA}) ${RIGEL_CUDA_NOTE}")
  message(STATUS "  UCX (shm, RDMA): ${RIGEL_HAVE_UCX} (requested ${RIGEL_WITH_UCX}) ${RIGEL_UCX_NOTE}")
  message(STATUS "  MPI             : ${RIGEL_HAVE_MPI} (requested ${RIGEL_WITH_MPI}) ${RIGEL_MPI_NOTE}")
  message(STATUS "  LLVM JIT        : ${RIGEL_HAVE_LLVM} (requested ${RIGEL_WITH_LLVM}) ${RIGEL_LLVM_NOTE}")
  message(STATUS "")
endfunction()
