/* load_dump.c: reads a crash dump (src/record/crash.h, docs/design.md
 * "Crash dumps") back into a result. The file is checked whole before any
 * record is decoded: header, section sizes, one META first, THREAD before
 * WORDS, one END last whose count matches, every thread's words made of
 * whole events. A truncated or corrupt file gives SP_EFORMAT naming the
 * offset. The one exception is a streamed dump (META flag STREAMED) without
 * END, left by a process killed while streaming: it is read up to its last
 * FLUSH, whose count must match; sections after it are checked if whole,
 * and a last section that runs past the end of the file is the truncated
 * tail, ignored and counted (trailing_bytes: a pass cut short by the kill
 * or by a full disk). One whose passes saved no event at all is an error
 * (SP_EFORMAT), not an empty result. The records are then decoded by the collector (sp__collect_saved),
 * so a dump gives exactly the result a stop at the crash would have, with
 * the ranges still open at the crash closed there and flagged UNCLOSED.
 * Static name pointers of the crashed process are looked up in the dump's
 * NAME sections, never dereferenced. */
#include "crash.h"
#include "load.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef struct dump_name {
    uint64_t ptr;
    const char *text;
    size_t len;
} dump_name;

typedef struct dump {
    const char *path;
    unsigned char *data;
    size_t size;
    const sp__dump_meta *meta;
    const sp__dump_dist *dist; /* NULL in dumps without it */
    sp__saved_thread *threads;
    size_t thread_count;
    sp__word *words;     /* every thread's words, back to back */
    size_t word_count;
    dump_name *names;    /* sorted by ptr */
    size_t name_count;
    size_t end;                  /* the sections before this offset are read */
    const sp__dump_flush *flush; /* a streamed dump's last FLUSH, or NULL */
    size_t flush_end;            /* the offset after that FLUSH */
    size_t cut_bytes;            /* bytes after it, ignored (a pass cut short) */
} dump;

int sp__is_dump(const unsigned char *head, size_t n)
{
    return n >= SP__DUMP_MAGIC_BYTES && memcmp(head, SP__DUMP_MAGIC, SP__DUMP_MAGIC_BYTES) == 0;
}

static sp_status bad(const dump *d, size_t offset, const char *what)
{
    return sp__fail(SP_EFORMAT, "%s: crash dump: %s at offset %zu", d->path, what, offset);
}

static sp_status read_file(dump *d, FILE *f)
{
    sp__buf b;
    sp__buf_init(&b);
    char chunk[65536];
    size_t n;
    while ((n = fread(chunk, 1, sizeof chunk, f)) > 0) sp__buf_append(&b, chunk, n);
    int err = ferror(f);
    if (err || b.failed) {
        sp__buf_fini(&b);
        return err ? sp__fail(SP_EIO, "%s: cannot read: %s", d->path, strerror(errno))
                   : sp__fail(SP_ENOMEM, "%s: out of memory", d->path);
    }
    /* The buffer's memory comes from the allocator, so it is aligned for
     * word access (every section starts at a multiple of 8). */
    d->size = b.len;
    d->data = (unsigned char *)b.data;
    if (!d->data) return sp__fail(SP_EFORMAT, "%s: empty file", d->path);
    return SP_OK;
}

/* One section's header at off: its type, payload and the next offset. */
typedef struct section {
    uint32_t type;
    size_t payload, bytes, next;
} section;

static int next_section(const dump *d, size_t off, section *s)
{
    if (d->size - off < 16) return -1;
    uint32_t head[2];
    uint64_t bytes;
    memcpy(head, d->data + off, sizeof head);
    memcpy(&bytes, d->data + off + 8, sizeof bytes);
    size_t room = d->size - off - 16;
    if (head[1] != 0 || bytes > room) return -1;
    size_t padded = (size_t)bytes + (8 - bytes % 8) % 8;
    if (padded > room) return -1;
    s->type = head[0];
    s->payload = off + 16;
    s->bytes = (size_t)bytes;
    s->next = off + 16 + padded;
    return 0;
}

/* Counts of threads, words and names in the sections read so far. */
typedef struct counts {
    size_t threads, words, names;
} counts;

/* The end of the content of a streamed dump without END (the process was
 * killed while streaming): its last FLUSH. The complete sections after it
 * were checked; they and a tail that runs past the end of the file, the
 * section being appended when the process died, are left out. */
static sp_status streamed_end(dump *d, size_t off, const counts *flushed, counts *out)
{
    if (!d->flush) return bad(d, off, "streamed dump without a complete pass (no FLUSH section)");
    /* No pass saved an event: the process ended before its first pass, or
     * the passes could not be written (a full disk). An empty result would
     * look like a span that recorded nothing. */
    if (flushed->words == 0)
        return sp__fail(SP_EFORMAT, "%s: crash dump: no events saved (a streamed dump cut short after %zu "
                        "bytes: the process ended before the first pass, or the disk was full)", d->path,
                        d->size);
    d->end = d->flush_end;
    d->cut_bytes = d->size - d->flush_end;
    *out = *flushed;
    return SP_OK;
}

/* Pass 1: structure and counts. A complete dump ends with END; a streamed
 * one (META flag SP__DUMP_STREAMED) may instead end anywhere after a FLUSH
 * (streamed_end). */
static sp_status scan(dump *d, counts *c)
{
    if (d->size < SP__DUMP_HEADER_BYTES) return bad(d, 0, "file shorter than its header");
    uint32_t head32[2];
    uint64_t order;
    memcpy(head32, d->data + 8, sizeof head32);
    memcpy(&order, d->data + 16, sizeof order);
    if (order != SP__DUMP_BYTE_ORDER) return bad(d, 16, "written with another byte order");
    if (head32[0] != SP__DUMP_VERSION) return bad(d, 8, "unknown version");
    if (head32[1] != SP__DUMP_HEADER_BYTES) return bad(d, 12, "unknown header size");
    size_t off = SP__DUMP_HEADER_BYTES;
    uint64_t count = 0;
    counts flushed = {0, 0, 0};
    memset(c, 0, sizeof *c);
    for (;;) {
        section s;
        int streamed = d->meta && (d->meta->flags & SP__DUMP_STREAMED);
        if (off == d->size) {
            if (streamed) return streamed_end(d, off, &flushed, c);
            return bad(d, off, "file truncated (no END section)");
        }
        if (next_section(d, off, &s) != 0) {
            if (streamed) return streamed_end(d, off, &flushed, c);
            return bad(d, off, "section runs past the end of the file");
        }
        switch (s.type) {
        case SP__DUMP_META:
            if (count != 0) return bad(d, off, "META is not the first section");
            if (s.bytes != sizeof(sp__dump_meta)) return bad(d, off, "META of the wrong size");
            d->meta = (const sp__dump_meta *)(d->data + s.payload);
            break;
        case SP__DUMP_DIST:
            if (count != 1 || d->dist) return bad(d, off, "DIST is not right after META");
            if (s.bytes != sizeof(sp__dump_dist)) return bad(d, off, "DIST of the wrong size");
            d->dist = (const sp__dump_dist *)(d->data + s.payload);
            break;
        case SP__DUMP_THREAD:
            if (s.bytes != sizeof(sp__dump_thread)) return bad(d, off, "THREAD of the wrong size");
            c->threads++;
            break;
        case SP__DUMP_WORDS:
            if (c->threads == 0) return bad(d, off, "WORDS before any THREAD");
            if (s.bytes % sizeof(sp__word)) return bad(d, off, "WORDS not a whole number of words");
            c->words += s.bytes / sizeof(sp__word);
            break;
        case SP__DUMP_MORE: {
            sp__dump_more m;
            if (!streamed) return bad(d, off, "MORE in a dump that is not streamed");
            if (s.bytes < sizeof m || (s.bytes - sizeof m) % sizeof(sp__word))
                return bad(d, off, "MORE not a head and a whole number of words");
            memcpy(&m, d->data + s.payload, sizeof m);
            if (m.thread >= c->threads) return bad(d, off, "MORE of a thread not yet seen");
            c->words += (s.bytes - sizeof m) / sizeof(sp__word);
            break;
        }
        case SP__DUMP_FLUSH: {
            sp__dump_flush f;
            if (!streamed) return bad(d, off, "FLUSH in a dump that is not streamed");
            if (s.bytes != sizeof f) return bad(d, off, "FLUSH of the wrong size");
            memcpy(&f, d->data + s.payload, sizeof f);
            if (f.sections != count) return bad(d, off, "FLUSH's section count does not match");
            d->flush = (const sp__dump_flush *)(d->data + s.payload);
            d->flush_end = s.next;
            flushed = *c;
            break;
        }
        case SP__DUMP_NAME:
            if (s.bytes < 8) return bad(d, off, "NAME shorter than its pointer");
            c->names++;
            break;
        case SP__DUMP_END: {
            uint64_t said;
            if (s.bytes != sizeof said) return bad(d, off, "END of the wrong size");
            memcpy(&said, d->data + s.payload, sizeof said);
            if (said != count) return bad(d, off, "END's section count does not match");
            if (s.next != d->size) return bad(d, s.next, "data after the END section");
            if (!d->meta) return bad(d, off, "no META section");
            d->end = off;
            d->flush = NULL; /* complete: META's time and map hold */
            return SP_OK;
        }
        default:
            return bad(d, off, "unknown section type");
        }
        if (count == 0 && s.type != SP__DUMP_META) return bad(d, off, "META is not the first section");
        count++;
        off = s.next;
    }
}

static int by_ptr(const void *a, const void *b)
{
    uint64_t x = ((const dump_name *)a)->ptr, y = ((const dump_name *)b)->ptr;
    return x < y ? -1 : x > y;
}

/* Pass 2: fills threads, words and names from the sections before d->end
 * (the structure is known good). A thread's words are its WORDS sections
 * (after its THREAD) and its MORE sections, in file order; the first walk
 * counts them, so that each thread's words lie back to back. */
static void fill(dump *d)
{
    for (int copy = 0; copy < 2; copy++) {
        size_t off = SP__DUMP_HEADER_BYTES, threads = 0;
        sp__saved_thread *t = NULL;
        while (off < d->end) {
            section s;
            next_section(d, off, &s);
            const unsigned char *p = d->data + s.payload;
            const unsigned char *w = NULL;
            size_t n = 0;
            if (s.type == SP__DUMP_THREAD) {
                t = &d->threads[threads++];
                if (!copy) {
                    sp__dump_thread dt;
                    memcpy(&dt, p, sizeof dt);
                    t->tb.tid = dt.tid;
                    t->tb.read_ticks = dt.base_ticks;
                    t->tb.span_dropped = dt.dropped;
                    t->tb.span_misuse = dt.misuse;
                    memcpy(t->tb.name, dt.name, sizeof t->tb.name - 1);
                }
            } else if (s.type == SP__DUMP_WORDS) {
                w = p;
                n = s.bytes / sizeof(sp__word);
            } else if (s.type == SP__DUMP_MORE) {
                sp__dump_more m;
                memcpy(&m, p, sizeof m);
                t = &d->threads[m.thread];
                t->tb.span_dropped = m.dropped;
                t->tb.span_misuse = m.misuse;
                w = p + sizeof m;
                n = (s.bytes - sizeof m) / sizeof(sp__word);
            } else if (s.type == SP__DUMP_NAME && copy) {
                dump_name *nm = &d->names[d->name_count++];
                memcpy(&nm->ptr, p, sizeof nm->ptr);
                nm->text = (const char *)p + 8;
                nm->len = s.bytes - 8;
            }
            if (n && copy) memcpy((sp__word *)t->words + t->count, w, n * sizeof(sp__word));
            if (n) t->count += n;
            off = s.next;
        }
        if (copy) break;
        d->thread_count = threads;
        for (size_t i = 0; i < threads; i++) {
            d->threads[i].words = d->words + d->word_count;
            d->word_count += d->threads[i].count;
            d->threads[i].count = 0;
        }
    }
    /* A stable order is not needed: duplicates of one pointer hold one text. */
    qsort(d->names, d->name_count, sizeof *d->names, by_ptr);
}

/* Every thread's words must be whole events. */
static sp_status check_events(const dump *d)
{
    for (size_t i = 0; i < d->thread_count; i++) {
        const sp__saved_thread *t = &d->threads[i];
        size_t k = 0;
        while (k < t->count) {
            unsigned kind = SP__REC_KIND(t->words[k]);
            if (kind == 0) return bad(d, 0, "unknown record kind in a thread's words");
            size_t n = sp__event_words(t->words + k);
            if (n > t->count - k)
                return sp__fail(SP_EFORMAT, "%s: crash dump: thread %llu: event at word %zu runs past "
                                "its records", d->path, (unsigned long long)t->tb.tid, k);
            k += n;
        }
    }
    return SP_OK;
}

/* Copies a text of a dump into dst only when it ends within its field and
 * fits whole. */
static void copy_text(char *dst, size_t size, const char *src, size_t src_size)
{
    size_t n = strnlen(src, src_size);
    if (n < src_size && n < size) {
        memcpy(dst, src, n);
        dst[n] = '\0';
    }
}

/* The rank metadata of a dump's DIST section; without one (or with values
 * no launcher gives), a single process's. */
static void restore_dist(const sp__dump_dist *dist, sp__span_meta *meta)
{
    meta->rank = meta->world_size = meta->local_rank = meta->local_world_size = 0;
    if (dist) {
        sp__dump_dist x;
        memcpy(&x, dist, sizeof x);
        meta->rank = x.rank >= 0 && x.rank < (1ll << 30) ? x.rank : 0;
        meta->world_size = x.world_size > 0 && x.world_size <= (1ll << 30) ? x.world_size : 1;
        if (x.local_rank >= 0 && x.local_rank < (1ll << 30) && x.local_world_size > 0 &&
            x.local_world_size <= (1ll << 30)) {
            meta->local_rank = x.local_rank;
            meta->local_world_size = x.local_world_size;
        }
        copy_text(meta->hostname, sizeof meta->hostname, x.hostname, sizeof x.hostname);
        copy_text(meta->job, sizeof meta->job, x.job, sizeof x.job);
        copy_text(meta->dist_backend, sizeof meta->dist_backend, x.backend, sizeof x.backend);
        if (!sp__dist_backend_ok(meta->dist_backend)) meta->dist_backend[0] = '\0';
    }
    sp__dist_meta_default(meta);
}

static sp_status check_meta(const dump *d, sp__saved_span *span)
{
    const sp__dump_meta *m = d->meta;
    double rate = m->ns_per_tick;
    if (!isfinite(rate) || rate <= 0 || rate > 1e6) return bad(d, SP__DUMP_HEADER_BYTES, "bad tick rate");
    if (m->anchor_real_ns < 0 || m->anchor_real_ns > ((int64_t)1 << 62))
        return bad(d, SP__DUMP_HEADER_BYTES, "bad time anchor");
    span->map.anchor_ticks = m->anchor_ticks;
    span->map.anchor_real_ns = m->anchor_real_ns;
    span->map.ns_per_tick = rate;
    span->start_ticks = m->start_ticks;
    span->end_ticks = m->end_ticks;
    if (d->flush) {
        /* A streamed dump cut short: its last pass gives the time reached
         * and the best tick map. */
        sp__dump_flush f;
        memcpy(&f, d->flush, sizeof f);
        if (!isfinite(f.ns_per_tick) || f.ns_per_tick <= 0 || f.ns_per_tick > 1e6)
            return bad(d, SP__DUMP_HEADER_BYTES, "bad tick rate in FLUSH");
        if (f.anchor_real_ns < 0 || f.anchor_real_ns > ((int64_t)1 << 62))
            return bad(d, SP__DUMP_HEADER_BYTES, "bad time anchor in FLUSH");
        span->map.anchor_ticks = f.anchor_ticks;
        span->map.anchor_real_ns = f.anchor_real_ns;
        span->map.ns_per_tick = f.ns_per_tick;
        span->end_ticks = f.end_ticks;
    }
    span->orphan_dropped = m->orphan_dropped;
    sp__span_meta *meta = &span->meta;
    meta->record_shapes = (m->flags & SP__DUMP_RECORD_SHAPES) != 0;
    meta->profile_memory = (m->flags & SP__DUMP_PROFILE_MEMORY) != 0;
    meta->with_flops = (m->flags & SP__DUMP_WITH_FLOPS) != 0;
    meta->with_stack = (m->flags & SP__DUMP_WITH_STACK) != 0;
    meta->overwrite_oldest = (m->flags & SP__DUMP_OVERWRITE_OLDEST) != 0;
    meta->pid = m->pid;
    memcpy(meta->process_name, m->process_name, sizeof meta->process_name - 1);
    restore_dist(d->dist, meta);
    return SP_OK;
}

static uint32_t name_of(void *ctx, sp__names *names, uint64_t ptr)
{
    const dump *d = ctx;
    if (ptr == 0) return sp__names_from_bytes(names, "(null)", 6);
    size_t lo = 0, hi = d->name_count;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (d->names[mid].ptr < ptr)
            lo = mid + 1;
        else
            hi = mid;
    }
    if (lo < d->name_count && d->names[lo].ptr == ptr) {
        /* Text after a NUL is not part of a C string name. */
        const dump_name *nm = &d->names[lo];
        return sp__names_from_bytes(names, nm->text, strnlen(nm->text, nm->len));
    }
    return sp__names_from_bytes(names, "(unknown)", 9);
}

sp_status sp__load_dump(FILE *f, const char *path, const sp_load_options *opts, sp_result **out)
{
    dump d;
    memset(&d, 0, sizeof d);
    d.path = path;
    sp__saved_span span;
    memset(&span, 0, sizeof span);
    counts c;
    sp_status s = read_file(&d, f);
    if (s == SP_OK) s = scan(&d, &c);
    if (s == SP_OK) {
        d.threads = sp__alloc(sizeof *d.threads * (c.threads ? c.threads : 1));
        d.words = sp__alloc(sizeof *d.words * (c.words ? c.words : 1));
        d.names = sp__alloc(sizeof *d.names * (c.names ? c.names : 1));
        if (!d.threads || !d.words || !d.names) s = sp__fail(SP_ENOMEM, "%s: out of memory", path);
    }
    if (s == SP_OK) {
        fill(&d);
        s = check_events(&d);
    }
    if (s == SP_OK) s = check_meta(&d, &span);
    if (s == SP_OK) {
        span.threads = d.threads;
        span.thread_count = d.thread_count;
        span.name_of = name_of;
        span.name_ctx = &d;
        s = sp__collect_saved(&span, out);
        if (s == SP_OK) (*out)->counters[SP_COUNTER_TRAILING_BYTES] += d.cut_bytes;
    }
    if (s == SP_OK && opts && opts->progress) opts->progress(d.size, d.size, opts->progress_user);
    sp__free(d.threads);
    sp__free(d.words);
    sp__free(d.names);
    sp__free(d.data);
    return s;
}
