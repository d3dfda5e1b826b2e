/*
 * rl_osu_latency: point-to-point latency between 2 ranks, after osu_latency: rank 0
 * sends a message and rank 1 sends it back (blocking MPI_Send and MPI_Recv), the
 * latency is half the mean round trip over the timed iterations, in us.
 *   mpi-run -n 2 rl_osu_latency [--min B] [--max B] [--iters N] [--warmup W]
 *                               [--iters-large N] [--warmup-large W] [--large B]
 */
#include <mpi.h>

#include "osu.h"

static void round_trip(struct osu *o, long size)
{
    int peer = 1 - o->rank;

    if (o->rank == 0) {
        MPI_Send(o->s_buf, size, MPI_CHAR, peer, 1, o->comm);
        MPI_Recv(o->r_buf, size, MPI_CHAR, peer, 1, o->comm, MPI_STATUS_IGNORE);
    } else {
        MPI_Recv(o->r_buf, size, MPI_CHAR, peer, 1, o->comm, MPI_STATUS_IGNORE);
        MPI_Send(o->s_buf, size, MPI_CHAR, peer, 1, o->comm);
    }
}

static double latency_us(struct osu *o, long size)
{
    return osu_timed(o, size, round_trip) * 1e6 / (2.0 * osu_iters(o, size));
}

const struct osu_test osu_latency = {
    .prog = "rl_osu_latency", .name = "latency",
    .title = "OSU MPI Latency Test", .column = "Latency (us)",
    .ranks = 2, .min_size = 1, .measure = latency_us,
};
