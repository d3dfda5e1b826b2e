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
#include "migration/vmstate.h"

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
/* Is ev, loaded from a migration stream, one the device can handle? (see below) */
typedef bool RlEventCheckFn(void *opaque, const RlEvent *ev, Error **errp);

typedef struct RlSched {
    QEMUTimer *timer;
    GArray *heap;               /* of RlEvent, a binary min-heap */
    uint64_t counter;
    RlEventFn *fn;
    void *opaque;
    void (*changed)(void *opaque);      /* the queue changed (rl_sched_set_changed) */
    void *changed_opaque;

    /* migration (vmstate_rl_sched) */
    char *name;                 /* the owner, for error messages */
    RlEventCheckFn *check;
    RlEvent *vm_events;         /* the events in the stream, while saving or loading */
    int32_t vm_count;
} RlSched;

void rl_sched_init(RlSched *s, RlEventFn *fn, void *opaque);
void rl_sched_destroy(RlSched *s);
/* Add an event; cls RL_EV_CLASS_INTERNAL ignores key and numbers it itself. */
void rl_sched_add(RlSched *s, uint64_t time, uint32_t cls, uint64_t key, int kind,
                  uint32_t arg, uint32_t gen, void *ptr);
size_t rl_sched_count(const RlSched *s);
/*
 * Call changed(opaque) each time events were added or removed (after an add, a run of
 * the events due, a filter, a load), before the caller goes on: a board whose port
 * publishes the sends it has pending (rl-board.c).
 */
void rl_sched_set_changed(RlSched *s, void (*changed)(void *opaque), void *opaque);
/*
 * Run the events due before 'end' now, ahead of the clock (a device whose vCPU is held
 * while the fabric grants it time: rl_port_wait). Each handler gets its event's time
 * in ev->time; it must take that, not the clock, as its now.
 */
void rl_sched_run_before(RlSched *s, uint64_t end);
RlEvent *rl_sched_nth(RlSched *s, size_t i);   /* unordered walk, for promises */
/* Remove every event for which keep() returns false (it may free ev->ptr). */
void rl_sched_filter(RlSched *s, bool (*keep)(void *opaque, RlEvent *ev), void *opaque);

/*
 * Migration. VMSTATE_RL_SCHED saves the counter and every event, without ptr: an event
 * whose ptr is set (a frame or a job the device owns) cannot be saved, and the owner's
 * pre_save must refuse first, saying what is in flight (the queue's own pre_save
 * refuses too, as a backstop). The timer is not saved: it is always due at the first
 * event (or off), and post_load re-arms it from the queue.
 *
 * On load, the owner's pre_load empties the queue (it owns the ptrs); post_load checks
 * each event (at most RL_SCHED_MAX_SAVED, a class of the enum, an internal event's key
 * below the counter, and the owner's check: a kind it handles without ptr, its arg an
 * index in range), then replaces the queue with them and re-arms the timer. The check
 * sees only limits, not the owner's other loaded fields: its post_load comes later.
 */
#define RL_SCHED_MAX_SAVED 65536

extern const VMStateDescription vmstate_rl_sched;
#define VMSTATE_RL_SCHED(_field, _state) \
    VMSTATE_STRUCT(_field, _state, 0, vmstate_rl_sched, RlSched)

/* Name the queue's owner and check each event loaded into it (before the first load). */
void rl_sched_set_check(RlSched *s, const char *name, RlEventCheckFn *check);

/* A processor that runs jobs one at a time in the order they become ready. */
typedef struct RlServer {
    uint64_t free_at;
} RlServer;

/* Queue a job ready at 'ready' that takes 'dur'; returns when it finishes. */
uint64_t rl_server_run(RlServer *s, uint64_t ready, uint64_t dur);

extern const VMStateDescription vmstate_rl_server;
#define VMSTATE_RL_SERVER(_field, _state) \
    VMSTATE_STRUCT(_field, _state, 0, vmstate_rl_server, RlServer)

#define RL_MAX_CHANNELS 16

/* Identical channels (DMA engines): a transfer takes the one free first. */
typedef struct RlChannels {
    uint32_t n;
    uint64_t free_at[RL_MAX_CHANNELS];
} RlChannels;

uint64_t rl_channels_run(RlChannels *c, uint64_t ready, uint64_t dur);

/* Saves n and free_at[]; post_load refuses n outside 1..RL_MAX_CHANNELS. */
extern const VMStateDescription vmstate_rl_channels;
#define VMSTATE_RL_CHANNELS(_field, _state) \
    VMSTATE_STRUCT(_field, _state, 0, vmstate_rl_channels, RlChannels)

/* Time to move 'bytes' at 'rate' bytes per second, rounded up to a whole ns. */
uint64_t rl_bytes_ns(uint64_t bytes, uint64_t rate);

#endif /* RL_SCHED_H */
