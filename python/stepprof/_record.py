"""RecordEvent and record_function: ranges recorded on the calling thread.

RecordEvent is the C type stepprof._core.RecordEvent (a context manager with
begin()/end(), a few hundred ns per use while recording). Its decorator form
is built here: each call of the decorated function opens its own range, so
one decorated function may run on several threads at once."""
import functools

from ._core import RecordEvent
from ._enums import TracerEventType

__all__ = ["RecordEvent", "record_function"]


def decorate(record_event, fn):
    """Called by RecordEvent.__call__: wraps fn in a range of the same name
    and type."""
    name = record_event.name
    event_type = record_event._event_type

    @functools.wraps(fn)
    def wrapper(*args, **kwargs):
        with RecordEvent(name, event_type):
            return fn(*args, **kwargs)

    return wrapper


def record_function(name, args=None):
    """torch.profiler.record_function(name): a RecordEvent of type
    PythonUserDefined; use it with `with` or as a decorator. args (torch's
    extra string) is accepted and ignored."""
    del args
    return RecordEvent(name, TracerEventType.PythonUserDefined)
