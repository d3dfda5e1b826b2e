/*
 * The fabric without MPI (retrolink-fabric): one shard, which never exchanges.
 * A configuration with shards needs retrolink-fabric-mpi (transport_mpi.c).
 */
#include <stdio.h>

#include "transport.h"

int transport_init(int *argc, char ***argv, uint32_t *rank, uint32_t *size, char *why,
                   size_t whylen)
{
    snprintf(why, whylen, "this fabric was built without MPI: a configuration with shards "
             "runs build/fabric/retrolink-fabric-mpi under mpirun (`retrolink run --shards K`)");
    return -1;
}

void transport_allgather(const void *mine, size_t len, uint8_t **all, size_t *lens)
{
    *all = NULL;
    lens[0] = 0;
}

uint64_t transport_sum(uint64_t mine)
{
    return mine;
}

void transport_finish(void)
{
}

const char *transport_host(void)
{
    return "";
}
