"""paddle's profiler flag, paddle.profiler.utils._is_profiler_used, held by
stepprof for more than one reason at a time: a span that runs paddle's
tracer (_paddle_capture.py) and a running profiler with emit_nvtx
(_paddle_reader.py). paddle's DataLoader, layers, optimizers and
RecordEvents record only while it is True. It stays True while any reason
holds it, and gets back the value it had before the first one when the last
one lets go, in whatever order they end: a span that began inside an
emit_nvtx profiler and outlived it must not find the flag turned off."""

# id(utils module) -> [module, holds, value before the first hold]; the
# module is kept so that its id is not reused while the entry lives.
_holds = {}


def hold(utils):
    """Sets the flag, remembering its value if no one held it yet."""
    entry = _holds.get(id(utils))
    if entry is None:
        entry = _holds[id(utils)] = [utils, 0, bool(utils._is_profiler_used)]
    entry[1] += 1
    utils._is_profiler_used = True


def release(utils):
    """Lets go of one hold; the last one puts the remembered value back."""
    entry = _holds.get(id(utils))
    if entry is None:
        return
    entry[1] -= 1
    if entry[1] == 0:
        del _holds[id(utils)]
        utils._is_profiler_used = entry[2]
