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

typedef struct {
    uint64_t vaddr;
    uint64_t insns;                 /* in the block */
    uint64_t in_windows;            /* executions inside windows */
} Block;

static GHashTable *blocks;          /* (vaddr, insns) -> Block */
static GMutex lock;
static char *out_path;
static bool open_window;          /* the guest's marks open and close it */
static uint64_t windows, marks;

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
    open_window = !open_window;
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
        }
    }
}

static gint by_vaddr(gconstpointer a, gconstpointer b)
{
    const Block *x = a, *y = b;
    return x->vaddr < y->vaddr ? -1 : x->vaddr > y->vaddr;
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
    qemu_plugin_register_vcpu_tb_trans_cb(id, tb_trans);
    qemu_plugin_register_atexit_cb(id, plugin_exit, NULL);
    return 0;
}
