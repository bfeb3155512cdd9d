/* json_event.c: reads one trace event's object (and its args) into the
 * loader's event (json_load.h), for json_take.c to add. Keys are matched by
 * length and bytes straight from the token; integers and stepprof's
 * "<us>.<3 digits>" times are parsed by hand, exactly, and only other
 * spellings (exponents, more digits than an int64 holds) go through strtod
 * or strtoll. Values of the wrong type mark the event (bad_type) rather
 * than fail the load. */
#include "json_load.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

/* Whether the n bytes at s are exactly the literal lit. */
#define TEXT_IS(s, n, lit) ((n) == sizeof lit - 1 && memcmp((s), lit, sizeof lit - 1) == 0)
#define BUF_IS(b, lit) TEXT_IS((b)->data, (b)->len, lit)

static inline void copy_text(sp__buf *dst, const char *s, size_t n)
{
    if (n <= dst->cap && dst->data && !dst->failed) { /* the usual case: room from earlier events */
        memcpy(dst->data, s, n);
        dst->data[n] = '\0';
        dst->len = n;
        return;
    }
    dst->len = 0;
    sp__buf_append(dst, s, n);
    sp__buf_cstr(dst);
}

/* Sets l->key from the token just read (cut; longer keys never match) and
 * reads the ':' after it. */
static int key_from_tok(sp__jloader *l)
{
    size_t n = l->lx.tok.len < sizeof l->key - 1 ? l->lx.tok.len : sizeof l->key - 1;
    memcpy(l->key, l->lx.tok.data ? l->lx.tok.data : "", n);
    l->key[n] = '\0';
    if (l->lx.tok.len >= sizeof l->key) l->key[0] = '\0';
    return sp__jlex_expect(&l->lx, ':');
}

int sp__jload_key(sp__jloader *l)
{
    if (sp__jlex_string(&l->lx) != 0) return -1;
    return key_from_tok(l);
}

static int read_string_into(sp__jloader *l, sp__buf *dst)
{
    const char *s;
    size_t n;
    if (sp__jlex_peek(&l->lx) != '"') return sp__jlex_error(&l->lx, "string expected");
    if (sp__jlex_string_view(&l->lx, &s, &n) != 0) return -1;
    /* A short string in the read buffer (ph, cat, most names) is copied as
     * one fixed piece, inline: the buffer's slack keeps the read inside it. */
    uintptr_t at = (uintptr_t)s, buf = (uintptr_t)l->lx.buf;
    if (n <= SP__JSON_SLACK && at >= buf && at < buf + l->lx.len && dst->data &&
        dst->cap >= SP__JSON_SLACK && !dst->failed) {
        memcpy(dst->data, s, SP__JSON_SLACK);
        dst->data[n] = '\0';
        dst->len = n;
        return 0;
    }
    copy_text(dst, s, n);
    return dst->failed ? sp__jload_nomem(l) : 0;
}

/* An optional '-' and 1 to 18 digits, the whole of t: *v is its value. */
static int small_int(const char *t, size_t len, int64_t *v)
{
    int neg = len > 0 && t[0] == '-';
    size_t i = (size_t)neg;
    if (len - i == 0 || len - i > 18) return 0;
    int64_t x = 0;
    for (; i < len; i++) {
        unsigned d = (unsigned)(t[i] - '0');
        if (d > 9) return 0;
        x = x * 10 + (int64_t)d;
    }
    *v = neg ? -x : x;
    return 1;
}

/* The n bytes at s (a number, at most 400 bytes) as a C string in out. */
static const char *c_text(const char *s, size_t n, char out[401])
{
    n = n < 400 ? n : 400;
    memcpy(out, s, n);
    out[n] = '\0';
    return out;
}

int64_t sp__jload_int_of(const char *s, size_t len)
{
    int64_t v;
    if (small_int(s, len, &v)) return v;
    char buf[401];
    const char *t = c_text(s, len, buf);
    if (strpbrk(t, ".eE")) {
        double d = strtod(t, NULL);
        return d >= 9.2e18 ? INT64_MAX : d <= -9.2e18 ? INT64_MIN : (int64_t)llround(d);
    }
    long long ll = strtoll(t, NULL, 10);
    if (ll == LLONG_MAX && strcmp(t, "9223372036854775807") != 0)
        ll = (long long)strtoull(t, NULL, 10);
    return ll;
}

/* Whether c may continue a JSON number: a number followed by one is not
 * whole yet (or malformed) and goes the general way. */
static int number_byte(unsigned char c)
{
    return (c >= '0' && c <= '9') || c == '.' || c == 'e' || c == 'E' || c == '+' || c == '-';
}

/* The usual number, [-]<1 to max_digits digits>[.<digits>], parsed where it
 * lies in the read buffer in the pass that checks it: *whole is the integer
 * part, *frac its first three decimals (cut) as thousandths, *has_frac
 * whether it had any (allowed only with allow_frac). 0, with nothing
 * consumed, for anything else (an exponent, more digits, the buffer's end
 * near), which the caller reads through sp__jlex_number_view. */
static int quick_number(sp__jlex *lx, int max_digits, int allow_frac, int64_t *whole, int64_t *frac,
                        int *has_frac)
{
    const unsigned char *p = lx->buf + lx->pos, *end = lx->buf + lx->len;
    if (end - p < 64) return 0; /* room for any number taken here (52 bytes) and its delimiter */
    const unsigned char *start = p;
    int neg = *p == '-';
    p += neg;
    int64_t v = 0, f = 0;
    int digits = 0;
    for (; *p >= '0' && *p <= '9'; p++) {
        if (++digits > max_digits) return 0;
        v = v * 10 + (*p - '0');
    }
    if (digits == 0) return 0;
    *has_frac = *p == '.';
    if (*has_frac && !allow_frac) return 0;
    if (*has_frac) {
        int fd = 0;
        for (p++; *p >= '0' && *p <= '9'; p++, fd++) {
            if (fd > 30) return 0;
            if (fd < 3) f = f * 10 + (*p - '0');
        }
        if (fd == 0) return 0;
        for (; fd < 3; fd++)
            f *= 10;
    }
    if (number_byte(*p)) return 0;
    *whole = neg ? -v : v;
    *frac = neg ? -f : f;
    if (neg && v == 0 && f == 0) return 0; /* -0: strtod keeps its sign */
    lx->pos += (size_t)(p - start);
    lx->offset += (uint64_t)(p - start);
    return 1;
}

int sp__jload_int(sp__jloader *l, int64_t *out, int *ok)
{
    int c = sp__jlex_peek(&l->lx);
    if (c != '-' && (c < '0' || c > '9')) {
        *ok = 0;
        if (c != 'n') l->ev.bad_type = 1;
        return sp__jlex_skip(&l->lx);
    }
    int64_t whole, frac;
    int has_frac;
    if (quick_number(&l->lx, 18, 0, &whole, &frac, &has_frac)) {
        *out = whole;
        *ok = 1;
        return 0;
    }
    const char *s;
    size_t n;
    if (sp__jlex_number_view(&l->lx, &s, &n) != 0) return -1;
    *out = sp__jload_int_of(s, n);
    *ok = 1;
    return 0;
}

/* Microseconds as written by stepprof ("<us>.<3 digits>") to exact ns:
 * the integer part (up to 15 digits) and the first three decimals, the
 * rest cut; other spellings (an exponent, more digits) through a double. */
static int read_us(sp__jloader *l, int64_t *out, int *ok)
{
    int c = sp__jlex_peek(&l->lx);
    if (c != '-' && (c < '0' || c > '9')) {
        *ok = 0;
        if (c != 'n') l->ev.bad_type = 1;
        return sp__jlex_skip(&l->lx);
    }
    int64_t q_whole, q_frac;
    int has_frac;
    if (quick_number(&l->lx, 15, 1, &q_whole, &q_frac, &has_frac)) {
        *out = q_whole * 1000 + q_frac;
        *ok = 1;
        return 0;
    }
    /* A valid JSON number: after its integer and fraction only an
     * exponent can follow. */
    const char *s, *p;
    size_t n;
    if (sp__jlex_number_view(&l->lx, &s, &n) != 0) return -1;
    const char *end = s + n;
    p = s;
    int neg = *p == '-';
    p += neg;
    int64_t us = 0, frac = 0;
    size_t int_digits = 0;
    for (; p < end && *p >= '0' && *p <= '9'; p++, int_digits++)
        if (int_digits < 15) us = us * 10 + (*p - '0');
    int frac_digits = 0;
    if (p < end && *p == '.')
        for (p++; p < end && *p >= '0' && *p <= '9'; p++)
            if (frac_digits < 3) frac = frac * 10 + (*p - '0'), frac_digits++;
    if (int_digits <= 15 && p == end) {
        for (; frac_digits < 3; frac_digits++)
            frac *= 10;
        int64_t ns = us * 1000 + frac;
        *out = neg ? -ns : ns;
    } else {
        char buf[401];
        double d = strtod(c_text(s, n, buf), NULL) * 1000.0;
        *out = d >= 9.2e18 ? INT64_MAX : d <= -9.2e18 ? INT64_MIN : (int64_t)llround(d);
    }
    *ok = 1;
    return 0;
}

/* A tid: an integer, or paddle's string "<tid>(Python)" / "<tid>(C++)",
 * whose leading digits are the tid. Any other string is of the wrong type. */
static int read_tid(sp__jloader *l)
{
    sp__jevent *e = &l->ev;
    if (sp__jlex_peek(&l->lx) != '"') return sp__jload_int(l, &e->tid, &e->has_tid);
    if (sp__jlex_string(&l->lx) != 0) return -1;
    const char *t = l->lx.tok.data ? l->lx.tok.data : "";
    size_t digits = strspn(t, "0123456789");
    if (digits == 0 || digits > 19 || (t[digits] != '\0' && t[digits] != '(')) {
        e->bad_type = 1;
        return 0;
    }
    e->tid = (int64_t)strtoull(t, NULL, 10);
    e->has_tid = 1;
    e->paddle_tid = t[digits] == '(' &&
                    (strcmp(t + digits, "(Python)") == 0 || strcmp(t + digits, "(C++)") == 0);
    if (e->paddle_tid) l->paddle = 1;
    return 0;
}

typedef struct key_text {
    const char *s;
    size_t n;
} key_text;
/* clang-format off */
#define KEY(s) {s, sizeof s - 1}
/* clang-format on */

/* Index of the n bytes at s in keys, or -1; the lengths rule out nearly
 * all at once. */
static int key_index(const char *s, size_t n, const key_text *keys, int count)
{
    for (int i = 0; i < count; i++)
        if (n == keys[i].n && s[0] == keys[i].s[0] && memcmp(s, keys[i].s, n) == 0) return i;
    return -1;
}

/* Whether the n bytes at s are an arg key that json_cuda.c
 * (sp__cuda_arg_number, sp__cuda_arg_other), json_paddle.c
 * (sp__paddle_arg_number, sp__paddle_arg_string) or json_dist.c
 * (sp__comm_arg_number, sp__comm_arg_string) reads. Only these are passed
 * on to them, so that an arg nobody reads ("External id", on every event)
 * costs no strcmp chain; a key they learn must be added here. By length
 * first, then at most three comparisons, since every arg asks. */
static int helper_key(const char *s, size_t n)
{
    switch (n) {
    case 3:
        return memcmp(s, "seq", 3) == 0;
    case 4:
        return memcmp(s, "cbid", 4) == 0 || memcmp(s, "grid", 4) == 0 || memcmp(s, "addr", 4) == 0;
    case 5:
        return memcmp(s, "bytes", 5) == 0 || memcmp(s, "block", 5) == 0 ||
               memcmp(s, "place", 5) == 0;
    case 6:
        return memcmp(s, "device", 6) == 0 || memcmp(s, "stream", 6) == 0 ||
               memcmp(s, "queued", 6) == 0;
    case 7:
        return memcmp(s, "context", 7) == 0;
    case 8:
        return memcmp(s, "end_time", 8) == 0;
    case 10:
        return memcmp(s, "start_time", 10) == 0 || memcmp(s, "Group size", 10) == 0;
    case 11:
        return memcmp(s, "correlation", 11) == 0;
    case 13:
        return memcmp(s, "shared memory", 13) == 0 || memcmp(s, "peak_reserved", 13) == 0;
    case 14:
        return memcmp(s, "correlation id", 14) == 0 || memcmp(s, "increase_bytes", 14) == 0 ||
               memcmp(s, "peak_allocated", 14) == 0;
    case 15:
        return memcmp(s, "Collective name", 15) == 0;
    case 16:
        return memcmp(s, "current_reserved", 16) == 0;
    case 17:
        return memcmp(s, "current_allocated", 17) == 0;
    case 18:
        return memcmp(s, "Process Group Name", 18) == 0;
    case 20:
        return memcmp(s, "registers per thread", 20) == 0;
    default:
        return 0;
    }
}

/* The integer args read here (memory events, a step's samples). */
enum {
    ARG_ADDR,
    ARG_BYTES,
    ARG_TOTAL_ALLOCATED,
    ARG_TOTAL_RESERVED,
    ARG_DEVICE_ID,
    ARG_DEVICE_TYPE,
    ARG_NUM_SAMPLES,
    ARG_COUNT
};
static const key_text int_keys[ARG_COUNT] = {
    KEY("Addr"),      KEY("Bytes"),       KEY("Total Allocated"), KEY("Total Reserved"),
    KEY("Device Id"), KEY("Device Type"), KEY("num_samples")};

/* A number as a double, as strtod reads it, without strtod for the usual
 * integer (exact below 2^53, and rounded alike above). */
static double number_value(const char *s, size_t n)
{
    int64_t v;
    if (small_int(s, n, &v) && (v != 0 || s[0] != '-')) return (double)v;
    char buf[401];
    return strtod(c_text(s, n, buf), NULL);
}

/* The first arg's number: a counter's value, or a memory event's address. */
static void first_number(sp__jloader *l, int helper, const char *s, size_t n)
{
    sp__jevent *e = &l->ev;
    e->first_value = number_value(s, n);
    e->has_first_value = 1;
    int k = key_index(e->first_key.data, e->first_key.len, int_keys, ARG_COUNT);
    if (k == ARG_ADDR) {
        char buf[401];
        e->addr = (int64_t)strtoull(c_text(s, n, buf), NULL, 10);
    }
    if (k == ARG_NUM_SAMPLES && e->first_value >= 0) e->num_samples = sp__jload_int_of(s, n);
    if (helper) {
        int64_t v = sp__jload_int_of(s, n);
        sp__paddle_arg_number(&e->pa, l->key, v);
        sp__cuda_arg_number(&e->ca, l->key, v);
    }
}

/* first_number for an integer taken by quick_number: the same fields,
 * which every reading of an integer gives alike. */
static void first_integer(sp__jloader *l, int helper, int64_t v)
{
    sp__jevent *e = &l->ev;
    e->first_value = (double)v;
    e->has_first_value = 1;
    int k = key_index(e->first_key.data, e->first_key.len, int_keys, ARG_COUNT);
    if (k == ARG_ADDR) e->addr = v;
    if (k == ARG_NUM_SAMPLES && v >= 0) e->num_samples = v;
    if (helper) {
        sp__paddle_arg_number(&e->pa, l->key, v);
        sp__cuda_arg_number(&e->ca, l->key, v);
    }
}

static void int_arg(sp__jloader *l, int k, int64_t v, int ok)
{
    sp__jevent *e = &l->ev;
    switch (k) {
    case ARG_ADDR:
        e->addr = v;
        break;
    case ARG_BYTES:
        e->bytes = v;
        break;
    case ARG_TOTAL_ALLOCATED:
        e->total_allocated = v;
        break;
    case ARG_TOTAL_RESERVED:
        e->total_reserved = v;
        break;
    case ARG_DEVICE_ID:
        e->device_id = v;
        break;
    case ARG_DEVICE_TYPE:
        e->device_type = v;
        break;
    case ARG_NUM_SAMPLES:
        if (ok && v >= 0) e->num_samples = v;
        break;
    default:
        break;
    }
}

/* The two arg keys of every event stepprof and Kineto write, with their
 * colon, taken straight from the read buffer as quick_field takes event
 * keys: 1 with *key set to the key's text, 0 with nothing consumed. */
static int quick_arg(sp__jlex *lx, const char **key, size_t *key_len)
{
    static const char external[] = "External id", type[] = "Event Type";
    if (lx->len - lx->pos < 16) return 0;
    const unsigned char *p = lx->buf + lx->pos;
    if (p[0] != '"' || p[1] != 'E') return 0;
    if (memcmp(p + 1, "External id\":", 13) == 0) {
        *key = external;
        *key_len = sizeof external - 1;
    } else if (memcmp(p + 1, "Event Type\":", 12) == 0) {
        *key = type;
        *key_len = sizeof type - 1;
    } else {
        return 0;
    }
    lx->pos += *key_len + 3;
    lx->offset += *key_len + 3;
    return 1;
}

static int read_args(sp__jloader *l)
{
    sp__jevent *e = &l->ev;
    sp__jlex *lx = &l->lx;
    if (sp__jlex_peek(lx) != '{') return sp__jlex_skip(lx);
    sp__jlex_expect(lx, '{');
    if (sp__jlex_peek(lx) == '}') return sp__jlex_expect(lx, '}');
    int more = 1;
    while (more == 1) {
        /* The key stays in the read buffer only until the next read. */
        const char *key;
        size_t key_len;
        int colon_read = quick_arg(lx, &key, &key_len);
        if (!colon_read && sp__jlex_string_view(lx, &key, &key_len) != 0) return -1;
        int first = !e->has_first_value && e->first_key.len == 0;
        if (first) copy_text(&e->first_key, key, key_len);
        int helper = helper_key(key, key_len);
        e->helpers_used |= helper;
        int event_type = TEXT_IS(key, key_len, "Event Type"), name = TEXT_IS(key, key_len, "name");
        int k = key_index(key, key_len, int_keys, ARG_COUNT);
        if (helper) { /* the helpers take a C string */
            memcpy(l->key, key, key_len);
            l->key[key_len] = '\0';
        }
        if (!colon_read && sp__jlex_expect(lx, ':') != 0) return -1;
        int c = sp__jlex_peek(lx);
        int number = c == '-' || (c >= '0' && c <= '9');
        int taken = number || !helper ? 0 : sp__cuda_arg_other(&e->ca, lx, l->key);
        if (taken < 0) return -1;
        if (taken) {
            more = sp__jlex_next(lx, '}');
            continue;
        }
        if (event_type) {
            if (read_string_into(l, &e->event_type) != 0) return -1;
        } else if (name && c == '"') {
            if (read_string_into(l, &e->arg_name) != 0) return -1;
        } else if (c == '"') {
            if (sp__jlex_string(lx) != 0) return -1;
            if (helper && (sp__paddle_arg_string(&e->pa, l->key, lx->tok.data ? lx->tok.data : "",
                                                 lx->tok.len) != 0 ||
                           sp__comm_arg_string(&e->comm, l->key, lx->tok.data ? lx->tok.data : "",
                                               lx->tok.len) != 0))
                return sp__jload_nomem(l);
        } else if (first && number) {
            const char *num;
            size_t num_len;
            int64_t whole, frac;
            int has_frac;
            if (quick_number(lx, 18, 0, &whole, &frac, &has_frac)) {
                first_integer(l, helper, whole);
            } else {
                if (sp__jlex_number_view(lx, &num, &num_len) != 0) return -1;
                first_number(l, helper, num, num_len);
            }
        } else if (number) {
            int ok = 0;
            int64_t v = 0;
            if (sp__jload_int(l, &v, &ok) != 0) return -1;
            if (helper) {
                sp__paddle_arg_number(&e->pa, l->key, v);
                sp__cuda_arg_number(&e->ca, l->key, v);
                sp__comm_arg_number(&e->comm, l->key, v);
            }
            int_arg(l, k, v, ok);
        } else if (sp__jlex_skip(lx) != 0) {
            return -1;
        }
        more = sp__jlex_next(lx, '}');
    }
    return more < 0 ? -1 : 0;
}

static void reset_event(sp__jevent *e)
{
    e->ph.len = e->cat.len = e->name.len = e->s.len = e->event_type.len = 0;
    e->arg_name.len = e->first_key.len = 0;
    e->cat_id = SP__JCAT_OTHER;
    e->has_pid = e->has_tid = e->has_ts = e->has_dur = e->has_first_value = 0;
    e->bad_type = e->paddle_tid = 0;
    if (e->helpers_used) { /* still as reset, unless a helper wrote to them */
        sp__paddle_args_reset(&e->pa);
        sp__cuda_args_reset(&e->ca);
        sp__comm_args_reset(&e->comm);
        e->helpers_used = 0;
    }
    e->pid = e->tid = e->ts = e->dur = 0;
    e->addr = e->bytes = e->total_allocated = e->total_reserved = e->device_id = e->device_type = 0;
    e->first_value = 0;
    e->num_samples = -1;
}

static sp__jcat cat_of(const sp__buf *cat)
{
    if (BUF_IS(cat, "cpu_op")) return SP__JCAT_CPU_OP;
    if (BUF_IS(cat, "user_annotation")) return SP__JCAT_USER_ANNOTATION;
    if (BUF_IS(cat, "python_function")) return SP__JCAT_PYTHON_FUNCTION;
    if (BUF_IS(cat, "Trace")) return SP__JCAT_TRACE;
    return SP__JCAT_OTHER;
}

/* The event keys read; the others are skipped. */
enum { F_OTHER, F_PH, F_CAT, F_NAME, F_S, F_PID, F_TID, F_TS, F_DUR, F_ARGS };

static int field_of(const char *s, size_t n)
{
    switch (n) {
    case 1:
        return s[0] == 's' ? F_S : F_OTHER;
    case 2:
        if (s[0] == 'p' && s[1] == 'h') return F_PH;
        return s[0] == 't' && s[1] == 's' ? F_TS : F_OTHER;
    case 3:
        if (memcmp(s, "cat", 3) == 0) return F_CAT;
        if (memcmp(s, "pid", 3) == 0) return F_PID;
        if (memcmp(s, "tid", 3) == 0) return F_TID;
        return memcmp(s, "dur", 3) == 0 ? F_DUR : F_OTHER;
    case 4:
        if (memcmp(s, "name", 4) == 0) return F_NAME;
        return memcmp(s, "args", 4) == 0 ? F_ARGS : F_OTHER;
    default:
        return F_OTHER;
    }
}

/* An event key as writers spell it, quotes and colon with no space
 * ("ph":), taken straight from the read buffer: the field, with the bytes
 * consumed; -1, with nothing consumed, for anything else (an escape, a
 * space, another key, the buffer's end near), which goes the general way. */
static int quick_field(sp__jlex *lx)
{
    if (lx->len - lx->pos < 8) return -1;
    const unsigned char *p = lx->buf + lx->pos;
    if (p[0] != '"') return -1;
    size_t n;
    int field;
    switch (p[1]) {
    case 'p':
        if (memcmp(p + 2, "h\":", 3) == 0)
            n = 5, field = F_PH;
        else if (memcmp(p + 2, "id\":", 4) == 0)
            n = 6, field = F_PID;
        else
            return -1;
        break;
    case 't':
        if (memcmp(p + 2, "s\":", 3) == 0)
            n = 5, field = F_TS;
        else if (memcmp(p + 2, "id\":", 4) == 0)
            n = 6, field = F_TID;
        else
            return -1;
        break;
    case 'c':
        if (memcmp(p + 2, "at\":", 4) != 0) return -1;
        n = 6, field = F_CAT;
        break;
    case 'n':
        if (memcmp(p + 2, "ame\":", 5) != 0) return -1;
        n = 7, field = F_NAME;
        break;
    case 'd':
        if (memcmp(p + 2, "ur\":", 4) != 0) return -1;
        n = 6, field = F_DUR;
        break;
    case 'a':
        if (memcmp(p + 2, "rgs\":", 5) != 0) return -1;
        n = 7, field = F_ARGS;
        break;
    default:
        return -1;
    }
    lx->pos += n;
    lx->offset += n;
    return field;
}

int sp__jload_event(sp__jloader *l)
{
    sp__jevent *e = &l->ev;
    sp__jlex *lx = &l->lx;
    reset_event(e);
    if (sp__jlex_peek(lx) != '{') return sp__jlex_error(lx, "trace event object expected");
    sp__jlex_expect(lx, '{');
    if (sp__jlex_peek(lx) == '}') return sp__jlex_expect(lx, '}');
    int more = 1;
    while (more == 1) {
        int field = quick_field(lx);
        if (field < 0) {
            const char *key;
            size_t key_len;
            if (sp__jlex_string_view(lx, &key, &key_len) != 0) return -1;
            field = field_of(key, key_len);
            if (sp__jlex_expect(lx, ':') != 0) return -1;
        }
        int rc;
        switch (field) {
        case F_PH:
            rc = read_string_into(l, &e->ph);
            break;
        case F_CAT:
            rc = read_string_into(l, &e->cat);
            e->cat_id = cat_of(&e->cat);
            break;
        case F_NAME:
            rc = read_string_into(l, &e->name);
            break;
        case F_S:
            rc = read_string_into(l, &e->s);
            break;
        case F_PID:
            rc = sp__jload_int(l, &e->pid, &e->has_pid);
            break;
        case F_TID:
            rc = read_tid(l);
            break;
        case F_TS:
            rc = read_us(l, &e->ts, &e->has_ts);
            break;
        case F_DUR:
            rc = read_us(l, &e->dur, &e->has_dur);
            break;
        case F_ARGS:
            rc = read_args(l);
            break;
        default:
            rc = sp__jlex_skip(lx);
            break;
        }
        if (rc != 0) return -1;
        more = sp__jlex_next(lx, '}');
    }
    return more < 0 ? -1 : 0;
}

void sp__jload_event_fini(sp__jevent *e)
{
    sp__buf_fini(&e->ph);
    sp__buf_fini(&e->cat);
    sp__buf_fini(&e->name);
    sp__buf_fini(&e->s);
    sp__buf_fini(&e->event_type);
    sp__buf_fini(&e->arg_name);
    sp__buf_fini(&e->first_key);
    sp__paddle_args_fini(&e->pa);
    sp__comm_args_fini(&e->comm);
}
