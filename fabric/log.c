/* The fabric's lines on stderr, each prefixed "fabric: " (docs/fabric.md, "Outputs"). */
#include <stdarg.h>

#include "fabric.h"

void fabric_log(const char *fmt, ...)
{
    va_list ap;
    fputs("fabric: ", stderr);
    va_start(ap, fmt);
    vfprintf(stderr, fmt, ap);
    va_end(ap);
    fputc('\n', stderr);
}
