/*
 * PUMA-III adapter: DVMA, the only way it reaches host memory (fc-regs.h).
 *
 * DVMA address A of a channel is byte A % FC_DVMA_PAGE of the page that entry
 * A / FC_DVMA_PAGE of the channel's table names. The table is in host memory
 * (8-byte little-endian entries at FC_CH_DVMA_LO/HI), read by the board's DMA as
 * the adapter would. A request is checked whole, every entry it needs, before a
 * byte of data moves: an unmapped or read-only page anywhere refuses all of it.
 *
 * SPDX-License-Identifier: GPL-2.0-or-later
 */
#include "qemu/osdep.h"
#include "qemu/log.h"
#include "hw/pci/pci_device.h"
#include "system/dma.h"

#include "fc.h"

uint32_t fc_dvma_npages(uint32_t addr, uint32_t len)
{
    uint64_t first = addr / FC_DVMA_PAGE;
    uint64_t last = ((uint64_t)addr + len - 1) / FC_DVMA_PAGE;

    return len ? last - first + 1 : 0;
}

bool fc_dvma_map(FcState *s, FcChannel *ch, uint32_t addr, uint32_t len, bool write,
                 uint64_t *pages)
{
    uint64_t table = ((uint64_t)ch->dvma_hi << 32) | ch->dvma_lo;
    uint64_t first = addr / FC_DVMA_PAGE;
    uint32_t n = fc_dvma_npages(addr, len);
    uint64_t need = FC_DVMA_VALID | (write ? FC_DVMA_WRITE : 0);

    if (!len || first + n > MIN(ch->dvma_pages, FC_DVMA_MAX_PAGES)) {
        return false;
    }
    for (uint32_t i = 0; i < n; i++) {
        uint64_t e;
        if (rl_board_dma_read(s->rl, table + (first + i) * 8, &e, sizeof(e)) != MEMTX_OK) {
            return false;       /* the table itself is not in memory */
        }
        e = le64_to_cpu(e);
        if ((e & need) != need) {
            return false;
        }
        if (pages) {
            pages[i] = e & FC_DVMA_ADDR_MASK;
        }
    }
    return true;
}

/* Each page of the range in turn: (bus address, bytes) pieces of [off, off + len). */
static void fc_dvma_rw(FcState *s, const uint64_t *pages, uint32_t addr, uint32_t off,
                       void *buf, uint32_t len, DMADirection dir)
{
    uint64_t pos = (uint64_t)addr % FC_DVMA_PAGE + off;   /* from the first page's start */
    uint8_t *p = buf;

    while (len) {
        uint32_t in_page = pos % FC_DVMA_PAGE;
        uint32_t n = MIN(len, FC_DVMA_PAGE - in_page);
        dma_addr_t bus = pages[pos / FC_DVMA_PAGE] + in_page;

        /* a page that is not RAM reads as zeros and takes nothing, as on the bus */
        if (rl_board_dma_rw(s->rl, bus, p, n, dir == DMA_DIRECTION_FROM_DEVICE) != MEMTX_OK &&
            dir == DMA_DIRECTION_TO_DEVICE) {
            memset(p, 0, n);
        }
        pos += n;
        p += n;
        len -= n;
    }
}

void fc_dvma_read(FcState *s, const uint64_t *pages, uint32_t addr, uint32_t off,
                  void *buf, uint32_t len)
{
    fc_dvma_rw(s, pages, addr, off, buf, len, DMA_DIRECTION_TO_DEVICE);
}

void fc_dvma_write(FcState *s, const uint64_t *pages, uint32_t addr, uint32_t off,
                   const void *buf, uint32_t len)
{
    fc_dvma_rw(s, pages, addr, off, (void *)buf, len, DMA_DIRECTION_FROM_DEVICE);
}
