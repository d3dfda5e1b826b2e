// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * ping for the sparc32 nodes (rltools, docs/sparc.md): ICMP echo requests to an IPv4
 * address, with busybox ping's options and output, so that what runs ping on a PC node
 * runs on a SPARCstation too:
 *
 *   ping [-c COUNT] [-i SECONDS] [-s SIZE] [-W SECONDS] A.B.C.D
 *
 * One request at a time: send, wait up to the -W time for its reply, wait out the rest
 * of the interval. Exits 0 if any reply came, 1 if none, 2 on a bad argument.
 */
#include <errno.h>
#include <netinet/in.h>
#include <arpa/inet.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <unistd.h>

#include "rltools.h"

#define ICMP_ECHOREPLY	0
#define ICMP_ECHO	8
#define ICMP_HEADER	8
#define IP_HEADER_MAX	60
#define PING_SIZE_MAX	65000

struct icmp_echo {
	uint8_t type, code;
	uint16_t checksum, id, seq;
	uint8_t data[];
};

static uint16_t checksum(const void *buf, size_t len)
{
	const uint8_t *p = buf;
	uint32_t sum = 0;

	for (; len > 1; p += 2, len -= 2)
		sum += p[0] << 8 | p[1];
	if (len)
		sum += p[0] << 8;
	while (sum >> 16)
		sum = (sum & 0xffff) + (sum >> 16);
	return htons(~sum & 0xffff);
}

static long long now_us(void)
{
	struct timeval tv;

	gettimeofday(&tv, NULL);
	return tv.tv_sec * 1000000LL + tv.tv_usec;
}

/* microseconds as busybox prints milliseconds: 0.123 */
static void print_ms(long long us)
{
	printf("%lld.%03lld", us / 1000, us % 1000);
}

/* A non-negative decimal with up to three places (0.2, 10) in thousandths: 0 or -1. */
static int parse_milli(const char *s, long *out)
{
	long whole = 0, frac = 0, scale = 1000;

	if (!*s)
		return -1;
	for (; *s >= '0' && *s <= '9'; s++)
		whole = whole * 10 + (*s - '0');
	if (*s == '.')
		for (s++; *s >= '0' && *s <= '9' && scale > 1; s++)
			frac += (*s - '0') * (scale /= 10);
	if (*s || whole > 1000000)
		return -1;
	*out = whole * 1000 + frac;
	return 0;
}

static int usage(void)
{
	fprintf(stderr, "usage: ping [-c COUNT] [-i SECONDS] [-s SIZE] [-W SECONDS] A.B.C.D\n");
	return 2;
}

/* Wait for the echo reply of seq until deadline: its round trip in us, or -1. */
static long long await_reply(int fd, uint16_t id, uint16_t seq, long long sent,
			     long long deadline, uint8_t *buf, size_t size, int *ttl)
{
	struct pollfd pfd = { .fd = fd, .events = POLLIN };
	long long now;

	while ((now = now_us()) < deadline) {
		struct icmp_echo *reply;
		ssize_t n;
		int ihl;

		if (poll(&pfd, 1, (deadline - now + 999) / 1000) <= 0)
			continue;
		n = recv(fd, buf, size, 0);
		if (n < 20)
			continue;
		ihl = (buf[0] & 0xf) * 4;
		reply = (struct icmp_echo *)(buf + ihl);
		if (n < ihl + ICMP_HEADER || reply->type != ICMP_ECHOREPLY ||
		    reply->id != htons(id) || reply->seq != htons(seq))
			continue;
		*ttl = buf[8];
		return now_us() - sent;
	}
	return -1;
}

int ping_main(int argc, char **argv)
{
	long count = -1, size = 56, interval_ms = 1000, wait_s = 10;
	long long sent_at, rtt, min = -1, max = 0, sum = 0;
	struct sockaddr_in to = { .sin_family = AF_INET };
	unsigned long transmitted = 0, received = 0;
	uint16_t id = getpid() & 0xffff;
	struct icmp_echo *req;
	uint8_t *reply;
	int opt, fd, ttl;

	while ((opt = getopt(argc, argv, "c:i:s:W:")) != -1) {
		long milli;

		if (opt == '?' || parse_milli(optarg, &milli))
			return usage();
		switch (opt) {
		case 'c': count = milli / 1000; break;
		case 'i': interval_ms = milli; break;
		case 's': size = milli / 1000; break;
		case 'W': wait_s = milli / 1000; break;
		}
	}
	if (optind != argc - 1 || size > PING_SIZE_MAX || !inet_aton(argv[optind], &to.sin_addr))
		return usage();
	fd = socket(AF_INET, SOCK_RAW, IPPROTO_ICMP);
	if (fd < 0)
		return fail("ping: raw socket for", argv[optind]);
	req = calloc(1, ICMP_HEADER + size);
	reply = malloc(IP_HEADER_MAX + ICMP_HEADER + size);
	if (!req || !reply) {
		fprintf(stderr, "ping: out of memory\n");
		return 2;
	}
	printf("PING %s (%s): %ld data bytes\n", argv[optind], argv[optind], size);
	for (uint16_t seq = 0; count < 0 || (long)transmitted < count; seq++) {
		long long next = now_us() + interval_ms * 1000;

		req->type = ICMP_ECHO;
		req->id = htons(id);
		req->seq = htons(seq);
		req->checksum = 0;
		req->checksum = checksum(req, ICMP_HEADER + size);
		sent_at = now_us();
		if (sendto(fd, req, ICMP_HEADER + size, 0, (struct sockaddr *)&to, sizeof(to)) < 0)
			return fail("ping: send to", argv[optind]);
		transmitted++;
		rtt = await_reply(fd, id, seq, sent_at, sent_at + wait_s * 1000000LL, reply,
				  IP_HEADER_MAX + ICMP_HEADER + size, &ttl);
		if (rtt >= 0) {
			received++;
			sum += rtt;
			min = min < 0 || rtt < min ? rtt : min;
			max = rtt > max ? rtt : max;
			printf("%ld bytes from %s: seq=%u ttl=%d time=", ICMP_HEADER + size,
			       argv[optind], seq, ttl);
			print_ms(rtt);
			printf(" ms\n");
		}
		if ((count < 0 || (long)transmitted < count) && now_us() < next)
			usleep(next - now_us());
	}
	printf("\n--- %s ping statistics ---\n", argv[optind]);
	printf("%lu packets transmitted, %lu packets received, %lu%% packet loss\n", transmitted,
	       received, transmitted ? (transmitted - received) * 100 / transmitted : 0);
	if (received) {
		printf("round-trip min/avg/max = ");
		print_ms(min);
		printf("/");
		print_ms(sum / received);
		printf("/");
		print_ms(max);
		printf(" ms\n");
	}
	return received ? 0 : 1;
}
