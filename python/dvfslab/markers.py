"""The marker protocol (docs/measure.md): progress lines for `dvfslab measure`.

Under `dvfslab measure` (or a sweep's command workload) the environment variable
DVFSLAB_MARK_FD names a file descriptor; each function here writes one line to
it with a single write(). Anywhere else every function does nothing, so a
script runs the same with and without dvfslab:

    from dvfslab import markers
    with markers.window("train"):
        for batch in loader:
            train_step(batch)
            markers.iteration(items=len(batch))
    markers.close()          # optional: the program's tear-down follows

Only the process that first wrote a marker writes (a forked data-loader worker
stays silent). In a job on several GPUs each line ends with `rank R of N` when the
environment has RANK and WORLD_SIZE (else LOCAL_RANK and LOCAL_WORLD_SIZE) set, as
torchrun and torch.distributed launchers set them (`rank R` alone without the size) (docs/multi-gpu.md, "How ranks report"); such a rank
whose launcher closed the inherited descriptor writes through its parent's.
"""
from __future__ import annotations

import contextlib
import math
import os
import re
import stat
import warnings
from typing import Iterator, Optional

ENVIRONMENT_VARIABLE = "DVFSLAB_MARK_FD"
_NAME = re.compile(r"[A-Za-z0-9_.:/-]{1,128}")
_DIGITS = re.compile(r"[0-9]{1,6}")

# Each rank variable with the variable of the number of ranks it counts within.
RANK_VARIABLES = (("RANK", "WORLD_SIZE"), ("LOCAL_RANK", "LOCAL_WORLD_SIZE"))
_MAX_RANK = 65535  # the largest rank dvfslab accepts

_fd: Optional[int] = None
_pid: Optional[int] = None
_suffix = ""
_looked = False


def _rank_count(variable: str, rank: int) -> str:
    """` of N` from the count variable when it holds a number of ranks above `rank` ('' otherwise)."""
    text = os.environ.get(variable, "")
    if _DIGITS.fullmatch(text) and rank < int(text) <= _MAX_RANK + 1:
        return f" of {int(text)}"
    if text:
        warnings.warn(f"dvfslab markers: {variable}={text!r} is not a number of ranks above {rank}; "
                      "markers do not say how many ranks the job has", RuntimeWarning, stacklevel=5)
    return ""


def _rank_suffix() -> str:
    """The ` rank R` (` rank R of N`) ending of every line, from the first of
    RANK_VARIABLES set ('' for none): with N, `dvfslab measure --iterations-from
    slowest` counts nothing until every rank has written."""
    for variable, count_variable in RANK_VARIABLES:
        text = os.environ.get(variable)
        if text is None or text == "":
            continue
        if _DIGITS.fullmatch(text) and int(text) <= _MAX_RANK:
            return f" rank {int(text)}{_rank_count(count_variable, int(text))}"
        warnings.warn(f"dvfslab markers: {variable}={text!r} is not a rank from 0 to {_MAX_RANK}; "
                      "markers are written without a rank", RuntimeWarning, stacklevel=4)
        return ""
    return ""


def _parents_pipe(fd: int) -> Optional[int]:
    """The marker pipe through the parent's descriptor `fd`, or None: for a rank whose
    launcher closed the descriptors it inherited (torchrun and multiprocessing's
    spawn start method pass a new process none but the standard three)."""
    try:
        parents = os.open(f"/proc/{os.getppid()}/fd/{fd}", os.O_WRONLY | os.O_CLOEXEC)
    except OSError:
        return None
    if stat.S_ISFIFO(os.fstat(parents).st_mode):
        return parents
    os.close(parents)  # the parent reused the number for something else: not ours to write
    return None


def _parent_is_marked(fd: int) -> bool:
    """Whether the parent process itself runs under dvfslab with marker descriptor
    `fd` (a launcher), not dvfslab, whose descriptor of that number is its own."""
    try:
        with open(f"/proc/{os.getppid()}/environ", "rb") as environment:
            return f"{ENVIRONMENT_VARIABLE}={fd}".encode() in environment.read().split(b"\0")
    except OSError:
        return False


def _same_file(first: os.stat_result, second: os.stat_result) -> bool:
    return (first.st_dev, first.st_ino) == (second.st_dev, second.st_ino)


def _descriptor() -> Optional[int]:
    """The marker descriptor of this process, or None when not measured."""
    global _fd, _pid, _suffix, _looked
    if _looked:
        return _fd if _pid == os.getpid() else None
    _looked = True
    try:
        fd: Optional[int] = int(os.environ.get(ENVIRONMENT_VARIABLE, ""))
    except ValueError:
        return None  # unset: not under dvfslab
    suffix = _rank_suffix()
    try:
        own: Optional[os.stat_result] = os.fstat(fd)
    except OSError:
        own = None
    # A rank whose launcher closed the descriptor writes through the launcher's; its
    # own number may even have been reused for another pipe or socket (a
    # multiprocessing spawn child's), which the launcher's pipe tells apart.
    parents = _parents_pipe(fd) if suffix and (own is None or _parent_is_marked(fd)) else None
    if parents is not None and own is not None and _same_file(os.fstat(parents), own):
        os.close(parents)
        parents = None
    if parents is not None:
        fd = parents
    elif own is None:
        return None  # not under dvfslab
    _fd, _pid, _suffix = fd, os.getpid(), suffix
    return _fd


def active() -> bool:
    """True when this script runs under dvfslab and markers are written."""
    return _descriptor() is not None


def _write(line: str) -> None:
    global _fd
    fd = _descriptor()
    if fd is None:
        return
    data = (line + _suffix + "\n").encode("ascii")
    try:
        written = os.write(fd, data)
        if written != len(data):
            raise OSError(f"wrote {written} of {len(data)} bytes")
    except OSError as error:
        # The measuring dvfslab went away (a closed pipe): the script goes on unmeasured.
        _fd = None
        warnings.warn(f"dvfslab markers: {error}; no further markers are written", RuntimeWarning, stacklevel=3)


def _check_name(name: str) -> str:
    if not isinstance(name, str) or not _NAME.fullmatch(name):
        raise ValueError(f"marker window name {name!r}: 1-128 characters of A-Z a-z 0-9 _ - . : /")
    return name


def _items_text(items: Optional[float]) -> str:
    if items is None:
        return ""
    value = float(items)
    if not (math.isfinite(value) and value >= 0):
        raise ValueError(f"items must be a finite number of 0 or more, not {items!r}")
    return f" items {int(value) if value.is_integer() else repr(value)}"


def iteration(count: int = 1, items: Optional[float] = None) -> None:
    """`count` iterations finished since the previous iteration() (processing `items` in all)."""
    if not isinstance(count, int) or count < 1:
        raise ValueError("count must be an integer of 1 or more")
    _write(f"dvfslab:iter {count}{_items_text(items)}")


def step(total: int, items: Optional[float] = None) -> None:
    """`total` iterations finished since the program started (a global step
    counter; `items` processed in all of them). Do not mix with iteration()."""
    if not isinstance(total, int) or total < 0:
        raise ValueError("total must be an integer of 0 or more")
    _write(f"dvfslab:step {total}{_items_text(items)}")


def begin(name: str) -> None:
    """A named window starts now."""
    _write(f"dvfslab:begin {_check_name(name)}")


def end(name: str) -> None:
    """The named window ends now."""
    _write(f"dvfslab:end {_check_name(name)}")


@contextlib.contextmanager
def window(name: str) -> Iterator[None]:
    """begin(name) on entry and end(name) on exit (also when the block raises)."""
    begin(name)
    try:
        yield
    finally:
        end(name)


def close() -> None:
    """Closes the descriptor: no marker follows (the program's tear-down comes next)."""
    global _fd
    fd = _descriptor()
    if fd is not None:
        _fd = None
        os.close(fd)
