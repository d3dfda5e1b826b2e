/*
 * How the shards of a fabric talk (docs/fabric.md, "Shards"): a collective
 * exchange of byte strings, a sum and the rank. Two implementations: transport_mpi.c
 * (Open MPI: retrolink-fabric-mpi, under mpirun) and transport_none.c (one shard:
 * retrolink-fabric, which links no MPI).
 */
#ifndef TRANSPORT_H
#define TRANSPORT_H

#include <stddef.h>
#include <stdint.h>

/* Join the shards: this process's rank and their count; false (why filled) if it
 * cannot (built without MPI, not started under mpirun) */
int transport_init(int *argc, char ***argv, uint32_t *rank, uint32_t *size, char *why,
                   size_t whylen);
/* Every shard gives its bytes and gets every shard's, in rank order: *all (malloc'd,
 * the caller frees it) holds them one after another, lens[r] the length of rank r's. */
void transport_allgather(const void *mine, size_t len, uint8_t **all, size_t *lens);
uint64_t transport_sum(uint64_t mine);
void transport_finish(void);
/* the name of the host this shard runs on (for its log lines) */
const char *transport_host(void);

#endif
