// SPDX-License-Identifier: GPL-2.0
/*
 * PUMA-II driver: asking the board for pages. A command names a page and READ, WRITE
 * or RELEASE (puma2-regs.h); the board answers each READ and WRITE in its response
 * FIFO once the page is here with that access, and holds it for the host until the
 * RELEASE. One command per page may be in flight (the board answers a second with
 * BUSY): d->reqs[page] is it, completed from the interrupt.
 *
 * The command FIFO's room is counted down from the last CMD_FREE read (the board
 * only adds room), so a register read is needed only when the count runs out.
 */
#include <linux/slab.h>
#include <linux/bitmap.h>
#include <linux/delay.h>

#include "puma2.h"

/* an answer the driver makes up for a command aborted by remove */
#define PUMA2_ST_ABORTED	0xff
/* the board answers within ms unless a node holds a page and never lets it go */
#define PUMA2_WAIT_JIFFIES	(60 * HZ)

int puma2_page_init(struct puma2_dev *d)
{
	d->reqs = kvcalloc(d->space_pages, sizeof(*d->reqs), GFP_KERNEL);
	d->held = kvzalloc(d->space_pages, GFP_KERNEL);
	d->recalled = bitmap_zalloc(d->space_pages, GFP_KERNEL);
	if (!d->reqs || !d->held || !d->recalled) {
		puma2_page_free(d);
		return -ENOMEM;
	}
	return 0;
}

void puma2_page_free(struct puma2_dev *d)
{
	kvfree(d->reqs);
	kvfree(d->held);
	bitmap_free(d->recalled);
	d->reqs = NULL;
	d->held = NULL;
	d->recalled = NULL;
}

/* Write one command, waiting for room (the board decodes one per ~2 us). d->lock held. */
static void puma2_cmd(struct puma2_dev *d, u32 page, u8 op)
{
	while (!d->cmd_credit) {
		d->cmd_credit = puma2_rd(d, PUMA2_REG_CMD_FREE);
		if (!d->cmd_credit)
			udelay(1);
	}
	d->cmd_credit--;
	puma2_wr(d, PUMA2_REG_CMD, PUMA2_CMD(page, op));
}

static int puma2_errno(u8 status)
{
	switch (status) {
	case PUMA2_ST_OK:
	case PUMA2_ST_HELD:
		return 0;
	case PUMA2_ST_BUSY:
		return -EBUSY;
	case PUMA2_ST_ABORTED:
		return -ENODEV;
	default:
		return -EIO;
	}
}

u8 puma2_held(struct puma2_dev *d, u32 page)
{
	unsigned long flags;
	u8 h;

	spin_lock_irqsave(&d->lock, flags);
	h = d->held[page];
	spin_unlock_irqrestore(&d->lock, flags);
	return h;
}

/* Ask for a page (READ or WRITE) without waiting: puma2_wait() takes the answer. */
struct puma2_req *puma2_submit(struct puma2_dev *d, u32 page, u8 op)
{
	struct puma2_req *req = kzalloc(sizeof(*req), GFP_NOIO);
	unsigned long flags;

	if (!req)
		return ERR_PTR(-ENOMEM);
	req->page = page;
	req->op = op;
	init_completion(&req->completion);
	spin_lock_irqsave(&d->lock, flags);
	if (READ_ONCE(d->dead) || d->reqs[page]) {
		int err = d->dead ? -ENODEV : -EBUSY;

		spin_unlock_irqrestore(&d->lock, flags);
		kfree(req);
		return ERR_PTR(err);
	}
	d->reqs[page] = req;
	puma2_cmd(d, page, op);
	spin_unlock_irqrestore(&d->lock, flags);
	return req;
}

/*
 * The board's answer to req (and req freed). A waiter that is killed or times out
 * leaves the request to the interrupt, which lets go of the page when it comes.
 */
int puma2_wait(struct puma2_dev *d, struct puma2_req *req)
{
	long left = wait_for_completion_killable_timeout(&req->completion, PUMA2_WAIT_JIFFIES);
	unsigned long flags;
	int ret;

	spin_lock_irqsave(&d->lock, flags);
	if (!req->done) {
		req->abandoned = true;
		spin_unlock_irqrestore(&d->lock, flags);
		if (!left)
			dev_warn(&d->pdev->dev, "page %u: no answer from the board in %d s\n",
				 req->page, PUMA2_WAIT_JIFFIES / HZ);
		return left ? -EINTR : -ETIMEDOUT;
	}
	spin_unlock_irqrestore(&d->lock, flags);
	ret = puma2_errno(req->status);
	if (ret && req->status != PUMA2_ST_ABORTED)
		dev_warn(&d->pdev->dev, "page %u: op %u refused, status %u\n", req->page, req->op,
			 req->status);
	kfree(req);
	return ret;
}

int puma2_page_get(struct puma2_dev *d, u32 page, u8 op)
{
	struct puma2_req *req = puma2_submit(d, page, op);

	return IS_ERR(req) ? PTR_ERR(req) : puma2_wait(d, req);
}

/* Let the board give the page to whoever waits for it. */
void puma2_page_put(struct puma2_dev *d, u32 page)
{
	unsigned long flags;

	spin_lock_irqsave(&d->lock, flags);
	if (d->held[page] && !d->dead) {
		d->held[page] = 0;
		puma2_cmd(d, page, PUMA2_OP_RELEASE);
	}
	spin_unlock_irqrestore(&d->lock, flags);
}

static void puma2_done(struct puma2_dev *d, u32 page, u8 status)
{
	struct puma2_req *req = d->reqs[page];

	if (!req) {
		dev_warn_ratelimited(&d->pdev->dev, "answer for page %u, which nothing asked for\n",
				     page);
		return;
	}
	d->reqs[page] = NULL;
	if (status == PUMA2_ST_OK)
		d->held[page] = max(d->held[page], req->op);
	req->status = status;
	req->done = true;
	if (!req->abandoned) {
		complete(&req->completion);
		return;
	}
	if (d->held[page]) {		/* nobody will use it */
		d->held[page] = 0;
		puma2_cmd(d, page, PUMA2_OP_RELEASE);
	}
	kfree(req);
}

/* The response FIFO, from the interrupt: answers, RECALLs, refused RELEASEs. */
void puma2_responses(struct puma2_dev *d)
{
	bool recall = false;
	u32 r;

	spin_lock(&d->lock);
	while ((r = puma2_rd(d, PUMA2_REG_RESP)) != PUMA2_RESP_EMPTY) {
		u32 page = PUMA2_RESP_PAGE(r);

		if (page >= d->space_pages) {
			dev_warn_ratelimited(&d->pdev->dev, "response %#x names no page\n", r);
			continue;
		}
		switch (PUMA2_RESP_KIND(r)) {
		case PUMA2_KIND_DONE:
			puma2_done(d, page, PUMA2_RESP_STATUS(r));
			break;
		case PUMA2_KIND_RECALL:
			set_bit(page, d->recalled);
			recall = true;
			break;
		default:
			dev_warn_ratelimited(&d->pdev->dev, "page %u: RELEASE refused, status %u\n",
					     page, PUMA2_RESP_STATUS(r));
		}
	}
	spin_unlock(&d->lock);
	if (recall)
		schedule_work(&d->recall_work);
}

/* Remove: every command in flight fails (ENODEV); later answers find nothing. */
void puma2_abort_all(struct puma2_dev *d)
{
	unsigned long flags;
	u32 page;

	spin_lock_irqsave(&d->lock, flags);
	WRITE_ONCE(d->dead, true);
	for (page = 0; page < d->space_pages; page++) {
		struct puma2_req *req = d->reqs[page];

		if (!req)
			continue;
		d->reqs[page] = NULL;
		req->status = PUMA2_ST_ABORTED;
		req->done = true;
		if (req->abandoned)
			kfree(req);
		else
			complete(&req->completion);
	}
	spin_unlock_irqrestore(&d->lock, flags);
}
