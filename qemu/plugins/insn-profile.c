/*
 * retrolink instruction profile: guest instructions executed per translated
 * block, inside windows the guest marks itself (docs/profile.md).
 *
 * A guest program opens and closes a window by executing the marker
 * instruction, "xchg %bx,%bx" (66 87 db: Bochs' magic breakpoint, a no-op
 * for the CPU). While a window is open every block's executions are added to
 * its count; at exit the plugin writes one line per block that ran inside a
 * window: its guest virtual address, its instructions and its executions.
 * Symbols are resolved afterwards, from the guest's own symbol tables
 * (src/retrolink/profile/).
 *
 * Steps: inside a window, a guest may also mark where one step of its work
 * ends and the next begins with "nopl 0x524cNNNN(%rax)" (0f 1f 80 and the
 * 32-bit displacement 0x524c0000 + step id NNNN: 'RL', never an assembler's
 * padding, whose displacement is 0). The instructions between two step marks
 * go to the pair (from, to); each block's executions are also counted per
 * step (the last mark before them), so a step's instructions can be named by
 * function. The window's opening is step 0, its closing step 0xffff.
 *
 * Why per block and not per instruction: one call per block costs far less,
 * and under -icount a block runs whole except when an instruction in it
 * faults (a page fault in a copy from user memory): such a block counts its
 * instructions after the fault too, a small overcount said in the docs.
 *
 * Counting does not change what the guest does: under -icount the virtual
 * clock follows the instructions executed, whatever the host spends here.
 *
 * Arguments: out=PATH (required), the file written at exit.
 */
#include <glib.h>
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "qemu/qemu-plugin.h"

QEMU_PLUGIN_EXPORT int qemu_plugin_version = QEMU_PLUGIN_VERSION;

static const uint8_t marker[] = { 0x66, 0x87, 0xdb };
static const uint8_t step_marker[] = { 0x0f, 0x1f, 0x80 };    /* then disp32 */
#define STEP_MAGIC      0x524c0000u
#define STEP_OPEN       0               /* the window opened */
#define STEP_CLOSE      0xffff          /* the window closed */
#define MAX_STEPS       64              /* distinct step ids in one run */

typedef struct {
    uint64_t vaddr;
    uint64_t insns;                 /* in the block */
    uint64_t in_windows;            /* executions inside windows */
    uint64_t *by_step;              /* executions inside windows per step index */
} Block;

typedef struct {
    uint64_t insns, passes;
} Segment;

static GHashTable *blocks;          /* (vaddr, insns) -> Block */
static GMutex lock;
static char *out_path;
static bool open_window;          /* the guest's marks open and close it */
static uint64_t windows, marks;
static GHashTable *segments;        /* (from << 16 | to) -> Segment */
static uint32_t step_ids[MAX_STEPS] = { STEP_OPEN };  /* step index -> id */
static unsigned int nsteps = 1, cur_step;             /* cur_step: an index */
static uint64_t seg_insns;          /* since the last step mark */
static bool steps_marked, too_many_steps;

/* Close the current segment at step id `to` and start step `to`. */
static void segment_end(uint32_t to)
{
    uint64_t key = (uint64_t)step_ids[cur_step] << 16 | to;
    Segment *s = g_hash_table_lookup(segments, &key);
    unsigned int i;

    if (!s) {
        uint64_t *k = g_new(uint64_t, 1);
        *k = key;
        s = g_new0(Segment, 1);
        g_hash_table_insert(segments, k, s);
    }
    s->insns += seg_insns;
    s->passes++;
    seg_insns = 0;
    for (i = 0; i < nsteps && step_ids[i] != to; i++) {
    }
    if (i == nsteps) {
        if (nsteps == MAX_STEPS) {
            too_many_steps = true;          /* said at exit; counted as step 0 */
            i = 0;
        } else {
            step_ids[nsteps++] = to;
        }
    }
    cur_step = to == STEP_CLOSE ? 0 : i;
}

static guint block_hash(gconstpointer p)
{
    const Block *b = p;
    return g_int64_hash(&b->vaddr) ^ (guint)b->insns;
}

static gboolean block_equal(gconstpointer a, gconstpointer b)
{
    const Block *x = a, *y = b;
    return x->vaddr == y->vaddr && x->insns == y->insns;
}

/* The marker ran: open a window, or close the open one. */
static void marker_hit(unsigned int cpu, void *udata)
{
    g_mutex_lock(&lock);
    marks++;
    windows += open_window;
    if (open_window && steps_marked) {
        segment_end(STEP_CLOSE);
    }
    open_window = !open_window;
    cur_step = 0;
    seg_insns = 0;
    g_mutex_unlock(&lock);
}

/* A step mark ran (udata: its id): inside a window, the next step begins. */
static void step_hit(unsigned int cpu, void *udata)
{
    g_mutex_lock(&lock);
    if (open_window) {
        steps_marked = true;
        segment_end(GPOINTER_TO_UINT(udata));
    }
    g_mutex_unlock(&lock);
}

/*
 * Under -icount one vCPU thread runs the guest (round robin): nothing else
 * touches the counts while it runs.
 */
static void block_exec(unsigned int cpu, void *udata)
{
    Block *b = udata;

    if (open_window) {
        b->in_windows++;
        seg_insns += b->insns;
        if (!b->by_step) {
            b->by_step = g_new0(uint64_t, MAX_STEPS);
        }
        b->by_step[cur_step]++;
    }
}

static void tb_trans(qemu_plugin_id_t id, struct qemu_plugin_tb *tb)
{
    Block key = { .vaddr = qemu_plugin_tb_vaddr(tb), .insns = qemu_plugin_tb_n_insns(tb) };
    Block *b;

    g_mutex_lock(&lock);
    b = g_hash_table_lookup(blocks, &key);
    if (!b) {
        b = g_new0(Block, 1);
        *b = key;
        g_hash_table_insert(blocks, b, b);
    }
    g_mutex_unlock(&lock);
    qemu_plugin_register_vcpu_tb_exec_cb(tb, block_exec, QEMU_PLUGIN_CB_NO_REGS, b);

    for (size_t i = 0; i < key.insns; i++) {
        struct qemu_plugin_insn *insn = qemu_plugin_tb_get_insn(tb, i);
        uint8_t bytes[sizeof(marker)];

        if (qemu_plugin_insn_size(insn) == sizeof(marker) &&
            qemu_plugin_insn_data(insn, bytes, sizeof(bytes)) == sizeof(bytes) &&
            memcmp(bytes, marker, sizeof(marker)) == 0) {
            qemu_plugin_register_vcpu_insn_exec_cb(insn, marker_hit,
                                                   QEMU_PLUGIN_CB_NO_REGS, NULL);
        } else if (qemu_plugin_insn_size(insn) == sizeof(step_marker) + 4) {
            uint8_t nop[sizeof(step_marker) + 4];
            uint32_t disp;

            if (qemu_plugin_insn_data(insn, nop, sizeof(nop)) != sizeof(nop) ||
                memcmp(nop, step_marker, sizeof(step_marker)) != 0) {
                continue;
            }
            disp = nop[3] | nop[4] << 8 | nop[5] << 16 | (uint32_t)nop[6] << 24;
            if ((disp & 0xffff0000u) == STEP_MAGIC && (disp & 0xffff) != STEP_OPEN &&
                (disp & 0xffff) != STEP_CLOSE) {
                qemu_plugin_register_vcpu_insn_exec_cb(insn, step_hit, QEMU_PLUGIN_CB_NO_REGS,
                                                       GUINT_TO_POINTER(disp & 0xffff));
            }
        }
    }
}

static gint by_vaddr(gconstpointer a, gconstpointer b)
{
    const Block *x = a, *y = b;
    return x->vaddr < y->vaddr ? -1 : x->vaddr > y->vaddr;
}

static gint by_key(gconstpointer a, gconstpointer b)
{
    const uint64_t *x = a, *y = b;
    return *x < *y ? -1 : *x > *y;
}

static void write_steps(FILE *f, GList *all)
{
    GList *keys = g_list_sort(g_hash_table_get_keys(segments), by_key), *it;

    fprintf(f, "# steps: step from to instructions passes\n");
    for (it = keys; it; it = it->next) {
        uint64_t *k = it->data;
        Segment *s = g_hash_table_lookup(segments, k);
        fprintf(f, "step %u %u %" PRIu64 " %" PRIu64 "\n", (unsigned int)(*k >> 16),
                (unsigned int)(*k & 0xffff), s->insns, s->passes);
    }
    g_list_free(keys);
    fprintf(f, "# per step: stepblock vaddr insns step executions\n");
    for (it = all; it; it = it->next) {
        Block *b = it->data;
        for (unsigned int i = 0; b->by_step && i < nsteps; i++) {
            if (b->by_step[i]) {
                fprintf(f, "stepblock %016" PRIx64 " %" PRIu64 " %u %" PRIu64 "\n",
                        b->vaddr, b->insns, step_ids[i], b->by_step[i]);
            }
        }
    }
    if (too_many_steps) {
        fprintf(f, "# more than %d step ids: the rest counted as step 0\n", MAX_STEPS);
    }
}

static void plugin_exit(qemu_plugin_id_t id, void *p)
{
    FILE *f = fopen(out_path, "w");
    GList *all, *it;

    if (!f) {
        g_autofree char *msg = g_strdup_printf("rl-insn-profile: cannot write %s\n", out_path);
        qemu_plugin_outs(msg);
        return;
    }
    g_mutex_lock(&lock);
    if (open_window && steps_marked) {
        segment_end(STEP_CLOSE);
    }
    windows += open_window;         /* a window the guest never closed ends here */
    fprintf(f, "# rl-insn-profile 1\n# windows %" PRIu64 " marks %" PRIu64 "\n"
            "# vaddr insns executions\n", windows, marks);
    all = g_list_sort(g_hash_table_get_values(blocks), by_vaddr);
    for (it = all; it; it = it->next) {
        Block *b = it->data;
        if (b->in_windows) {
            fprintf(f, "%016" PRIx64 " %" PRIu64 " %" PRIu64 "\n", b->vaddr, b->insns,
                    b->in_windows);
        }
    }
    if (steps_marked) {
        write_steps(f, all);
    }
    g_list_free(all);
    g_mutex_unlock(&lock);
    fclose(f);
}

QEMU_PLUGIN_EXPORT int qemu_plugin_install(qemu_plugin_id_t id, const qemu_info_t *info,
                                           int argc, char **argv)
{
    for (int i = 0; i < argc; i++) {
        g_auto(GStrv) kv = g_strsplit(argv[i], "=", 2);
        if (g_strcmp0(kv[0], "out") == 0 && kv[1] && kv[1][0]) {
            out_path = g_strdup(kv[1]);
        } else {
            fprintf(stderr, "rl-insn-profile: unknown argument '%s' (it takes out=PATH)\n",
                    argv[i]);
            return -1;
        }
    }
    if (!out_path) {
        fprintf(stderr, "rl-insn-profile: out=PATH is required\n");
        return -1;
    }
    blocks = g_hash_table_new(block_hash, block_equal);
    segments = g_hash_table_new(g_int64_hash, g_int64_equal);
    qemu_plugin_register_vcpu_tb_trans_cb(id, tb_trans);
    qemu_plugin_register_atexit_cb(id, plugin_exit, NULL);
    return 0;
}
