/*
 * rl_osu_alltoall: MPI_Alltoall latency over every rank, after osu_alltoall: each
 * iteration times one MPI_Alltoall of size bytes to and from every rank, then a barrier
 * (untimed); a rank's latency is its mean over the timed iterations, the row the mean
 * over the ranks, in us.
 *   mpi-run rl_osu_alltoall [--min B] [--max B] [--iters N] [--warmup W] ...
 */
#include <mpi.h>

#include "osu.h"

static void alltoall(struct osu *o, long size)
{
    MPI_Alltoall(o->s_buf, size, MPI_CHAR, o->r_buf, size, MPI_CHAR, o->comm);
}

static double latency_us(struct osu *o, long size)
{
    return osu_collective_us(o, size, alltoall);
}

const struct osu_test osu_alltoall = {
    .prog = "rl_osu_alltoall", .name = "alltoall",
    .title = "OSU MPI All-to-All Personalized Exchange Latency Test",
    .column = "Avg Latency(us)", .min_size = 1, .per_peer = 1, .measure = latency_us,
};
