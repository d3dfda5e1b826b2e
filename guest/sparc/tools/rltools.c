// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * rltools: the few commands of busybox that the node's init script uses and klibc
 * does not have, for the sparc32 nodes (docs/sparc.md). One program, called by the
 * name of its link, each command with busybox's arguments and output:
 *
 *   devmem ADDRESS [WIDTH [VALUE]]  read (printed as 0x.., WIDTH bits) or write
 *                                   physical memory: the boot barrier's registers
 *   modprobe MODULE [OPTION...]     load /lib/modules/<release>/MODULE.ko with the
 *                                   options, and those of the kernel command line
 *                                   (MODULE.option=value), as kmod's modprobe does
 *   rmmod MODULE                    unload it
 *   head -c BYTES FILE              the first BYTES bytes of FILE: the command out of
 *                                   its fw_cfg slot (guest/rootfs/init)
 *   hostname NAME                   set the host name
 *   usleep MICROSECONDS             sleep
 *   ip link set DEVICE up           bring an interface up
 *   ip addr add A.B.C.D/N dev DEVICE  give it an IPv4 address and netmask
 *   ping [-c N] [-i S] [-s SIZE] [-W S] A.B.C.D  ICMP echo (ping.c)
 *   busybox sh SCRIPT...            run klibc's shell, for the init script's
 *   busybox --install -s DIR        #!/bin/busybox line and first command (the
 *                                   image has its links already)
 *
 * Built against klibc (src/retrolink/build/sparc_userland.py).
 */
#include <errno.h>
#include <fcntl.h>
#include <net/if.h>
#include <netinet/in.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/utsname.h>
#include <time.h>
#include <unistd.h>

#include "rltools.h"

extern long finit_module(int, const char *, int);
extern long delete_module(const char *, unsigned int);

#define OPTIONS_MAX 1024

int fail(const char *what, const char *arg)
{
	fprintf(stderr, "%s %s: %s\n", what, arg, strerror(errno));
	return 1;
}

static int devmem(int argc, char **argv)
{
	unsigned long addr, width = 32, value = 0, page = getpagesize();
	volatile unsigned char *map;
	void *base;
	int fd;

	if (argc < 2) {
		fprintf(stderr, "usage: devmem ADDRESS [WIDTH [VALUE]]\n");
		return 1;
	}
	addr = strtoul(argv[1], NULL, 0);
	if (argc > 2)
		width = strtoul(argv[2], NULL, 0);
	if (width != 8 && width != 16 && width != 32) {
		fprintf(stderr, "devmem: WIDTH is 8, 16 or 32\n");
		return 1;
	}
	if (addr & (width / 8 - 1)) {
		fprintf(stderr, "devmem: %s is not aligned to %lu bits\n", argv[1], width);
		return 1;
	}
	if (argc > 3)
		value = strtoul(argv[3], NULL, 0);
	fd = open("/dev/mem", argc > 3 ? O_RDWR | O_SYNC : O_RDONLY | O_SYNC);
	if (fd < 0)
		return fail("devmem: open", "/dev/mem");
	base = mmap(NULL, page, argc > 3 ? PROT_READ | PROT_WRITE : PROT_READ, MAP_SHARED,
		    fd, addr & ~(page - 1));
	if (base == MAP_FAILED)
		return fail("devmem: mmap", argv[1]);
	map = (volatile unsigned char *)base + (addr & (page - 1));
	if (argc > 3) {
		if (width == 8)
			*map = value;
		else if (width == 16)
			*(volatile unsigned short *)map = value;
		else
			*(volatile unsigned int *)map = value;
	} else {
		if (width == 8)
			value = *map;
		else if (width == 16)
			value = *(volatile unsigned short *)map;
		else
			value = *(volatile unsigned int *)map;
		printf("0x%0*lX\n", (int)width / 4, value);
	}
	munmap(base, page);
	close(fd);
	return 0;
}

/* the kernel command line's MODULE.option=value words, appended to opts */
static void cmdline_options(const char *module, char *opts, size_t size)
{
	char line[OPTIONS_MAX], *word, *save;
	size_t len = strlen(module);
	ssize_t n;
	int fd = open("/proc/cmdline", O_RDONLY);

	if (fd < 0)
		return;
	n = read(fd, line, sizeof(line) - 1);
	close(fd);
	if (n <= 0)
		return;
	line[n] = '\0';
	for (word = strtok_r(line, " \n", &save); word; word = strtok_r(NULL, " \n", &save)) {
		if (strncmp(word, module, len) || word[len] != '.')
			continue;
		if (strlen(opts) + strlen(word + len + 1) + 2 > size)
			break;
		if (*opts)
			strcat(opts, " ");
		strcat(opts, word + len + 1);
	}
}

static int modprobe(int argc, char **argv)
{
	char module[64], path[256], opts[OPTIONS_MAX] = "";
	struct utsname u;
	int fd, i;

	if (argc < 2 || strlen(argv[1]) >= sizeof(module)) {
		fprintf(stderr, "usage: modprobe MODULE [OPTION...]\n");
		return 1;
	}
	/* the kernel's names have '_' where a user may write '-' */
	for (i = 0; argv[1][i]; i++)
		module[i] = argv[1][i] == '-' ? '_' : argv[1][i];
	module[i] = '\0';
	for (i = 2; i < argc; i++) {
		if (strlen(opts) + strlen(argv[i]) + 2 > sizeof(opts))
			break;
		if (*opts)
			strcat(opts, " ");
		strcat(opts, argv[i]);
	}
	cmdline_options(module, opts, sizeof(opts));
	uname(&u);
	snprintf(path, sizeof(path), "/lib/modules/%s/%s.ko", u.release, module);
	fd = open(path, O_RDONLY);
	if (fd < 0)
		return fail("modprobe: open", path);
	if (finit_module(fd, opts, 0) && errno != EEXIST)
		return fail("modprobe: load", path);
	close(fd);
	return 0;
}

static int rmmod(int argc, char **argv)
{
	if (argc != 2) {
		fprintf(stderr, "usage: rmmod MODULE\n");
		return 1;
	}
	if (delete_module(argv[1], O_NONBLOCK))
		return fail("rmmod", argv[1]);
	return 0;
}

static int head(int argc, char **argv)
{
	char buf[4096];
	unsigned long left;
	ssize_t n = 0;
	int fd;

	if (argc != 4 || strcmp(argv[1], "-c")) {
		fprintf(stderr, "usage: head -c BYTES FILE\n");
		return 1;
	}
	left = strtoul(argv[2], NULL, 10);
	fd = open(argv[3], O_RDONLY);
	if (fd < 0)
		return fail("head: open", argv[3]);
	/* a sysfs file gives at most a page a read */
	while (left && (n = read(fd, buf, left < sizeof(buf) ? left : sizeof(buf))) > 0) {
		if (write(1, buf, n) != n) {
			fail("head: write", "stdout");	/* before close() can change errno */
			close(fd);
			return 1;
		}
		left -= n;
	}
	if (n < 0)
		fail("head: read", argv[3]);
	close(fd);
	return n < 0;
}

static int hostname(int argc, char **argv)
{
	if (argc != 2) {
		fprintf(stderr, "usage: hostname NAME\n");
		return 1;
	}
	if (sethostname(argv[1], strlen(argv[1])))
		return fail("hostname", argv[1]);
	return 0;
}

static int usleep_cmd(int argc, char **argv)
{
	unsigned long us;
	struct timespec t;

	if (argc != 2) {
		fprintf(stderr, "usage: usleep MICROSECONDS\n");
		return 1;
	}
	us = strtoul(argv[1], NULL, 0);
	t.tv_sec = us / 1000000;
	t.tv_nsec = (us % 1000000) * 1000;
	while (nanosleep(&t, &t) && errno == EINTR)
		;
	return 0;
}

/* One interface ioctl on an IPv4 datagram socket. */
static int if_ioctl(const char *dev, int request, struct ifreq *ifr, const char *what)
{
	int fd = socket(AF_INET, SOCK_DGRAM, 0), ret;

	if (fd < 0)
		return fail("ip: socket", dev);
	strcpy(ifr->ifr_name, dev);
	ret = ioctl(fd, request, ifr);
	close(fd);
	return ret ? fail(what, dev) : 0;
}

static int ip_link_up(const char *dev)
{
	struct ifreq ifr;

	memset(&ifr, 0, sizeof(ifr));
	if (if_ioctl(dev, SIOCGIFFLAGS, &ifr, "ip: get flags of"))
		return 1;
	ifr.ifr_flags |= IFF_UP;
	return if_ioctl(dev, SIOCSIFFLAGS, &ifr, "ip: set flags of");
}

static void set_sin(struct ifreq *ifr, uint32_t addr)
{
	struct sockaddr_in sin = { .sin_family = AF_INET, .sin_addr.s_addr = htonl(addr) };

	memcpy(&ifr->ifr_addr, &sin, sizeof(sin));
}

static int ip_addr_add(const char *cidr, const char *dev)
{
	unsigned int a, b, c, d, prefix;
	struct ifreq ifr;
	uint32_t mask;

	if (sscanf(cidr, "%u.%u.%u.%u/%u", &a, &b, &c, &d, &prefix) != 5 || a > 255 ||
	    b > 255 || c > 255 || d > 255 || prefix > 32) {
		fprintf(stderr, "ip: %s is not an IPv4 address A.B.C.D/N\n", cidr);
		return 1;
	}
	memset(&ifr, 0, sizeof(ifr));
	set_sin(&ifr, a << 24 | b << 16 | c << 8 | d);
	if (if_ioctl(dev, SIOCSIFADDR, &ifr, "ip: set the address of"))
		return 1;
	mask = prefix ? ~0u << (32 - prefix) : 0;
	memset(&ifr, 0, sizeof(ifr));
	set_sin(&ifr, mask);
	return if_ioctl(dev, SIOCSIFNETMASK, &ifr, "ip: set the netmask of");
}

static int ip(int argc, char **argv)
{
	if (argc == 5 && !strcmp(argv[1], "link") && !strcmp(argv[2], "set") &&
	    !strcmp(argv[4], "up") && strlen(argv[3]) < IFNAMSIZ)
		return ip_link_up(argv[3]);
	if (argc == 6 && !strcmp(argv[1], "addr") && !strcmp(argv[2], "add") &&
	    !strcmp(argv[4], "dev") && strlen(argv[5]) < IFNAMSIZ)
		return ip_addr_add(argv[3], argv[5]);
	fprintf(stderr, "usage: ip link set DEVICE up | ip addr add A.B.C.D/N dev DEVICE\n");
	return 1;
}

static int busybox(int argc, char **argv)
{
	char path[64];

	if (argc > 1 && !strcmp(argv[1], "--install"))
		return 0;
	if (argc < 2 || strchr(argv[1], '/') || strlen(argv[1]) > 32) {
		fprintf(stderr, "usage: busybox COMMAND [ARG...]\n");
		return 1;
	}
	snprintf(path, sizeof(path), "/bin/%s", argv[1]);
	execv(path, argv + 1);
	return fail("busybox: exec", path);
}

static const struct {
	const char *name;
	int (*main)(int argc, char **argv);
} commands[] = {
	{ "devmem", devmem },
	{ "modprobe", modprobe },
	{ "rmmod", rmmod },
	{ "head", head },
	{ "hostname", hostname },
	{ "usleep", usleep_cmd },
	{ "ip", ip },
	{ "ping", ping_main },
	{ "busybox", busybox },
};

int main(int argc, char **argv)
{
	const char *name = strrchr(argv[0], '/') ? strrchr(argv[0], '/') + 1 : argv[0];
	unsigned int i;

	for (i = 0; i < sizeof(commands) / sizeof(commands[0]); i++)
		if (!strcmp(name, commands[i].name))
			return commands[i].main(argc, argv);
	fprintf(stderr, "rltools: call me as devmem, modprobe, rmmod, head, hostname, usleep, ip, ping or busybox\n");
	return 1;
}
