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
/* Count a grant taken inside the vCPU loop (a statistic for bench fabric) */
void rl_lockstep_count_exec_grant(RlLockstep *ls);
/* This node blocks on the socket for a GRANT (the others poke the fabric). */
void rl_lockstep_set_waiting(RlLockstep *ls, bool waiting);
/*
 * Another node waits on the socket: tell the fabric we moved (PROGRESS). Right after
 * a publication this may miss a flag set meanwhile (the publication's stores may
 * still be on their way to the other cores); rl_lockstep_peer_waits_fenced, after
 * a full fence, does not: a node calls it before it waits itself.
 */
bool rl_lockstep_peer_waits(RlLockstep *ls);
bool rl_lockstep_peer_waits_fenced(RlLockstep *ls);

/*
 * Once the cluster started (after WELCOME, which said nodes: the fabric has written
 * the static part by then): copy the static part, check the copy
 * (rl_ls_static_check, and nnodes == nodes) and use only it from then on. False if
 * it failed: warned once, and every grant comes through the socket (RL_LS_OFF); the
 * slot is still published.
 */
bool rl_lockstep_start(RlLockstep *ls, uint32_t nodes);

/*
 * The grant the rule gives this node now, from one consistent reading, into
 * *grant (rl_ls_compute_grant): RL_LS_OK; RL_LS_UNREAD when the fabric has sent
 * messages this node has not read yet (msgs_read is below its count: read them and
 * ask again); RL_LS_NOT_YET when the reading is not usable (being written, or the
 * fabric has not consumed every FRAME a node wrote before its publication);
 * RL_LS_OFF before rl_lockstep_start, or when the file failed its check: ask the
 * fabric on the socket.
 */
int rl_lockstep_grant(RlLockstep *ls, uint64_t msgs_read, uint64_t granularity,
                      uint64_t *grant);

/*
 * The live clock (include/retrolink/lockstep.h, struct rl_ls_live): once the cluster
 * started, before the vCPU runs, say how to read it; returns where QEMU's translated
 * code is to store the decrementer, or NULL if this node has no live clock (the file
 * is not in use, no precise icount: ns_mult 0, or a port that may send of its own
 * accord: lead RL_TIME_NEVER). Then at every budget QEMU sets, publish it; at every
 * FRAME written, the count; and whenever the boards' committed sends change, the
 * pending floor (RL_TIME_NEVER until then).
 */
uint16_t *rl_lockstep_live_start(RlLockstep *ls, uint64_t ns_mult, uint64_t lead);
void rl_lockstep_live_budget(RlLockstep *ls, uint64_t now, uint64_t insns, uint64_t extra,
                             uint16_t decr);
void rl_lockstep_live_frames(RlLockstep *ls, uint64_t frames_sent);
void rl_lockstep_live_pending(RlLockstep *ls, uint64_t floor);

/* More QEMUs than cores (or the socket only): waiting must yield the core, never
 * spin. Known from rl_lockstep_start on. */
bool rl_lockstep_crowded(RlLockstep *ls);

#endif /* RL_LOCKSTEP_NODE_H */
