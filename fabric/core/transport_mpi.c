/*
 * The shards' exchange over MPI (retrolink-fabric-mpi, docs/fabric.md "Shards"):
 * blocking collectives on MPI_COMM_WORLD, one rank a shard. SST's RankSyncSerialSkip
 * is the model: every shard gives what it has for the others, then all go on from
 * what every shard gave. A rank that dies makes mpirun end the others.
 *
 * The collectives are started non-blocking and waited for in steps that sleep: Open
 * MPI's blocking ones poll without rest, and a shard waiting for another one's nodes
 * would take the cores those nodes' QEMUs need (on one host, QEMUs and shards share
 * them; a node can wait minutes for a core so).
 */
#include <mpi.h>
#include <sched.h>
#include <signal.h>
#include <sys/prctl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "fabric.h"
#include "transport.h"

static int nranks;
static char host[MPI_MAX_PROCESSOR_NAME + 1];

int transport_init(int *argc, char ***argv, uint32_t *rank, uint32_t *size, char *why,
                   size_t whylen)
{
    int r, n, len = 0;

    /* a shard whose mpirun is gone has nobody left to exchange with: it ends too */
    prctl(PR_SET_PDEATHSIG, SIGKILL);
    if (MPI_Init(argc, argv) != MPI_SUCCESS) {
        snprintf(why, whylen, "MPI_Init failed");
        return -1;
    }
    MPI_Comm_rank(MPI_COMM_WORLD, &r);
    MPI_Comm_size(MPI_COMM_WORLD, &n);
    MPI_Get_processor_name(host, &len);
    host[len] = 0;
    *rank = r;
    *size = nranks = n;
    return 0;
}

/* Wait for r: a few checks back to back (the others are often there already), then
 * sleeps that grow to WAIT_MAX_NS, each check moving Open MPI's progress on. */
#define WAIT_SPINS 64
#define WAIT_MAX_NS 200000

static void wait_for(MPI_Request *r)
{
    long sleep_ns = 1000;
    for (int i = 0;; i++) {
        int done = 0;
        MPI_Test(r, &done, MPI_STATUS_IGNORE);
        if (done) {
            return;
        }
        if (i < WAIT_SPINS) {
            sched_yield();
            continue;
        }
        struct timespec ts = { 0, sleep_ns };
        nanosleep(&ts, NULL);
        sleep_ns = sleep_ns * 2 > WAIT_MAX_NS ? WAIT_MAX_NS : sleep_ns * 2;
    }
}

void transport_allgather(const void *mine, size_t len, uint8_t **all, size_t *lens)
{
    long long my_len = len, *each = xcalloc(nranks, sizeof(*each));
    int *counts = xcalloc(nranks, sizeof(*counts)), *offsets = xcalloc(nranks, sizeof(*offsets));
    size_t total = 0;

    MPI_Request r;

    MPI_Iallgather(&my_len, 1, MPI_LONG_LONG, each, 1, MPI_LONG_LONG, MPI_COMM_WORLD, &r);
    wait_for(&r);
    for (int r = 0; r < nranks; r++) {
        if (total + each[r] > (size_t)INT32_MAX) {
            fabric_fatal(EXIT_RUNTIME, "the shards give over 2 GiB in one exchange");
        }
        offsets[r] = total;
        counts[r] = each[r];
        lens[r] = each[r];
        total += each[r];
    }
    *all = xmalloc(total ? total : 1);
    MPI_Iallgatherv(mine, (int)len, MPI_BYTE, *all, counts, offsets, MPI_BYTE, MPI_COMM_WORLD,
                    &r);
    wait_for(&r);
    free(each);
    free(counts);
    free(offsets);
}

uint64_t transport_sum(uint64_t mine)
{
    unsigned long long in = mine, out = 0;
    MPI_Request r;

    MPI_Iallreduce(&in, &out, 1, MPI_UNSIGNED_LONG_LONG, MPI_SUM, MPI_COMM_WORLD, &r);
    wait_for(&r);
    return out;
}

void transport_finish(void)
{
    MPI_Finalize();
}

const char *transport_host(void)
{
    return host;
}
