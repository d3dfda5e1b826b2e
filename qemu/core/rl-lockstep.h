/*
 * retrolink link port: the node's side of the lock-step file
 * (include/retrolink/lockstep.h, docs/fabric.md "Grants without a round trip").
 *
 * At each sync point the node publishes its time and promise in its slot, then
 * computes its next grant itself from everybody's slots and the fabric's block,
 * with the fabric's own function; the socket's SYNC and GRANT are the fallback.
 */
#ifndef RL_LOCKSTEP_NODE_H
#define RL_LOCKSTEP_NODE_H

#include "retrolink/lockstep.h"

typedef struct RlLockstep RlLockstep;

/*
 * Map the file the fabric at socket_path made and mark node's slot as used.
 * NULL if there is none (a fabric of tests that only speaks the socket).
 */
RlLockstep *rl_lockstep_open(const char *socket_path, uint32_t node);
void rl_lockstep_close(RlLockstep *ls);

/* A sync point: time, promise, FRAMEs written so far, the grant now held. */
void rl_lockstep_publish(RlLockstep *ls, uint64_t now, uint64_t promise,
                         uint64_t frames_sent, uint64_t grant);
/* The grant this node runs to now (after computing or receiving one). */
void rl_lockstep_set_grant(RlLockstep *ls, uint64_t grant);
/* This node blocks on the socket for a GRANT (the others poke the fabric). */
void rl_lockstep_set_waiting(RlLockstep *ls, bool waiting);
/* Another node waits on the socket: tell the fabric we moved (PROGRESS). */
bool rl_lockstep_peer_waits(RlLockstep *ls);

/*
 * The grant the rule gives this node now, from one consistent reading, into
 * *grant: RL_LS_OK; RL_LS_UNREAD when the fabric has sent messages this node has
 * not read yet (msgs_read is below its count: read them and ask again);
 * RL_LS_NOT_YET when the reading is not usable (being written, or the fabric has
 * not consumed every FRAME a node wrote before its publication).
 */
enum { RL_LS_OK, RL_LS_UNREAD, RL_LS_NOT_YET };
int rl_lockstep_grant(RlLockstep *ls, uint64_t msgs_read, uint64_t granularity,
                      uint64_t *grant);

/* More QEMUs than cores: waiting must yield the core, never spin. Known from the
 * first call on, which must come after WELCOME (the static part is written then). */
bool rl_lockstep_crowded(RlLockstep *ls);

#endif /* RL_LOCKSTEP_NODE_H */
