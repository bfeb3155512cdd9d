"""Writing a span as torch.profiler's export_chrome_trace does, with the
metadata of add_metadata / add_metadata_json as top-level keys of the JSON.

The core writes the trace; the metadata goes in by copying that file once,
in chunks, with the keys put right after its opening brace (the core's
header always opens with '{"schemaVersion"'), so a trace of any size is
never held in memory. The temporary file keeps the real file's name as its
suffix, because the core chooses the TensorBoard plugin's durations by it
(".pt.trace.json"), and its "traceName", the last key of the file, is set
back to the real path. Without metadata the core writes the file directly.
Either way the file appears whole (the core's temporary + rename, or ours)."""
import gzip
import json
import os
import uuid

__all__ = ["metadata_value", "export_trace"]

_CHUNK = 1 << 20


def metadata_value(value, is_json, warn):
    """The JSON text written for one metadata value: a string for
    add_metadata, the value itself for add_metadata_json when it parses as
    JSON, else (one warning) the value as a string, so the trace stays
    valid JSON where torch would write a broken file. warn(text, stacklevel)
    is called from the add_metadata_json method's helper."""
    if not isinstance(value, str):
        raise TypeError(f"metadata value must be a str, not {type(value).__name__}")
    if is_json:
        try:
            json.loads(value)
            return value
        except ValueError as e:
            warn(f"add_metadata_json: the value is not valid JSON ({e}); written as a string", 4)
    return json.dumps(value, ensure_ascii=False)


def _copy_with_metadata(src_path, dst, items, final_path):
    with open(src_path, "rb") as src:
        first = src.read(1)
        if first != b"{":
            raise ValueError(f"{src_path}: not a JSON object")
        dst.write(b"{")
        for key, value in items:
            dst.write(json.dumps(key, ensure_ascii=False).encode("utf-8") + b":" +
                      value.encode("utf-8") + b",\n")
        # Everything but the tail, where "traceName" names the temporary.
        size = os.fstat(src.fileno()).st_size
        tail_at = max(1, size - 64 * 1024)
        left = tail_at - 1
        while left > 0:
            chunk = src.read(min(_CHUNK, left))
            if not chunk:
                break
            dst.write(chunk)
            left -= len(chunk)
        tail = src.read()
        at = tail.rfind(b'"traceName":')
        if at >= 0:
            tail = (tail[:at] + b'"traceName":' +
                    json.dumps(final_path, ensure_ascii=False).encode("utf-8") + b"}\n")
        dst.write(tail)


def export_trace(export_json, path, metadata):
    """Writes the span to path with export_json(path) (the core's writer:
    gzip when path ends in .gz), adding metadata, a list of (key, JSON
    text), as top-level keys."""
    path = os.fsdecode(os.fspath(path))
    if not path:
        raise ValueError("export_chrome_trace() needs a file path")
    if not metadata:
        export_json(path)
        return
    directory, base = os.path.split(os.path.abspath(path))
    gz = base.endswith(".gz")
    plain = base[:-3] if gz else base
    tag = f".stepprof-{os.getpid()}-{uuid.uuid4().hex[:8]}"
    raw = os.path.join(directory, f"{tag}-raw-{plain}")
    out = os.path.join(directory, f"{tag}-out-{base}")
    try:
        export_json(raw)
        opener = gzip.open if gz else open
        with opener(out, "wb") as dst:
            _copy_with_metadata(raw, dst, metadata, path)
        os.replace(out, path)
    finally:
        for p in (raw, out):
            try:
                os.unlink(p)
            except FileNotFoundError:
                pass
