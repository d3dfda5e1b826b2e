/*
 * VIPL over the VIA kernel agent (vipl.h; docs/boards/via.md).
 *
 * What goes through the agent: opening the NIC, tags, registration, VIs and CQs,
 * connections, and the blocking waits (VIA_IOC_WAIT). What does not: posting (a 64-bit
 * store of VIA_DB_VALUE(memory handle, offset) into the VI's mapped doorbell page),
 * polling (the head descriptor's Status in memory, the CQ ring mapped from the agent).
 *
 * Per NIC handle the library keeps each region's base address and length by memory
 * handle (to check a descriptor lies in the region named, and to compute the offset the
 * doorbell takes), and per work queue the descriptors posted, in order: the NIC
 * completes them in that order, so Done and Wait look at the head only.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <sys/ioctl.h>
#include <sys/mman.h>

#include "retrolink/uapi/via.h"
#include "vipl.h"

#define VIPL_NIC_MAGIC  0x4e49504cu     /* "LPIN" */
#define VIPL_VI_MAGIC   0x5649504cu
#define VIPL_CQ_MAGIC   0x4351504cu
#define VIPL_DEVICE     "/dev/via0"

struct vipl_region {
    uint64_t va, len;
};

struct vipl_vi;

struct vipl_nic {
    uint32_t magic;
    int fd;
    struct via_nic_info info;
    uint8_t address[VIP_HOST_ADDRESS_LEN];
    struct vipl_region *regions;        /* by memory handle; len 0: none */
    struct vipl_vi *vis[VIA_MAX_VIS];   /* by VI number, for the CQs */
};

struct vipl_queue {
    VIP_DESCRIPTOR *posted[VIA_WQ_DEPTH];
    uint32_t head, tail;                /* taken, posted */
};

struct vipl_cq {
    uint32_t magic;
    struct vipl_nic *nic;
    uint32_t cq, entries, head;         /* head: entries consumed */
    volatile struct via_cq_entry *ring;
    size_t bytes;
};

struct vipl_vi {
    uint32_t magic;
    struct vipl_nic *nic;
    uint32_t vi;
    volatile uint8_t *db;
    VIP_VI_STATE state;
    VIP_VI_ATTRIBUTES attrs;
    struct vipl_cq *scq, *rcq;
    struct vipl_queue sq, rq;
};

static struct vipl_nic *nic_of(VIP_NIC_HANDLE h)
{
    struct vipl_nic *nic = h;

    return nic && nic->magic == VIPL_NIC_MAGIC ? nic : NULL;
}

static struct vipl_vi *vi_of(VIP_VI_HANDLE h)
{
    struct vipl_vi *vi = h;

    return vi && vi->magic == VIPL_VI_MAGIC ? vi : NULL;
}

static struct vipl_cq *cq_of(VIP_CQ_HANDLE h)
{
    struct vipl_cq *cq = h;

    return cq && cq->magic == VIPL_CQ_MAGIC ? cq : NULL;
}

static uint32_t ptag_of(VIP_PROTECTION_HANDLE h)
{
    uintptr_t t = (uintptr_t)h;

    return t >= 1 && t <= 255 ? (uint32_t)t : 0;
}

/* the agent's errno as VIPL's code */
static VIP_RETURN vipl_errno(int err)
{
    switch (err) {
    case 0:
        return VIP_SUCCESS;
    case ENOENT:
    case EINVAL:
    case EFAULT:
        return VIP_INVALID_PARAMETER;
    case EBUSY:
        return VIP_INVALID_STATE;
    case ETIMEDOUT:
        return VIP_TIMEOUT;
    case ECONNREFUSED:
        return VIP_REJECT;
    case EHOSTUNREACH:
        return VIP_NOT_REACHABLE;
    default:
        return VIP_ERROR_RESOURCE;  /* ENOSPC, ENOMEM, ENODEV */
    }
}

static VIP_RETURN vipl_ioctl(struct vipl_nic *nic, unsigned long cmd, void *arg)
{
    return ioctl(nic->fd, cmd, arg) ? vipl_errno(errno) : VIP_SUCCESS;
}

const char *VipReturnName(VIP_RETURN code)
{
    static const char *const names[] = {
        "VIP_SUCCESS", "VIP_NOT_DONE", "VIP_INVALID_PARAMETER", "VIP_ERROR_RESOURCE",
        "VIP_TIMEOUT", "VIP_REJECT", "VIP_INVALID_RELIABILITY_LEVEL", "VIP_INVALID_MTU",
        "VIP_INVALID_QOS", "VIP_INVALID_PTAG", "VIP_INVALID_RDMAREAD",
        "VIP_DESCRIPTOR_ERROR", "VIP_INVALID_STATE", "VIP_ERROR_NAMESERVICE",
        "VIP_NO_MATCH", "VIP_NOT_REACHABLE", "VIP_ERROR_NOT_SUPPORTED",
    };

    return (unsigned)code < sizeof(names) / sizeof(names[0]) ? names[code] : "VIP_?";
}

int VipNicFd(VIP_NIC_HANDLE h)
{
    struct vipl_nic *nic = nic_of(h);

    return nic ? nic->fd : -1;
}

int VipViNumber(VIP_VI_HANDLE h)
{
    struct vipl_vi *vi = vi_of(h);

    return vi ? (int)vi->vi : -1;
}

/* ---- the NIC ------------------------------------------------------------------------ */

VIP_RETURN VipOpenNic(const VIP_CHAR *name, VIP_NIC_HANDLE *out)
{
    struct vipl_nic *nic;

    if (!out)
        return VIP_INVALID_PARAMETER;
    nic = calloc(1, sizeof(*nic));
    if (!nic)
        return VIP_ERROR_RESOURCE;
    nic->fd = open(name && *name ? name : VIPL_DEVICE, O_RDWR | O_CLOEXEC);
    if (nic->fd < 0) {
        free(nic);
        return errno == ENOENT ? VIP_INVALID_PARAMETER : VIP_ERROR_RESOURCE;
    }
    if (ioctl(nic->fd, VIA_IOC_QUERY, &nic->info) ||
        !(nic->regions = calloc(nic->info.max_regions + 1, sizeof(*nic->regions)))) {
        close(nic->fd);
        free(nic);
        return VIP_ERROR_RESOURCE;
    }
    nic->address[0] = nic->info.node & 0xff;
    nic->address[1] = nic->info.node >> 8;
    nic->magic = VIPL_NIC_MAGIC;
    *out = nic;
    return VIP_SUCCESS;
}

static void vipl_vi_free(struct vipl_vi *vi)
{
    if (vi->db)
        munmap((void *)vi->db, VIA_DB_PAGE_SIZE);
    vi->nic->vis[vi->vi] = NULL;
    vi->magic = 0;
    free(vi);
}

/* Everything the handle made goes with it (the agent frees its side at close). */
VIP_RETURN VipCloseNic(VIP_NIC_HANDLE h)
{
    struct vipl_nic *nic = nic_of(h);
    int i;

    if (!nic)
        return VIP_INVALID_PARAMETER;
    for (i = 0; i < VIA_MAX_VIS; i++)
        if (nic->vis[i])
            vipl_vi_free(nic->vis[i]);
    close(nic->fd);
    free(nic->regions);
    nic->magic = 0;
    free(nic);
    return VIP_SUCCESS;
}

VIP_RETURN VipQueryNic(VIP_NIC_HANDLE h, VIP_NIC_ATTRIBUTES *a)
{
    struct vipl_nic *nic = nic_of(h);

    if (!nic || !a)
        return VIP_INVALID_PARAMETER;
    memset(a, 0, sizeof(*a));
    strcpy(a->Name, "retrolink VIA NIC (cLAN-like)");
    a->HardwareVersion = 1;
    a->ProviderVersion = 1;
    a->NicAddressLen = VIP_HOST_ADDRESS_LEN;
    a->LocalNicAddress = nic->address;
    a->ThreadSafe = VIP_FALSE;
    a->MaxDiscriminatorLen = VIA_DISCRIMINATOR_MAX;
    a->MaxRegisterBytes = nic->info.max_register;
    a->MaxRegisterRegions = nic->info.max_regions;
    a->MaxRegisterBlockBytes = nic->info.max_register;
    a->MaxVI = nic->info.max_vis;
    a->MaxDescriptorsPerQueue = nic->info.wq_depth;
    a->MaxSegmentsPerDesc = nic->info.max_segs;
    a->MaxCQ = nic->info.max_cqs;
    a->MaxCQEntries = nic->info.cq_max_entries;
    a->MaxTransferSize = nic->info.max_msg;
    a->NativeMTU = nic->info.max_msg;
    a->MaxPtags = 255;
    a->ReliabilityLevelSupport = VIP_SERVICE_RELIABLE_DELIVERY;
    a->RDMAReadSupport = 0;
    return VIP_SUCCESS;
}

/* ---- tags and memory ---------------------------------------------------------------- */

VIP_RETURN VipCreatePtag(VIP_NIC_HANDLE h, VIP_PROTECTION_HANDLE *out)
{
    struct vipl_nic *nic = nic_of(h);
    struct via_ptag t;
    VIP_RETURN r;

    if (!nic || !out)
        return VIP_INVALID_PARAMETER;
    r = vipl_ioctl(nic, VIA_IOC_CREATE_PTAG, &t);
    if (r == VIP_SUCCESS)
        *out = (VIP_PROTECTION_HANDLE)(uintptr_t)t.ptag;
    return r;
}

VIP_RETURN VipDestroyPtag(VIP_NIC_HANDLE h, VIP_PROTECTION_HANDLE tag)
{
    struct vipl_nic *nic = nic_of(h);
    struct via_ptag t = { .ptag = ptag_of(tag) };

    if (!nic)
        return VIP_INVALID_PARAMETER;
    if (!t.ptag || ioctl(nic->fd, VIA_IOC_DESTROY_PTAG, &t))
        return t.ptag && errno == EBUSY ? VIP_INVALID_STATE : VIP_INVALID_PTAG;
    return VIP_SUCCESS;
}

VIP_RETURN VipRegisterMem(VIP_NIC_HANDLE h, VIP_PVOID va, VIP_ULONG len,
                          VIP_MEM_ATTRIBUTES *attrs, VIP_MEM_HANDLE *out)
{
    struct vipl_nic *nic = nic_of(h);
    struct via_register reg;

    if (!nic || !attrs || !out || !va || !len)
        return VIP_INVALID_PARAMETER;
    if (attrs->EnableRdmaRead)
        return VIP_INVALID_RDMAREAD;
    reg = (struct via_register){ .va = (uintptr_t)va, .len = len,
                                 .ptag = ptag_of(attrs->Ptag) };
    if (!reg.ptag)
        return VIP_INVALID_PTAG;
    if (ioctl(nic->fd, VIA_IOC_REGISTER, &reg))
        return errno == ENOENT ? VIP_INVALID_PTAG : vipl_errno(errno);
    if (reg.handle == 0 || reg.handle > nic->info.max_regions)
        return VIP_ERROR_RESOURCE;
    nic->regions[reg.handle] = (struct vipl_region){ .va = reg.va, .len = reg.len };
    *out = reg.handle;
    return VIP_SUCCESS;
}

static struct vipl_region *vipl_region(struct vipl_nic *nic, VIP_MEM_HANDLE mh)
{
    if (mh == 0 || mh > nic->info.max_regions || !nic->regions[mh].len)
        return NULL;
    return &nic->regions[mh];
}

VIP_RETURN VipDeregisterMem(VIP_NIC_HANDLE h, VIP_PVOID va, VIP_MEM_HANDLE mh)
{
    struct vipl_nic *nic = nic_of(h);
    struct vipl_region *r;
    VIP_RETURN ret;

    if (!nic || !(r = vipl_region(nic, mh)) || r->va != (uintptr_t)va)
        return VIP_INVALID_PARAMETER;
    ret = vipl_ioctl(nic, VIA_IOC_DEREGISTER, &mh);
    if (ret == VIP_SUCCESS)
        r->len = 0;
    return ret;
}

/* one mapping of the agent's (a ring, a doorbell page), or NULL */
static void *vipl_map(struct vipl_nic *nic, size_t bytes, uint64_t off)
{
    void *p = mmap(NULL, bytes, PROT_READ | PROT_WRITE, MAP_SHARED, nic->fd, off);

    return p == MAP_FAILED ? NULL : p;
}

/* The agent destroys a VI or CQ only once unmapped: unmap it and ask; if it refuses,
 * map it again (*map is then the new mapping). */
static VIP_RETURN vipl_unmap_destroy(struct vipl_nic *nic, volatile void **map, size_t bytes,
                                     uint64_t off, unsigned long cmd, uint32_t id)
{
    int err;

    munmap((void *)*map, bytes);
    *map = NULL;
    if (!ioctl(nic->fd, cmd, &id))
        return VIP_SUCCESS;
    err = errno;
    *map = vipl_map(nic, bytes, off);
    return vipl_errno(err);
}

/* ---- CQs -------------------------------------------------------------------------------- */

VIP_RETURN VipCreateCQ(VIP_NIC_HANDLE h, VIP_ULONG count, VIP_CQ_HANDLE *out)
{
    struct vipl_nic *nic = nic_of(h);
    struct via_cq_create req = { .entries = count };
    struct vipl_cq *cq;
    void *ring;
    VIP_RETURN r;

    if (!nic || !out || count == 0 || count > nic->info.cq_max_entries)
        return VIP_INVALID_PARAMETER;
    r = vipl_ioctl(nic, VIA_IOC_CREATE_CQ, &req);
    if (r != VIP_SUCCESS)
        return r;
    cq = calloc(1, sizeof(*cq));
    size_t bytes = (VIA_CQ_RING_BYTES(req.ring_entries) + 4095) & ~(size_t)4095;
    ring = cq ? vipl_map(nic, bytes, VIA_MMAP_CQ(req.cq)) : NULL;
    if (!ring) {
        free(cq);
        ioctl(nic->fd, VIA_IOC_DESTROY_CQ, &req.cq);
        return VIP_ERROR_RESOURCE;
    }
    *cq = (struct vipl_cq){ .magic = VIPL_CQ_MAGIC, .nic = nic, .cq = req.cq,
                            .entries = req.ring_entries, .ring = ring, .bytes = bytes };
    *out = cq;
    return VIP_SUCCESS;
}

VIP_RETURN VipDestroyCQ(VIP_CQ_HANDLE h)
{
    struct vipl_cq *cq = cq_of(h);
    int i;

    if (!cq)
        return VIP_INVALID_PARAMETER;
    for (i = 0; i < VIA_MAX_VIS; i++) {
        struct vipl_vi *vi = cq->nic->vis[i];

        if (vi && (vi->scq == cq || vi->rcq == cq))
            return VIP_INVALID_STATE;   /* a VI completes into it */
    }
    VIP_RETURN r = vipl_unmap_destroy(cq->nic, (volatile void **)&cq->ring, cq->bytes,
                                      VIA_MMAP_CQ(cq->cq), VIA_IOC_DESTROY_CQ, cq->cq);

    if (r != VIP_SUCCESS)
        return r;
    cq->magic = 0;
    free(cq);
    return VIP_SUCCESS;
}

/* ---- VIs ---------------------------------------------------------------------------------- */

VIP_RETURN VipCreateVi(VIP_NIC_HANDLE h, VIP_VI_ATTRIBUTES *attrs, VIP_CQ_HANDLE send_cq,
                       VIP_CQ_HANDLE recv_cq, VIP_VI_HANDLE *out)
{
    struct vipl_nic *nic = nic_of(h);
    struct vipl_cq *scq = cq_of(send_cq), *rcq = cq_of(recv_cq);
    struct via_vi_create req;
    struct vipl_vi *vi;

    if (!nic || !attrs || !out || (send_cq && (!scq || scq->nic != nic)) ||
        (recv_cq && (!rcq || rcq->nic != nic)))
        return VIP_INVALID_PARAMETER;
    if (attrs->ReliabilityLevel != VIP_SERVICE_RELIABLE_DELIVERY)
        return VIP_INVALID_RELIABILITY_LEVEL;
    if (attrs->MaxTransferSize > nic->info.max_msg)
        return VIP_INVALID_MTU;
    if (attrs->QoS)
        return VIP_INVALID_QOS;
    if (attrs->EnableRdmaRead)
        return VIP_INVALID_RDMAREAD;
    if (attrs->EnableRdmaWrite)
        return VIP_ERROR_NOT_SUPPORTED;
    req = (struct via_vi_create){ .ptag = ptag_of(attrs->Ptag),
                                  .send_cq = scq ? scq->cq : VIA_NO_CQ_HANDLE,
                                  .recv_cq = rcq ? rcq->cq : VIA_NO_CQ_HANDLE };
    if (!req.ptag)
        return VIP_INVALID_PTAG;
    if (ioctl(nic->fd, VIA_IOC_CREATE_VI, &req))
        return errno == ENOENT ? VIP_INVALID_PTAG : vipl_errno(errno);
    vi = calloc(1, sizeof(*vi));
    if (!vi || req.vi >= VIA_MAX_VIS || !(vi ? (vi->db = vipl_map(nic, VIA_DB_PAGE_SIZE, VIA_MMAP_DOORBELL(req.vi))) : NULL)) {
        free(vi);
        ioctl(nic->fd, VIA_IOC_DESTROY_VI, &req.vi);
        return VIP_ERROR_RESOURCE;
    }
    vi->magic = VIPL_VI_MAGIC;
    vi->nic = nic;
    vi->vi = req.vi;
    vi->state = VIP_STATE_IDLE;
    vi->attrs = *attrs;
    if (!vi->attrs.MaxTransferSize)
        vi->attrs.MaxTransferSize = nic->info.max_msg;
    vi->scq = scq;
    vi->rcq = rcq;
    nic->vis[req.vi] = vi;
    *out = vi;
    return VIP_SUCCESS;
}

VIP_RETURN VipDestroyVi(VIP_VI_HANDLE h)
{
    struct vipl_vi *vi = vi_of(h);
    VIP_RETURN r;

    if (!vi)
        return VIP_INVALID_PARAMETER;
    if (vi->state != VIP_STATE_IDLE)
        return VIP_INVALID_STATE;
    r = vipl_unmap_destroy(vi->nic, (volatile void **)&vi->db, VIA_DB_PAGE_SIZE,
                           VIA_MMAP_DOORBELL(vi->vi), VIA_IOC_DESTROY_VI, vi->vi);
    if (r != VIP_SUCCESS)
        return r;
    vipl_vi_free(vi);
    return VIP_SUCCESS;
}

/* the NIC's state of the VI (a PCI read: only after an error or when asked) */
static VIP_VI_STATE vipl_hw_state(struct vipl_vi *vi)
{
    switch (*(volatile uint32_t *)(vi->db + VIA_DB_STATE)) {
    case VIA_VI_CONNECTED:
        return VIP_STATE_CONNECTED;
    case VIA_VI_ERROR:
        return VIP_STATE_ERROR;
    default:
        return VIP_STATE_IDLE;
    }
}

VIP_RETURN VipQueryVi(VIP_VI_HANDLE h, VIP_VI_STATE *state, VIP_VI_ATTRIBUTES *attrs,
                      VIP_BOOLEAN *send_empty, VIP_BOOLEAN *recv_empty)
{
    struct vipl_vi *vi = vi_of(h);

    if (!vi)
        return VIP_INVALID_PARAMETER;
    vi->state = vipl_hw_state(vi);
    if (state)
        *state = vi->state;
    if (attrs)
        *attrs = vi->attrs;
    if (send_empty)
        *send_empty = vi->sq.head == vi->sq.tail;
    if (recv_empty)
        *recv_empty = vi->rq.head == vi->rq.tail;
    return VIP_SUCCESS;
}

/* ---- connections ------------------------------------------------------------------------- */

void VipMakeAddress(VIP_NET_ADDRESS *a, VIP_UINT32 node, const void *disc, VIP_UINT16 len)
{
    if (len > VIP_MAX_DISCRIMINATOR)
        len = VIP_MAX_DISCRIMINATOR;
    a->HostAddressLen = VIP_HOST_ADDRESS_LEN;
    a->DiscriminatorLen = len;
    a->HostAddress[0] = node & 0xff;
    a->HostAddress[1] = (node >> 8) & 0xff;
    if (len)
        memcpy(a->HostAddress + VIP_HOST_ADDRESS_LEN, disc, len);
}

/* an address's discriminator into c; 0, or -1 if the address is not one of ours */
static int vipl_discriminator(const VIP_NET_ADDRESS *a, struct via_connect *c)
{
    if (!a || a->HostAddressLen < 1 || a->HostAddressLen > 4 ||
        a->DiscriminatorLen > VIA_DISCRIMINATOR_MAX)
        return -1;
    c->disc_len = a->DiscriminatorLen;
    memcpy(c->discriminator, a->HostAddress + a->HostAddressLen, a->DiscriminatorLen);
    return 0;
}

static uint32_t vipl_node(const VIP_NET_ADDRESS *a)
{
    uint32_t node = 0;
    int i;

    for (i = a->HostAddressLen - 1; i >= 0; i--)
        node = node << 8 | a->HostAddress[i];
    return node;
}

static void vipl_remote_attrs(struct vipl_nic *nic, VIP_VI_ATTRIBUTES *a)
{
    if (a)
        *a = (VIP_VI_ATTRIBUTES){ .ReliabilityLevel = VIP_SERVICE_RELIABLE_DELIVERY,
                                  .MaxTransferSize = nic->info.max_msg };
}

VIP_RETURN VipConnectWait(VIP_NIC_HANDLE h, VIP_NET_ADDRESS *local, VIP_ULONG timeout,
                          VIP_NET_ADDRESS *remote, VIP_VI_ATTRIBUTES *remote_attrs,
                          VIP_CONN_HANDLE *conn)
{
    struct vipl_nic *nic = nic_of(h);
    struct via_connect c = { .timeout_ms = timeout };
    VIP_RETURN r;

    if (!nic || !conn || vipl_discriminator(local, &c))
        return VIP_INVALID_PARAMETER;
    r = vipl_ioctl(nic, VIA_IOC_CONNECT_WAIT, &c);
    if (r != VIP_SUCCESS)
        return r;
    if (remote)
        VipMakeAddress(remote, c.node, NULL, 0);
    vipl_remote_attrs(nic, remote_attrs);
    /* the connection names its NIC handle and the agent's number */
    *conn = (VIP_CONN_HANDLE)(uintptr_t)((uint64_t)c.conn << 32 | (uint32_t)nic->fd);
    return VIP_SUCCESS;
}

VIP_RETURN VipConnectAccept(VIP_CONN_HANDLE conn, VIP_VI_HANDLE h)
{
    struct vipl_vi *vi = vi_of(h);
    uint64_t id = (uintptr_t)conn;
    struct via_connect c;
    VIP_RETURN r;

    if (!vi || !conn || (int)(uint32_t)id != vi->nic->fd)
        return VIP_INVALID_PARAMETER;
    if (vi->state != VIP_STATE_IDLE)
        return VIP_INVALID_STATE;
    c = (struct via_connect){ .vi = vi->vi, .conn = id >> 32 };
    r = vipl_ioctl(vi->nic, VIA_IOC_CONNECT_ACCEPT, &c);
    if (r == VIP_SUCCESS)
        vi->state = VIP_STATE_CONNECTED;
    return r;
}

/* the NIC handle is not in the connection: the file is found from any of ours... */
VIP_RETURN VipConnectReject(VIP_CONN_HANDLE conn)
{
    uint64_t id = (uintptr_t)conn;
    struct via_connect c = { .conn = id >> 32 };

    if (!conn)
        return VIP_INVALID_PARAMETER;
    return ioctl((int)(uint32_t)id, VIA_IOC_CONNECT_REJECT, &c) ? vipl_errno(errno)
                                                                 : VIP_SUCCESS;
}

VIP_RETURN VipConnectRequest(VIP_VI_HANDLE h, VIP_NET_ADDRESS *local, VIP_NET_ADDRESS *remote,
                             VIP_ULONG timeout, VIP_VI_ATTRIBUTES *remote_attrs)
{
    struct vipl_vi *vi = vi_of(h);
    struct via_connect c = { .timeout_ms = timeout };
    VIP_RETURN r;

    (void)local;
    if (!vi || vipl_discriminator(remote, &c))
        return VIP_INVALID_PARAMETER;
    if (vi->state != VIP_STATE_IDLE)
        return VIP_INVALID_STATE;
    c.vi = vi->vi;
    c.node = vipl_node(remote);
    if (c.node >= vi->nic->info.nodes || c.node == vi->nic->info.node)
        return VIP_NOT_REACHABLE;
    r = vipl_ioctl(vi->nic, VIA_IOC_CONNECT_REQUEST, &c);
    if (r != VIP_SUCCESS)
        return r;
    vi->state = VIP_STATE_CONNECTED;
    vipl_remote_attrs(vi->nic, remote_attrs);
    return VIP_SUCCESS;
}

VIP_RETURN VipDisconnect(VIP_VI_HANDLE h)
{
    struct vipl_vi *vi = vi_of(h);
    VIP_RETURN r;

    if (!vi)
        return VIP_INVALID_PARAMETER;
    if (vi->state == VIP_STATE_IDLE && vipl_hw_state(vi) == VIP_STATE_IDLE)
        return VIP_INVALID_STATE;
    r = vipl_ioctl(vi->nic, VIA_IOC_DISCONNECT, &vi->vi);
    if (r == VIP_SUCCESS)
        vi->state = VIP_STATE_IDLE;
    return r;
}

/* ---- posting and completion ------------------------------------------------------------- */

static VIP_RETURN vipl_post(struct vipl_vi *vi, struct vipl_queue *q, VIP_DESCRIPTOR *d,
                            VIP_MEM_HANDLE mh, unsigned int doorbell)
{
    struct vipl_region *r;
    uint64_t va = (uintptr_t)d, off;

    if (!d || va % VIA_DESC_ALIGN || !(r = vipl_region(vi->nic, mh)) || va < r->va ||
        va + sizeof(VIP_CONTROL_SEGMENT) > r->va + r->len)
        return VIP_INVALID_PARAMETER;
    off = va - r->va;
    if (off % VIA_DESC_ALIGN || off > UINT32_MAX)
        return VIP_INVALID_PARAMETER;   /* the region must start 64-byte aligned */
    if (d->CS.SegCount > vi->nic->info.max_segs ||
        va + sizeof(VIP_CONTROL_SEGMENT) + d->CS.SegCount * sizeof(VIP_DATA_SEGMENT) >
            r->va + r->len)
        return VIP_DESCRIPTOR_ERROR;
    if (q->tail - q->head >= VIA_WQ_DEPTH)
        return VIP_ERROR_RESOURCE;
    d->CS.Status = 0;
    q->posted[q->tail % VIA_WQ_DEPTH] = d;
    q->tail++;
    /* the descriptor in memory before the NIC is told of it */
    __atomic_thread_fence(__ATOMIC_RELEASE);
    *(volatile uint64_t *)(vi->db + doorbell) = VIA_DB_VALUE(mh, off);
    return VIP_SUCCESS;
}

VIP_RETURN VipPostSend(VIP_VI_HANDLE h, VIP_DESCRIPTOR *d, VIP_MEM_HANDLE mh)
{
    struct vipl_vi *vi = vi_of(h);

    if (!vi)
        return VIP_INVALID_PARAMETER;
    if (vi->state != VIP_STATE_CONNECTED)
        return VIP_INVALID_STATE;
    return vipl_post(vi, &vi->sq, d, mh, VIA_DB_SEND);
}

VIP_RETURN VipPostRecv(VIP_VI_HANDLE h, VIP_DESCRIPTOR *d, VIP_MEM_HANDLE mh)
{
    struct vipl_vi *vi = vi_of(h);

    if (!vi)
        return VIP_INVALID_PARAMETER;
    if (vi->state == VIP_STATE_ERROR)
        return VIP_INVALID_STATE;
    return vipl_post(vi, &vi->rq, d, mh, VIA_DB_RECV);
}

/* The head descriptor, if the NIC has completed it: taken off the queue. */
static VIP_RETURN vipl_done(struct vipl_vi *vi, struct vipl_queue *q, VIP_DESCRIPTOR **out)
{
    VIP_DESCRIPTOR *d;
    uint32_t status;

    if (q->head == q->tail)
        return VIP_NOT_DONE;
    d = q->posted[q->head % VIA_WQ_DEPTH];
    status = *(volatile uint32_t *)&d->CS.Status;
    if (!(status & VIP_STATUS_DONE))
        return VIP_NOT_DONE;
    __atomic_thread_fence(__ATOMIC_ACQUIRE);    /* Length and the data after Status */
    q->head++;
    if (out)
        *out = d;
    if (status & VIP_STATUS_ERROR_MASK)
        vi->state = vipl_hw_state(vi);          /* an error may have broken the VI */
    return VIP_SUCCESS;
}

VIP_RETURN VipSendDone(VIP_VI_HANDLE h, VIP_DESCRIPTOR **out)
{
    struct vipl_vi *vi = vi_of(h);

    return vi && out ? vipl_done(vi, &vi->sq, out) : VIP_INVALID_PARAMETER;
}

VIP_RETURN VipRecvDone(VIP_VI_HANDLE h, VIP_DESCRIPTOR **out)
{
    struct vipl_vi *vi = vi_of(h);

    return vi && out ? vipl_done(vi, &vi->rq, out) : VIP_INVALID_PARAMETER;
}

static uint64_t vipl_now_ms(void)
{
    struct timespec ts;

    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

/*
 * Block until 'ready' says so or the timeout passes: read the queue's count ('seen'),
 * look again, then ask the agent to sleep until the count differs.
 */
static VIP_RETURN vipl_block(struct vipl_nic *nic, struct via_wait *w, VIP_ULONG timeout,
                             VIP_RETURN (*ready)(void *arg), void *arg,
                             uint32_t (*count)(void *arg))
{
    uint64_t deadline = timeout == VIP_INFINITE ? 0 : vipl_now_ms() + timeout;
    VIP_RETURN r;

    for (;;) {
        r = ready(arg);
        if (r != VIP_NOT_DONE)
            return r;
        w->seen = count(arg);
        r = ready(arg);
        if (r != VIP_NOT_DONE)
            return r;
        if (timeout == VIP_INFINITE) {
            w->timeout_ms = VIP_INFINITE;
        } else {
            uint64_t now = vipl_now_ms();

            if (now >= deadline)
                return VIP_TIMEOUT;
            w->timeout_ms = deadline - now;
        }
        if (ioctl(nic->fd, VIA_IOC_WAIT, w) && errno != EINTR && errno != ETIMEDOUT)
            return vipl_errno(errno);
    }
}

struct vipl_wait_vi {
    struct vipl_vi *vi;
    struct vipl_queue *q;
    unsigned int count_reg;
    VIP_DESCRIPTOR **out;
};

static VIP_RETURN vipl_vi_ready(void *arg)
{
    struct vipl_wait_vi *a = arg;

    return vipl_done(a->vi, a->q, a->out);
}

static uint32_t vipl_vi_count(void *arg)
{
    struct vipl_wait_vi *a = arg;

    return *(volatile uint32_t *)(a->vi->db + a->count_reg);
}

static VIP_RETURN vipl_wait_queue(VIP_VI_HANDLE h, VIP_ULONG timeout, VIP_DESCRIPTOR **out,
                                  int recv)
{
    struct vipl_vi *vi = vi_of(h);
    struct vipl_wait_vi a;
    struct via_wait w;

    if (!vi || !out)
        return VIP_INVALID_PARAMETER;
    a = (struct vipl_wait_vi){ vi, recv ? &vi->rq : &vi->sq,
                               recv ? VIA_DB_RQ_DONE : VIA_DB_SQ_DONE, out };
    if (a.q->head == a.q->tail)
        return timeout == 0 ? VIP_TIMEOUT : VIP_INVALID_STATE;  /* nothing posted */
    w = (struct via_wait){ .kind = recv ? VIA_WAIT_RECV : VIA_WAIT_SEND, .id = vi->vi };
    return vipl_block(vi->nic, &w, timeout, vipl_vi_ready, &a, vipl_vi_count);
}

VIP_RETURN VipSendWait(VIP_VI_HANDLE h, VIP_ULONG timeout, VIP_DESCRIPTOR **out)
{
    return vipl_wait_queue(h, timeout, out, 0);
}

VIP_RETURN VipRecvWait(VIP_VI_HANDLE h, VIP_ULONG timeout, VIP_DESCRIPTOR **out)
{
    return vipl_wait_queue(h, timeout, out, 1);
}

struct vipl_wait_cq {
    struct vipl_cq *cq;
    VIP_VI_HANDLE *vi;
    VIP_BOOLEAN *recv;
};

static VIP_RETURN vipl_cq_ready(void *arg)
{
    struct vipl_wait_cq *a = arg;

    return VipCQDone(a->cq, a->vi, a->recv);
}

static uint32_t vipl_cq_count(void *arg)
{
    return ((struct vipl_wait_cq *)arg)->cq->head;
}

VIP_RETURN VipCQDone(VIP_CQ_HANDLE h, VIP_VI_HANDLE *vi_out, VIP_BOOLEAN *recv)
{
    struct vipl_cq *cq = cq_of(h);
    volatile struct via_cq_entry *e;
    uint32_t w;

    if (!cq || !vi_out || !recv)
        return VIP_INVALID_PARAMETER;
    e = &cq->ring[cq->head & (cq->entries - 1)];
    w = e->vi_queue;
    if (!(w & VIA_CQE_VALID))
        return VIP_NOT_DONE;
    e->vi_queue = 0;
    cq->head++;
    *vi_out = VIA_CQE_VI(w) < VIA_MAX_VIS ? cq->nic->vis[VIA_CQE_VI(w)] : NULL;
    *recv = VIA_CQE_RECV(w);
    return VIP_SUCCESS;
}

VIP_RETURN VipCQWait(VIP_CQ_HANDLE h, VIP_ULONG timeout, VIP_VI_HANDLE *vi_out,
                     VIP_BOOLEAN *recv)
{
    struct vipl_cq *cq = cq_of(h);
    struct vipl_wait_cq a = { cq, vi_out, recv };
    struct via_wait w;

    if (!cq || !vi_out || !recv)
        return VIP_INVALID_PARAMETER;
    w = (struct via_wait){ .kind = VIA_WAIT_CQ, .id = cq->cq };
    return vipl_block(cq->nic, &w, timeout, vipl_cq_ready, &a, vipl_cq_count);
}

/* ---- the name service ----------------------------------------------------------------- */

VIP_RETURN VipNSInit(VIP_NIC_HANDLE h, VIP_PVOID info)
{
    (void)info;
    return nic_of(h) ? VIP_SUCCESS : VIP_INVALID_PARAMETER;
}

VIP_RETURN VipNSGetHostByName(VIP_NIC_HANDLE h, VIP_CHAR *name, VIP_NET_ADDRESS *a,
                              VIP_ULONG index)
{
    struct vipl_nic *nic = nic_of(h);
    char *end;
    unsigned long node;

    if (!nic || !name || !a)
        return VIP_INVALID_PARAMETER;
    if (strncmp(name, "node", 4) || index != 0)
        return VIP_ERROR_NAMESERVICE;
    node = strtoul(name + 4, &end, 10);
    if (end == name + 4 || *end || node >= nic->info.nodes)
        return VIP_ERROR_NAMESERVICE;
    a->HostAddressLen = VIP_HOST_ADDRESS_LEN;
    a->HostAddress[0] = node & 0xff;
    a->HostAddress[1] = node >> 8;
    return VIP_SUCCESS;
}

VIP_RETURN VipNSShutdown(VIP_NIC_HANDLE h)
{
    return nic_of(h) ? VIP_SUCCESS : VIP_INVALID_PARAMETER;
}
