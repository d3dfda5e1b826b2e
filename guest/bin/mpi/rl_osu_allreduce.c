/*
 * rl_osu_allreduce: MPI_Allreduce latency over every rank, after osu_allreduce: each
 * iteration times one MPI_Allreduce (MPI_FLOAT, MPI_SUM, size / 4 floats) on every rank,
 * then a barrier (untimed); a rank's latency is its mean over the timed iterations, the
 * row the mean over the ranks, in us. Sizes from 4 bytes (one float).
 *   mpi-run rl_osu_allreduce [--min B] [--max B] [--iters N] [--warmup W] ...
 */
#include <mpi.h>

#include "osu.h"

static void allreduce(struct osu *o, long size)
{
    MPI_Allreduce(o->s_buf, o->r_buf, size / sizeof(float), MPI_FLOAT, MPI_SUM,
                  o->comm);
}

static double latency_us(struct osu *o, long size)
{
    return osu_collective_us(o, size, allreduce);
}

const struct osu_test osu_allreduce = {
    .prog = "rl_osu_allreduce", .name = "allreduce",
    .title = "OSU MPI Allreduce Latency Test",
    .column = "Avg Latency(us)", .min_size = sizeof(float), .measure = latency_us,
};
