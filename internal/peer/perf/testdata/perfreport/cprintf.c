/* Reference text for perfreport_test.go, printed by C's printf with the
 * format strings of perftest 6.06 (Debian perftest 4.5-0.17, copied from the
 * ib_write_bw binary's string table) and the values the Go test uses.
 * Regenerate: gcc -o /tmp/cprintf cprintf.c && /tmp/cprintf > cprintf.txt */
#include <stdio.h>
#include <stdint.h>

static void dest(const char *side, int lid, int qpn, int psn, int out, int rdma, unsigned rkey,
                 unsigned long long vaddr, const unsigned char *g)
{
	printf(" %s address: LID %#04x QPN %#06x PSN %#06x", side, lid, qpn, psn);
	if (out)
		printf(" OUT %#04x", out);
	if (rdma)
		printf(" RKey %#08x VAddr %#016llx", rkey, vaddr);
	printf("\n");
	printf(" %s: %02d:%02d:%02d:%02d:%02d:%02d:%02d:%02d:%02d:%02d:%02d:%02d:%02d:%02d:%02d:%02d\n", "GID",
	       g[0], g[1], g[2], g[3], g[4], g[5], g[6], g[7], g[8], g[9], g[10], g[11], g[12], g[13], g[14], g[15]);
}

int main(void)
{
	const unsigned char a[16] = {0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 255, 255, 192, 168, 77, 11};
	const unsigned char b[16] = {0xfe, 0x80, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1};
	dest("local", 0, 0x11, 0x318da6, 0, 1, 0x2f1, 0x556ef83fa000ULL, a);
	dest("remote", 1, 0x11, 0xd64cfe, 0x80, 1, 0x2c6, 0x56005f76d000ULL, b);
	dest("local", 0x1234, 0xabcdef, 0, 0, 0, 0, 0, a);
	printf(" %-7lu    %-10lu       %-7.2lf            %-7.2lf\t\t   %-7.6lf\n", 4096UL, 200UL, 9.17340371228809, 8.092329080111265, 0.0020716362445084837);
	printf(" %-7lu    %-10lu       %-7.2lf            %-7.2lf\t\t   %-7.6lf\n", 65536UL, 5000UL, 12345.678, 0.004, 123.4567891);
	printf(" %-7lu %lu          %-7.2f        %-7.2f      %-7.2f  \t       %-7.2f     \t%-7.2f\t\t%-7.2f \t\t%-7.2f\n", 8UL, 1000UL, 1.5, 20.25, 1.75, 1.8125, 0.625, 3.5, 19.99);
	printf(" %-7lu %lu          %-7.2f        %-7.2f      %-7.2f  \t       %-7.2f     \t%-7.2f\t\t%-7.2f \t\t%-7.2f\n", 1048576UL, 7UL, 1234.5, 123456.789, 0.0, 0.005, 0.015, 100.0, 1e6);
	return 0;
}
