// SPDX-License-Identifier: MIT
/* The -v phase timing table: see phase.h. */
#include "report/phase/phase.h"

bool phase__on;
struct phase_stats phase__stats;

void phase__note_memory(enum phase p)
{
	FILE *f = fopen("/proc/self/status", "re");
	char line[128];
	unsigned long long kb;

	if (!f)
		return;
	while (fgets(line, sizeof(line), f)) {
		if (sscanf(line, "RssAnon: %llu", &kb) == 1)
			phase__stats.rss_anon[p] = kb;
		else if (sscanf(line, "RssFile: %llu", &kb) == 1)
			phase__stats.rss_file[p] = kb;
		else if (sscanf(line, "VmHWM: %llu", &kb) == 1)
			phase__stats.rss_peak[p] = kb;
	}
	fclose(f);
}

void phase__print(FILE *fp, uint64_t total_ns, uint64_t samples)
{
	static const char *const names[PHASE_NR] = {
		[PHASE_OPEN] = "open", [PHASE_PASS1] = "pass 1: records",
		[PHASE_PASS2] = "pass 2: samples to stacks",
		[PHASE_READ] = "  waiting for decoded chunks (in pass 2)",
		[PHASE_UNWIND] = "  unwinding (in pass 2)",
		[PHASE_SYMBOLIZE] = "  symbolizing new pcs (in pass 2)",
		[PHASE_SYMTAB] = "    symbol tables (in symbolizing)",
		[PHASE_SRCLINE] = "    inline chains, lines (in symbolizing)",
		[PHASE_FINISH] = "GPU join, analyses", [PHASE_OUTPUT] = "output",
	};

	fprintf(fp, "# phase timing (-v), %llu samples:\n", (unsigned long long)samples);
	fprintf(fp, "#   %-42s %10s %6s %10s %12s\n", "phase", "seconds", "share", "calls",
		"us/sample");
	for (int p = 0; p < PHASE_NR; p++)
		fprintf(fp, "#   %-42s %10.3f %5.1f%% %10llu %12.2f\n", names[p],
			phase__stats.ns[p] / 1e9,
			total_ns ? 100.0 * (double)phase__stats.ns[p] / (double)total_ns : 0,
			(unsigned long long)phase__stats.calls[p],
			samples ? (double)phase__stats.ns[p] / 1e3 / (double)samples : 0);
	fprintf(fp, "#   %-42s %10.3f\n", "total", total_ns / 1e9);
	fprintf(fp, "# resident memory at the end of each phase (-v), MB:\n");
	fprintf(fp, "#   %-42s %10s %10s %10s\n", "phase", "anon", "file", "peak");
	for (int p = 0; p < PHASE_NR; p++)
		if (phase__stats.rss_peak[p])
			fprintf(fp, "#   after %-36s %10.1f %10.1f %10.1f\n", names[p],
				phase__stats.rss_anon[p] / 1024.0,
				phase__stats.rss_file[p] / 1024.0,
				phase__stats.rss_peak[p] / 1024.0);
}
