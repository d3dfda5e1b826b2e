/*
 * The fabric's configuration file (docs/fabric.md): one directive per line.
 * Errors name the line and what was expected; the process exits with 2.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "config.h"
#include "link_stats.h"
#include "proto.h"

#define MAXTOK 64

static int split(char *line, char **tok)
{
    int n = 0;
    for (char *s = strtok(line, " \t\r\n"); s && n < MAXTOK; s = strtok(NULL, " \t\r\n")) {
        tok[n++] = s;
    }
    return n;
}

int parse_u64(const char *s, uint64_t *out)
{
    char *end;
    errno = 0;
    if (!s || !*s || *s == '-') {
        return -1;
    }
    unsigned long long v = strtoull(s, &end, 10);
    if (errno || *end) {
        return -1;
    }
    *out = v;
    return 0;
}

/* key=value tokens into parallel arrays (pointing into tok) */
static int kv_split(char **tok, int n, char **keys, char **vals, char *err, size_t errlen)
{
    for (int i = 0; i < n; i++) {
        char *eq = strchr(tok[i], '=');
        if (!eq || eq == tok[i]) {
            snprintf(err, errlen, "expected key=value, got '%s'", tok[i]);
            return -1;
        }
        *eq = 0;
        keys[i] = tok[i];
        vals[i] = eq + 1;
    }
    return 0;
}

static const char *kv_get(char **keys, char **vals, int n, const char *key, bool *used)
{
    for (int i = 0; i < n; i++) {
        if (!strcmp(keys[i], key)) {
            used[i] = true;
            return vals[i];
        }
    }
    return NULL;
}

/* The rest of 'node ID [name=NAME] [granularity_ns=G]': a VM node's name and, for
 * 'retrolink-fabric --check', its instruction time (its HELLO says it again). */
static void node_line(struct node *nd, char **tok, int n, char *err, size_t errlen)
{
    char *keys[MAXTOK], *vals[MAXTOK];
    bool used[MAXTOK] = { false };
    const char *s;
    uint64_t g;

    if (kv_split(tok, n, keys, vals, err, errlen)) {
        return;
    }
    if ((s = kv_get(keys, vals, n, "name", used))) {
        snprintf(nd->name, sizeof(nd->name), "%s", s);
    }
    if ((s = kv_get(keys, vals, n, "granularity_ns", used))) {
        if (parse_u64(s, &g) || g < 1 || g > TOPO_PARAM_MAX) {
            snprintf(err, errlen, "node %u: granularity_ns must be 1..%llu", nd->id,
                     (unsigned long long)TOPO_PARAM_MAX);
            return;
        }
        nd->granularity = g;
    }
    for (int i = 0; i < n; i++) {
        if (!used[i]) {
            snprintf(err, errlen, "node %u: unknown key '%s' (known: name, granularity_ns)",
                     nd->id, keys[i]);
            return;
        }
    }
}

static int synthetic(struct fabric *f, char **tok, int n, char *err, size_t errlen)
{
    uint64_t id, dst, size, interval, start = 0, count;
    char *keys[MAXTOK], *vals[MAXTOK];
    bool used[MAXTOK] = { false };

    if (n < 2 || parse_u64(tok[1], &id) || id >= f->nnodes) {
        snprintf(err, errlen, "synthetic: expected a node id below %u", f->nnodes);
        return -1;
    }
    if (kv_split(tok + 2, n - 2, keys, vals, err, errlen)) {
        return -1;
    }
    int m = n - 2;
    const char *name = kv_get(keys, vals, m, "name", used);
    const char *s;
    if (!(s = kv_get(keys, vals, m, "dst", used)) || parse_u64(s, &dst) || dst >= f->nnodes ||
        dst == id) {
        snprintf(err, errlen, "synthetic %llu: dst must be another node id", (unsigned long long)id);
        return -1;
    }
    if (!(s = kv_get(keys, vals, m, "size", used)) || parse_u64(s, &size) || size > RL_MAX_PAYLOAD ||
        !(s = kv_get(keys, vals, m, "interval_ns", used)) || parse_u64(s, &interval) || !interval ||
        interval >= TIME_LIMIT ||
        !(s = kv_get(keys, vals, m, "count", used)) || parse_u64(s, &count) ||
        ((s = kv_get(keys, vals, m, "start_ns", used)) && parse_u64(s, &start)) ||
        start >= TIME_LIMIT) {
        snprintf(err, errlen, "synthetic %llu: needs size (<= %d), interval_ns (> 0), count, "
                 "optional start_ns, as whole numbers (times below 2^63)",
                 (unsigned long long)id, RL_MAX_PAYLOAD);
        return -1;
    }
    for (int i = 0; i < m; i++) {
        if (!used[i]) {
            snprintf(err, errlen, "synthetic: unknown key '%s'", keys[i]);
            return -1;
        }
    }
    struct node *nd = &f->nodes[id];
    nd->kind = NODE_SYNTHETIC;
    snprintf(nd->name, sizeof(nd->name), "%s", name ? name : "synthetic");
    nd->syn_dst = dst;
    nd->syn_size = size;
    nd->syn_interval = interval;
    nd->syn_next = count ? start : NEVER;
    nd->syn_left = count;
    return 0;
}

int config_load(struct fabric *f, const char *path, char *err, size_t errlen)
{
    FILE *in = fopen(path, "r");
    char line[4096], msg[512];
    int lineno = 0;
    bool have_topology = false;

    if (!in) {
        snprintf(err, errlen, "%s: %s", path, strerror(errno));
        return -1;
    }
    f->stall_report_s = 5;
    while (fgets(line, sizeof(line), in)) {
        lineno++;
        char *hash = strchr(line, '#');
        if (hash) {
            *hash = 0;
        }
        char *tok[MAXTOK];
        int n = split(line, tok);
        uint64_t v;
        msg[0] = 0;
        if (n == 0) {
            continue;
        }
        if (!strcmp(tok[0], "socket") && n == 2) {
            if (strlen(tok[1]) >= sizeof(f->socket_path)) {
                snprintf(msg, sizeof(msg), "socket path longer than %zu", sizeof(f->socket_path) - 1);
            } else {
                strcpy(f->socket_path, tok[1]);
            }
        } else if (!strcmp(tok[0], "nodes") && n == 2) {
            if (f->nodes || parse_u64(tok[1], &v) || v < 1 || v > RL_MAX_NODES) {
                snprintf(msg, sizeof(msg), "nodes: expected 1..%d, once", RL_MAX_NODES);
            } else {
                f->nnodes = v;
                f->nodes = xcalloc(v, sizeof(*f->nodes));
                for (uint32_t i = 0; i < v; i++) {
                    f->nodes[i].id = i;
                    f->nodes[i].fd = -1;
                    f->nodes[i].kind = NODE_VM;
                    f->nodes[i].promise = 0;
                    snprintf(f->nodes[i].name, sizeof(f->nodes[i].name), "node%u", i);
                }
            }
        } else if ((!strcmp(tok[0], "node") || !strcmp(tok[0], "synthetic")) && !f->nodes) {
            snprintf(msg, sizeof(msg), "'nodes N' must come before '%s'", tok[0]);
        } else if (!strcmp(tok[0], "node") && n >= 2) {
            if (parse_u64(tok[1], &v) || v >= f->nnodes) {
                snprintf(msg, sizeof(msg), "node: expected an id below %u", f->nnodes);
            } else {
                node_line(&f->nodes[v], tok + 2, n - 2, msg, sizeof(msg));
            }
        } else if (!strcmp(tok[0], "synthetic")) {
            synthetic(f, tok, n, msg, sizeof(msg));
        } else if (!strcmp(tok[0], "topology") && n >= 2) {
            f->topo = topology_by_name(tok[1]);
            char *keys[MAXTOK], *vals[MAXTOK];
            if (!f->topo) {
                snprintf(msg, sizeof(msg), "unknown topology '%s' (known: p2p, token_ring, "
                         "switch, min, hub, ethernet_switch)", tok[1]);
            } else if (!f->nodes) {
                snprintf(msg, sizeof(msg), "'nodes N' must come before 'topology'");
            } else if (!kv_split(tok + 2, n - 2, keys, vals, msg, sizeof(msg))) {
                f->topo->configure(f, keys, vals, n - 2, msg, sizeof(msg));
                have_topology = true;
            }
        } else if (!strcmp(tok[0], "stats") && n == 2) {
            snprintf(f->stats_path, sizeof(f->stats_path), "%s", tok[1]);
        } else if (!strcmp(tok[0], "trace") && n == 2) {
            snprintf(f->trace_path, sizeof(f->trace_path), "%s", tok[1]);
        } else if (!strcmp(tok[0], "status") && n == 2) {
            snprintf(f->status_path, sizeof(f->status_path), "%s", tok[1]);
        } else if (!strcmp(tok[0], "stall_report_s") && n == 2) {
            if (parse_u64(tok[1], &f->stall_report_s) || f->stall_report_s > 86400) {
                snprintf(msg, sizeof(msg), "stall_report_s: expected whole seconds, 0..86400");
            }
        } else {
            snprintf(msg, sizeof(msg), "unknown directive or wrong number of arguments: '%s'",
                     tok[0]);
        }
        if (msg[0]) {
            snprintf(err, errlen, "%s:%d: %s", path, lineno, msg);
            fclose(in);
            return -1;
        }
    }
    fclose(in);
    if (!f->socket_path[0] || !f->nodes || !have_topology) {
        snprintf(err, errlen, "%s: needs 'socket', 'nodes' and 'topology' lines", path);
        return -1;
    }
    return 0;
}
