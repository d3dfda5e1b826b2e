/*
 * The fabric in shards (docs/fabric.md, "Shards"): one process per shard, each with
 * its own nodes' connections and lock-step file, every one running every network's
 * topology on every frame, so that each makes the same decisions in the same order.
 */
#ifndef SHARD_H
#define SHARD_H

#include "fabric.h"

struct shard {
    uint32_t count, rank;
    uint8_t *out;            /* this shard's frames since the last exchange, as records */
    size_t len, cap;
    bool done;               /* every VM node gone, or a shard was asked to stop */
    uint64_t exchanges;
    double exchange_wall;    /* wall seconds inside the exchanges (waiting for the others) */
};

/* After the configuration: join the other shards (a configuration without shards:
 * nothing); fatal if this process cannot be the shard the configuration needs. */
void shard_setup(struct fabric *f, int *argc, char ***argv);
/* A frame from one of this shard's nodes, queued here: for the other shards too. */
void shard_sent(struct fabric *f, const struct frame *fr);
/* Every shard's nodes are ready: give each shard the others' HELLOs. */
void shard_start(struct fabric *f);
/* Give the others this shard's frames and nodes' clocks, take theirs; stop: this
 * shard was asked to end the run. Sets f->shard->done for every shard alike. */
void shard_exchange(struct fabric *f, bool stop);
/* The run's end, every shard together: the counters that are per shard summed. */
void shard_finish(struct fabric *f);

#endif
