/*
 * retrolink device timing: a deterministic event queue on QEMU_CLOCK_VIRTUAL and
 * the resources board models are built from (a processor that runs one job at a
 * time, a pool of DMA channels, byte times on a bus).
 *
 * Events are ordered by (time, class, key), never by the order they were added:
 * frames from the fabric are added at sync points whose virtual time depends on
 * host scheduling, so insertion order must not decide anything.
 */
#ifndef RL_SCHED_H
#define RL_SCHED_H

#include "qemu/timer.h"

enum {
    RL_EV_CLASS_INTERNAL = 0,   /* key: the queue's own counter */
    RL_EV_CLASS_LINK = 1,       /* key: peer node id */
    RL_EV_CLASS_FRAME = 2,      /* key: the fabric's delivery sequence number */
};

typedef struct RlEvent {
    uint64_t time;
    uint32_t cls;
    uint64_t key;
    int kind;                   /* the device's own event kind */
    uint32_t arg;
    uint32_t gen;
    void *ptr;
} RlEvent;

typedef void RlEventFn(void *opaque, RlEvent *ev);

typedef struct RlSched {
    QEMUTimer *timer;
    GArray *heap;               /* of RlEvent, a binary min-heap */
    uint64_t counter;
    RlEventFn *fn;
    void *opaque;
} RlSched;

void rl_sched_init(RlSched *s, RlEventFn *fn, void *opaque);
void rl_sched_destroy(RlSched *s);
/* Add an event; cls RL_EV_CLASS_INTERNAL ignores key and numbers it itself. */
void rl_sched_add(RlSched *s, uint64_t time, uint32_t cls, uint64_t key, int kind,
                  uint32_t arg, uint32_t gen, void *ptr);
size_t rl_sched_count(const RlSched *s);
RlEvent *rl_sched_nth(RlSched *s, size_t i);   /* unordered walk, for promises */
/* Remove every event for which keep() returns false (it may free ev->ptr). */
void rl_sched_filter(RlSched *s, bool (*keep)(void *opaque, RlEvent *ev), void *opaque);

/* A processor that runs jobs one at a time in the order they become ready. */
typedef struct RlServer {
    uint64_t free_at;
} RlServer;

/* Queue a job ready at 'ready' that takes 'dur'; returns when it finishes. */
uint64_t rl_server_run(RlServer *s, uint64_t ready, uint64_t dur);

#define RL_MAX_CHANNELS 16

/* Identical channels (DMA engines): a transfer takes the one free first. */
typedef struct RlChannels {
    uint32_t n;
    uint64_t free_at[RL_MAX_CHANNELS];
} RlChannels;

uint64_t rl_channels_run(RlChannels *c, uint64_t ready, uint64_t dur);

/* Time to move 'bytes' at 'rate' bytes per second, rounded up to a whole ns. */
uint64_t rl_bytes_ns(uint64_t bytes, uint64_t rate);

#endif /* RL_SCHED_H */
