/* via_conn: see via_conn.h */
#include <string.h>
#include <sys/mman.h>
#include <time.h>

#include "via_conn.h"

const char *via_conn_open(struct via_conn *c, size_t mem_len, VIP_CQ_HANDLE scq,
                          VIP_CQ_HANDLE rcq)
{
    VIP_MEM_ATTRIBUTES ma = { 0 };
    VIP_VI_ATTRIBUTES va = { .ReliabilityLevel = VIP_SERVICE_RELIABLE_DELIVERY };

    memset(c, 0, sizeof(*c));
    if (VipOpenNic("/dev/via0", &c->nic) != VIP_SUCCESS)
        return "VipOpenNic";
    VipQueryNic(c->nic, &c->attrs);
    if (VipCreatePtag(c->nic, &c->tag) != VIP_SUCCESS)
        return "VipCreatePtag";
    c->mem = mmap(NULL, mem_len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (c->mem == MAP_FAILED)
        return "mmap";
    c->mem_len = mem_len;
    memset(c->mem, 0, mem_len);
    ma.Ptag = c->tag;
    if (VipRegisterMem(c->nic, c->mem, mem_len, &ma, &c->mh) != VIP_SUCCESS)
        return "VipRegisterMem";
    va.Ptag = c->tag;
    va.MaxTransferSize = c->attrs.MaxTransferSize;
    if (VipCreateVi(c->nic, &va, scq, rcq, &c->vi) != VIP_SUCCESS)
        return "VipCreateVi";
    c->fd_probe = VipNicFd(c->nic);
    c->vi_number = VipViNumber(c->vi);
    return NULL;
}

VIP_RETURN via_conn_connect(struct via_conn *c, int server, int peer, const char *disc,
                            unsigned timeout_ms)
{
    unsigned char local_buf[VIP_NET_ADDRESS_BYTES], remote_buf[VIP_NET_ADDRESS_BYTES];
    VIP_NET_ADDRESS *local = (void *)local_buf, *remote = (void *)remote_buf;
    VIP_VI_ATTRIBUTES ra;
    VIP_CONN_HANDLE conn;
    VIP_RETURN r;
    unsigned waited = 0;

    VipMakeAddress(local, c->attrs.LocalNicAddress[0] | c->attrs.LocalNicAddress[1] << 8,
                   disc, strlen(disc));
    if (server) {
        r = VipConnectWait(c->nic, local, timeout_ms, remote, &ra, &conn);
        return r == VIP_SUCCESS ? VipConnectAccept(conn, c->vi) : r;
    }
    VipMakeAddress(remote, peer, disc, strlen(disc));
    /* the server may not wait yet: its agent refuses at once; try again every 10 ms */
    for (;;) {
        r = VipConnectRequest(c->vi, local, remote, timeout_ms, &ra);
        if (r != VIP_REJECT || waited >= timeout_ms)
            return r;
        nanosleep(&(struct timespec){ 0, 10 * 1000 * 1000 }, NULL);
        waited += 10;
    }
}

void via_conn_close(struct via_conn *c)
{
    if (c->nic)
        VipCloseNic(c->nic);
    if (c->mem && c->mem != MAP_FAILED)
        munmap(c->mem, c->mem_len);
    memset(c, 0, sizeof(*c));
}

void via_conn_desc(struct via_conn *c, VIP_DESCRIPTOR *d, void *buf, unsigned len)
{
    memset(d, 0, sizeof(*d));
    d->CS.SegCount = 1;
    d->CS.Length = len;
    d->DS[0].Local.Data.Address = buf;
    d->DS[0].Local.Handle = c->mh;
    d->DS[0].Local.Length = len;
}
