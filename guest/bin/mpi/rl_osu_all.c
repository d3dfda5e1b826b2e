/*
 * rl_osu_all: the five measurements in one MPI job (what `retrolink bench mpi` runs: one
 * launch instead of five), in turn: latency, bw and bibw between ranks 0 and 1, then
 * allreduce and alltoall over every rank, each as its own program measures it
 * (rl_osu_<name>), with the same options (--min is raised to a measurement's least
 * size: allreduce's 4 bytes). Rank 0 prints each table between the lines
 * "@@osu <name>" and "@@end <name>".
 *   mpi-run rl_osu_all [--window W] [--min B] [--max B] [--iters N] [--warmup W] ...
 * The ranks from 2 on sit out the pair measurements asleep: they wait for rank 0's word
 * with a test every RELEASE_POLL_NS, not in a blocking receive, which polls the network
 * (a CPU busy for nothing), and they send nothing the pair's nodes would have to take.
 */
#include <mpi.h>
#include <stdio.h>
#include <time.h>

#include "osu.h"

#define TAG_RELEASE     9000
#define RELEASE_POLL_NS 10000000L       /* 10 ms: untimed, before a collective's barrier */

static const struct osu_test *const tests[] = {
    &osu_latency, &osu_bw, &osu_bibw, &osu_allreduce, &osu_alltoall,
};

/* After pair measurements: rank 0 wakes the ranks that sat them out. */
static void rejoin(int rank, int ranks)
{
    MPI_Request req;
    int done = 0;

    if (rank == 0) {
        for (int r = 2; r < ranks; r++)
            MPI_Send(NULL, 0, MPI_CHAR, r, TAG_RELEASE, MPI_COMM_WORLD);
        return;
    }
    if (rank < 2)
        return;
    MPI_Irecv(NULL, 0, MPI_CHAR, 0, TAG_RELEASE, MPI_COMM_WORLD, &req);
    for (;;) {
        MPI_Test(&req, &done, MPI_STATUS_IGNORE);
        if (done)
            return;
        nanosleep(&(struct timespec){ .tv_nsec = RELEASE_POLL_NS }, NULL);
    }
}

int main(int argc, char **argv)
{
    struct osu o = { .prog = "rl_osu_all" };
    int rank, ranks, behind = 0;
    MPI_Comm pair;

    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &ranks);
    if (ranks < 2) {
        fprintf(stderr, "rl_osu_all: needs at least 2 ranks, not %d\n", ranks);
        MPI_Finalize();
        return 2;
    }
    osu_options(&o, 1, 1, argc, argv);
    osu_buffers(&o, (size_t)o.max * ranks);       /* alltoall's: a message for every rank */
    MPI_Comm_split(MPI_COMM_WORLD, rank < 2 ? 0 : MPI_UNDEFINED, rank, &pair);
    for (size_t i = 0; i < sizeof(tests) / sizeof(tests[0]); i++) {
        const struct osu_test *t = tests[i];

        if (t->ranks == 2) {
            behind = 1;
            if (rank >= 2)
                continue;
            o.comm = pair;
        } else {
            if (behind)
                rejoin(rank, ranks);
            behind = 0;
            o.comm = MPI_COMM_WORLD;
        }
        MPI_Comm_rank(o.comm, &o.rank);
        MPI_Comm_size(o.comm, &o.ranks);
        if (rank == 0) {
            printf("@@osu %s\n", t->name);
            fflush(stdout);
        }
        osu_table(t, &o);
        if (rank == 0) {
            printf("@@end %s\n", t->name);
            fflush(stdout);
        }
    }
    if (pair != MPI_COMM_NULL)
        MPI_Comm_free(&pair);
    MPI_Finalize();
    return 0;
}
