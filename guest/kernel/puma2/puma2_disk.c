// SPDX-License-Identifier: GPL-2.0
/*
 * PUMA-II driver: /dev/puma2disk, the paper's shared RAM disk. Its blocks are pages
 * 1 .. disk_pages of the shared space, 4 KiB each; a request asks the board for all
 * of its pages at once (the command FIFO holds them), then copies each across the VME
 * bus as its answer comes and lets it go: the board fetches the next pages over the
 * ring while the host copies. One request at a time (disk_lock); the models are
 * null_blk and brd.
 *
 * The sharing rule (the paper's: the buffer cache above the driver cannot be kept
 * consistent, so one node writes and then everyone reads): page 0 of the shared space
 * is the sharing record, the node that has the disk open for writing and every node
 * that has it open. It is read and changed with the page held for writing, which the
 * board gives one node at a time: the record's lock. An open for writing while another
 * node has the disk open, or any open while another node has it open for writing, is
 * refused (EBUSY) with the reason and that node in the kernel log; a write request from
 * a node that has not opened the disk for writing fails.
 */
#include <linux/module.h>
#include <linux/blkdev.h>
#include <linux/highmem.h>

#include "puma2.h"

#define PUMA2_RECORD_MAGIC	0x50324452	/* "RD2P" */
#define PUMA2_REC_MAGIC		0x0
#define PUMA2_REC_WRITER	0x4		/* node + 1 of the writer, 0: none */
#define PUMA2_REC_OPEN		0x8		/* bit n: node n has the disk open */
/* a request's pages all go to the command FIFO at once: at most half of it */
#define PUMA2_DISK_BATCH	(PUMA2_CMD_DEPTH / 2)

/* ---- the sharing record ------------------------------------------------------------ */

static int puma2_record_check(struct puma2_dev *d, bool write, u32 writer, u32 open)
{
	u32 others = open & ~BIT(d->node);

	if (writer && writer != d->node + 1) {
		dev_err(&d->pdev->dev, "%s: node %u has the disk open for writing; once it is done "
			"(unmounted there), every node may mount it read-only\n",
			d->disk->disk_name, writer - 1);
		return -EBUSY;
	}
	if (write && others) {
		dev_err(&d->pdev->dev, "%s: the disk is open on node(s) %*pbl, so every node only "
			"reads it (the sharing rule): mount it read-only here, or unmount it there "
			"first\n", d->disk->disk_name, (int)d->nodes, &others);
		return -EBUSY;
	}
	return 0;
}

/* This node's entry in the record, with the record held: writer, open, or neither. */
static int puma2_record_update(struct puma2_dev *d, bool write, bool opening)
{
	void __iomem *rec = puma2_page_addr(d, PUMA2_RECORD_PAGE);
	u32 writer, open;
	int ret;

	ret = puma2_page_get(d, PUMA2_RECORD_PAGE, PUMA2_OP_WRITE);
	if (ret)
		return ret;
	if (readl(rec + PUMA2_REC_MAGIC) != PUMA2_RECORD_MAGIC) {
		writel(0, rec + PUMA2_REC_WRITER);	/* a fresh board: nobody has it */
		writel(0, rec + PUMA2_REC_OPEN);
		writel(PUMA2_RECORD_MAGIC, rec + PUMA2_REC_MAGIC);
	}
	writer = readl(rec + PUMA2_REC_WRITER);
	open = readl(rec + PUMA2_REC_OPEN);
	if (opening) {
		ret = puma2_record_check(d, write, writer, open);
		if (!ret) {
			open |= BIT(d->node);
			if (write)
				writer = d->node + 1;
		}
	} else {
		if (!d->opens_write && writer == d->node + 1)
			writer = 0;
		if (!d->opens_read && !d->opens_write)
			open &= ~BIT(d->node);
	}
	if (!ret) {
		writel(writer, rec + PUMA2_REC_WRITER);
		writel(open, rec + PUMA2_REC_OPEN);
	}
	puma2_page_put(d, PUMA2_RECORD_PAGE);
	return ret;
}

static int puma2_disk_open(struct block_device *bdev, fmode_t mode)
{
	struct puma2_dev *d = bdev->bd_disk->private_data;
	bool write = mode & FMODE_WRITE;
	int idx, ret = 0;

	idx = srcu_read_lock(&d->srcu);
	mutex_lock(&d->disk_lock);
	if (READ_ONCE(d->dead) || d->disk_gone) {
		ret = -ENODEV;
	} else if (write ? !d->opens_write : !d->opens_read && !d->opens_write) {
		/* this node's entry changes: check the rule against the others' */
		ret = puma2_record_update(d, write, true);
	}
	if (!ret) {
		if (write)
			d->opens_write++;
		else
			d->opens_read++;
		puma2_get(d);
	}
	mutex_unlock(&d->disk_lock);
	srcu_read_unlock(&d->srcu, idx);
	return ret;
}

static void puma2_disk_release(struct gendisk *disk, fmode_t mode)
{
	struct puma2_dev *d = disk->private_data;
	int idx;

	idx = srcu_read_lock(&d->srcu);
	mutex_lock(&d->disk_lock);
	if (!d->disk_gone) {		/* else remove took this node out of the record */
		if (mode & FMODE_WRITE)
			d->opens_write--;
		else
			d->opens_read--;
		if (mode & FMODE_WRITE ? !d->opens_write : !d->opens_read && !d->opens_write)
			puma2_record_update(d, false, false);
	}
	mutex_unlock(&d->disk_lock);
	srcu_read_unlock(&d->srcu, idx);
	puma2_put(d);
}

static const struct block_device_operations puma2_disk_fops = {
	.owner = THIS_MODULE,
	.open = puma2_disk_open,
	.release = puma2_disk_release,
};

/* ---- requests ---------------------------------------------------------------------- */

/*
 * Copies across the VME bus in 64-bit accesses: a D32 bus splits each into two
 * transactions (the model charges them so), as a SPARC's ldd/std would be; the
 * kernel's memcpy_fromio moves 32 bits at a time, which costs the same bus time and
 * twice the accesses. Lengths and both addresses are multiples of 512 here.
 */
static void puma2_copy_from_board(void *dst, const void __iomem *src, u32 len)
{
	u64 *d = dst;
	u32 i;

	for (i = 0; i < len / 8; i++)
		d[i] = __raw_readq(src + i * 8);
}

static void puma2_copy_to_board(void __iomem *dst, const void *src, u32 len)
{
	const u64 *s = src;
	u32 i;

	for (i = 0; i < len / 8; i++)
		__raw_writeq(s[i], dst + i * 8);
}

/*
 * Copy one request's bytes: its pages were asked for in reqs[]; each is waited for when
 * the copy reaches it and let go when the copy leaves it.
 */
static blk_status_t puma2_disk_copy(struct puma2_dev *d, struct request *rq, u32 first,
				    struct puma2_req **reqs, u32 n, bool write)
{
	blk_status_t status = BLK_STS_OK;
	struct req_iterator iter;
	struct bio_vec bv;
	u32 pos = 0, waited = 0;

	rq_for_each_segment(bv, rq, iter) {
		u32 done = 0;

		while (done < bv.bv_len) {
			u32 k = (pos + done) / PUMA2_PAGE, off = (pos + done) % PUMA2_PAGE;
			u32 len = min(bv.bv_len - done, PUMA2_PAGE - off);
			void __iomem *board = puma2_page_addr(d, first + k) + off;
			void *buf;

			while (waited <= k && waited < n) {
				if (puma2_wait(d, reqs[waited]))
					status = BLK_STS_IOERR;
				reqs[waited++] = NULL;
			}
			if (status == BLK_STS_OK) {
				buf = bvec_kmap_local(&bv) + done;
				if (write)
					puma2_copy_to_board(board, buf, len);
				else
					puma2_copy_from_board(buf, board, len);
				kunmap_local(buf);
			}
			done += len;
			if (off + len == PUMA2_PAGE)
				puma2_page_put(d, first + k);
		}
		pos += bv.bv_len;
	}
	for (; waited < n; waited++) {		/* after an error: the rest still come */
		if (puma2_wait(d, reqs[waited]))
			status = BLK_STS_IOERR;
		puma2_page_put(d, first + waited);
	}
	return status;
}

static blk_status_t puma2_disk_rw(struct puma2_dev *d, struct request *rq, bool write)
{
	struct puma2_req *reqs[PUMA2_DISK_BATCH];
	u32 first = 1 + blk_rq_pos(rq) / (PUMA2_PAGE >> SECTOR_SHIFT);
	u32 n = DIV_ROUND_UP(blk_rq_bytes(rq), PUMA2_PAGE), i;
	blk_status_t status;

	if (n > PUMA2_DISK_BATCH || first - 1 + n > d->disk_pages)
		return BLK_STS_IOERR;
	for (i = 0; i < n; i++) {
		reqs[i] = puma2_submit(d, first + i, write ? PUMA2_OP_WRITE : PUMA2_OP_READ);
		if (IS_ERR(reqs[i]))
			break;
	}
	if (i < n) {
		u32 j;

		for (j = 0; j < i; j++) {
			puma2_wait(d, reqs[j]);
			puma2_page_put(d, first + j);
		}
		return BLK_STS_IOERR;
	}
	status = puma2_disk_copy(d, rq, first, reqs, n, write);
	return status;
}

static blk_status_t puma2_queue_rq(struct blk_mq_hw_ctx *hctx,
				   const struct blk_mq_queue_data *bd)
{
	struct puma2_dev *d = hctx->queue->queuedata;
	struct request *rq = bd->rq;
	blk_status_t status = BLK_STS_OK;
	bool write = req_op(rq) == REQ_OP_WRITE;
	int idx;

	blk_mq_start_request(rq);
	if (req_op(rq) == REQ_OP_FLUSH)
		goto out;		/* board memory has no cache to flush */
	if (req_op(rq) != REQ_OP_READ && !write) {
		status = BLK_STS_NOTSUPP;
		goto out;
	}
	idx = srcu_read_lock(&d->srcu);
	mutex_lock(&d->disk_lock);
	if (READ_ONCE(d->dead)) {
		status = BLK_STS_IOERR;
	} else if (write && !d->opens_write) {
		dev_err_ratelimited(&d->pdev->dev, "%s: a write refused: this node has not opened "
				    "the disk for writing (the sharing rule)\n",
				    d->disk->disk_name);
		status = BLK_STS_IOERR;
	} else {
		status = puma2_disk_rw(d, rq, write);
	}
	mutex_unlock(&d->disk_lock);
	srcu_read_unlock(&d->srcu, idx);
out:
	blk_mq_end_request(rq, status);
	return BLK_STS_OK;
}

static const struct blk_mq_ops puma2_mq_ops = {
	.queue_rq = puma2_queue_rq,
};

/* ---- the disk ------------------------------------------------------------------------ */

int puma2_disk_probe(struct puma2_dev *d)
{
	struct gendisk *disk;
	int ret;

	d->tag_set = (struct blk_mq_tag_set){
		.ops = &puma2_mq_ops, .nr_hw_queues = 1, .queue_depth = 16,
		.numa_node = NUMA_NO_NODE, .driver_data = d,
		/* queue_rq sleeps: it waits for the board */
		.flags = BLK_MQ_F_SHOULD_MERGE | BLK_MQ_F_BLOCKING,
	};
	ret = blk_mq_alloc_tag_set(&d->tag_set);
	if (ret)
		return ret;
	disk = blk_mq_alloc_disk(&d->tag_set, d);
	if (IS_ERR(disk)) {
		blk_mq_free_tag_set(&d->tag_set);
		return PTR_ERR(disk);
	}
	d->disk = disk;
	disk->fops = &puma2_disk_fops;
	disk->private_data = d;
	disk->flags |= GENHD_FL_NO_PART;
	if (d->id)
		snprintf(disk->disk_name, DISK_NAME_LEN, "puma2disk%d", d->id);
	else
		strscpy(disk->disk_name, "puma2disk", DISK_NAME_LEN);
	blk_queue_logical_block_size(disk->queue, PUMA2_PAGE);
	blk_queue_physical_block_size(disk->queue, PUMA2_PAGE);
	blk_queue_max_hw_sectors(disk->queue, PUMA2_DISK_BATCH * (PUMA2_PAGE >> SECTOR_SHIFT));
	blk_queue_max_segment_size(disk->queue, PUMA2_PAGE);
	blk_queue_flag_set(QUEUE_FLAG_NONROT, disk->queue);
	set_capacity(disk, (sector_t)d->disk_pages * (PUMA2_PAGE >> SECTOR_SHIFT));
	ret = add_disk(disk);
	if (ret) {
		put_disk(disk);
		blk_mq_free_tag_set(&d->tag_set);
		d->disk = NULL;
	}
	return ret;
}

/*
 * Remove, before the board goes: this node leaves the sharing record (an open that
 * outlives the board, a mount, no longer counts), and no new open is taken.
 */
void puma2_disk_forget(struct puma2_dev *d)
{
	mutex_lock(&d->disk_lock);
	d->disk_gone = true;
	if (d->opens_read || d->opens_write) {
		d->opens_read = d->opens_write = 0;
		puma2_record_update(d, false, false);
	}
	mutex_unlock(&d->disk_lock);
}

void puma2_disk_remove(struct puma2_dev *d)
{
	del_gendisk(d->disk);		/* waits for the requests in flight (they failed) */
	put_disk(d->disk);
	blk_mq_free_tag_set(&d->tag_set);
}
