/*
 * retrolink DMA window (rl-dma-window.h).
 *
 * SPDX-License-Identifier: GPL-2.0-or-later
 */
#include "qemu/osdep.h"

#include "hw/retrolink/core/rl-dma-window.h"

void rl_dma_window_init(RlDmaWindow *w, RlBoard *owner, uint32_t page_size,
                        uint32_t max_pages)
{
    assert(is_power_of_2(page_size) && page_size >= 4096 && max_pages >= 1);
    w->owner = owner;
    w->page_size = page_size;
    w->max_pages = max_pages;
    rl_dma_window_reset(w);
}

void rl_dma_window_reset(RlDmaWindow *w)
{
    w->table_lo = w->table_hi = w->pages = 0;
}

uint64_t rl_dma_window_table(const RlDmaWindow *w)
{
    return ((uint64_t)w->table_hi << 32) | w->table_lo;
}

uint64_t rl_dma_window_npages(const RlDmaWindow *w, uint64_t addr, uint64_t len)
{
    if (!len) {
        return 0;
    }
    return (addr + len - 1) / w->page_size - addr / w->page_size + 1;
}

bool rl_dma_window_map(const RlDmaWindow *w, uint64_t addr, uint64_t len, bool write,
                       uint32_t tag, uint64_t *pages)
{
    uint64_t table = rl_dma_window_table(w);
    uint64_t first = addr / w->page_size;
    uint64_t need = RL_DMA_PAGE_VALID | (write ? RL_DMA_PAGE_WRITE : 0);

    /* a range that wraps the address space, or ends past the table, is refused whole */
    if (!len || addr > UINT64_MAX - len) {
        return false;
    }
    uint64_t n = rl_dma_window_npages(w, addr, len);
    if (first + n > MIN(w->pages, w->max_pages)) {
        return false;
    }
    for (uint64_t i = 0; i < n; i++) {
        uint8_t raw[8];
        if (rl_board_dma_read(w->owner, table + (first + i) * 8, raw, sizeof(raw)) !=
            MEMTX_OK) {
            return false;       /* the table itself is not in memory */
        }
        uint64_t e = rl_board_ldq(w->owner, raw);
        if ((e & need) != need || (tag != RL_DMA_ANY_TAG && RL_DMA_PAGE_TAG(e) != tag)) {
            return false;
        }
        if (pages) {
            pages[i] = e & RL_DMA_PAGE_ADDR_MASK;
        }
    }
    return true;
}

void rl_dma_window_rw(const RlDmaWindow *w, const uint64_t *pages, uint64_t addr,
                      uint64_t off, void *buf, uint64_t len, bool write)
{
    uint64_t pos = addr % w->page_size + off;       /* from the first page's start */
    uint8_t *p = buf;

    while (len) {
        uint64_t in_page = pos % w->page_size;
        uint64_t n = MIN(len, w->page_size - in_page);
        uint64_t bus = pages[pos / w->page_size] + in_page;

        if (rl_board_dma_rw(w->owner, bus, p, n, write) != MEMTX_OK && !write) {
            memset(p, 0, n);
        }
        pos += n;
        p += n;
        len -= n;
    }
}

/*
 * Every value of the three registers is one a driver can write (a board checks them
 * when it uses the window, as fc checks a channel's before enabling it), and a map
 * bounds its entries by max_pages, not by the stream: nothing loaded needs a check.
 */
const VMStateDescription vmstate_rl_dma_window = {
    .name = "retrolink-dma-window",
    .version_id = 1,
    .minimum_version_id = 1,
    .fields = (const VMStateField[]) {
        VMSTATE_UINT32(table_lo, RlDmaWindow),
        VMSTATE_UINT32(table_hi, RlDmaWindow),
        VMSTATE_UINT32(pages, RlDmaWindow),
        VMSTATE_END_OF_LIST()
    },
};
