/* smoke: the first things that must work */
#include "../test.h"

TEST(smoke_read_write_4k)
{
	thps_proc *p;
	uint64_t a;

	tmachine(64, NULL);
	p = tproc();
	a = tmmap(p, 0, MB(1), THPS_PROT_READ | THPS_PROT_WRITE, THPS_MAP_PRIVATE | THPS_MAP_ANONYMOUS);
	tread(p, a, MB(1), PAGE, 0);
	ASSERT_EQ(fig(p, THPS_PROC_Rss), 0);
	twrite(p, a, MB(1), PAGE, 0x5a);
	ASSERT_EQ(fig(p, THPS_PROC_Rss), 1024);
	tread(p, a, MB(1), PAGE, 0x5a);
	texit(p);
}
