/* Checking messages from nodes: the fabric's only untrusted input (fuzzed). */
#ifndef PROTO_H
#define PROTO_H

#include <stddef.h>
#include <stdint.h>

/*
 * Every time a node sends (HELLO's time and reaction, SYNC's time and promise,
 * FRAME's ready time, BYE's time) must be below this, about 292 years of
 * virtual time; a promise may also be RL_TIME_NEVER ("none"). The fabric adds
 * latencies to these times: the other 2^63 ns are the margin that keeps every
 * such sum from wrapping.
 */
#define TIME_LIMIT (UINT64_C(1) << 63)

/*
 * 0 if buf[0..n) is a well-formed node->fabric message from node id (id < 0:
 * not yet known, before HELLO); else -1 with the reason in why.
 */
int proto_check(const uint8_t *buf, size_t n, int64_t id, char *why, size_t whylen);

#endif
