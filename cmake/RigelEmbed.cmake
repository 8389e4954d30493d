# cmake -DIN=file -DOUT=file.cc -DNAME=symbol -P RigelEmbed.cmake: writes a C++
# file defining `extern "C" const unsigned char NAME[]` and `NAME_size` with
# the bytes of IN (the JIT's bitcode, kernel/CMakeLists.txt).
file(READ "${IN}" hex HEX)
string(LENGTH "${hex}" len)
math(EXPR size "${len} / 2")
string(REGEX REPLACE "([0-9a-f][0-9a-f])" "0x\\1," bytes "${hex}")
string(REGEX REPLACE "((0x[0-9a-f][0-9a-f],){32})" "\\1\n" bytes "${bytes}")
file(WRITE "${OUT}.tmp"
  "// Generated from ${IN} by cmake/RigelEmbed.cmake. Do not edit.\n"
  "#include <cstddef>\n"
  "extern \"C\" const unsigned char ${NAME}[] = {\n${bytes}\n};\n"
  "extern \"C\" const size_t ${NAME}_size = ${size};\n")
file(COPY_FILE "${OUT}.tmp" "${OUT}" ONLY_IF_DIFFERENT)
file(REMOVE "${OUT}.tmp")
