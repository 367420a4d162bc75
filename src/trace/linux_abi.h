/*
 * linux_abi.h - the x86-64 Linux system-call numbers and flag values a
 * trace carries raw (docs/trace-format.md: a SYSCALL record holds the
 * call's number and arguments as the program passed them).
 *
 * The recorder picks the calls it traces and the touches they imply from
 * these, the replay reads the calls back with them, and the trace dump
 * names them: one list, so that the three agree.  They are written here
 * rather than taken from the build host's headers because a trace means
 * the same on every machine that reads it (uapi values, x86-64).
 */
#ifndef THPSIM_LINUX_ABI_H
#define THPSIM_LINUX_ABI_H

/* X(name, number, arguments the recorder keeps; -1: it does not trace it) */
#define LINUX_SYSCALLS(X)          \
	X(mmap, 9, 6)              \
	X(mprotect, 10, 3)         \
	X(munmap, 11, 2)           \
	X(brk, 12, 1)              \
	X(mremap, 25, 5)           \
	X(madvise, 28, 3)          \
	X(shmat, 30, 3)            \
	X(clone, 56, 5)            \
	X(fork, 57, 0)             \
	X(vfork, 58, 0)            \
	X(execve, 59, 0)           \
	X(exit, 60, -1)            \
	X(shmdt, 67, 1)            \
	X(mlock, 149, 2)           \
	X(munlock, 150, 2)         \
	X(mlockall, 151, 1)        \
	X(munlockall, 152, 0)      \
	X(prctl, 157, 5)           \
	X(exit_group, 231, -1)     \
	X(execveat, 322, 0)        \
	X(mlock2, 325, 3)          \
	X(pkey_mprotect, 329, 4)   \
	X(clone3, 435, 2)          \
	X(process_madvise, 440, 5)

enum linux_syscall_nr {
#define LINUX_NR_ENUM(name, nr, nargs) LINUX_NR_##name = nr,
	LINUX_SYSCALLS(LINUX_NR_ENUM)
#undef LINUX_NR_ENUM
};

/* madvise(2) advice */
enum linux_madv {
	LINUX_MADV_NORMAL = 0,
	LINUX_MADV_RANDOM = 1,
	LINUX_MADV_SEQUENTIAL = 2,
	LINUX_MADV_WILLNEED = 3,
	LINUX_MADV_DONTNEED = 4,
	LINUX_MADV_FREE = 8,
	LINUX_MADV_DONTFORK = 10,
	LINUX_MADV_HUGEPAGE = 14,
	LINUX_MADV_NOHUGEPAGE = 15,
	LINUX_MADV_DONTDUMP = 16,
	LINUX_MADV_DODUMP = 17,
	LINUX_MADV_WIPEONFORK = 18,
	LINUX_MADV_COLD = 20,
	LINUX_MADV_PAGEOUT = 21,
	LINUX_MADV_POPULATE_READ = 22,
	LINUX_MADV_POPULATE_WRITE = 23,
	LINUX_MADV_DONTNEED_LOCKED = 24,
	LINUX_MADV_COLLAPSE = 25,
	LINUX_MADV_GUARD_INSTALL = 102,
	LINUX_MADV_GUARD_REMOVE = 103,
};

/* mmap(2) flags */
#define LINUX_MAP_TYPE 0x0f
#define LINUX_MAP_PRIVATE 0x02
#define LINUX_MAP_FIXED 0x10
#define LINUX_MAP_ANONYMOUS 0x20
#define LINUX_MAP_FIXED_NOREPLACE 0x100000
#define LINUX_MAP_LOCKED 0x2000
#define LINUX_MAP_POPULATE 0x8000
#define LINUX_MAP_NONBLOCK 0x10000
#define LINUX_MAP_HUGETLB 0x40000
#define LINUX_MAP_STACK 0x20000

/* clone(2) flags */
#define LINUX_CLONE_VM 0x100
#define LINUX_CLONE_THREAD 0x10000

/* mlockall(2) and mlock2(2) flags */
#define LINUX_MCL_CURRENT 1
#define LINUX_MCL_FUTURE 2
#define LINUX_MCL_ONFAULT 4
#define LINUX_MLOCK_ONFAULT 1

/* prctl(2) */
#define LINUX_PR_SET_THP_DISABLE 41

/* The end of the x86-64 user address space (4-level page tables). */
#define LINUX_TASK_SIZE 0x7ffffffff000ULL

#endif
