/* A growable FIFO of frames, shared by the topologies' queues. */
#ifndef FRAME_FIFO_H
#define FRAME_FIFO_H

#include <stdlib.h>

#include "fabric.h"

struct frame_fifo {
    struct frame **f;
    size_t head, n, cap;
};

static inline void fifo_push(struct frame_fifo *q, struct frame *fr)
{
    if (q->n == q->cap) {
        size_t cap = q->cap ? 2 * q->cap : 8;
        struct frame **nf = xreallocarray(NULL, cap, sizeof(*nf));
        for (size_t i = 0; i < q->n; i++) {
            nf[i] = q->f[(q->head + i) % q->cap];
        }
        free(q->f);
        q->f = nf;
        q->cap = cap;
        q->head = 0;
    }
    q->f[(q->head + q->n++) % q->cap] = fr;
}

static inline struct frame *fifo_peek(const struct frame_fifo *q)
{
    return q->n ? q->f[q->head] : NULL;
}

static inline struct frame *fifo_pop(struct frame_fifo *q)
{
    struct frame *fr = q->f[q->head];
    q->head = (q->head + 1) % q->cap;
    q->n--;
    return fr;
}

#endif
