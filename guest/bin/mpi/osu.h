/*
 * What the five MPI measurements share (docs/mpi.md). They follow the method of the OSU
 * micro-benchmarks (osu_latency, osu_bw, osu_bibw, osu_allreduce, osu_alltoall): for
 * each message size, powers of 2 from --min to --max bytes, --warmup iterations
 * untimed, then --iters timed (from --large bytes on, --warmup-large and
 * --iters-large), timed with MPI_Wtime (the guest's clock: virtual time); latency in
 * microseconds, bandwidth in MB/s (10^6 bytes), one line per size in OSU's format
 * ("%-10d%18.2f") under a "# " header.
 */
#ifndef OSU_H
#define OSU_H

#include <mpi.h>
#include <stddef.h>

struct osu {
    const char *prog;
    MPI_Comm comm;              /* the measurement's ranks; rank and ranks in it */
    int rank, ranks;
    long min, max, iters, warmup, iters_large, warmup_large, large, window;
    char *s_buf, *r_buf;        /* --max bytes each (times the ranks: per_peer) */
    MPI_Request *req;           /* 2 * --window */
};

/* One measurement: its program, what it prints, and its value for one size. */
struct osu_test {
    const char *prog, *name, *title, *column;    /* name: rl_osu_all's for it */
    int ranks;                  /* the ranks it needs; 0: any number from 2 */
    long min_size;              /* the least size it takes */
    int window;                 /* whether --window is an option (default 64) */
    int per_peer;               /* buffers of a message for every rank */
    double (*measure)(struct osu *o, long size);
};

/* The five, in the order rl_osu_all runs them (rl_osu_<name>.c). */
extern const struct osu_test osu_latency, osu_bw, osu_bibw, osu_allreduce, osu_alltoall;

/*
 * The whole program: MPI_Init, the options (the same on every rank: a bad one ends every
 * rank with status 2), the buffers, then for each size, powers of 2 from --min to --max,
 * a row with t->measure's value (rank 0 prints); MPI_Finalize. Returns the exit status.
 */
int osu_main(const struct osu_test *t, int argc, char **argv);
/*
 * What osu_main does between MPI_Init and MPI_Finalize, in parts for rl_osu_all: the
 * options (min_size: the least --min; window: whether --window is an option), the
 * buffers (bytes each), and one measurement's table on o->comm, its sizes from the
 * larger of --min and the test's least.
 */
void osu_options(struct osu *o, long min_size, int window, int argc, char **argv);
void osu_buffers(struct osu *o, size_t bytes);
void osu_table(const struct osu_test *t, struct osu *o);
long osu_iters(const struct osu *o, long size);
/*
 * After a barrier, iter(o, size) --warmup times untimed, then --iters times timed (for
 * the size); returns the seconds from the first timed iteration's start to the end of
 * the last.
 */
double osu_timed(struct osu *o, long size, void (*iter)(struct osu *o, long size));
/*
 * A collective's latency: as osu_timed, but each iteration times op alone and a barrier
 * (untimed) follows it; a rank's latency is its mean over the timed iterations, the
 * result (on rank 0) the mean over the ranks, in us.
 */
double osu_collective_us(struct osu *o, long size, void (*op)(struct osu *o, long size));

#endif
