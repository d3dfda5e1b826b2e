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
    if ((s = kv_get(keys, vals, n, "shard", used))) {
        if (parse_u64(s, &g) || g >= RL_MAX_NODES) {
            snprintf(err, errlen, "node %u: shard must be 0..%d", nd->id, RL_MAX_NODES - 1);
            return;
        }
        nd->shard = g;
    }
    for (int i = 0; i < n; i++) {
        if (!used[i]) {
            snprintf(err, errlen, "node %u: unknown key '%s' (known: name, granularity_ns, "
                     "shard)",
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
    uint64_t net = 0;
    if ((s = kv_get(keys, vals, m, "net", used)) &&
        (parse_u64(s, &net) || net >= RL_MAX_NETWORKS)) {
        snprintf(err, errlen, "synthetic %llu: net must be a network id below %d",
                 (unsigned long long)id, RL_MAX_NETWORKS);
        return -1;
    }
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
                 "optional start_ns and net, as whole numbers (times below 2^63)",
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
    nd->syn_net = net;        /* checked once every network is known */
    nd->syn_dst = dst;
    nd->syn_size = size;
    nd->syn_interval = interval;
    nd->syn_next = count ? start : NEVER;
    nd->syn_left = count;
    return 0;
}

static const char *const protocol_names[] = {
    [RL_PROTO_ANY] = "any",
#define RL_BOARD(name, PROTO, number) [RL_PROTO_##PROTO] = #name,
#include "retrolink/boards.def"
#undef RL_BOARD
};

#define NPROTOCOLS ((uint32_t)(sizeof(protocol_names) / sizeof(protocol_names[0])))

const char *protocol_name(uint32_t protocol)
{
    return protocol < NPROTOCOLS && protocol_names[protocol] ? protocol_names[protocol]
                                                              : "unknown";
}

/* A new network, id f->nnets, whose stations are the nodes in list ("0,2,1": station
 * 0 is node 0, station 1 node 2, ...), or every node when list is NULL. */
static struct network *network_add(struct fabric *f, const char *list, char *err, size_t errlen)
{
    uint32_t id = f->nnets;
    f->nets = xreallocarray(f->nets, id + 1, sizeof(*f->nets));
    struct network *net = &f->nets[id];

    memset(net, 0, sizeof(*net));
    net->f = f;
    net->id = id;
    snprintf(net->name, sizeof(net->name), "net%u", id);
    net->station_node = xcalloc(f->nnodes, sizeof(*net->station_node));
    net->node_station = xcalloc(f->nnodes, sizeof(*net->node_station));
    for (uint32_t k = 0; k < f->nnodes; k++) {
        net->node_station[k] = list ? STATION_NONE : k;
        net->station_node[k] = k;
    }
    f->nnets++;
    if (!list) {
        net->n = f->nnodes;
        return net;
    }
    char copy[4096];
    snprintf(copy, sizeof(copy), "%s", list);
    for (char *save, *s = strtok_r(copy, ",", &save); s; s = strtok_r(NULL, ",", &save)) {
        uint64_t k;
        if (parse_u64(s, &k) || k >= f->nnodes || net->node_station[k] != STATION_NONE) {
            snprintf(err, errlen, "network %u: stations must be distinct node ids below %u, "
                     "separated by commas", id, f->nnodes);
            return NULL;
        }
        net->node_station[k] = net->n;
        net->station_node[net->n++] = k;
    }
    if (!net->n) {
        snprintf(err, errlen, "network %u: no stations", id);
        return NULL;
    }
    return net;
}

/* 'network ID [name=NAME] [stations=LIST] [protocol=any|BOARD]' (boards.def): the next
 * 'topology' line is this network's. Ids go 0, 1, 2, ... in order. */
static void network_line(struct fabric *f, char **tok, int n, char *err, size_t errlen)
{
    char *keys[MAXTOK], *vals[MAXTOK];
    bool used[MAXTOK] = { false };
    uint64_t id;
    const char *s;

    if (n < 2 || parse_u64(tok[1], &id) || id != f->nnets || id >= RL_MAX_NETWORKS) {
        snprintf(err, errlen, "network: expected the next id, %u (at most %d networks)",
                 f->nnets, RL_MAX_NETWORKS);
        return;
    }
    if (f->nnets && !f->nets[f->nnets - 1].topo) {
        snprintf(err, errlen, "network %u has no 'topology' line", f->nnets - 1);
        return;
    }
    if (kv_split(tok + 2, n - 2, keys, vals, err, errlen)) {
        return;
    }
    int m = n - 2;
    struct network *net = network_add(f, kv_get(keys, vals, m, "stations", used), err, errlen);
    if (!net) {
        return;
    }
    if ((s = kv_get(keys, vals, m, "name", used))) {
        snprintf(net->name, sizeof(net->name), "%s", s);
    }
    if ((s = kv_get(keys, vals, m, "protocol", used))) {
        uint32_t p = 0;
        while (p < NPROTOCOLS && !(protocol_names[p] && !strcmp(protocol_names[p], s))) {
            p++;
        }
        if (p == NPROTOCOLS) {
            char known[256] = "";
            for (uint32_t k = 0; k < NPROTOCOLS; k++) {
                if (protocol_names[k]) {
                    size_t used_len = strlen(known);
                    snprintf(known + used_len, sizeof(known) - used_len, "%s%s",
                             used_len ? ", " : "", protocol_names[k]);
                }
            }
            snprintf(err, errlen, "network %u: protocol '%s' (known: %s)", net->id, s, known);
            return;
        }
        net->protocol = p;
    }
    for (int i = 0; i < m; i++) {
        if (!used[i]) {
            snprintf(err, errlen, "network %u: unknown key '%s' (known: name, stations, "
                     "protocol)", net->id, keys[i]);
            return;
        }
    }
}

/* Once every line is read: each network has a topology, each node knows its
 * networks, and each synthetic node and its destination are on its network. */
static void networks_check(struct fabric *f, char *err, size_t errlen)
{
    if (f->nnets && !f->nets[f->nnets - 1].topo) {
        snprintf(err, errlen, "network %u has no 'topology' line", f->nnets - 1);
        return;
    }
    for (uint32_t i = 0; i < f->nnets; i++) {
        for (uint32_t s = 0; s < f->nets[i].n; s++) {
            f->nodes[f->nets[i].station_node[s]].nets |= 1u << i;
        }
    }
    for (uint32_t k = 0; k < f->nnodes; k++) {
        struct node *nd = &f->nodes[k];
        if (nd->kind != NODE_SYNTHETIC) {
            continue;
        }
        if (nd->syn_net >= f->nnets ||
            f->nets[nd->syn_net].node_station[k] == STATION_NONE ||
            f->nets[nd->syn_net].node_station[nd->syn_dst] == STATION_NONE) {
            snprintf(err, errlen, "synthetic %u: it and its dst %u must be stations of its "
                     "network %u", k, nd->syn_dst, nd->syn_net);
            return;
        }
    }
}

/* Every VM node in a shard the configuration has, and every shard serving one. */
static void shards_check(struct fabric *f, char *err, size_t errlen)
{
    uint32_t shards = f->shards ? f->shards : 1;
    uint32_t *served = xcalloc(shards, sizeof(*served));

    for (uint32_t k = 0; k < f->nnodes; k++) {
        const struct node *n = &f->nodes[k];
        if (n->kind != NODE_VM) {
            continue;
        }
        if (n->shard >= shards) {
            snprintf(err, errlen, "node %u is in shard %u, but there are %u shard(s) "
                     "(shards N)", k, n->shard, shards);
            break;
        }
        served[n->shard]++;
    }
    for (uint32_t s = 0; s < shards && !err[0]; s++) {
        if (!served[s]) {
            snprintf(err, errlen, "shard %u serves no VM node: give each shard at least one "
                     "(node K shard=%u), or use fewer shards", s, s);
        }
    }
    free(served);
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
    f->barrier.cap = NEVER;
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
        } else if (!strcmp(tok[0], "network") && !f->nodes) {
            snprintf(msg, sizeof(msg), "'nodes N' must come before 'network'");
        } else if (!strcmp(tok[0], "network")) {
            network_line(f, tok, n, msg, sizeof(msg));
        } else if (!strcmp(tok[0], "topology") && n >= 2) {
            const struct topology_ops *topo = topology_by_name(tok[1]);
            char *keys[MAXTOK], *vals[MAXTOK];
            struct network *net = NULL;
            if (!topo) {
                snprintf(msg, sizeof(msg), "unknown topology '%s' (known: p2p, token_ring, "
                         "switch, min, hub, ethernet_switch, cpci_bus)", tok[1]);
            } else if (!f->nodes) {
                snprintf(msg, sizeof(msg), "'nodes N' must come before 'topology'");
            } else if (f->nnets && f->nets[f->nnets - 1].topo) {
                snprintf(msg, sizeof(msg), "network %u already has a topology; declare the "
                         "next one with 'network %u ...' first", f->nnets - 1, f->nnets);
            } else if (!(net = f->nnets ? &f->nets[f->nnets - 1]
                                        : network_add(f, NULL, msg, sizeof(msg)))) {
                /* network_add said why */
            } else if (!kv_split(tok + 2, n - 2, keys, vals, msg, sizeof(msg))) {
                net->topo = topo;
                topo->configure(net, keys, vals, n - 2, msg, sizeof(msg));
                have_topology = true;
            }
        } else if (!strcmp(tok[0], "stats") && n == 2) {
            snprintf(f->stats_path, sizeof(f->stats_path), "%s", tok[1]);
        } else if (!strcmp(tok[0], "trace") && n == 2) {
            snprintf(f->trace_path, sizeof(f->trace_path), "%s", tok[1]);
        } else if (!strcmp(tok[0], "status") && n == 2) {
            snprintf(f->status_path, sizeof(f->status_path), "%s", tok[1]);
        } else if (!strcmp(tok[0], "boot_barrier") && n == 2) {
            if (strcmp(tok[1], "on") && strcmp(tok[1], "off")) {
                snprintf(msg, sizeof(msg), "boot_barrier: expected on or off");
            }
            f->barrier.on = !strcmp(tok[1], "on");
        } else if (!strcmp(tok[0], "save_state") && n == 2) {
            snprintf(f->barrier.save_path, sizeof(f->barrier.save_path), "%s", tok[1]);
        } else if (!strcmp(tok[0], "restore_state") && n == 2) {
            snprintf(f->barrier.restore_path, sizeof(f->barrier.restore_path), "%s", tok[1]);
        } else if (!strcmp(tok[0], "shards") && n == 2) {
            if (parse_u64(tok[1], &v) || v < 1 || v > RL_MAX_NODES) {
                snprintf(msg, sizeof(msg), "shards: expected 1..%d", RL_MAX_NODES);
            }
            f->shards = v;
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
    if ((f->barrier.save_path[0] || f->barrier.restore_path[0]) && !f->barrier.on) {
        snprintf(err, errlen, "%s: save_state and restore_state need 'boot_barrier on'", path);
        return -1;
    }
    if (f->barrier.save_path[0] && f->barrier.restore_path[0]) {
        snprintf(err, errlen, "%s: a cluster restored from a state is past its barrier: "
                 "it cannot save one (save_state with restore_state)", path);
        return -1;
    }
    msg[0] = 0;
    shards_check(f, msg, sizeof(msg));
    if (!msg[0]) {
        networks_check(f, msg, sizeof(msg));
    }
    if (msg[0]) {
        snprintf(err, errlen, "%s: %s", path, msg);
        return -1;
    }
    return 0;
}
