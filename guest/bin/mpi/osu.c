/* What the five MPI measurements share (osu.h). */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli/cli.h"
#include "osu.h"

#define MAX_BYTES   (1L << 22)      /* 4 MiB: alltoall's buffers are this times the ranks */
#define MAX_ITERS   1000000L

static const char *const known[] = { "--min", "--max", "--iters", "--warmup", "--iters-large",
                                     "--warmup-large", "--large", "--window", NULL };

void osu_options(struct osu *o, long min_size, int window, int argc, char **argv)
{
    char dflt_min[24];

    snprintf(dflt_min, sizeof(dflt_min), "%ld", min_size);
    cli_parse(o->prog, argc, argv, 1, known);
    o->min = cli_num("--min", dflt_min, min_size, MAX_BYTES, "the least message size in bytes");
    o->max = cli_num("--max", "1048576", o->min, MAX_BYTES, "the largest message size in bytes");
    o->iters = cli_num("--iters", "100", 1, MAX_ITERS, "timed iterations per size");
    o->warmup = cli_num("--warmup", "10", 0, MAX_ITERS, "untimed iterations before them");
    o->iters_large = cli_num("--iters-large", "20", 1, MAX_ITERS,
                             "timed iterations per size from --large on");
    o->warmup_large = cli_num("--warmup-large", "2", 0, MAX_ITERS, "untimed ones from --large on");
    o->large = cli_num("--large", "8192", 1, MAX_BYTES, "where large messages start, bytes");
    o->window = cli_num("--window", "64", 1, 1024, "non-blocking messages in flight at once");
    if (!window && cli_given("--window"))
        cli_usage_error("--window: only rl_osu_bw and rl_osu_bibw send windows");
}

/* n bytes (at least 1), page-aligned and written (no page faults timed) */
static void *buffer(size_t n)
{
    void *p = NULL;

    if (posix_memalign(&p, 4096, n ? n : 1)) {
        fprintf(stderr, "out of memory for a %zu-byte buffer\n", n);
        MPI_Abort(MPI_COMM_WORLD, 1);
    }
    memset(p, 'a', n ? n : 1);
    return p;
}

void osu_buffers(struct osu *o, size_t bytes)
{
    o->s_buf = buffer(bytes);
    o->r_buf = buffer(bytes);
    o->req = buffer(2 * o->window * sizeof(*o->req));
}

void osu_table(const struct osu_test *t, struct osu *o)
{
    if (o->rank == 0) {
        printf("# %s (%s: OSU's method, docs/mpi.md)\n", t->title, t->prog);
        printf("# Size      %18s\n", t->column);
        fflush(stdout);
    }
    for (long size = o->min > t->min_size ? o->min : t->min_size; size && size <= o->max;
         size *= 2) {
        double value = t->measure(o, size);

        if (o->rank == 0) {
            printf("%-10ld%18.2f\n", size, value);
            fflush(stdout);
        }
    }
}

int osu_main(const struct osu_test *t, int argc, char **argv)
{
    struct osu o = { .prog = t->prog, .comm = MPI_COMM_WORLD };

    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &o.rank);
    MPI_Comm_size(MPI_COMM_WORLD, &o.ranks);
    if (t->ranks ? o.ranks != t->ranks : o.ranks < 2) {
        if (o.rank == 0)
            fprintf(stderr, "%s: needs %s%d ranks, not %d\n", t->prog,
                    t->ranks ? "" : "at least ", t->ranks ? t->ranks : 2, o.ranks);
        MPI_Finalize();
        return 2;
    }
    osu_options(&o, t->min_size, t->window, argc, argv);
    osu_buffers(&o, (size_t)o.max * (t->per_peer ? o.ranks : 1));
    osu_table(t, &o);
    MPI_Finalize();
    return 0;
}

long osu_iters(const struct osu *o, long size)
{
    return size >= o->large ? o->iters_large : o->iters;
}

static long warmup(const struct osu *o, long size)
{
    return size >= o->large ? o->warmup_large : o->warmup;
}

double osu_timed(struct osu *o, long size, void (*iter)(struct osu *o, long size))
{
    long iters = osu_iters(o, size), skip = warmup(o, size);
    double t_start = 0;

    MPI_Barrier(o->comm);
    for (long i = 0; i < iters + skip; i++) {
        if (i == skip)
            t_start = MPI_Wtime();
        iter(o, size);
    }
    return MPI_Wtime() - t_start;
}

double osu_collective_us(struct osu *o, long size, void (*op)(struct osu *o, long size))
{
    long iters = osu_iters(o, size), skip = warmup(o, size);
    double timer = 0, latency, sum = 0;

    MPI_Barrier(o->comm);
    for (long i = 0; i < iters + skip; i++) {
        double t0 = MPI_Wtime();

        op(o, size);
        if (i >= skip)
            timer += MPI_Wtime() - t0;
        MPI_Barrier(o->comm);
    }
    latency = timer * 1e6 / iters;
    MPI_Reduce(&latency, &sum, 1, MPI_DOUBLE, MPI_SUM, 0, o->comm);
    return sum / o->ranks;
}
