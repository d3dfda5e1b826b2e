/*
 * VIPL: the Virtual Interface Provider Library of the VIA 1.0 specification (Intel,
 * Compaq, Microsoft, 1997), over the VIA NIC's kernel agent (/dev/via0,
 * retrolink/uapi/via.h; docs/boards/via.md). Names, types and codes are the
 * specification's; the descriptor layout is the NIC's (retrolink/regs/via-regs.h),
 * checked below.
 *
 * What this provider offers: reliable delivery (VIP_SERVICE_RELIABLE_DELIVERY) only,
 * send/receive only (no RDMA: VipCreateVi refuses RDMA read with VIP_INVALID_RDMAREAD,
 * RDMA write with VIP_ERROR_NOT_SUPPORTED), messages up to VIP_NIC_ATTRIBUTES.
 * MaxTransferSize. A network address is the node number (HostAddressLen 2, little
 * endian) and a discriminator of up to 16 bytes; VipNSGetHostByName knows "nodeN".
 * Not thread safe (ThreadSafe is VIP_FALSE): one thread per VI and per CQ.
 *
 * Posting is a 64-bit store to the VI's doorbell page (no system call): the descriptor
 * must lie in memory registered on the same NIC handle, 64-byte aligned, and the
 * memory handle given must be the region holding it.
 */
#ifndef VIPL_H
#define VIPL_H

#include <stddef.h>
#include <stdint.h>

#include "retrolink/regs/via-regs.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef void *VIP_PVOID;
typedef int VIP_BOOLEAN;
typedef char VIP_CHAR;
typedef uint8_t VIP_UINT8;
typedef uint16_t VIP_UINT16;
typedef uint32_t VIP_UINT32;
typedef uint64_t VIP_UINT64;
typedef VIP_UINT32 VIP_ULONG;
typedef VIP_UINT32 VIP_MEM_HANDLE;
typedef VIP_PVOID VIP_NIC_HANDLE;
typedef VIP_PVOID VIP_VI_HANDLE;
typedef VIP_PVOID VIP_CQ_HANDLE;
typedef VIP_PVOID VIP_PROTECTION_HANDLE;
typedef VIP_PVOID VIP_CONN_HANDLE;
typedef VIP_UINT32 VIP_QOS;

#define VIP_TRUE        1
#define VIP_FALSE       0
#define VIP_INFINITE    0xffffffffu     /* a timeout: wait for ever */

typedef union {
    VIP_UINT64 AddressBits;
    VIP_PVOID Address;
} VIP_PVOID64;

typedef enum {
    VIP_SUCCESS,
    VIP_NOT_DONE,
    VIP_INVALID_PARAMETER,
    VIP_ERROR_RESOURCE,
    VIP_TIMEOUT,
    VIP_REJECT,
    VIP_INVALID_RELIABILITY_LEVEL,
    VIP_INVALID_MTU,
    VIP_INVALID_QOS,
    VIP_INVALID_PTAG,
    VIP_INVALID_RDMAREAD,
    VIP_DESCRIPTOR_ERROR,
    VIP_INVALID_STATE,
    VIP_ERROR_NAMESERVICE,
    VIP_NO_MATCH,
    VIP_NOT_REACHABLE,
    VIP_ERROR_NOT_SUPPORTED,
} VIP_RETURN;

typedef enum {
    VIP_SERVICE_UNRELIABLE = 1,
    VIP_SERVICE_RELIABLE_DELIVERY = 2,
    VIP_SERVICE_RELIABLE_RECEPTION = 4,
} VIP_RELIABILITY_LEVEL;

typedef enum {
    VIP_STATE_IDLE,
    VIP_STATE_CONNECTED,
    VIP_STATE_CONNECT_PENDING,
    VIP_STATE_ERROR,
} VIP_VI_STATE;

/* ---- descriptors (VIA 1.0, 2.4): the NIC's layout ---------------------------------- */
typedef struct {
    VIP_PVOID64 Next;
    VIP_MEM_HANDLE NextHandle;
    VIP_UINT16 SegCount;
    VIP_UINT16 Control;
    VIP_UINT32 Reserved;        /* this provider: 0 (the NIC's datagram destination) */
    VIP_UINT32 ImmediateData;
    VIP_UINT32 Length;
    VIP_UINT32 Status;
} VIP_CONTROL_SEGMENT;

typedef struct {
    VIP_PVOID64 Data;
    VIP_MEM_HANDLE Handle;
    VIP_UINT32 Reserved;
} VIP_ADDRESS_SEGMENT;

typedef struct {
    VIP_PVOID64 Data;
    VIP_MEM_HANDLE Handle;
    VIP_UINT32 Length;
} VIP_DATA_SEGMENT;

typedef union {
    VIP_ADDRESS_SEGMENT Remote;
    VIP_DATA_SEGMENT Local;
} VIP_DESCRIPTOR_SEGMENT;

/* a descriptor with up to two segments; more: allocate CS + SegCount segments */
typedef struct {
    VIP_CONTROL_SEGMENT CS;
    VIP_DESCRIPTOR_SEGMENT DS[2];
} VIP_DESCRIPTOR;

_Static_assert(sizeof(VIP_CONTROL_SEGMENT) == sizeof(struct via_control_segment),
               "VIP_CONTROL_SEGMENT is the NIC's control segment");
_Static_assert(offsetof(VIP_CONTROL_SEGMENT, Status) ==
               offsetof(struct via_control_segment, status), "Status where the NIC writes it");
_Static_assert(offsetof(VIP_CONTROL_SEGMENT, Length) ==
               offsetof(struct via_control_segment, length), "Length");
_Static_assert(sizeof(VIP_DATA_SEGMENT) == sizeof(struct via_data_segment),
               "VIP_DATA_SEGMENT is the NIC's data segment");
_Static_assert(offsetof(VIP_DATA_SEGMENT, Length) == offsetof(struct via_data_segment, length),
               "segment Length");
_Static_assert(sizeof(VIP_DESCRIPTOR) == 64, "a two-segment descriptor is 64 bytes");

/* Control and Status bits: the NIC's (via-regs.h) */
#define VIP_CONTROL_IMMEDIATE_DATA  VIP_CONTROL_IMMEDIATE
#define VIP_CONTROL_OP_SEND         VIP_CONTROL_OP_SENDRECV
#define VIP_STATUS_LOCAL_ERRORS     (VIP_STATUS_FORMAT_ERROR | VIP_STATUS_PROTECTION_ERROR | \
                                     VIP_STATUS_LENGTH_ERROR | VIP_STATUS_PARTIAL_ERROR)
#define VIP_DESCRIPTOR_ALIGNMENT    VIA_DESC_ALIGN

/* ---- attributes --------------------------------------------------------------------- */
typedef struct {
    VIP_UINT16 HostAddressLen;
    VIP_UINT16 DiscriminatorLen;
    VIP_UINT8 HostAddress[1];   /* HostAddressLen bytes, then the discriminator */
} VIP_NET_ADDRESS;

#define VIP_HOST_ADDRESS_LEN    2   /* the node number, little endian */
#define VIP_MAX_DISCRIMINATOR   16
/* bytes a VIP_NET_ADDRESS of this provider may take: declare it in such a buffer */
#define VIP_NET_ADDRESS_BYTES   (offsetof(VIP_NET_ADDRESS, HostAddress) + \
                                 VIP_HOST_ADDRESS_LEN + VIP_MAX_DISCRIMINATOR)

typedef struct {
    VIP_CHAR Name[64];
    VIP_ULONG HardwareVersion;
    VIP_ULONG ProviderVersion;
    VIP_UINT16 NicAddressLen;
    const VIP_UINT8 *LocalNicAddress;   /* HostAddressLen bytes: the node */
    VIP_BOOLEAN ThreadSafe;
    VIP_UINT16 MaxDiscriminatorLen;
    VIP_ULONG MaxRegisterBytes;
    VIP_ULONG MaxRegisterRegions;
    VIP_ULONG MaxRegisterBlockBytes;
    VIP_ULONG MaxVI;
    VIP_ULONG MaxDescriptorsPerQueue;
    VIP_ULONG MaxSegmentsPerDesc;
    VIP_ULONG MaxCQ;
    VIP_ULONG MaxCQEntries;
    VIP_ULONG MaxTransferSize;
    VIP_ULONG NativeMTU;
    VIP_ULONG MaxPtags;
    VIP_RELIABILITY_LEVEL ReliabilityLevelSupport;
    VIP_RELIABILITY_LEVEL RDMAReadSupport;
} VIP_NIC_ATTRIBUTES;

typedef struct {
    VIP_RELIABILITY_LEVEL ReliabilityLevel;
    VIP_ULONG MaxTransferSize;
    VIP_QOS QoS;
    VIP_PROTECTION_HANDLE Ptag;
    VIP_BOOLEAN EnableRdmaWrite;
    VIP_BOOLEAN EnableRdmaRead;
} VIP_VI_ATTRIBUTES;

typedef struct {
    VIP_PROTECTION_HANDLE Ptag;
    VIP_BOOLEAN EnableRdmaWrite;
    VIP_BOOLEAN EnableRdmaRead;
} VIP_MEM_ATTRIBUTES;

/* ---- calls ------------------------------------------------------------------------------- */
/* DeviceName: "/dev/via0" (NULL or "" too) */
VIP_RETURN VipOpenNic(const VIP_CHAR *DeviceName, VIP_NIC_HANDLE *NicHandle);
VIP_RETURN VipCloseNic(VIP_NIC_HANDLE NicHandle);
VIP_RETURN VipQueryNic(VIP_NIC_HANDLE NicHandle, VIP_NIC_ATTRIBUTES *Attrs);

VIP_RETURN VipCreatePtag(VIP_NIC_HANDLE NicHandle, VIP_PROTECTION_HANDLE *ProtectionTag);
VIP_RETURN VipDestroyPtag(VIP_NIC_HANDLE NicHandle, VIP_PROTECTION_HANDLE ProtectionTag);
VIP_RETURN VipRegisterMem(VIP_NIC_HANDLE NicHandle, VIP_PVOID VirtualAddress,
                          VIP_ULONG Length, VIP_MEM_ATTRIBUTES *MemAttrs,
                          VIP_MEM_HANDLE *MemoryHandle);
VIP_RETURN VipDeregisterMem(VIP_NIC_HANDLE NicHandle, VIP_PVOID VirtualAddress,
                            VIP_MEM_HANDLE MemoryHandle);

VIP_RETURN VipCreateVi(VIP_NIC_HANDLE NicHandle, VIP_VI_ATTRIBUTES *ViAttribs,
                       VIP_CQ_HANDLE SendCQHandle, VIP_CQ_HANDLE RecvCQHandle,
                       VIP_VI_HANDLE *ViHandle);
VIP_RETURN VipDestroyVi(VIP_VI_HANDLE ViHandle);
VIP_RETURN VipQueryVi(VIP_VI_HANDLE ViHandle, VIP_VI_STATE *State,
                      VIP_VI_ATTRIBUTES *Attrs, VIP_BOOLEAN *SendQueueEmpty,
                      VIP_BOOLEAN *RecvQueueEmpty);
VIP_RETURN VipCreateCQ(VIP_NIC_HANDLE NicHandle, VIP_ULONG EntryCount,
                       VIP_CQ_HANDLE *CQHandle);
VIP_RETURN VipDestroyCQ(VIP_CQ_HANDLE CQHandle);

VIP_RETURN VipConnectWait(VIP_NIC_HANDLE NicHandle, VIP_NET_ADDRESS *LocalAddr,
                          VIP_ULONG Timeout, VIP_NET_ADDRESS *RemoteAddr,
                          VIP_VI_ATTRIBUTES *RemoteViAttribs, VIP_CONN_HANDLE *ConnHandle);
VIP_RETURN VipConnectAccept(VIP_CONN_HANDLE ConnHandle, VIP_VI_HANDLE ViHandle);
VIP_RETURN VipConnectReject(VIP_CONN_HANDLE ConnHandle);
VIP_RETURN VipConnectRequest(VIP_VI_HANDLE ViHandle, VIP_NET_ADDRESS *LocalAddr,
                             VIP_NET_ADDRESS *RemoteAddr, VIP_ULONG Timeout,
                             VIP_VI_ATTRIBUTES *RemoteViAttribs);
VIP_RETURN VipDisconnect(VIP_VI_HANDLE ViHandle);

VIP_RETURN VipPostSend(VIP_VI_HANDLE ViHandle, VIP_DESCRIPTOR *DescriptorPtr,
                       VIP_MEM_HANDLE MemoryHandle);
VIP_RETURN VipSendDone(VIP_VI_HANDLE ViHandle, VIP_DESCRIPTOR **DescriptorPtr);
VIP_RETURN VipSendWait(VIP_VI_HANDLE ViHandle, VIP_ULONG TimeOut,
                       VIP_DESCRIPTOR **DescriptorPtr);
VIP_RETURN VipPostRecv(VIP_VI_HANDLE ViHandle, VIP_DESCRIPTOR *DescriptorPtr,
                       VIP_MEM_HANDLE MemoryHandle);
VIP_RETURN VipRecvDone(VIP_VI_HANDLE ViHandle, VIP_DESCRIPTOR **DescriptorPtr);
VIP_RETURN VipRecvWait(VIP_VI_HANDLE ViHandle, VIP_ULONG TimeOut,
                       VIP_DESCRIPTOR **DescriptorPtr);
VIP_RETURN VipCQDone(VIP_CQ_HANDLE CQHandle, VIP_VI_HANDLE *ViHandle, VIP_BOOLEAN *RecvQueue);
VIP_RETURN VipCQWait(VIP_CQ_HANDLE CQHandle, VIP_ULONG Timeout, VIP_VI_HANDLE *ViHandle,
                     VIP_BOOLEAN *RecvQueue);

/* the name service: "nodeN" is node N (HostAddressLen 2) */
VIP_RETURN VipNSInit(VIP_NIC_HANDLE NicHandle, VIP_PVOID NSInitInfo);
VIP_RETURN VipNSGetHostByName(VIP_NIC_HANDLE NicHandle, VIP_CHAR *Name,
                              VIP_NET_ADDRESS *Address, VIP_ULONG NameIndex);
VIP_RETURN VipNSShutdown(VIP_NIC_HANDLE NicHandle);

/* retrolink's helpers: fill a VIP_NET_ADDRESS (of VIP_NET_ADDRESS_BYTES) for a node and
 * a discriminator; a code's name for messages */
void VipMakeAddress(VIP_NET_ADDRESS *Address, VIP_UINT32 Node, const void *Discriminator,
                    VIP_UINT16 DiscriminatorLen);
const char *VipReturnName(VIP_RETURN Code);
/* for tests of the agent below VIPL: the NIC handle's file, a VI's number (-1: bad) */
int VipNicFd(VIP_NIC_HANDLE NicHandle);
int VipViNumber(VIP_VI_HANDLE ViHandle);

#ifdef __cplusplus
}
#endif
#endif /* VIPL_H */
