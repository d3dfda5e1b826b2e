/*
 * rl_osu_bw: unidirectional bandwidth between 2 ranks, after osu_bw: each iteration
 * rank 0 posts a window of non-blocking sends (MPI_Isend, --window, default 64) and
 * waits for them, rank 1 a window of MPI_Irecv and answers the whole window with a
 * 4-byte message; bandwidth = bytes sent in the timed iterations / their time, MB/s.
 *   mpi-run -n 2 rl_osu_bw [--window W] [--min B] [--max B] [--iters N] [--warmup W] ...
 */
#include <mpi.h>

#include "osu.h"

static void window(struct osu *o, long size)
{
    if (o->rank == 0) {
        for (long j = 0; j < o->window; j++)
            MPI_Isend(o->s_buf, size, MPI_CHAR, 1, 100, o->comm, &o->req[j]);
        MPI_Waitall(o->window, o->req, MPI_STATUSES_IGNORE);
        MPI_Recv(o->r_buf, 4, MPI_CHAR, 1, 101, o->comm, MPI_STATUS_IGNORE);
    } else {
        for (long j = 0; j < o->window; j++)
            MPI_Irecv(o->r_buf, size, MPI_CHAR, 0, 100, o->comm, &o->req[j]);
        MPI_Waitall(o->window, o->req, MPI_STATUSES_IGNORE);
        MPI_Send(o->s_buf, 4, MPI_CHAR, 0, 101, o->comm);
    }
}

static double bandwidth_MBps(struct osu *o, long size)
{
    double t = osu_timed(o, size, window);

    return size / 1e6 * osu_iters(o, size) * o->window / t;
}

const struct osu_test osu_bw = {
    .prog = "rl_osu_bw", .name = "bw",
    .title = "OSU MPI Bandwidth Test", .column = "Bandwidth (MB/s)",
    .ranks = 2, .min_size = 1, .window = 1, .measure = bandwidth_MBps,
};
