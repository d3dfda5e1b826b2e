/*
 * via_conn: what the VIA programs (via_pingpong, via_test) do alike over VIPL: open the
 * NIC with a tag, register one buffer of descriptors and data, make a VI, and connect
 * it (server: wait for the discriminator; client: request it, retrying while the
 * server is not waiting yet).
 */
#ifndef VIA_CONN_H
#define VIA_CONN_H

#include <stddef.h>

#include "vipl/vipl.h"

struct via_conn {
    VIP_NIC_HANDLE nic;
    VIP_PROTECTION_HANDLE tag;
    VIP_VI_HANDLE vi;
    VIP_NIC_ATTRIBUTES attrs;
    void *mem;                  /* page-aligned, registered */
    size_t mem_len;
    VIP_MEM_HANDLE mh;
    int fd_probe;               /* the NIC handle's file (VipNicFd), for the agent's tests */
    int vi_number;              /* the VI's number (VipViNumber) */
};

/* Open, tag, register mem_len bytes, create a VI (CQs may be NULL): 0 or a message. */
const char *via_conn_open(struct via_conn *c, size_t mem_len, VIP_CQ_HANDLE scq,
                          VIP_CQ_HANDLE rcq);
/* Connect c->vi: as the server (peer < 0: any node) or the client of node peer. */
VIP_RETURN via_conn_connect(struct via_conn *c, int server, int peer, const char *disc,
                            unsigned timeout_ms);
void via_conn_close(struct via_conn *c);

/* a descriptor of one data segment over [buf, buf + len) in c's registered memory */
void via_conn_desc(struct via_conn *c, VIP_DESCRIPTOR *d, void *buf, unsigned len);

#endif
