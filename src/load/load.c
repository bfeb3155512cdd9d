/* load.c: sp_result_load, the public entry of the load stage. It tells the
 * format from the file's first bytes (not its name, so a renamed file still
 * loads) and hands over to the protobuf, JSON or crash-dump reader. */
#include "load.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>

void sp_load_options_init(sp_load_options *opts)
{
    if (!opts) return;
    memset(opts, 0, sizeof *opts);
    opts->format = SP_FORMAT_AUTO;
}

/* The crash dump's magic -> a crash dump (*is_dump); gzip -> JSON_GZ; '{'
 * or '[' after optional whitespace -> JSON; anything else -> PROTOBUF (whose
 * first byte is a field key, never those). */
static sp_status sniff(const char *path, sp_format *format, int *is_dump)
{
    FILE *f = fopen(path, "rb");
    if (!f) return sp__fail(SP_EIO, "%s: cannot open: %s", path, strerror(errno));
    unsigned char head[64];
    size_t n = fread(head, 1, sizeof head, f);
    int err = ferror(f);
    fclose(f);
    if (err) return sp__fail(SP_EIO, "%s: cannot read", path);
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

sp_status sp_result_load(const char *path, const sp_load_options *opts, sp_result **out)
{
    if (!path || !*path || !out) return sp__fail(SP_EINVAL, "sp_result_load: NULL or empty path or out");
    *out = NULL;
    sp_load_options defaults;
    sp_load_options_init(&defaults);
    if (!opts) opts = &defaults;
    sp_format format = opts->format;
    if (format == SP_FORMAT_AUTO) {
        int is_dump = 0;
        sp_status s = sniff(path, &format, &is_dump);
        if (s != SP_OK) return s;
        if (is_dump) return sp__load_dump(path, opts, out);
    }
    switch (format) {
    case SP_FORMAT_JSON:
    case SP_FORMAT_JSON_GZ:
        return sp__load_json(path, opts, out);
    case SP_FORMAT_PROTOBUF:
        return sp__load_pb(path, opts, out);
    default:
        return sp__fail(SP_EINVAL, "sp_result_load: unknown format %d", (int)format);
    }
}
