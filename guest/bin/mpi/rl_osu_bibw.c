/*
 * rl_osu_bibw: bidirectional bandwidth between 2 ranks, after osu_bibw: each iteration
 * both ranks post a window of MPI_Irecv and a window of MPI_Isend (--window, default
 * 64) to each other and wait for all of them; bandwidth = bytes both sent in the timed
 * iterations / their time (rank 0's), MB/s.
 *   mpi-run -n 2 rl_osu_bibw [--window W] [--min B] [--max B] [--iters N] [--warmup W] ...
 */
#include <mpi.h>

#include "osu.h"

static void windows(struct osu *o, long size)
{
    int peer = 1 - o->rank;

    for (long j = 0; j < o->window; j++)
        MPI_Irecv(o->r_buf, size, MPI_CHAR, peer, 10, o->comm, &o->req[j]);
    for (long j = 0; j < o->window; j++)
        MPI_Isend(o->s_buf, size, MPI_CHAR, peer, 10, o->comm, &o->req[o->window + j]);
    MPI_Waitall(2 * o->window, o->req, MPI_STATUSES_IGNORE);
}

static double bandwidth_MBps(struct osu *o, long size)
{
    double t = osu_timed(o, size, windows);

    return size / 1e6 * osu_iters(o, size) * o->window * 2 / t;
}

const struct osu_test osu_bibw = {
    .prog = "rl_osu_bibw", .name = "bibw",
    .title = "OSU MPI Bi-Directional Bandwidth Test",
    .column = "Bandwidth (MB/s)", .ranks = 2, .min_size = 1, .window = 1,
    .measure = bandwidth_MBps,
};
