/* Counters at the end of a run, as JSON (docs/fabric.md, "Outputs"). */
#include <errno.h>
#include <string.h>

#include "stats.h"

/* Names of enum drop_reason: in the stats (unchanged JSON keys) and in the trace. */
const char *const drop_reason_name[DROP_REASONS] = {
    [DROP_DEST_DOWN] = "destination down",
    [DROP_UNKNOWN_DEST] = "unknown destination",
    [DROP_OVERSIZE] = "oversize",
    [DROP_BROADCAST_UNSUPPORTED] = "broadcast unsupported",
    [DROP_EXCESS_COLLISIONS] = "excess collisions",
    [DROP_QUEUE_FULL] = "queue full",
};

void json_string(FILE *out, const char *s)
{
    fputc('"', out);
    for (; *s; s++) {
        unsigned char c = *s;
        if (c == '"' || c == '\\') {
            fprintf(out, "\\%c", c);
        } else if (c < 0x20) {
            fprintf(out, "\\u%04x", c);
        } else {
            fputc(c, out);
        }
    }
    fputc('"', out);
}

int stats_write(struct fabric *f)
{
    if (!f->stats_path[0]) {
        return 0;
    }
    FILE *out = fopen(f->stats_path, "w");
    if (!out) {
        return -1;
    }
    /* "topology" and "links": network 0's, as with one network; "networks": all */
    fprintf(out, "{\n  \"topology\": \"%s\",\n  \"links\": [", f->nets[0].topo->name);
    f->nets[0].topo->stats(&f->nets[0], out);
    fprintf(out, "],\n  \"networks\": [");
    for (uint32_t i = 0; i < f->nnets; i++) {
        struct network *net = &f->nets[i];
        fprintf(out, "%s\n    {\"id\": %u, \"name\": ", i ? "," : "", net->id);
        json_string(out, net->name);
        fprintf(out, ", \"topology\": \"%s\", \"stations\": [", net->topo->name);
        for (uint32_t s = 0; s < net->n; s++) {
            fprintf(out, "%s%u", s ? ", " : "", net->station_node[s]);
        }
        fprintf(out, "], \"links\": [");
        net->topo->stats(net, out);
        fprintf(out, "]}");
    }
    fprintf(out, "\n  ],\n  \"nodes\": [");
    for (uint32_t k = 0; k < f->nnodes; k++) {
        const struct node *n = &f->nodes[k];
        fprintf(out, "%s\n    {\"id\": %u, \"name\": ", k ? "," : "", n->id);
        json_string(out, n->name);
        fprintf(out, ", \"kind\": \"%s\", \"frames_sent\": %llu, \"bytes_sent\": %llu, "
                "\"frames_received\": %llu, \"bytes_received\": %llu, \"syncs\": %llu, "
                "\"sync_messages\": %llu, \"last_time_ns\": %llu}",
                n->kind == NODE_VM ? "vm" : "synthetic",
                (unsigned long long)n->frames_sent, (unsigned long long)n->bytes_sent,
                (unsigned long long)n->frames_received, (unsigned long long)n->bytes_received,
                (unsigned long long)max64(n->syncs, n->sync_points),
                (unsigned long long)n->syncs, (unsigned long long)n->t);
    }
    fprintf(out, "\n  ],\n  \"drops\": {");
    for (int r = 0; r < DROP_REASONS; r++) {
        fprintf(out, "%s\"%s\": %llu", r ? ", " : "", drop_reason_name[r],
                (unsigned long long)f->drops[r]);
    }
    fprintf(out, "},\n  \"causality_violations\": %llu\n}\n",
            (unsigned long long)f->causality_violations);
    if (ferror(out)) {
        fclose(out);
        errno = EIO;
        return -1;
    }
    return fclose(out) ? -1 : 0;
}
