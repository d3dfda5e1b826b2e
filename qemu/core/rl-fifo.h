/*
 * retrolink register FIFO: a queue of 32-bit words that a board shows the driver
 * through a register (a completion FIFO the driver pops, a command FIFO it pushes), as
 * a ring of `depth` entries with a head and a count.
 *
 * VMSTATE_RL_FIFO saves the head, the count and the entries; its post_load checks the
 * head and count against the depth the board gave at init, then every entry in the FIFO
 * with the board's check, and refuses the stream naming the FIFO (rl_board_refuse).
 *
 * SPDX-License-Identifier: GPL-2.0-or-later
 */
#ifndef RL_FIFO_H
#define RL_FIFO_H

#include "hw/retrolink/core/rl-board.h"

/* the deepest FIFO a board may have */
#define RL_FIFO_MAX_DEPTH   256

/* Is word v, loaded from a stream, one the board could have put in the FIFO? */
typedef bool RlFifoCheckFn(void *opaque, uint32_t v);

typedef struct RlFifo {
    uint32_t entry[RL_FIFO_MAX_DEPTH];
    uint32_t head, count;
    /* set at init, not saved */
    uint32_t depth;
    const char *name;           /* as the board's docs name it: "TX_COMPLETE" */
    RlBoard *owner;
    RlFifoCheckFn *check;
    void *opaque;
} RlFifo;

void rl_fifo_init(RlFifo *f, RlBoard *owner, const char *name, uint32_t depth,
                  RlFifoCheckFn *check, void *opaque);
/* Add a word at the tail; false (and nothing added) if full. */
bool rl_fifo_push(RlFifo *f, uint32_t v);
/* Take the word at the head; `empty` when there is none. */
uint32_t rl_fifo_pop(RlFifo *f, uint32_t empty);
void rl_fifo_reset(RlFifo *f);

extern const VMStateDescription vmstate_rl_fifo;
#define VMSTATE_RL_FIFO(_field, _state) \
    VMSTATE_STRUCT(_field, _state, 1, vmstate_rl_fifo, RlFifo)

#endif /* RL_FIFO_H */
