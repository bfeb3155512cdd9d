/* load.c: sp_result_load, the public entry of the load stage. It opens the
 * file once, tells the format from its first bytes (not its name, so a
 * renamed file still loads) and hands the open stream to the protobuf, JSON
 * or crash-dump reader. The file is never opened twice, so a pipe, a FIFO,
 * /dev/stdin or a shell's <(...) loads as a file does: input that is not a
 * regular file is first copied into an anonymous temporary file (tmpfile(),
 * removed when closed), because the protobuf reader seeks and the readers
 * report progress against the size. */
#include "load.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>

void sp_load_options_init(sp_load_options *opts)
{
    if (!opts) return;
    memset(opts, 0, sizeof *opts);
    opts->format = SP_FORMAT_AUTO;
}

/* The crash dump's magic -> a crash dump (*is_dump); gzip -> JSON_GZ; '{'
 * or '[' after optional whitespace -> JSON; anything else -> PROTOBUF (whose
 * first byte is a field key, never those). */
static sp_status sniff(FILE *f, const char *path, sp_format *format, int *is_dump)
{
    unsigned char head[64];
    size_t n = fread(head, 1, sizeof head, f);
    int err = ferror(f);
    if (err) return sp__fail(SP_EIO, "%s: cannot read: %s", path, strerror(errno));
    if (fseeko(f, 0, SEEK_SET) != 0) return sp__fail(SP_EIO, "%s: cannot read: %s", path, strerror(errno));
    if (n == 0) return sp__fail(SP_EFORMAT, "%s: empty file", path);
    if (sp__is_dump(head, n)) {
        *is_dump = 1;
        return SP_OK;
    }
    if (n >= 2 && head[0] == 0x1f && head[1] == 0x8b) {
        *format = SP_FORMAT_JSON_GZ;
        return SP_OK;
    }
    size_t i = 0;
    if (n >= 3 && head[0] == 0xef && head[1] == 0xbb && head[2] == 0xbf) i = 3; /* a BOM */
    while (i < n && (head[i] == ' ' || head[i] == '\n' || head[i] == '\r' || head[i] == '\t')) i++;
    *format = i < n && (head[i] == '{' || head[i] == '[') ? SP_FORMAT_JSON : SP_FORMAT_PROTOBUF;
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
        *s = sp__fail(SP_EIO, "%s: is a directory", path);
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
        format != SP_FORMAT_PROTOBUF)
        return sp__fail(SP_EINVAL, "sp_result_load: unknown format %d", (int)format);
    sp_status s = SP_OK;
    FILE *f = open_input(path, &s);
    if (!f) return s;
    int is_dump = 0;
    if (format == SP_FORMAT_AUTO) s = sniff(f, path, &format, &is_dump);
    if (s == SP_OK) {
        if (is_dump)
            s = sp__load_dump(f, path, opts, out);
        else if (format == SP_FORMAT_PROTOBUF)
            s = sp__load_pb(f, path, opts, out);
        else
            s = sp__load_json(f, path, opts, out);
    }
    fclose(f);
    return s;
}
