/*
 * Stall reports (docs/fabric.md, "Stalls"): when no node has been granted
 * anything for stall_report_s wall seconds while some node waits, the fabric
 * names the nodes it is waiting for (alive VM nodes it granted that have not
 * reported back), once per stall on stderr, and in the status file whenever
 * that list changes. Wall time is only read here, for these reports: it never
 * decides anything the nodes see.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "fabric.h"
#include "stats.h"

double wall_now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec + ts.tv_nsec / 1e9;
}

static bool holds_up(const struct node *n)
{
    return n->kind == NODE_VM && n->alive && !n->waiting && !n->remote;
}

/* The status file, replaced atomically (a reader never sees half of it). */
static void status_write(struct fabric *f, double now)
{
    if (!f->status_path[0]) {
        return;
    }
    char tmp[sizeof(f->status_path) + 8];
    snprintf(tmp, sizeof(tmp), "%s.tmp", f->status_path);
    FILE *out = fopen(tmp, "w");
    if (!out) {
        fabric_log("cannot write %s: %s", tmp, strerror(errno));
        return;
    }
    fprintf(out, "{\"stalled\": %s, \"waiting_for\": [", f->stalled ? "true" : "false");
    bool first = true;
    for (uint32_t k = 0; f->stalled && k < f->nnodes; k++) {
        struct node *n = &f->nodes[k];
        if (n->in_status) {
            fprintf(out, "%s{\"node\": %u, \"name\": ", first ? "" : ", ", n->id);
            json_string(out, n->name);
            fprintf(out, ", \"time_ns\": %llu, \"silent_s\": %.1f}", (unsigned long long)n->t,
                    now - n->last_sync_wall);
            first = false;
        }
    }
    fprintf(out, "], \"disconnected\": [");
    first = true;
    for (uint32_t k = 0; k < f->nnodes; k++) {
        struct node *n = &f->nodes[k];
        if (n->cut_off[0]) {
            fprintf(out, "%s{\"node\": %u, \"name\": ", first ? "" : ", ", n->id);
            json_string(out, n->name);
            fprintf(out, ", \"why\": ");
            json_string(out, n->cut_off);
            fputc('}', out);
            first = false;
        }
    }
    fprintf(out, "]}\n");
    if (fclose(out) || rename(tmp, f->status_path)) {
        fabric_log("cannot write %s: %s", f->status_path, strerror(errno));
        unlink(tmp);
    }
}

void stall_start(struct fabric *f)
{
    double now = wall_now();
    f->last_progress = now;
    for (uint32_t k = 0; k < f->nnodes; k++) {
        f->nodes[k].last_sync_wall = now;
    }
    status_write(f, now);
}

/*
 * The fabric disconnected node n for a protocol error: its QEMU may run on (alone, its
 * peers down) or hold at the boot barrier forever, so the status file says so and the
 * runner ends the run naming it (docs/reliability.md).
 */
void stall_cut_off(struct fabric *f, struct node *n, const char *why)
{
    snprintf(n->cut_off, sizeof(n->cut_off), "%s", why);
    status_write(f, wall_now());
}

void stall_progress(struct fabric *f)
{
    f->last_progress = wall_now();
    if (!f->stalled) {
        return;
    }
    f->stalled = false;
    for (uint32_t k = 0; k < f->nnodes; k++) {
        f->nodes[k].stall_named = f->nodes[k].in_status = false;
    }
    status_write(f, f->last_progress);
}

void stall_check(struct fabric *f)
{
    double now = wall_now();
    bool someone_waits = false, changed = false;

    if (!f->started || !f->stall_report_s || now - f->last_progress < f->stall_report_s) {
        return;
    }
    for (uint32_t k = 0; k < f->nnodes; k++) {
        someone_waits |= f->nodes[k].kind == NODE_VM && f->nodes[k].alive && f->nodes[k].waiting;
    }
    if (!someone_waits && !f->stalled) {
        return;               /* every node is running: nothing is held up */
    }
    f->stalled = true;
    for (uint32_t k = 0; k < f->nnodes; k++) {
        struct node *n = &f->nodes[k];
        bool listed = holds_up(n);
        if (listed && !n->stall_named) {
            fabric_log("stalled: waiting for node %u (%s) at %llu ns; no SYNC from it for %.1f s",
                       n->id, n->name, (unsigned long long)n->t, now - n->last_sync_wall);
            n->stall_named = true;
        }
        changed |= listed != n->in_status;
        n->in_status = listed;
    }
    if (changed) {
        status_write(f, now);
    }
}

/* How long poll may sleep before a stall is due to be reported. */
int stall_poll_ms(const struct fabric *f, int longest)
{
    if (!f->started || !f->stall_report_s || f->stalled) {
        return longest;
    }
    double left = f->last_progress + f->stall_report_s - wall_now();
    return left <= 0 ? 0 : left * 1000 >= longest ? longest : (int)(left * 1000) + 1;
}
