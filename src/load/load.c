/* load.c: sp_result_load, the public entry of the load stage. It opens the
 * file once, tells the format from its first bytes (not its name, so a
 * renamed file still loads) and hands the open stream to the protobuf, JSON
 * or crash-dump reader. The file is never opened twice, so a pipe, a FIFO,
 * /dev/stdin or a shell's <(...) loads as a file does: input that is not a
 * regular file is first copied into an anonymous temporary file (tmpfile(),
 * removed when closed), because the protobuf reader seeks and the readers
 * report progress against the size. */
#include "load.h"
#include "utf8.h"

#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>

void sp_load_options_init(sp_load_options *opts)
{
    if (!opts) return;
    memset(opts, 0, sizeof *opts);
    opts->format = SP_FORMAT_AUTO;
}

/* What stepprof reads, for the message about a file it does not. */
#define FORMATS_READ                                                                               \
    "stepprof reads Chrome-trace JSON (.json, starting with '{' or '['), gzip-compressed JSON "    \
    "(.json.gz), paddle's protobuf NodeTreesProto (.pb), the Perfetto traces stepprof writes "    \
    "(.pftrace) and stepprof's crash and stream dumps (.spdump)"

static int ends_with(const char *s, const char *suffix)
{
    size_t n = strlen(s), m = strlen(suffix);
    return n >= m && strcmp(s + n - m, suffix) == 0;
}

/* n, less the bytes of a UTF-8 sequence that s[0..n) cuts at its end. */
static size_t whole_utf8(const unsigned char *s, size_t n)
{
    for (size_t back = 1; back <= 3 && back <= n; back++) {
        unsigned char c = s[n - back];
        if (c < 0x80) break; /* ASCII: no sequence cut */
        if (c >= 0xC0) {     /* the lead byte of the last sequence */
            size_t want = c >= 0xF0 ? 4 : c >= 0xE0 ? 3 : 2;
            return back < want ? n - back : n;
        }
    }
    return n;
}

/* Whether the first n bytes read as text: printable ASCII, tabs, line ends
 * and valid UTF-8 (a sequence cut by the end of the bytes read allowed). */
static int looks_like_text(const unsigned char *head, size_t n)
{
    size_t end = whole_utf8(head, n);
    for (size_t i = 0; i < end; i++)
        if ((head[i] < 0x20 && head[i] != '\t' && head[i] != '\n' && head[i] != '\r') ||
            head[i] == 0x7f)
            return 0;
    return sp__utf8_valid((const char *)head, end);
}

/* Whether head can begin a protobuf message: its first field key must be a
 * varint of at most 5 bytes with a field number from 1 and a wire type of
 * 0, 1, 2 or 5 (the ones load_pb.c reads). No .pb file starts otherwise. */
static int can_begin_protobuf(const unsigned char *head, size_t n)
{
    uint64_t key = 0;
    for (size_t i = 0; i < n && i < 5; i++) {
        key |= (uint64_t)(head[i] & 0x7f) << (7 * i);
        if (!(head[i] & 0x80)) {
            unsigned wire = (unsigned)(key & 7);
            return (key >> 3) >= 1 && (key >> 3) <= 0x1fffffff && (wire <= 2 || wire == 5);
        }
    }
    return 0;
}

/* The error for a file in no format stepprof reads, showing how it begins:
 * its first line's start for text, its first bytes in hex otherwise. */
static sp_status unrecognised(const char *path, const unsigned char *head, size_t n, int text)
{
    char shown[80];
    size_t k = 0;
    if (text) {
        size_t m = 0;
        while (m < n && m < 24 && head[m] != '\n' && head[m] != '\r')
            m++;
        m = whole_utf8(head, m);
        shown[k++] = '"';
        for (size_t i = 0; i < m; i++)
            shown[k++] = head[i] == '\t' ? ' ' : (char)head[i];
        shown[k++] = '"';
        shown[k] = '\0';
    } else {
        k = (size_t)snprintf(shown, sizeof shown, "bytes");
        for (size_t i = 0; i < n && i < 8; i++)
            k += (size_t)snprintf(shown + k, sizeof shown - k, " %02x", head[i]);
    }
    return sp__fail(SP_EFORMAT,
                    "%s: unrecognised format (the file begins with %s, which is not how a trace "
                    "begins): " FORMATS_READ,
                    path, shown);
}

/* The crash dump's magic -> a crash dump (*is_dump); gzip -> JSON_GZ; '{'
 * or '[' after optional whitespace -> JSON; anything else -> PROTOBUF (whose
 * first byte is a field key, never those), unless it cannot begin a
 * protobuf message (an error saying the format is unrecognised). head gets
 * the first bytes (*head_len of them), and *text says whether they read as
 * text, so that a text file that fails as protobuf is told as a file of
 * unrecognised format rather than as a broken .pb (a .pb that loads is
 * never affected). */
static sp_status sniff(FILE *f, const char *path, sp_format *format, int *is_dump,
                       unsigned char head[64], size_t *head_len, int *text)
{
    size_t n = fread(head, 1, 64, f);
    *head_len = n;
    int err = ferror(f);
    if (err) return sp__fail(SP_EIO, "%s: cannot read: %s", path, strerror(errno));
    if (fseeko(f, 0, SEEK_SET) != 0) return sp__fail(SP_EIO, "%s: cannot read: %s", path, strerror(errno));
    if (n == 0) return sp__fail(SP_EFORMAT, "%s: empty file", path);
    if (sp__is_dump(head, n)) {
        *is_dump = 1;
        return SP_OK;
    }
    if (sp__is_pftrace(head, n)) {
        *format = SP_FORMAT_PERFETTO;
        return SP_OK;
    }
    if (n >= 2 && head[0] == 0x1f && head[1] == 0x8b) {
        *format = SP_FORMAT_JSON_GZ;
        return SP_OK;
    }
    size_t i = 0;
    if (n >= 3 && head[0] == 0xef && head[1] == 0xbb && head[2] == 0xbf) i = 3; /* a BOM */
    while (i < n && (head[i] == ' ' || head[i] == '\n' || head[i] == '\r' || head[i] == '\t')) i++;
    if (i < n && (head[i] == '{' || head[i] == '[')) {
        *format = SP_FORMAT_JSON;
        return SP_OK;
    }
    *text = looks_like_text(head, n);
    if (!can_begin_protobuf(head, n)) return unrecognised(path, head, n, *text);
    *format = SP_FORMAT_PROTOBUF;
    return SP_OK;
}

/* Copies a pipe's (or other stream's) bytes into an anonymous temporary
 * file, rewound; NULL on failure (the error set). */
static FILE *spool(FILE *in, const char *path, sp_status *s)
{
    FILE *tmp = tmpfile();
    if (!tmp) {
        *s = sp__fail(SP_EIO, "%s: cannot make a temporary copy of the input: %s", path, strerror(errno));
        return NULL;
    }
    char chunk[65536];
    size_t n;
    while ((n = fread(chunk, 1, sizeof chunk, in)) > 0) {
        if (fwrite(chunk, 1, n, tmp) != n) {
            *s = sp__fail(SP_EIO, "%s: cannot make a temporary copy of the input: %s", path, strerror(errno));
            fclose(tmp);
            return NULL;
        }
    }
    if (ferror(in)) {
        *s = sp__fail(SP_EIO, "%s: cannot read: %s", path, strerror(errno));
        fclose(tmp);
        return NULL;
    }
    if (fflush(tmp) != 0 || fseeko(tmp, 0, SEEK_SET) != 0) {
        *s = sp__fail(SP_EIO, "%s: cannot make a temporary copy of the input: %s", path, strerror(errno));
        fclose(tmp);
        return NULL;
    }
    return tmp;
}

/* Opens path for the readers: a regular file as it is, anything readable
 * that is not (a pipe, a FIFO, a character device) through spool(). */
static FILE *open_input(const char *path, sp_status *s)
{
    FILE *f = fopen(path, "rb");
    if (!f) {
        *s = sp__fail(SP_EIO, "%s: cannot open: %s", path, strerror(errno));
        return NULL;
    }
    struct stat st;
    if (fstat(fileno(f), &st) != 0) {
        *s = sp__fail(SP_EIO, "%s: cannot open: %s", path, strerror(errno));
        fclose(f);
        return NULL;
    }
    if (S_ISDIR(st.st_mode)) {
        *s = sp__fail(SP_EIO,
                      "%s: cannot read: %s (give the path of a trace file: .json, .json.gz, .pb or "
                      ".spdump)",
                      path, strerror(EISDIR));
        fclose(f);
        return NULL;
    }
    if (S_ISREG(st.st_mode)) return f;
    FILE *copy = spool(f, path, s);
    fclose(f);
    return copy;
}

sp_status sp_result_load(const char *path, const sp_load_options *opts, sp_result **out)
{
    if (!path || !*path || !out) return sp__fail(SP_EINVAL, "sp_result_load: NULL or empty path or out");
    *out = NULL;
    sp_load_options defaults;
    sp_load_options_init(&defaults);
    if (!opts) opts = &defaults;
    sp_format format = opts->format;
    if (format != SP_FORMAT_AUTO && format != SP_FORMAT_JSON && format != SP_FORMAT_JSON_GZ &&
        format != SP_FORMAT_PROTOBUF && format != SP_FORMAT_PERFETTO)
        return sp__fail(SP_EINVAL, "sp_result_load: unknown format %d", (int)format);
    sp_status s = SP_OK;
    FILE *f = open_input(path, &s);
    if (!f) return s;
    int is_dump = 0, text = 0;
    unsigned char head[64];
    size_t head_len = 0;
    if (format == SP_FORMAT_AUTO) s = sniff(f, path, &format, &is_dump, head, &head_len, &text);
    /* Another producer's Perfetto trace sniffs as protobuf: its name says
     * what it is, and the Perfetto reader says why it cannot be read. */
    if (s == SP_OK && format == SP_FORMAT_PROTOBUF && !is_dump && ends_with(path, ".pftrace"))
        format = SP_FORMAT_PERFETTO;
    if (s == SP_OK) {
        if (is_dump) {
            s = sp__load_dump(f, path, opts, out);
        } else if (format == SP_FORMAT_PERFETTO) {
            s = sp__load_pftrace(f, path, opts, out);
        } else if (format == SP_FORMAT_PROTOBUF) {
            s = sp__load_pb(f, path, opts, out);
            if (s == SP_EFORMAT && text) s = unrecognised(path, head, head_len, 1);
        } else {
            s = sp__load_json(f, path, opts, out);
        }
    }
    fclose(f);
    return s;
}
