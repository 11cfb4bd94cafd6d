/* Linked into every program of the sanitized tree (the top CMakeLists.txt,
 * SLUICE_SANITIZE), nothing else: AddressSanitizer's runtime backed by
 * huge pages where that spares a process thousands of page faults.
 *
 * At every exit, LeakSanitizer scans the globals of each loaded module for
 * pointers, libasan's own among them: 5.6 MB of zero-initialised data, most
 * of it a table of stack traces (the stack depot) that the process never
 * touched. Each of its 4 KiB pages costs a page fault on the first read,
 * about 1,400 faults a process. On a virtual machine where a fault exits to
 * the host that was half of a short process's life (`sluice --version`:
 * 46 ms, 23 of them the scan), and the suite starts thousands.
 *
 * So before main, the 2 MB-aligned part of that data is collapsed into huge
 * pages (MADV_COLLAPSE, Linux 6.1): two faults' worth of work where there
 * were a thousand, and 4 MB of memory a process. Where the kernel refuses,
 * nothing changes but the time. */
#include <link.h>
#include <stdint.h>
#include <string.h>
#include <sys/mman.h>

#ifndef MADV_COLLAPSE
#define MADV_COLLAPSE 25
#endif

enum {
	PAGE = 4096,
	HUGE = 2 << 20,
};

static int
collapse_bss(struct dl_phdr_info *info, size_t size, void *arg)
{
	(void)size;
	(void)arg;
	if (info->dlpi_name == NULL ||
	    strstr(info->dlpi_name, "libasan") == NULL)
		return 0;
	for (int i = 0; i < info->dlpi_phnum; i++) {
		const ElfW(Phdr) *p = &info->dlpi_phdr[i];
		uintptr_t start, end;

		/* the zero-initialised tail of a writable segment, past the
		 * page that holds the end of its file-backed part */
		if (p->p_type != PT_LOAD || p->p_memsz <= p->p_filesz)
			continue;
		start = info->dlpi_addr + p->p_vaddr + p->p_filesz;
		end = info->dlpi_addr + p->p_vaddr + p->p_memsz;
		start = (start + PAGE - 1) / PAGE * PAGE;
		start = (start + HUGE - 1) / HUGE * HUGE;
		end = end / HUGE * HUGE;
		if (end > start)
			(void)madvise(
			    (void *)start, end - start, MADV_COLLAPSE);
	}
	return 1;
}

__attribute__((constructor)) static void
san_start(void)
{
	dl_iterate_phdr(collapse_bss, NULL);
}
