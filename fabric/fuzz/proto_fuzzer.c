/*
 * libFuzzer target for the fabric's message checks (meson -Dfuzz=true, clang):
 * any byte string must be accepted or refused with a reason, never crash.
 */
#include <stddef.h>
#include <stdint.h>

#include "proto.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    char why[256];

    proto_check(data, size, -1, why, sizeof(why));
    proto_check(data, size, 0, why, sizeof(why));
    return 0;
}
