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

/* Whether the token is exactly the literal lit. */
#define TOK_IS(t, lit) ((t)->len == sizeof lit - 1 && memcmp((t)->data, lit, sizeof lit - 1) == 0)

static void copy_tok(sp__buf *dst, const sp__buf *tok)
{
    dst->len = 0;
    sp__buf_append(dst, tok->data ? tok->data : "", tok->len);
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
    if (sp__jlex_peek(&l->lx) != '"') return sp__jlex_error(&l->lx, "string expected");
    if (sp__jlex_string(&l->lx) != 0) return -1;
    copy_tok(dst, &l->lx.tok);
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

int64_t sp__jload_int_of(const char *t, size_t len)
{
    int64_t v;
    if (small_int(t, len, &v)) return v;
    if (strpbrk(t, ".eE")) {
        double d = strtod(t, NULL);
        return d >= 9.2e18 ? INT64_MAX : d <= -9.2e18 ? INT64_MIN : (int64_t)llround(d);
    }
    long long ll = strtoll(t, NULL, 10);
    if (ll == LLONG_MAX && strcmp(t, "9223372036854775807") != 0) ll = (long long)strtoull(t, NULL, 10);
    return ll;
}

int sp__jload_int(sp__jloader *l, int64_t *out, int *ok)
{
    int c = sp__jlex_peek(&l->lx);
    if (c != '-' && (c < '0' || c > '9')) {
        *ok = 0;
        if (c != 'n') l->ev.bad_type = 1;
        return sp__jlex_skip(&l->lx);
    }
    if (sp__jlex_number(&l->lx) != 0) return -1;
    *out = sp__jload_int_of(l->lx.tok.data, l->lx.tok.len);
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
    if (sp__jlex_number(&l->lx) != 0) return -1;
    /* The token is a valid JSON number: after its integer and fraction
     * only an exponent can follow. */
    const char *t = l->lx.tok.data, *p = t;
    int neg = *p == '-';
    p += neg;
    int64_t us = 0, frac = 0;
    size_t int_digits = 0;
    for (; *p >= '0' && *p <= '9'; p++, int_digits++)
        if (int_digits < 15) us = us * 10 + (*p - '0');
    int frac_digits = 0;
    if (*p == '.')
        for (p++; *p >= '0' && *p <= '9'; p++)
            if (frac_digits < 3) frac = frac * 10 + (*p - '0'), frac_digits++;
    if (int_digits <= 15 && *p == '\0') {
        for (; frac_digits < 3; frac_digits++)
            frac *= 10;
        int64_t ns = us * 1000 + frac;
        *out = neg ? -ns : ns;
    } else {
        double d = strtod(t, NULL) * 1000.0;
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
#define KEY(s) {s, sizeof s - 1}

/* Index of the token in keys, or -1; the lengths rule out nearly all at once. */
static int key_index(const sp__buf *tok, const key_text *keys, int count)
{
    for (int i = 0; i < count; i++)
        if (tok->len == keys[i].n && tok->data[0] == keys[i].s[0] && memcmp(tok->data, keys[i].s, keys[i].n) == 0)
            return i;
    return -1;
}

/* Every arg key that json_cuda.c (sp__cuda_arg_number, sp__cuda_arg_other),
 * json_paddle.c (sp__paddle_arg_number, sp__paddle_arg_string) or
 * json_dist.c (sp__comm_arg_number, sp__comm_arg_string) reads. Only these
 * are passed on to them, so that an arg nobody reads ("External id", on
 * every event) costs no strcmp chain; a key they learn must be added here. */
static const key_text helper_keys[] = {
    KEY("correlation"), KEY("cbid"), KEY("device"), KEY("context"), KEY("stream"), KEY("bytes"),
    KEY("registers per thread"), KEY("shared memory"), KEY("queued"), KEY("grid"), KEY("block"),
    KEY("correlation id"), KEY("increase_bytes"), KEY("current_allocated"),
    KEY("current_reserved"), KEY("peak_allocated"), KEY("peak_reserved"), KEY("addr"),
    KEY("start_time"), KEY("end_time"), KEY("place"), KEY("Group size"), KEY("seq"),
    KEY("Collective name"), KEY("Process Group Name")};

/* The integer args read here (memory events, a step's samples). */
enum { ARG_ADDR, ARG_BYTES, ARG_TOTAL_ALLOCATED, ARG_TOTAL_RESERVED, ARG_DEVICE_ID, ARG_DEVICE_TYPE,
       ARG_NUM_SAMPLES, ARG_COUNT };
static const key_text int_keys[ARG_COUNT] = {
    KEY("Addr"), KEY("Bytes"), KEY("Total Allocated"), KEY("Total Reserved"),
    KEY("Device Id"), KEY("Device Type"), KEY("num_samples")};

/* A number token as a double, as strtod reads it, without strtod for the
 * usual integer (exact below 2^53, and rounded alike above). */
static double number_value(const sp__buf *tok)
{
    int64_t v;
    if (small_int(tok->data, tok->len, &v) && (v != 0 || tok->data[0] != '-')) return (double)v;
    return strtod(tok->data, NULL);
}

/* The first arg's number: a counter's value, or a memory event's address. */
static void first_number(sp__jloader *l, int helper)
{
    sp__jevent *e = &l->ev;
    const sp__buf *tok = &l->lx.tok;
    e->first_value = number_value(tok);
    e->has_first_value = 1;
    int k = key_index(&e->first_key, int_keys, ARG_COUNT);
    if (k == ARG_ADDR) e->addr = (int64_t)strtoull(tok->data, NULL, 10);
    if (k == ARG_NUM_SAMPLES && e->first_value >= 0) e->num_samples = sp__jload_int_of(tok->data, tok->len);
    if (helper) {
        int64_t v = sp__jload_int_of(tok->data, tok->len);
        sp__paddle_arg_number(&e->pa, l->key, v);
        sp__cuda_arg_number(&e->ca, l->key, v);
    }
}

static void int_arg(sp__jloader *l, int k, int64_t v, int ok)
{
    sp__jevent *e = &l->ev;
    switch (k) {
    case ARG_ADDR: e->addr = v; break;
    case ARG_BYTES: e->bytes = v; break;
    case ARG_TOTAL_ALLOCATED: e->total_allocated = v; break;
    case ARG_TOTAL_RESERVED: e->total_reserved = v; break;
    case ARG_DEVICE_ID: e->device_id = v; break;
    case ARG_DEVICE_TYPE: e->device_type = v; break;
    case ARG_NUM_SAMPLES:
        if (ok && v >= 0) e->num_samples = v;
        break;
    default: break;
    }
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
        if (sp__jlex_string(lx) != 0) return -1;
        int first = !e->has_first_value && e->first_key.len == 0;
        if (first) copy_tok(&e->first_key, &lx->tok);
        int helper = key_index(&lx->tok, helper_keys, (int)(sizeof helper_keys / sizeof *helper_keys)) >= 0;
        e->helpers_used |= helper;
        int event_type = TOK_IS(&lx->tok, "Event Type"), name = TOK_IS(&lx->tok, "name");
        int k = key_index(&lx->tok, int_keys, ARG_COUNT);
        if (key_from_tok(l) != 0) return -1;
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
            if (sp__jlex_number(lx) != 0) return -1;
            first_number(l, helper);
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
    if (TOK_IS(cat, "cpu_op")) return SP__JCAT_CPU_OP;
    if (TOK_IS(cat, "user_annotation")) return SP__JCAT_USER_ANNOTATION;
    if (TOK_IS(cat, "python_function")) return SP__JCAT_PYTHON_FUNCTION;
    if (TOK_IS(cat, "Trace")) return SP__JCAT_TRACE;
    return SP__JCAT_OTHER;
}

/* The event keys read; the others are skipped. */
enum { F_OTHER, F_PH, F_CAT, F_NAME, F_S, F_PID, F_TID, F_TS, F_DUR, F_ARGS };

static int field_of(const sp__buf *k)
{
    const char *s = k->data;
    switch (k->len) {
    case 1: return s[0] == 's' ? F_S : F_OTHER;
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
    default: return F_OTHER;
    }
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
        if (sp__jlex_string(lx) != 0) return -1;
        int field = field_of(&lx->tok);
        if (sp__jlex_expect(lx, ':') != 0) return -1;
        int rc;
        switch (field) {
        case F_PH: rc = read_string_into(l, &e->ph); break;
        case F_CAT:
            rc = read_string_into(l, &e->cat);
            e->cat_id = cat_of(&e->cat);
            break;
        case F_NAME: rc = read_string_into(l, &e->name); break;
        case F_S: rc = read_string_into(l, &e->s); break;
        case F_PID: rc = sp__jload_int(l, &e->pid, &e->has_pid); break;
        case F_TID: rc = read_tid(l); break;
        case F_TS: rc = read_us(l, &e->ts, &e->has_ts); break;
        case F_DUR: rc = read_us(l, &e->dur, &e->has_dur); break;
        case F_ARGS: rc = read_args(l); break;
        default: rc = sp__jlex_skip(lx); break;
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
