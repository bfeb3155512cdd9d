/* dump_write.c: the section writer of dump files (dump_write.h). */
#include "dump_write.h"

#include <errno.h>
#include <string.h>
#include <unistd.h>

void sp__dump_reset(sp__dump_writer *w)
{
    w->len = 0;
    w->failed = 0;
    w->sections = 0;
}

static void raw_write(sp__dump_writer *w, const void *data, size_t len)
{
    const char *p = data;
    while (len > 0 && !w->failed) {
        ssize_t n = write(w->fd, p, len);
        if (n < 0 && errno == EINTR) continue;
        if (n <= 0) {
            w->failed = 1;
            return;
        }
        p += n;
        len -= (size_t)n;
    }
}

void sp__dump_flush_out(sp__dump_writer *w)
{
    raw_write(w, w->buf, w->len);
    w->len = 0;
}

/* Large runs (a chunk's words) are written from where they lie. */
void sp__dump_put(sp__dump_writer *w, const void *data, size_t len)
{
    if (len > w->cap / 2) {
        sp__dump_flush_out(w);
        raw_write(w, data, len);
        return;
    }
    if (w->len + len > w->cap) sp__dump_flush_out(w);
    memcpy(w->buf + w->len, data, len);
    w->len += len;
}

void sp__dump_pad(sp__dump_writer *w, size_t len)
{
    static const char zeros[8];
    if (len % 8) sp__dump_put(w, zeros, 8 - len % 8);
}

void sp__dump_section(sp__dump_writer *w, uint32_t type, uint64_t bytes)
{
    uint32_t head[2] = {type, 0};
    sp__dump_put(w, head, sizeof head);
    sp__dump_put(w, &bytes, sizeof bytes);
    w->sections++;
}

void sp__dump_header(sp__dump_writer *w)
{
    uint32_t head32[2] = {SP__DUMP_VERSION, SP__DUMP_HEADER_BYTES};
    uint64_t order = SP__DUMP_BYTE_ORDER;
    sp__dump_put(w, SP__DUMP_MAGIC, SP__DUMP_MAGIC_BYTES);
    sp__dump_put(w, head32, sizeof head32);
    sp__dump_put(w, &order, sizeof order);
}

void sp__dump_meta_section(sp__dump_writer *w, int64_t signo, int64_t pid, const sp__sync *start,
                           const sp__sync *now, uint64_t flags, const char *process_name)
{
    sp__tick_map map;
    sp__clock_map(&map, start, now); /* arithmetic only */
    sp__dump_meta m;
    memset(&m, 0, sizeof m);
    m.signo = signo;
    m.pid = pid;
    m.start_ticks = start->ticks;
    m.end_ticks = now->ticks;
    m.anchor_ticks = map.anchor_ticks;
    m.anchor_real_ns = map.anchor_real_ns;
    m.ns_per_tick = map.ns_per_tick;
    m.flags = flags;
    for (size_t i = 0; i + 1 < sizeof m.process_name && process_name[i]; i++) m.process_name[i] = process_name[i];
    sp__dump_section(w, SP__DUMP_META, sizeof m);
    sp__dump_put(w, &m, sizeof m);
}

void sp__dump_dist_section(sp__dump_writer *w, const sp__dump_dist *d)
{
    sp__dump_section(w, SP__DUMP_DIST, sizeof *d);
    sp__dump_put(w, d, sizeof *d);
}

/* Whether the byte at p can be read, without touching it: write() reports
 * EFAULT for an unmapped address instead of raising a signal. */
static int readable(const sp__dump_writer *w, const char *p)
{
    char c;
    if (write(w->probe[1], p, 1) != 1) return 0;
    while (read(w->probe[0], &c, 1) < 0 && errno == EINTR) {
    }
    return 1;
}

/* Length of the string at p, at most max; -1 if p cannot be read. Each
 * 4 KiB page is probed before its first byte is read (every page size is a
 * multiple of 4 KiB), so a bad pointer never faults here. */
static long probed_strnlen(const sp__dump_writer *w, const char *p, size_t max)
{
    size_t n = 0;
    for (; n < max; n++) {
        const char *q = p + n;
        if ((n == 0 || ((uintptr_t)q & 4095u) == 0) && !readable(w, q)) return n == 0 ? -1 : (long)n;
        if (*q == '\0') break;
    }
    return (long)n;
}

void sp__dump_name(sp__dump_writer *w, uint64_t ptr)
{
    const char *s = (const char *)(uintptr_t)ptr;
    long len = ptr ? probed_strnlen(w, s, SP__NAME_MAX_BYTES + 1) : -1;
    if (len < 0) return; /* the loader shows "(unknown)" (NULL: "(null)") */
    sp__dump_section(w, SP__DUMP_NAME, 8 + (uint64_t)len);
    sp__dump_put(w, &ptr, sizeof ptr);
    sp__dump_put(w, s, (size_t)len);
    sp__dump_pad(w, 8 + (size_t)len);
}

void sp__dump_thread_section(sp__dump_writer *w, const sp__tbuf *tb, int with_counts)
{
    sp__dump_thread t;
    memset(&t, 0, sizeof t);
    t.tid = tb->tid;
    t.base_ticks = tb->read_ticks;
    if (with_counts) {
        t.dropped = sp__tbuf_dropped(tb) - tb->dropped_seen +
                    atomic_load_explicit(&tb->overwritten, memory_order_relaxed);
        t.misuse = atomic_load_explicit(&tb->misuse, memory_order_relaxed) - tb->misuse_seen;
    }
    memcpy(t.name, tb->name, sizeof t.name - 1);
    sp__dump_section(w, SP__DUMP_THREAD, sizeof t);
    sp__dump_put(w, &t, sizeof t);
}
