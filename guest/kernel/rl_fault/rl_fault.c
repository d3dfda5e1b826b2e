// SPDX-License-Identifier: GPL-2.0
/*
 * rl_fault: the kernel half of retrolink's fault kit (docs/reliability.md).
 *
 * Tests need a real kernel WARNING and a real Oops on demand, to check that
 * `retrolink run` fails a run whose guest kernel complained even though the
 * command itself finished. Debian's kernel has no lkdtm, so this module offers
 * the two faults lkdtm calls WARNING and BUG, and nothing else:
 *
 *   echo warn > /sys/kernel/debug/rl_fault/provoke   WARN() once, then return
 *   echo oops > /sys/kernel/debug/rl_fault/provoke   BUG(): an Oops that kills
 *                                                    the writing process only
 *
 * No board names it, so the init script never loads it: a test does, with
 * `modprobe rl_fault`.
 */
#include <linux/bug.h>
#include <linux/debugfs.h>
#include <linux/fs.h>
#include <linux/module.h>
#include <linux/string.h>
#include <linux/uaccess.h>

static struct dentry *rl_fault_dir;

static ssize_t rl_fault_write(struct file *file, const char __user *ubuf,
			      size_t count, loff_t *ppos)
{
	char cmd[8] = {};

	if (count == 0 || count >= sizeof(cmd))
		return -EINVAL;
	if (copy_from_user(cmd, ubuf, count))
		return -EFAULT;
	strim(cmd);
	if (!strcmp(cmd, "warn")) {
		WARN(1, "rl_fault: WARNING provoked on request");
		return count;
	}
	if (!strcmp(cmd, "oops")) {
		pr_emerg("rl_fault: Oops provoked on request\n");
		BUG();
	}
	return -EINVAL;
}

static const struct file_operations rl_fault_fops = {
	.owner = THIS_MODULE,
	.write = rl_fault_write,
	.llseek = noop_llseek,
};

static int __init rl_fault_init(void)
{
	rl_fault_dir = debugfs_create_dir("rl_fault", NULL);
	debugfs_create_file("provoke", 0200, rl_fault_dir, NULL, &rl_fault_fops);
	return 0;
}

static void __exit rl_fault_exit(void)
{
	debugfs_remove_recursive(rl_fault_dir);
}

module_init(rl_fault_init);
module_exit(rl_fault_exit);
MODULE_DESCRIPTION("retrolink fault kit: a kernel WARNING or Oops on request");
MODULE_LICENSE("GPL");
