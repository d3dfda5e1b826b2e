/*
 * retrolink register FIFO (rl-fifo.h).
 *
 * SPDX-License-Identifier: GPL-2.0-or-later
 */
#include "qemu/osdep.h"

#include "hw/retrolink/core/rl-fifo.h"

void rl_fifo_init(RlFifo *f, RlBoard *owner, const char *name, uint32_t depth,
                  RlFifoCheckFn *check, void *opaque)
{
    assert(depth >= 1 && depth <= RL_FIFO_MAX_DEPTH);
    f->owner = owner;
    f->name = name;
    f->depth = depth;
    f->check = check;
    f->opaque = opaque;
    rl_fifo_reset(f);
}

void rl_fifo_reset(RlFifo *f)
{
    f->head = f->count = 0;
    memset(f->entry, 0, sizeof(f->entry));
}

bool rl_fifo_push(RlFifo *f, uint32_t v)
{
    if (f->count == f->depth) {
        return false;
    }
    f->entry[(f->head + f->count++) % f->depth] = v;
    return true;
}

uint32_t rl_fifo_pop(RlFifo *f, uint32_t empty)
{
    if (!f->count) {
        return empty;
    }
    uint32_t v = f->entry[f->head];
    f->head = (f->head + 1) % f->depth;
    f->count--;
    return v;
}

static int rl_fifo_post_load(void *opaque, int version_id)
{
    RlFifo *f = opaque;

    if (f->head >= f->depth || f->count > f->depth) {
        return rl_board_refuse(f->owner, "%s FIFO has head %u and count %u, not below %u "
                               "and at most %u", f->name, f->head, f->count, f->depth,
                               f->depth);
    }
    for (uint32_t i = 0; i < f->count; i++) {
        uint32_t v = f->entry[(f->head + i) % f->depth];
        if (f->check && !f->check(f->opaque, v)) {
            return rl_board_refuse(f->owner, "%s FIFO entry %u is 0x%x, not one the board "
                                   "puts there", f->name, i, v);
        }
    }
    return 0;
}

const VMStateDescription vmstate_rl_fifo = {
    .name = "retrolink-fifo",
    .version_id = 1,
    .minimum_version_id = 1,
    .post_load = rl_fifo_post_load,
    .fields = (const VMStateField[]) {
        VMSTATE_UINT32(head, RlFifo),
        VMSTATE_UINT32(count, RlFifo),
        VMSTATE_UINT32_ARRAY(entry, RlFifo, RL_FIFO_MAX_DEPTH),
        VMSTATE_END_OF_LIST()
    },
};
