/*
 * retrolink instruction profile: guest instructions executed per translated
 * block, inside windows the guest marks itself (docs/profile.md).
 *
 * A guest program opens and closes a window by executing the marker
 * instruction, "xchg %bx,%bx" (66 87 db: Bochs' magic breakpoint, a no-op
 * for the CPU). While a window is open every instruction that runs is counted
 * to its translated block; at exit the plugin writes one line per block that
 * ran inside a window: its guest virtual address and the instructions counted.
 * Symbols are resolved afterwards, from the guest's own symbol tables
 * (src/retrolink/profile/).
 *
 * Steps: inside a window, a guest may also mark where one step of its work
 * ends and the next begins with "nopl 0x524cNNNN(%rax)" (0f 1f 80 and the
 * 32-bit displacement 0x524c0000 + step id NNNN: 'RL', never an assembler's
 * padding, whose displacement is 0). The instructions between two step marks
 * go to the pair (from, to); each block's instructions are also counted per
 * step (the last mark before them), so a step's instructions can be named by
 * function. The window's opening is step 0, its closing step 0xffff.
 *
 * How instructions are counted: an inline add as each instruction begins (no
 * call), and one call as each block begins, which gives the instructions begun
 * since the last call to the block that ran them. A block does not always run
 * whole: an instruction that faults ends it (the fault's handler runs, then the
 * instruction again), and under -icount a device access that is not a block's
 * last instruction ends it too (QEMU runs that access again alone, in a block
 * it does not instrument, then the rest in a new block). Counting blocks whole
 * would count the instructions after such an access twice, as many as remain in
 * that block, and where the lock-step's sync points cut blocks depends on the
 * host's timing. Counting each instruction as it begins counts a device access
 * once, and an instruction that faults twice (the fault and the run after it:
 * the same in every run).
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
    uint64_t in_windows;            /* its instructions counted inside windows */
    uint64_t *by_step;              /* the same per step index */
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
static qemu_plugin_u64 begun;       /* per vCPU: instructions begun (an inline add each) */
static uint64_t settled;            /* `begun` when last given to a block */
static Block *cur_block;            /* the block running */
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

/* The instructions begun since the last call are the running block's. */
static void settle(unsigned int cpu)
{
    uint64_t now = qemu_plugin_u64_get(begun, cpu);
    uint64_t n = now - settled;

    settled = now;
    if (open_window && cur_block && n) {
        cur_block->in_windows += n;
        seg_insns += n;
        if (!cur_block->by_step) {
            cur_block->by_step = g_new0(uint64_t, MAX_STEPS);
        }
        cur_block->by_step[cur_step] += n;
    }
}

/* The marker ran (it is counted with what comes before it): open a window, or close
 * the open one. */
static void marker_hit(unsigned int cpu, void *udata)
{
    g_mutex_lock(&lock);
    settle(cpu);
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
    settle(cpu);
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
    settle(cpu);
    cur_block = udata;
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

        /* first, so that a mark's own instruction is begun when its call runs */
        qemu_plugin_register_vcpu_insn_exec_inline_per_vcpu(insn, QEMU_PLUGIN_INLINE_ADD_U64,
                                                            begun, 1);

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
    fprintf(f, "# per step: stepblock vaddr step instructions\n");
    for (it = all; it; it = it->next) {
        Block *b = it->data;
        for (unsigned int i = 0; b->by_step && i < nsteps; i++) {
            if (b->by_step[i]) {
                fprintf(f, "stepblock %016" PRIx64 " %u %" PRIu64 "\n",
                        b->vaddr, step_ids[i], b->by_step[i]);
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
    settle(0);                      /* one vCPU (-smp 1) */
    if (open_window && steps_marked) {
        segment_end(STEP_CLOSE);
    }
    windows += open_window;         /* a window the guest never closed ends here */
    fprintf(f, "# rl-insn-profile 2\n# windows %" PRIu64 " marks %" PRIu64 "\n"
            "# vaddr instructions\n", windows, marks);
    all = g_list_sort(g_hash_table_get_values(blocks), by_vaddr);
    for (it = all; it; it = it->next) {
        Block *b = it->data;
        if (b->in_windows) {
            fprintf(f, "%016" PRIx64 " %" PRIu64 "\n", b->vaddr, b->in_windows);
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
    begun = qemu_plugin_scoreboard_u64(qemu_plugin_scoreboard_new(sizeof(uint64_t)));
    segments = g_hash_table_new(g_int64_hash, g_int64_equal);
    qemu_plugin_register_vcpu_tb_trans_cb(id, tb_trans);
    qemu_plugin_register_atexit_cb(id, plugin_exit, NULL);
    return 0;
}
