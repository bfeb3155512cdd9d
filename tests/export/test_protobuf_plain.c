/* test_protobuf_plain.c: host nodes packed straight from events
 * (protobuf_plain.c) against the node the writer builds for the same event
 * (protobuf.c's fill_node, restated here) packed by sp__pb_host_node_pack,
 * which test_protobuf_node.c holds to protobuf-c's bytes. Events cover every
 * type (paddle's and stepprof's own), every kept and dropped flag, counter
 * values, parents, times at the varint boundaries and negative, names empty,
 * around the 16-byte copy, the table's last, unknown and too long, and pids
 * and tids of every length; the packer must also stop where its room ends. */
#include "check.h"
#include "protobuf.h"

#include <math.h>
#include <stdlib.h>

static const uint64_t edges[] = {
    0, 1, 127, 128, 16383, 16384, UINT32_MAX, (uint64_t)1 << 35, (uint64_t)INT64_MAX, UINT64_MAX};
#define EDGES (sizeof edges / sizeof edges[0])

/* The entry (field 2 of ThreadNodeTreeProto) for event k - 1, as the writer
 * builds it through the message structs. */
static size_t reference(const sp_result *r, const sp__event *e, size_t k, uint64_t tid,
                        uint8_t *out)
{
    sp__pb_host_node node = PADDLE__PLATFORM__HOST_TRACE_EVENT_NODE_PROTO__INIT;
    sp__pb_host h = PADDLE__PLATFORM__HOST_TRACE_EVENT_PROTO__INIT;
    node.has_id = node.has_parentid = 1;
    node.id = (int64_t)k;
    node.parentid = e->parent < 0 ? 0 : (int64_t)e->parent + 1;
    node.host_trace_event = &h;
    h.has_type = h.has_start_ns = h.has_end_ns = h.has_process_id = h.has_thread_id = 1;
    h.name = (char *)sp__result_name(r, e->name);
    h.type = e->type;
    h.has_stepprof_type = e->type > SP_EVENT_PYTHON_USER_DEFINED;
    if (h.has_stepprof_type) {
        h.type = SP_EVENT_OPERATOR_INNER;
        h.stepprof_type = e->type;
    }
    h.start_ns = (uint64_t)e->start_ns;
    h.end_ns = (uint64_t)e->end_ns;
    h.process_id = (uint64_t)r->meta.pid;
    h.thread_id = tid;
    uint32_t flags = e->flags & (SP_EVENT_FLAG_INSTANT | SP_EVENT_FLAG_COUNTER |
                                 SP_EVENT_FLAG_UNCLOSED | SP_EVENT_FLAG_SAMPLES);
    h.has_stepprof_flags = flags != 0;
    h.stepprof_flags = flags;
    h.has_stepprof_value = (e->flags & (SP_EVENT_FLAG_COUNTER | SP_EVENT_FLAG_SAMPLES)) != 0;
    h.stepprof_value = h.has_stepprof_value ? e->value : 0;
    size_t n = sp__pb_host_node_size(&node);
    uint8_t *p = out;
    *p++ = SP__PB_THREAD_HOST_NODES << 3 | 2;
    for (size_t v = n;; v >>= 7) {
        *p++ = (uint8_t)(v >= 0x80 ? (v & 0x7f) | 0x80 : v);
        if (v < 0x80) break;
    }
    return (size_t)(p - out) + sp__pb_host_node_pack(&node, p);
}

static char long_name[5000];

/* Name ids: "", short ones, 15 to 17 bytes (the copy's piece), 300 bytes,
 * one too long for the packer, and last in the table a short one whose
 * 16-byte copy would run past the table. */
static uint32_t name_ids[8];

static void add_names(sp_result *r)
{
    memset(long_name, 'x', sizeof long_name - 1);
    name_ids[0] = sp__names_from_bytes(&r->names, "", 0);
    name_ids[1] = sp__names_from_bytes(&r->names, "matmul", 6);
    name_ids[2] = sp__names_from_bytes(&r->names, "fifteen_bytes__", 15);
    name_ids[3] = sp__names_from_bytes(&r->names, "sixteen_bytes___", 16);
    name_ids[4] = sp__names_from_bytes(&r->names, "seventeen_bytes__", 17);
    name_ids[5] = sp__names_from_bytes(&r->names, long_name, 300);
    name_ids[6] = r->names.count + 7; /* unknown: read as "" */
    name_ids[7] = sp__names_from_bytes(&r->names, "tail", 4);
}

static void fill_events(sp__event *ev, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        sp__event *e = &ev[i];
        memset(e, 0, sizeof *e);
        e->start_ns = (int64_t)edges[i % EDGES];
        e->end_ns = i % 7 == 3 ? -5 : (int64_t)edges[(i / EDGES + 3) % EDGES];
        e->name = name_ids[i % 8];
        e->type = (uint8_t)(i % 3 == 0 ? i % 21 : i % 5 == 0 ? 200 + i % 50 : i % 15);
        e->flags = (uint8_t)(i * 37 % 128);
        e->parent = i % 4 == 0 ? -1 : (int32_t)(i * 977 % 300000);
        static const double values[] = {0.0, -0.0, 1.5, -1e300, NAN, INFINITY};
        e->value = values[i % 6];
    }
}

static void test_plain_nodes_equal_the_writers(void)
{
    sp_result r;
    memset(&r, 0, sizeof r);
    CHECK_EQ(0, sp__names_init(&r.names));
    add_names(&r);
    enum { EVENTS = 4000 };
    sp__event *ev = malloc(sizeof *ev * EVENTS);
    uint8_t *want = malloc(EVENTS * 512), *got = malloc(EVENTS * 512 + 65536);
    CHECK(ev && want && got);
    if (!ev || !want || !got) goto out;
    fill_events(ev, EVENTS);
    sp__thread t;
    memset(&t, 0, sizeof t);
    t.events = ev;
    t.count = EVENTS;
    static const int32_t pids[] = {0, 1, 127, 128, 4194304, INT32_MAX, -1};
    size_t compared = 0, too_long = 0;
    for (size_t pi = 0; pi < sizeof pids / sizeof pids[0]; pi++) {
        r.meta.pid = pids[pi];
        uint64_t tid = edges[pi * 3 % EDGES];
        sp__pb_plain c;
        CHECK_EQ(0, sp__pb_plain_init(&c, &r, &t, tid));
        size_t want_len = 0;
        for (size_t k = 1; k <= EVENTS; k++)
            want_len += reference(&r, &ev[k - 1], k, tid, want + want_len);
        /* Packed in runs, as the writer does: a run ends where the room
         * does or at the too-long name, which the writer packs itself. */
        uint8_t *p = got;
        for (size_t k = 1; k <= EVENTS;) {
            size_t next = sp__pb_plain_pack(&c, k, EVENTS + 1, &p, got + EVENTS * 512 + 65536);
            if (next == k) {
                CHECK(strlen(sp__result_name(&r, ev[k - 1].name)) > SP__PB_PLAIN_NAME_MAX);
                p += reference(&r, &ev[k - 1], k, tid, p);
                too_long++;
                next = k + 1;
            }
            k = next;
        }
        size_t got_len = (size_t)(p - got);
        CHECK_EQ(want_len, got_len);
        size_t at = 0;
        while (at < want_len && at < got_len && want[at] == got[at])
            at++;
        if (at < want_len) CHECK_FAIL_("pid %d: first difference at byte %zu", (int)pids[pi], at);
        compared += EVENTS;
        sp__pb_plain_fini(&c);
    }
    CHECK_EQ(7 * EVENTS, compared);
    CHECK_EQ(0, too_long); /* 300 bytes fit; the next test has the too-long name */
out:
    free(ev);
    free(want);
    free(got);
    sp__names_fini(&r.names);
}

/* A name too long for the packer stops it there, and a short room stops it
 * before a node that might not fit, without writing past the limit. */
static void test_plain_stops_at_long_names_and_room(void)
{
    sp_result r;
    memset(&r, 0, sizeof r);
    CHECK_EQ(0, sp__names_init(&r.names));
    /* Names are cut at 4096 bytes, but each NUL in one becomes U+FFFD's
     * three bytes after the cut, so a name of NULs ends up longer. */
    memset(long_name, 0, sizeof long_name);
    uint32_t shortn = sp__names_from_bytes(&r.names, "relu", 4);
    uint32_t longn = sp__names_from_bytes(&r.names, long_name, 2000);
    CHECK(strlen(sp__result_name(&r, longn)) > SP__PB_PLAIN_NAME_MAX);
    sp__event ev[3];
    memset(ev, 0, sizeof ev);
    ev[0].name = ev[2].name = shortn;
    ev[1].name = longn;
    ev[0].parent = ev[1].parent = ev[2].parent = -1;
    sp__thread t;
    memset(&t, 0, sizeof t);
    t.events = ev;
    t.count = 3;
    sp__pb_plain c;
    CHECK_EQ(0, sp__pb_plain_init(&c, &r, &t, 7));
    enum { ROOM = SP__PB_PLAIN_NAME_MAX + 16 + SP__PB_PLAIN_FIXED };
    static uint8_t buf[2 * ROOM];
    uint8_t *p = buf;
    CHECK_EQ(2, sp__pb_plain_pack(&c, 1, 4, &p, buf + 2 * ROOM)); /* stops at the long name */
    uint8_t want[256];
    size_t n = reference(&r, &ev[0], 1, 7, want);
    CHECK_EQ(n, (size_t)(p - buf));
    CHECK(memcmp(buf, want, n) == 0);
    CHECK_EQ(2, sp__pb_plain_pack(&c, 2, 4, &p, buf + 2 * ROOM)); /* nothing packed */
    CHECK_EQ(n, (size_t)(p - buf));
    p = buf;
    CHECK_EQ(4, sp__pb_plain_pack(&c, 3, 4, &p, buf + ROOM)); /* room for exactly one */
    n = reference(&r, &ev[2], 3, 7, want);
    CHECK_EQ(n, (size_t)(p - buf));
    CHECK(memcmp(buf, want, n) == 0);
    p = buf;
    CHECK_EQ(3, sp__pb_plain_pack(&c, 3, 4, &p, buf + ROOM - 1)); /* room for none */
    CHECK_EQ(0, (size_t)(p - buf));
    sp__pb_plain_fini(&c);
    sp__names_fini(&r.names);
}

int main(void)
{
    RUN_TEST(test_plain_nodes_equal_the_writers);
    RUN_TEST(test_plain_stops_at_long_names_and_room);
    return TEST_SUMMARY();
}
