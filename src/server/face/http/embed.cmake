# Writes OUT, a C file defining `const unsigned char NAME[]` with the bytes
# of IN and a NUL after them, and `const size_t NAME_len` (without the
# NUL): how the dashboard's HTML and the task API's OpenAPI description
# get into the binary.
#   cmake -DIN=page.html -DOUT=page.c -DNAME=sym -P embed.cmake
file(READ "${IN}" hex HEX)
string(REGEX REPLACE "([0-9a-f][0-9a-f])" "0x\\1," hex "${hex}")
string(REGEX REPLACE "(0x..,0x..,0x..,0x..,0x..,0x..,0x..,0x..,0x..,0x..,0x..,0x..,)"
	"\\1\n" hex "${hex}")
get_filename_component(src "${IN}" NAME)
file(WRITE "${OUT}" "/* Generated from ${src} by embed.cmake. */\n"
	"#include <stddef.h>\n"
	"extern const unsigned char ${NAME}[];\n"
	"extern const size_t ${NAME}_len;\n"
	"const unsigned char ${NAME}[] = {\n${hex}0 };\n"
	"const size_t ${NAME}_len = sizeof(${NAME}) - 1;\n")
