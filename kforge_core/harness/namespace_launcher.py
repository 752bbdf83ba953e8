"""Runs a command inside new user, PID, mount and network namespaces (Linux), as KForge's worker sandbox.

This file is run as a script (``python -I -S namespace_launcher.py PLAN -- COMMAND...``) before anything of the
candidate's: it imports only the standard library and nothing of KForge, so it starts in a few milliseconds. The
plan (JSON) names the directories to ``hide`` (covered by an empty, private tmpfs: the run store, the home
directory, /tmp), those that stay ``writable`` (the candidate's scratch directory, the build caches) and those that
stay ``readable`` under a hidden one (Python, the installed packages). Everything else is read-only; /proc shows only
the sandbox's processes; there is no network but a loopback that is down.

Three processes: this one (seen by KForge) creates the namespaces and forks the sandbox's init (PID 1 inside), which
sets up the mounts and forks the command. When the command ends, init reports how (exit status or signal) through a
pipe and exits, which kills every process left in the namespace; this process then ends the same way the command
did, so KForge classifies crashes as it does without the sandbox. ``--probe`` checks that all of this works here.
"""

import ctypes
import json
import os
import resource
import signal
import sys
import warnings  # noqa: F401 - os.execvp imports it, after the mounts may have hidden the standard library

CLONE_NEWNS, CLONE_NEWUSER, CLONE_NEWPID, CLONE_NEWNET = 0x00020000, 0x10000000, 0x20000000, 0x40000000
MS_RDONLY, MS_NOSUID, MS_NODEV, MS_NOEXEC, MS_REMOUNT, MS_BIND, MS_REC, MS_PRIVATE = (
    1, 2, 4, 8, 32, 4096, 16384, 1 << 18)
# per-mount flags that a mount inherited from the parent namespace keeps locked: a remount must repeat them
_LOCKED = {"nosuid": MS_NOSUID, "nodev": MS_NODEV, "noexec": MS_NOEXEC, "noatime": 1024, "nodiratime": 2048,
           "relatime": 1 << 21, "strictatime": 1 << 24}
PR_SET_PDEATHSIG = 1
_INSIDE_ID = 1000  # the user and group the command runs as inside: never 0, so it holds no capability there
_NOT_REMOUNTED = ("/proc", "/dev")  # a fresh /proc; device nodes stay usable (GPUs)
SETUP_FAILED = 125
_PID_MAX_FLOOR = 301  # the kernel's least pid_max (RESERVED_PIDS + 1)

_libc = ctypes.CDLL(None, use_errno=True)


def _check(result, what):
    if result != 0:
        errno = ctypes.get_errno()
        raise OSError(errno, f"{what}: {os.strerror(errno)}")


def _encode(text):
    return None if text is None else os.fsencode(text)


def _mount(source, target, fstype, flags, data=None):
    _check(_libc.mount(_encode(source), _encode(target), _encode(fstype), ctypes.c_ulong(flags), _encode(data)),
           f"mount {target}")


def _under(path, directory):
    return path == directory or path.startswith(directory.rstrip("/") + "/")


def _mounts():
    """(mount point, its locked flags) of every mount this namespace sees."""
    with open("/proc/self/mountinfo") as f:
        for line in f:
            fields = line.split()
            point = fields[4].encode().decode("unicode_escape")  # spaces come as \040
            flags = 0
            for option in fields[5].split(","):
                flags |= _LOCKED.get(option, 0)
            yield point, flags


def _remount(point, flags, read_only):
    _mount(None, point, None, MS_REMOUNT | MS_BIND | flags | (MS_RDONLY if read_only else 0))


def set_up_mounts(plan):
    """Inside the new namespaces, as their init: the fresh /proc, everything read-only, the hidden directories
    covered, the writable and readable ones bound back."""
    _mount(None, "/", None, MS_REC | MS_PRIVATE)  # nothing done here reaches the host
    _mount("proc", "/proc", "proc", MS_NOSUID | MS_NODEV | MS_NOEXEC)
    hidden = [h for h in sorted(set(plan["hide"])) if os.path.isdir(h)]
    hidden = [h for h in hidden if not any(o != h and _under(h, o) for o in hidden)]  # the outermost only
    originals = {h: os.open(h, os.O_PATH | os.O_DIRECTORY) for h in hidden}  # the real ones, once covered
    for point, flags in list(_mounts()):
        if point == "/proc" or any(_under(point, p) for p in _NOT_REMOUNTED):
            continue
        try:
            _remount(point, flags, read_only=True)
        except OSError as exc:
            if point == "/":
                raise
            print(f"kforge sandbox: {point} stays as it is: {exc}", file=sys.stderr)
    for directory in hidden + ["/dev/shm"]:
        mode = "1777" if directory in ("/tmp", "/dev/shm") else "0755"
        _mount("tmpfs", directory, "tmpfs", MS_NOSUID | MS_NODEV, _tmpfs_options(plan, directory, mode))
    kept = [(p, True) for p in plan["writable"]] + [(p, False) for p in plan["readable"]]
    bound = []
    for path, writable in sorted(kept, key=lambda item: len(item[0])):  # parents before what lies in them
        source = path
        for directory in hidden:
            if _under(path, directory):
                source = f"/proc/self/fd/{originals[directory]}/{os.path.relpath(path, directory)}"
        if not os.path.exists(source) or (not writable and (source == path or any(_under(path, b) for b in bound))):
            continue  # nothing to bind, or readable already
        if not os.path.exists(path):  # its mount point, in a covering tmpfs
            if os.path.isdir(source):
                os.makedirs(path)
            else:
                os.makedirs(os.path.dirname(path), exist_ok=True)
                open(path, "a").close()
        _mount(source, path, None, MS_BIND | MS_REC)
        bound.append(path)
        if writable:
            _remount(path, 0, read_only=False)
    for fd in originals.values():
        os.close(fd)


def _tmpfs_options(plan, directory, mode):
    """A covering tmpfs's options: its size from the plan (``SandboxPlan.tmpfs_sizes``), else 4 GiB."""
    size = plan.get("tmpfs", {}).get(directory)
    return f"mode={mode},size={size or '4g'}"


def _limit_tasks(plan):
    """Init, once /proc is the namespace's: at most ``max_processes`` processes and threads in the PID namespace,
    through its own ``pid_max`` (Linux 6.14 and later; at least 301 there). Binds root too, with no cgroup. An
    older kernel keeps one pid_max for the machine, which this namespace may not change: nothing is done then."""
    if plan.get("max_processes"):
        try:
            _write("/proc/sys/kernel/pid_max", str(max(_PID_MAX_FLOOR, plan["max_processes"] + 1)))
        except OSError:
            pass


def _limit_processes(plan):
    """The command, before it execs: ``RLIMIT_NPROC`` at ``max_processes``, set inside the user namespace, where it
    counts only this namespace's processes and threads (set outside, it would count all of the user's). The kernel
    does not apply it to a user that is root outside."""
    if plan.get("max_processes"):
        limit = plan["max_processes"]
        _, hard = resource.getrlimit(resource.RLIMIT_NPROC)
        if hard != resource.RLIM_INFINITY:
            limit = min(limit, hard)
        try:
            resource.setrlimit(resource.RLIMIT_NPROC, (limit, limit))
        except (OSError, ValueError):
            pass


def _write(path, text):
    with open(path, "w") as f:
        f.write(text)


def _init(plan, command, report_fd, cwd, start=None):
    """PID 1 of the new namespace: set up, start the command (or call ``start``), reap every orphan, report how the
    command ended."""
    _libc.prctl(PR_SET_PDEATHSIG, signal.SIGKILL, 0, 0, 0)
    try:
        set_up_mounts(plan)
        _limit_tasks(plan)
        os.chdir(cwd)  # the same path, now seen through the new mounts
    except OSError as exc:
        os.write(report_fd, f"error {exc}".encode())
        os._exit(SETUP_FAILED)
    child = os.fork()
    if child == 0:
        os.setsid()  # the command leads its session, as a worker without the sandbox does
        _limit_processes(plan)
        if start is not None:
            os._exit(start())
        try:
            os.execvp(command[0], command)
        except OSError as exc:
            print(f"kforge sandbox: cannot run {command[0]}: {exc}", file=sys.stderr)
        os._exit(127)
    while True:
        pid, status = os.wait()
        if pid == child:
            break
    if os.WIFSIGNALED(status):
        os.write(report_fd, f"signal {os.WTERMSIG(status)}".encode())
    else:
        os.write(report_fd, f"exit {os.WEXITSTATUS(status)}".encode())
    os._exit(0)  # the kernel now kills whatever the command left behind


def run(plan, command, start=None):
    """Run ``command`` in the sandbox ``plan`` describes and end as it ended. With ``start`` (a worker forked from a
    template, ``worker_start.py``), its command is a call of ``start()`` in this process's copy, whose result is the
    exit status, instead of a program executed."""
    uid, gid, cwd = os.getuid(), os.getgid(), os.getcwd()
    _check(_libc.unshare(CLONE_NEWUSER | CLONE_NEWNS | CLONE_NEWPID | CLONE_NEWNET), "unshare")
    _write("/proc/self/setgroups", "deny")
    _write("/proc/self/uid_map", f"{_INSIDE_ID} {uid} 1")
    _write("/proc/self/gid_map", f"{_INSIDE_ID} {gid} 1")
    read_end, write_end = os.pipe()
    init = os.fork()
    if init == 0:
        os.close(read_end)
        _init(plan, command, write_end, cwd, start)
    os.close(write_end)
    report = os.read(read_end, 4096).decode()
    os.waitpid(init, 0)
    how, _, detail = report.partition(" ")
    if how == "signal":
        signum = int(detail)
        signal.signal(signum, signal.SIG_DFL)
        os.kill(os.getpid(), signum)
        os._exit(128 + signum)  # a signal this process cannot die of
    if how == "exit":
        os._exit(int(detail))
    print(f"kforge sandbox: {detail or 'its init ended without a word'}", file=sys.stderr)
    os._exit(SETUP_FAILED)


def link_directories(path):
    """The directory of ``path`` and of every link it goes through to the file it names: all must stay in sight
    for the path to be run (a virtual environment's ``python`` links to another that links to the interpreter)."""
    path, found = os.path.abspath(path), []
    for _ in range(40):  # the kernel's own limit on links followed
        found.append(os.path.dirname(path))
        if not os.path.islink(path):
            break
        path = os.path.normpath(os.path.join(os.path.dirname(path), os.readlink(path)))
    return found


def main(argv):
    if argv[1:] == ["--probe"]:
        # the Python that runs workers stays in sight, as in a worker's plan: a clone under /tmp keeps its
        # virtual environment there
        plan = {"hide": ["/tmp"], "writable": [], "readable": [sys.prefix, *link_directories(sys.executable)]}
        return run(plan, [sys.executable, "-I", "-S", "-c", "import os; assert os.listdir('/proc') != []"])
    if len(argv) < 4 or argv[2] != "--":
        print("usage: namespace_launcher.py PLAN -- COMMAND...", file=sys.stderr)
        return 2
    try:
        return run(json.loads(argv[1]), argv[3:])
    except OSError as exc:
        print(f"kforge sandbox: {exc}", file=sys.stderr)
        return SETUP_FAILED


if __name__ == "__main__":
    sys.exit(main(sys.argv))
