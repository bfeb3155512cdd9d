/* fuzz_load.c: libFuzzer target for the loaders of src/load. Built three
 * times (tests/fuzz/CMakeLists.txt): SP_FUZZ_FORMAT SP_FORMAT_PROTOBUF gives
 * fuzz_load_pb, SP_FORMAT_JSON gives fuzz_load_json (gzip input included,
 * through the same reader), SP_FORMAT_AUTO gives fuzz_load_dump (crash dumps
 * by their magic, and every other format by its first bytes). Each input is
 * put in a memfd and loaded by path, as a user's file would be; a result
 * that loads must also summarize. Any crash, leak, hang or sanitizer report
 * is a bug. `make fuzz` runs each
 * target for a bounded time from the seeds in tests/fuzz/seeds and
 * tests/data. */
#define _GNU_SOURCE
#include "stepprof/stepprof.h"

#include <stdint.h>
#include <stdio.h>
#include <sys/mman.h>
#include <unistd.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    static FILE *devnull;
    if (!devnull) devnull = fopen("/dev/null", "w");
    int fd = memfd_create("stepprof-fuzz", MFD_CLOEXEC);
    if (fd < 0) return 0;
    size_t done = 0;
    while (done < size) {
        ssize_t n = write(fd, data + done, size - done);
        if (n <= 0) break;
        done += (size_t)n;
    }
    char path[64];
    snprintf(path, sizeof path, "/proc/self/fd/%d", fd);
    sp_load_options o;
    sp_load_options_init(&o);
    o.format = SP_FUZZ_FORMAT;
    sp_result *r = NULL;
    if (sp_result_load(path, &o, &r) == SP_OK) {
        sp_result_summary(r, NULL, devnull);
        sp_result_release(r);
    }
    close(fd);
    return 0;
}
