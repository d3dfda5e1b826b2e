// SPDX-License-Identifier: GPL-2.0
/*
 * norma.ko IPC layer: messages between a task's buffer and the KMSG (norma.h).
 *
 * Send: the task's message is read once, checked whole (sizes, bits, descriptor kinds)
 * before anything happens, and becomes a KMSG; its rights are all checked before any is
 * taken (ipc_right_check's ledger), so a refused message leaves the sender's rights as
 * they were. Local OOL data is copied once, at send, into fresh 4 KiB pages grouped in
 * NORMA_PAGE_SIZE pages; remote OOL data is pinned where it is and read by the
 * interface (ipc_remote.c).
 *
 * Receive: the rights become names of the receiver (under ipc_lock), then, without the
 * lock, each OOL region's pages are mapped into the receiver (vm_mmap of the task's own
 * file, whose mmap handler inserts exactly those pages: no copy) and the message is
 * written to its buffer. The pages then belong to the receiver's mapping like any
 * memory: munmap frees them.
 */
#include <linux/highmem.h>
#include <linux/mm.h>
#include <linux/mman.h>
#include <linux/slab.h>
#include <linux/uaccess.h>

#include "ipc.h"

#define PAGES_PER_NORMA (NORMA_PAGE_SIZE / PAGE_SIZE)

static bool disp_valid(u32 disp)
{
	return disp >= MACH_MSG_TYPE_MOVE_RECEIVE && disp <= MACH_MSG_TYPE_MAKE_SEND_ONCE;
}

mach_msg_return_t ipc_kmsg_get(struct ipc_send *s, u64 uaddr, u32 size)
{
	void __user *u = u64_to_user_ptr(uaddr);
	u32 fixed = sizeof(mach_msg_header_t), i, page;
	struct norma_kmsg *k;
	struct ipc_kmsg *kmsg;

	if (size < sizeof(mach_msg_header_t) || size % 4)
		return MACH_SEND_MSG_TOO_SMALL;
	if (size > MACH_MSG_SIZE_MAX)
		return MACH_SEND_TOO_LARGE;
	if (copy_from_user(&s->hdr, u, sizeof(s->hdr)))
		return MACH_SEND_INVALID_DATA;
	if (s->hdr.msgh_bits & ~MACH_MSGH_BITS_USED)
		return MACH_SEND_INVALID_HEADER;
	if (s->hdr.msgh_bits & MACH_MSGH_BITS_COMPLEX) {
		if (size < fixed + sizeof(mach_msg_body_t))
			return MACH_SEND_MSG_TOO_SMALL;
		if (get_user(s->ndesc, (u32 __user *)(u + fixed)))
			return MACH_SEND_INVALID_DATA;
		fixed += sizeof(mach_msg_body_t);
		if (s->ndesc > MACH_MSG_DESC_MAX)
			return MACH_SEND_TOO_LARGE;
		if (size < fixed + s->ndesc * sizeof(mach_msg_descriptor_t))
			return MACH_SEND_MSG_TOO_SMALL;
		if (s->ndesc) {
			s->descs = memdup_user(u + fixed, s->ndesc * sizeof(mach_msg_descriptor_t));
			if (IS_ERR(s->descs)) {
				s->descs = NULL;
				return MACH_SEND_INVALID_DATA;
			}
		}
		fixed += s->ndesc * sizeof(mach_msg_descriptor_t);
	}
	for (i = 0; i < s->ndesc; i++) {
		mach_msg_descriptor_t *d = &s->descs[i];

		switch (d->type.type) {
		case MACH_MSG_PORT_DESCRIPTOR:
			if (MACH_PORT_VALID(d->port.name) && !disp_valid(d->port.disposition))
				return MACH_SEND_INVALID_TYPE;
			break;
		case MACH_MSG_OOL_DESCRIPTOR:
			if (d->out_of_line.copy > MACH_MSG_VIRTUAL_COPY)
				return MACH_SEND_INVALID_TYPE;
			if (d->out_of_line.size > MACH_MSG_OOL_MAX - s->ool_bytes)
				return MACH_SEND_TOO_LARGE;
			/* a region past the end of the address space: not memory at all */
			if (d->out_of_line.size &&
			    d->out_of_line.address + d->out_of_line.size < d->out_of_line.address)
				return MACH_SEND_INVALID_MEMORY;
			s->ool_bytes += d->out_of_line.size;
			s->ool_pages += DIV_ROUND_UP(d->out_of_line.size, NORMA_PAGE_SIZE);
			break;
		default:
			return MACH_SEND_INVALID_TYPE;
		}
	}

	kmsg = kzalloc(sizeof(*kmsg), GFP_KERNEL);
	if (!kmsg)
		return MACH_SEND_NO_BUFFER;
	s->kmsg = kmsg;
	INIT_LIST_HEAD(&kmsg->forced_link);
	if (s->ndesc) {
		kmsg->rights = kcalloc(s->ndesc, sizeof(*kmsg->rights), GFP_KERNEL);
		if (!kmsg->rights)
			return MACH_SEND_NO_BUFFER;
	}
	k = kzalloc(sizeof(*k) + s->ndesc * sizeof(struct norma_desc) + (size - fixed),
		    GFP_KERNEL);
	if (!k)
		return MACH_SEND_NO_BUFFER;
	kmsg->k = k;
	k->ndesc = s->ndesc;
	k->inline_size = size - fixed;
	k->size = sizeof(*k) + k->ndesc * sizeof(struct norma_desc) + k->inline_size;
	k->id = s->hdr.msgh_id;
	k->src_node = ipc_node();
	k->ool_pages = s->ool_pages;
	k->t_send_ns = s->t_begin_ns;
	k->dest = NORMA_UID_NONE;
	k->reply = NORMA_UID_NONE;
	if (copy_from_user(kmsg_inline(k), u + fixed, k->inline_size))
		return MACH_SEND_INVALID_DATA;
	for (i = 0, page = 0; i < s->ndesc; i++) {
		struct norma_desc *nd = &kmsg_descs(k)[i];
		mach_msg_descriptor_t *d = &s->descs[i];

		nd->uid = NORMA_UID_NONE;
		if (d->type.type == MACH_MSG_PORT_DESCRIPTOR) {
			nd->type = NORMA_DESC_PORT;
			continue;
		}
		nd->type = NORMA_DESC_OOL;
		nd->size = d->out_of_line.size;
		nd->first_page = page;          /* each region starts on a page of its own */
		page += DIV_ROUND_UP(nd->size, NORMA_PAGE_SIZE);
	}
	return MACH_MSG_SUCCESS;
}

/* pages of an OOL descriptor: [first, first + count) of the message's 4 KiB pages */
static u32 desc_pages(const struct norma_desc *nd, u32 *first)
{
	*first = nd->first_page * PAGES_PER_NORMA;
	return DIV_ROUND_UP(nd->size, NORMA_PAGE_SIZE) * PAGES_PER_NORMA;
}

mach_msg_return_t ipc_kmsg_copy_ool(struct ipc_send *s)
{
	struct ipc_kmsg *kmsg = s->kmsg;
	u32 i, p, first, count;

	if (!s->ool_pages)
		return MACH_MSG_SUCCESS;
	kmsg->pages = kvcalloc(s->ool_pages * PAGES_PER_NORMA, sizeof(*kmsg->pages), GFP_KERNEL);
	if (!kmsg->pages)
		return MACH_SEND_NO_BUFFER;
	kmsg->npages = s->ool_pages * PAGES_PER_NORMA;
	for (i = 0; i < s->ndesc; i++) {
		const struct norma_desc *nd = &kmsg_descs(kmsg->k)[i];
		u64 addr = s->descs[i].out_of_line.address;

		if (nd->type != NORMA_DESC_OOL)
			continue;
		count = desc_pages(nd, &first);
		for (p = 0; p < count; p++) {
			u32 off = p * PAGE_SIZE;
			u32 len = off < nd->size ? min_t(u32, PAGE_SIZE, nd->size - off) : 0;
			struct page *page = alloc_page(GFP_KERNEL);
			void *va;

			if (!page)
				return MACH_SEND_NO_BUFFER;
			kmsg->pages[first + p] = page;
			va = page_address(page);
			if (len && copy_from_user(va, u64_to_user_ptr(addr + off), len))
				return MACH_SEND_INVALID_MEMORY;
			memset(va + len, 0, PAGE_SIZE - len);   /* nothing of the kernel's leaks */
		}
	}
	return MACH_MSG_SUCCESS;
}

/* the dest, reply and body rights: can they all be taken? (under ipc_lock) */
mach_msg_return_t ipc_kmsg_check_rights(struct ipc_task *task, struct ipc_send *s, bool remote)
{
	u32 dname = s->hdr.msgh_remote_port, rname = s->hdr.msgh_local_port;
	u32 ddisp = MACH_MSGH_BITS_REMOTE(s->hdr.msgh_bits);
	u32 rdisp = MACH_MSGH_BITS_LOCAL(s->hdr.msgh_bits);
	mach_msg_return_t mr = MACH_MSG_SUCCESS;
	struct ipc_ledger *l;
	struct ipc_entry *e;
	u32 i;

	ipc_lock_held();
	l = ipc_ledger_alloc(s->ndesc);
	if (!l)
		return MACH_SEND_NO_BUFFER;
	e = ipc_entry_lookup(task, dname);
	if (!e || !e->port || ddisp == MACH_MSG_TYPE_MOVE_RECEIVE ||
	    ipc_right_check(task, l, dname, ddisp)) {
		mr = MACH_SEND_INVALID_DEST;
		goto out;
	}
	if (MACH_PORT_VALID(rname) &&
	    (rdisp == MACH_MSG_TYPE_MOVE_RECEIVE || ipc_right_check(task, l, rname, rdisp))) {
		mr = MACH_SEND_INVALID_REPLY;
		goto out;
	}
	for (i = 0; i < s->ndesc; i++) {
		mach_msg_port_descriptor_t *d = &s->descs[i].port;
		struct ipc_entry *de;

		if (d->type != MACH_MSG_PORT_DESCRIPTOR || !MACH_PORT_VALID(d->name))
			continue;
		if (ipc_right_check(task, l, d->name, d->disposition)) {
			mr = MACH_SEND_INVALID_RIGHT;
			goto out;
		}
		if (d->disposition != MACH_MSG_TYPE_MOVE_RECEIVE)
			continue;
		/* a receive right stays on its node; nor may it travel in its own queue */
		de = ipc_entry_lookup(task, d->name);
		if (remote || de->port == e->port) {
			mr = MACH_SEND_INVALID_RIGHT;
			goto out;
		}
	}
out:
	kfree(l);
	return mr;
}

/* the dest, reply and body rights: checked all, then taken all */
mach_msg_return_t ipc_kmsg_copyin_rights(struct ipc_task *task, struct ipc_send *s,
					 bool remote)
{
	u32 dname = s->hdr.msgh_remote_port, rname = s->hdr.msgh_local_port;
	u32 ddisp = MACH_MSGH_BITS_REMOTE(s->hdr.msgh_bits);
	u32 rdisp = MACH_MSGH_BITS_LOCAL(s->hdr.msgh_bits);
	struct ipc_kmsg *kmsg = s->kmsg;
	struct norma_kmsg *k = kmsg->k;
	mach_msg_return_t mr;
	u32 i, wtype;

	mr = ipc_kmsg_check_rights(task, s, remote);
	if (mr)
		return mr;

	/* everything is there: take it */
	ipc_right_copyin(task, dname, ddisp, &kmsg->dest, &kmsg->dest_type);
	k->dest = kmsg->dest->uid;
	if (MACH_PORT_VALID(rname)) {
		ipc_right_copyin(task, rname, rdisp, &kmsg->reply, &kmsg->reply_type);
		if (kmsg->reply)
			k->reply = kmsg->reply->uid;
	} else if (rname == MACH_PORT_DEAD) {
		kmsg->reply_type = MACH_MSG_TYPE_PORT_SEND;     /* a dead reply port */
	}
	for (i = 0; i < s->ndesc; i++) {
		mach_msg_port_descriptor_t *d = &s->descs[i].port;
		struct norma_desc *nd = &kmsg_descs(k)[i];

		if (d->type != MACH_MSG_PORT_DESCRIPTOR)
			continue;
		if (MACH_PORT_VALID(d->name)) {
			ipc_right_copyin(task, d->name, d->disposition, &kmsg->rights[i], &wtype);
			nd->disposition = wtype;
			if (kmsg->rights[i])
				nd->uid = kmsg->rights[i]->uid;
		} else if (d->name == MACH_PORT_DEAD) {
			nd->disposition = MACH_MSG_TYPE_PORT_SEND;
		}
	}
	k->bits = MACH_MSGH_BITS(kmsg->dest_type, kmsg->reply_type) |
		  (s->hdr.msgh_bits & MACH_MSGH_BITS_COMPLEX);
	return MACH_MSG_SUCCESS;
}

void ipc_kmsg_free(struct ipc_kmsg *kmsg)
{
	u32 i;

	if (!kmsg)
		return;
	for (i = 0; kmsg->pages && i < kmsg->npages; i++)
		if (kmsg->pages[i])
			__free_page(kmsg->pages[i]);
	kvfree(kmsg->pages);
	kfree(kmsg->rights);
	kfree(kmsg->k);
	kfree(kmsg);
}

/* the rights a message carries go back to nothing (under ipc_lock) */
void ipc_kmsg_release_rights(struct ipc_kmsg *kmsg)
{
	u32 i;

	ipc_right_release(kmsg->dest, kmsg->dest_type);
	kmsg->dest = NULL;
	ipc_right_release(kmsg->reply, kmsg->reply_type);
	kmsg->reply = NULL;
	for (i = 0; kmsg->rights && i < kmsg->k->ndesc; i++) {
		ipc_right_release(kmsg->rights[i], kmsg_descs(kmsg->k)[i].disposition);
		kmsg->rights[i] = NULL;
	}
}

void ipc_send_free(struct ipc_send *s)
{
	if (s->kmsg) {
		mutex_lock(&ipc_lock);
		ipc_kmsg_release_rights(s->kmsg);
		ipc_unlock();
		ipc_kmsg_free(s->kmsg);
	}
	kfree(s->descs);
	s->kmsg = NULL;
	s->descs = NULL;
}

void ipc_kmsg_destroy(struct ipc_kmsg *kmsg)
{
	ipc_lock_held();
	ipc_kmsg_accepted(kmsg, true);
	ipc_kmsg_release_rights(kmsg);
	ipc_kmsg_free(kmsg);
}

mach_msg_return_t ipc_kmsg_copyout_rights(struct ipc_task *task, struct ipc_kmsg *kmsg,
					  struct ipc_copyout *out)
{
	struct norma_kmsg *k = kmsg->k;
	mach_msg_return_t mr = MACH_MSG_SUCCESS;
	u32 i;

	ipc_lock_held();
	/* the right the message was sent with ends in the receive right */
	ipc_right_release(kmsg->dest, kmsg->dest_type);
	kmsg->dest = NULL;
	out->reply_name = ipc_right_copyout(task, kmsg->reply, kmsg->reply_type);
	if (kmsg->reply && out->reply_name == MACH_PORT_NULL)
		mr = MACH_RCV_BODY_ERROR | MACH_MSG_IPC_SPACE;
	kmsg->reply = NULL;
	for (i = 0; i < k->ndesc; i++) {
		struct norma_desc *nd = &kmsg_descs(k)[i];

		if (nd->type != NORMA_DESC_PORT)
			continue;
		out->names[i] = ipc_right_copyout(task, kmsg->rights[i], nd->disposition);
		if (kmsg->rights[i] && out->names[i] == MACH_PORT_NULL)
			mr = MACH_RCV_BODY_ERROR | MACH_MSG_IPC_SPACE;
		kmsg->rights[i] = NULL;
	}
	return mr;
}

/* map 'count' pages of kmsg from 'first' into the current process; 0: failed */
static u64 map_pages(struct file *file, struct ipc_task *task, struct ipc_kmsg *kmsg,
		     u32 first, u32 count)
{
	unsigned long addr;
	u32 i;

	mutex_lock(&task->map_lock);
	task->map_owner = current;
	task->map_pages = kmsg->pages + first;
	task->map_npages = count;
	addr = vm_mmap(file, 0, (unsigned long)count * PAGE_SIZE, PROT_READ | PROT_WRITE,
		       MAP_SHARED, 0);
	task->map_owner = NULL;
	task->map_npages = 0;
	mutex_unlock(&task->map_lock);
	if (IS_ERR_VALUE(addr))
		return 0;
	/* the mapping holds the pages now; our references go */
	for (i = 0; i < count; i++) {
		put_page(kmsg->pages[first + i]);
		kmsg->pages[first + i] = NULL;
	}
	return addr;
}

int ipc_mmap(struct file *file, struct vm_area_struct *vma)
{
	struct ipc_task *task = file->private_data;
	unsigned long size = vma->vm_end - vma->vm_start;
	u32 i;
	int ret;

	/* only the receive path maps, from inside mach_msg, with map_lock held */
	if (task->map_owner != current || vma->vm_pgoff ||
	    size != (unsigned long)task->map_npages * PAGE_SIZE)
		return -EINVAL;
	vma->vm_flags |= VM_DONTEXPAND | VM_DONTDUMP;
	for (i = 0; i < task->map_npages; i++) {
		ret = vm_insert_page(vma, vma->vm_start + i * PAGE_SIZE, task->map_pages[i]);
		if (ret)
			return ret;
	}
	task->map_npages = 0;
	return 0;
}

mach_msg_return_t ipc_kmsg_put(struct file *file, struct ipc_task *task,
			       struct ipc_kmsg *kmsg, const struct ipc_copyout *out, u64 uaddr)
{
	struct norma_kmsg *k = kmsg->k;
	void __user *u = u64_to_user_ptr(uaddr);
	mach_msg_return_t mr = MACH_MSG_SUCCESS;
	mach_msg_descriptor_t *descs = NULL;
	mach_msg_header_t hdr = {
		.msgh_bits = k->bits & MACH_MSGH_BITS_COMPLEX,
		.msgh_size = kmsg_user_size(k),
		.msgh_remote_port = out->reply_name,
		.msgh_local_port = out->local_name,
		.msgh_seqno = out->seqno,
		.msgh_id = k->id,
	};
	u32 off = sizeof(hdr), i, first, count;

	/* as Mach swaps them: remote is the reply right, local the port received from */
	hdr.msgh_bits |= MACH_MSGH_BITS(kmsg->reply_type, kmsg->dest_type);
	if (k->ndesc) {
		descs = kcalloc(k->ndesc, sizeof(*descs), GFP_KERNEL);
		if (!descs)
			return MACH_RCV_BODY_ERROR | MACH_MSG_VM_SPACE;
	}
	for (i = 0; i < k->ndesc; i++) {
		struct norma_desc *nd = &kmsg_descs(k)[i];

		if (nd->type == NORMA_DESC_PORT) {
			descs[i].port.type = MACH_MSG_PORT_DESCRIPTOR;
			descs[i].port.name = out->names[i];
			descs[i].port.disposition = out->names[i] == MACH_PORT_NULL ? 0 :
						    nd->disposition;
			continue;
		}
		descs[i].out_of_line.type = MACH_MSG_OOL_DESCRIPTOR;
		descs[i].out_of_line.copy = MACH_MSG_VIRTUAL_COPY;
		descs[i].out_of_line.size = nd->size;
		count = desc_pages(nd, &first);
		if (!count)
			continue;
		descs[i].out_of_line.address = map_pages(file, task, kmsg, first, count);
		if (!descs[i].out_of_line.address) {
			descs[i].out_of_line.size = 0;
			mr = MACH_RCV_BODY_ERROR | MACH_MSG_VM_SPACE;
		}
	}
	if (copy_to_user(u, &hdr, sizeof(hdr)))
		goto fault;
	if (k->bits & MACH_MSGH_BITS_COMPLEX) {
		if (put_user(k->ndesc, (u32 __user *)(u + off)))
			goto fault;
		off += sizeof(mach_msg_body_t);
		if (copy_to_user(u + off, descs, k->ndesc * sizeof(*descs)))
			goto fault;
		off += k->ndesc * sizeof(*descs);
	}
	if (copy_to_user(u + off, kmsg_inline(k), k->inline_size))
		goto fault;
	kfree(descs);
	return mr;
fault:
	kfree(descs);
	return MACH_RCV_INVALID_DATA;
}

/* ---- received from another node ------------------------------------------------ */

/*
 * norma_rx_free (norma.h): a received message nobody took over. The IPC layer defines
 * it: the transport allocated rx, its pages array and its KMSG with kmalloc and the
 * pages with alloc_pages(NORMA_PAGE_ORDER) (not compound: ipc_remote.c splits them).
 */
void norma_rx_free(struct norma_rx *rx)
{
	u32 i;

	if (!rx)
		return;
	for (i = 0; rx->pages && rx->kmsg && i < rx->kmsg->ool_pages; i++)
		if (rx->pages[i])
			__free_pages(rx->pages[i], NORMA_PAGE_ORDER);
	kfree(rx->pages);
	kfree(rx->kmsg);
	kfree(rx);
}
