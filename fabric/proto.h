/* Checking messages from nodes: the fabric's only untrusted input (fuzzed). */
#ifndef PROTO_H
#define PROTO_H

#include <stddef.h>
#include <stdint.h>

/*
 * 0 if buf[0..n) is a well-formed node->fabric message from node id (id < 0:
 * not yet known, before HELLO); else -1 with the reason in why.
 */
int proto_check(const uint8_t *buf, size_t n, int64_t id, char *why, size_t whylen);

#endif
