"""Linux Landlock through its three system calls (ctypes; no C compiler, no binding).

Landlock is an allow list: a ruleset names the kinds of access it handles, rules grant
some of them beneath a directory (or on one file), and `restrict_self` binds the calling
*thread* and every process it starts from then on. A right never granted is denied. The
kernel's ABI version says which rights it knows; a right it does not know is simply not
handled (the sandbox says so in its status).

Constants and struct layouts are those of <linux/landlock.h>; the syscall numbers are the
same on every architecture (444-446, added after the tables were unified).
"""

from __future__ import annotations

import functools
import os
import stat
from collections.abc import Callable, Iterable
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    import ctypes

SYS_CREATE_RULESET, SYS_ADD_RULE, SYS_RESTRICT_SELF = 444, 445, 446
CREATE_RULESET_VERSION = 1 << 0
RULE_PATH_BENEATH, RULE_NET_PORT = 1, 2
PR_SET_NO_NEW_PRIVS = 38

# File system rights, by the ABI version that added them.
EXECUTE = 1 << 0
WRITE_FILE = 1 << 1
READ_FILE = 1 << 2
READ_DIR = 1 << 3
REMOVE_DIR = 1 << 4
REMOVE_FILE = 1 << 5
MAKE_CHAR = 1 << 6
MAKE_DIR = 1 << 7
MAKE_REG = 1 << 8
MAKE_SOCK = 1 << 9
MAKE_FIFO = 1 << 10
MAKE_BLOCK = 1 << 11
MAKE_SYM = 1 << 12
REFER = 1 << 13  # ABI 2
TRUNCATE = 1 << 14  # ABI 3
IOCTL_DEV = 1 << 15  # ABI 5 (not handled: terminals and pipes keep their ioctls)

FS_ABI1 = (1 << 13) - 1
READ = EXECUTE | READ_FILE | READ_DIR
# What a rule on a file (not a directory) may grant.
FILE_RIGHTS = EXECUTE | WRITE_FILE | READ_FILE | TRUNCATE

# Network rights (ABI 4) and scopes (ABI 6).
NET_BIND_TCP, NET_CONNECT_TCP = 1 << 0, 1 << 1
SCOPE_ABSTRACT_UNIX_SOCKET, SCOPE_SIGNAL = 1 << 0, 1 << 1


class LandlockError(OSError):
    pass


@functools.cache
def _structs() -> tuple[Any, Any]:
    """The two structs of <linux/landlock.h> (ctypes is imported with the first command
    sandboxed, not with uji)."""
    import ctypes

    class RulesetAttr(ctypes.Structure):
        _fields_ = (
            ("handled_access_fs", ctypes.c_uint64),
            ("handled_access_net", ctypes.c_uint64),
            ("scoped", ctypes.c_uint64),
        )

    class PathBeneathAttr(ctypes.Structure):
        _pack_ = 1  # __attribute__((packed)) in the header
        _fields_ = (("allowed_access", ctypes.c_uint64), ("parent_fd", ctypes.c_int32))

    return RulesetAttr, PathBeneathAttr


@functools.cache
def _libc() -> ctypes.CDLL:
    import ctypes

    return ctypes.CDLL(None, use_errno=True)


def _syscall(number: int, *args: object) -> int:
    import ctypes

    libc = _libc()
    result = int(libc.syscall(ctypes.c_long(number), *args))
    if result < 0:
        err = ctypes.get_errno()
        raise LandlockError(err, os.strerror(err))
    return result


@functools.cache
def abi_version() -> int:
    """The kernel's Landlock ABI (0: none, or switched off at boot)."""
    import ctypes

    try:
        return _syscall(SYS_CREATE_RULESET, None, ctypes.c_size_t(0), ctypes.c_uint32(CREATE_RULESET_VERSION))
    except (LandlockError, AttributeError):
        return 0


def missing(network: bool) -> str | None:
    """Why this kernel cannot hold a sandbox (with the network blocked or not); None when it can."""
    abi = abi_version()
    if abi < 1:
        return "this kernel has no Landlock (Linux 5.13+ with landlock enabled)"
    if not network and abi < 4:
        return f"Landlock ABI {abi} cannot block the network (ABI 4+)"
    return None


def handled_fs(abi: int) -> int:
    rights = FS_ABI1
    if abi >= 2:
        rights |= REFER
    if abi >= 3:
        rights |= TRUNCATE
    return rights


def restrict_signals() -> None:
    """Bind the calling thread (and what it starts) to signalling only processes in its own
    Landlock domain or nested ones (ABI 6+): no file or network rule."""
    import ctypes

    attr = _structs()[0](0, 0, SCOPE_SIGNAL)
    ruleset = _syscall(SYS_CREATE_RULESET, ctypes.byref(attr), ctypes.c_size_t(24), ctypes.c_uint32(0))
    try:
        _set_no_new_privs()
        _syscall(SYS_RESTRICT_SELF, ctypes.c_int(ruleset), ctypes.c_uint32(0))
    finally:
        os.close(ruleset)


def restrict_thread(
    rules: Iterable[tuple[str, int]], *, abi: int, block_network: bool, scope_signals: bool = False
) -> None:
    """Bind the calling thread (and what it starts afterwards) to `rules`: (path, rights)
    pairs, every other file system access denied; with `block_network`, every TCP bind
    and connect too (and abstract Unix sockets reaching out of the sandbox).

    A path that cannot be opened is skipped (nothing is granted there). Raises
    LandlockError when the kernel refuses the ruleset."""
    import ctypes

    handled = handled_fs(abi)
    attr = _structs()[0](handled, 0, 0)
    size = 8
    if abi >= 4:
        size = 16
        if block_network:
            attr.handled_access_net = NET_BIND_TCP | NET_CONNECT_TCP
    if abi >= 6:
        size = 24
        attr.scoped = (SCOPE_SIGNAL if scope_signals else 0) | (
            SCOPE_ABSTRACT_UNIX_SOCKET if block_network else 0
        )
    ruleset = _syscall(SYS_CREATE_RULESET, ctypes.byref(attr), ctypes.c_size_t(size), ctypes.c_uint32(0))
    try:
        add = _path_rule_adder(ruleset)
        for path, rights in rules:
            add(path, rights & handled)
        _set_no_new_privs()
        _syscall(SYS_RESTRICT_SELF, ctypes.c_int(ruleset), ctypes.c_uint32(0))
    finally:
        os.close(ruleset)


def _path_rule_adder(ruleset: int) -> Callable[[str, int], None]:
    """Adds a rule to `ruleset`: `rights` beneath a path. The system call's arguments are
    made once: a ruleset may take thousands of rules (the entries of a large folder
    split around a denied place), and converting them each time was most of their cost."""
    import ctypes

    attr = _structs()[1](0, -1)
    args = (
        ctypes.c_long(SYS_ADD_RULE),
        ctypes.c_int(ruleset),
        ctypes.c_int(RULE_PATH_BENEATH),
        ctypes.byref(attr),
        ctypes.c_uint32(0),
    )
    syscall = _libc().syscall
    flags = os.O_PATH | os.O_CLOEXEC | os.O_NOFOLLOW

    def add(path: str, rights: int) -> None:
        try:
            fd = os.open(path, flags)
        except OSError:
            return  # gone, or not ours to reach: nothing granted there
        try:
            mode = os.fstat(fd).st_mode
            if stat.S_ISLNK(mode):
                return  # a link grants nothing: its target is judged by its own place
            if not stat.S_ISDIR(mode):
                rights &= FILE_RIGHTS
            if not rights:
                return
            attr.allowed_access, attr.parent_fd = rights, fd
            if syscall(*args) < 0:
                err = ctypes.get_errno()
                raise LandlockError(err, os.strerror(err))
        finally:
            os.close(fd)

    return add


def _set_no_new_privs() -> None:
    import ctypes

    libc = _libc()
    if libc.prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0:
        err = ctypes.get_errno()
        raise LandlockError(err, os.strerror(err))
