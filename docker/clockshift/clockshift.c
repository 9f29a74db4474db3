/*
 * clockshift: an LD_PRELOAD interposer that shifts one process's wall
 * clock, for the safety scenario's clock-jump variant (Redis expires keys
 * on the wall clock; the host's clock must not be touched).
 *
 * It overrides gettimeofday, time and clock_gettime for CLOCK_REALTIME and
 * CLOCK_REALTIME_COARSE; other clocks pass through. The real time comes
 * from the raw system call, and the offset is read from the file named by
 * CLOCKSHIFT_FILE on every call, so a write to that file takes effect on
 * the very next call. The file holds one integer with an optional unit:
 * "20s", "-1500ms", "250us", "5000000ns" (no unit: nanoseconds). A file
 * that is missing, empty or unparsable keeps the last good offset (a file
 * being replaced is briefly one of those); with the variable unset the
 * offset is 0.
 *
 * Why not libfaketime: with Debian's jemalloc-linked redis-server it fails
 * at start ("Unexpected recursive calls to clock_gettime()",
 * wolfcw/libfaketime#130), because it resolves the real functions with
 * dlsym, which allocates, and jemalloc's initialisation reads the clock.
 * This file therefore uses no dlsym, no malloc and no stdio: only raw
 * system calls and a fixed stack buffer, which also keeps it safe to call
 * from signal handlers and from any thread.
 *
 * Build: cc -O2 -fPIC -shared -o clockshift.so clockshift.c
 */
#define _GNU_SOURCE
#include <fcntl.h>
#include <stdint.h>
#include <stdlib.h>
#include <sys/syscall.h>
#include <sys/time.h>
#include <time.h>
#include <unistd.h>

/* The last good offset in nanoseconds, shared by all threads. */
static int64_t last_offset;

extern char **environ;

/* The file's path, looked up once (getenv does not allocate); not before
 * the environment is set up, should anything read the clock that early. */
static const char *offset_path(void) {
	static const char *path;
	static int looked;
	if (!__atomic_load_n(&looked, __ATOMIC_ACQUIRE)) {
		if (!environ) return NULL;
		__atomic_store_n(&path, getenv("CLOCKSHIFT_FILE"), __ATOMIC_RELAXED);
		__atomic_store_n(&looked, 1, __ATOMIC_RELEASE);
	}
	return __atomic_load_n(&path, __ATOMIC_RELAXED);
}

/* parse reads "[-+]digits[ns|us|ms|s]" with optional surrounding
 * whitespace into *ns; it returns 0 on success. */
static int parse(const char *s, int64_t *ns) {
	int neg = 0, digits = 0;
	int64_t v = 0, unit = 1;
	while (*s == ' ' || *s == '\t' || *s == '\n' || *s == '\r') s++;
	if (*s == '-' || *s == '+') neg = *s++ == '-';
	for (; *s >= '0' && *s <= '9'; s++, digits++) {
		if (v > (INT64_MAX - 9) / 10) return -1;
		v = v * 10 + (*s - '0');
	}
	if (!digits) return -1;
	if (s[0] == 'n' && s[1] == 's') unit = 1, s += 2;
	else if (s[0] == 'u' && s[1] == 's') unit = 1000, s += 2;
	else if (s[0] == 'm' && s[1] == 's') unit = 1000000, s += 2;
	else if (s[0] == 's') unit = 1000000000, s += 1;
	while (*s == ' ' || *s == '\t' || *s == '\n' || *s == '\r') s++;
	if (*s) return -1;
	if (v > INT64_MAX / unit) return -1;
	*ns = neg ? -v * unit : v * unit;
	return 0;
}

/* offset returns the current offset in nanoseconds: one open, read and
 * close of a tiny file per call, cheap next to what the tests measure. */
static int64_t offset(void) {
	const char *path = offset_path();
	if (!path) return 0;
	char buf[64];
	long n = -1;
	long fd = syscall(SYS_openat, AT_FDCWD, path, O_RDONLY | O_CLOEXEC);
	if (fd >= 0) {
		n = syscall(SYS_read, fd, buf, sizeof buf - 1);
		syscall(SYS_close, fd);
	}
	int64_t ns;
	if (n > 0) {
		buf[n] = 0;
		if (parse(buf, &ns) == 0) {
			__atomic_store_n(&last_offset, ns, __ATOMIC_RELAXED);
			return ns;
		}
	}
	return __atomic_load_n(&last_offset, __ATOMIC_RELAXED);
}

static void shift(struct timespec *ts, int64_t ns) {
	int64_t nsec = ts->tv_nsec + ns % 1000000000;
	ts->tv_sec += ns / 1000000000 + nsec / 1000000000;
	nsec %= 1000000000;
	if (nsec < 0) nsec += 1000000000, ts->tv_sec--;
	ts->tv_nsec = nsec;
}

int clock_gettime(clockid_t clk, struct timespec *ts) {
	/* The raw system call also serves the clocks passed through: calling
	 * libc's own would need dlsym. */
	long r = syscall(SYS_clock_gettime, clk, ts);
	if (r == 0 && (clk == CLOCK_REALTIME || clk == CLOCK_REALTIME_COARSE)) shift(ts, offset());
	return (int)r;
}

int gettimeofday(struct timeval *restrict tv, void *restrict tz) {
	struct timespec ts;
	if (tz) {
		/* The kernel fills the obsolete timezone. */
		long r = syscall(SYS_gettimeofday, NULL, tz);
		if (r != 0) return (int)r;
	}
	long r = syscall(SYS_clock_gettime, CLOCK_REALTIME, &ts);
	if (r != 0) return (int)r;
	shift(&ts, offset());
	tv->tv_sec = ts.tv_sec;
	tv->tv_usec = ts.tv_nsec / 1000;
	return 0;
}

time_t time(time_t *t) {
	struct timespec ts;
	if (syscall(SYS_clock_gettime, CLOCK_REALTIME, &ts) != 0) return (time_t)-1;
	shift(&ts, offset());
	if (t) *t = ts.tv_sec;
	return ts.tv_sec;
}
