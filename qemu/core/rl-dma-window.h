/*
 * retrolink DMA window: a board's view of host memory through a page table the driver
 * builds in host memory, as the PUMA-III adapter's DVMA (docs/boards/fc.md), a VIA
 * NIC's memory registration or a DSM board's page table are.
 *
 * Window address A is byte A % page_size of the page that entry A / page_size names.
 * An entry is 64 bits in the bus's byte order (RlBoard.big_endian): the page's bus
 * address in bits 63..12,
 * RL_DMA_PAGE_VALID (the board may read the page), RL_DMA_PAGE_WRITE (and write it)
 * and a protection tag in bits 11..4 (RL_DMA_PAGE_TAG). A range is checked whole,
 * every entry it needs, before a byte moves: an entry that is not valid, not writable
 * for a write, or of another tag anywhere refuses all of it; a table that is not in
 * memory refuses too. The board reads the table through its own DMA (rl_board_dma_*),
 * as the hardware would, when it maps a range.
 *
 * The table's place (table_lo/hi, pages) is the board's register state, which
 * VMSTATE_RL_DMA_WINDOW saves: any value of them is one a driver can write, and a map
 * never reads more than max_pages entries, so a loaded window needs no check.
 *
 * SPDX-License-Identifier: GPL-2.0-or-later
 */
#ifndef RL_DMA_WINDOW_H
#define RL_DMA_WINDOW_H

#include "hw/retrolink/core/rl-board.h"

#define RL_DMA_PAGE_VALID       (1ull << 0)
#define RL_DMA_PAGE_WRITE       (1ull << 1)
#define RL_DMA_PAGE_TAG(e)      ((uint32_t)((e) >> 4) & 0xff)
#define RL_DMA_PAGE_ADDR_MASK   (~0xfffull)
/* rl_dma_window_map's tag: any entry's tag will do */
#define RL_DMA_ANY_TAG          UINT32_MAX

typedef struct RlDmaWindow {
    /* where the table is and its entries: the board's registers */
    uint32_t table_lo, table_hi;
    uint32_t pages;
    /* set at init, not saved */
    uint32_t page_size;         /* a power of 2, at least 4096 */
    uint32_t max_pages;
    RlBoard *owner;             /* whose DMA reads the table and the pages */
} RlDmaWindow;

void rl_dma_window_init(RlDmaWindow *w, RlBoard *owner, uint32_t page_size,
                        uint32_t max_pages);
void rl_dma_window_reset(RlDmaWindow *w);
uint64_t rl_dma_window_table(const RlDmaWindow *w);
/* The entries [addr, addr + len) touches (0 for len 0). */
uint64_t rl_dma_window_npages(const RlDmaWindow *w, uint64_t addr, uint64_t len);
/*
 * Is [addr, addr + len) wholly in valid entries of the table (writable, with write; of
 * the tag, unless RL_DMA_ANY_TAG)? On success fill pages[] (if not NULL) with the bus
 * address of each page it touches, first to last (rl_dma_window_npages of them).
 */
bool rl_dma_window_map(const RlDmaWindow *w, uint64_t addr, uint64_t len, bool write,
                       uint32_t tag, uint64_t *pages);
/*
 * Move len bytes at offset off of the range at addr that pages[] maps (from a map: the
 * translation stays what it was then). A page that is not RAM reads as zeros and takes
 * nothing, as on a bus.
 */
void rl_dma_window_rw(const RlDmaWindow *w, const uint64_t *pages, uint64_t addr,
                      uint64_t off, void *buf, uint64_t len, bool write);

extern const VMStateDescription vmstate_rl_dma_window;
#define VMSTATE_RL_DMA_WINDOW(_field, _state) \
    VMSTATE_STRUCT(_field, _state, 1, vmstate_rl_dma_window, RlDmaWindow)

#endif /* RL_DMA_WINDOW_H */
