"""Spawn one command, wait for it with os.wait4 and print `exit_code wall_s user_s sys_s max_rss_kb` — run with
`python -I -S`, importing nothing but built-in modules, so the measured child's peak RSS is its own.

    python -I -S bench/launcher.py TIMEOUT_S CWD LOG -- COMMAND…

Why a launcher: on Linux, exec carries the high-water RSS of the process image it replaces into the new one's
`ru_maxrss` (fs/exec.c, exec_mmap), and a freshly forked child's image is a copy of its parent's. A child spawned
straight from the harness therefore reports at least the harness's own RSS (measured: 206 MB for `python -c pass`
spawned by a process holding 200 MB). From this launcher the floor is its own ~8 MB.
"""

import os
import signal
import sys
import time


def main() -> int:
    timeout, cwd, log, separator, *command = sys.argv[1:]
    assert separator == "--" and command, __doc__
    os.chdir(cwd)
    actions = [(os.POSIX_SPAWN_OPEN, 0, os.devnull, os.O_RDONLY, 0),
               (os.POSIX_SPAWN_OPEN, 1, log, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o644),
               (os.POSIX_SPAWN_DUP2, 1, 2)]
    start = time.perf_counter()
    pid = os.posix_spawnp(command[0], command, os.environ, file_actions=actions)
    signal.signal(signal.SIGALRM, lambda *_: os.kill(pid, signal.SIGKILL))
    signal.setitimer(signal.ITIMER_REAL, float(timeout))
    _, status, usage = os.wait4(pid, 0)
    wall = time.perf_counter() - start
    signal.setitimer(signal.ITIMER_REAL, 0)
    print(os.waitstatus_to_exitcode(status), wall, usage.ru_utime, usage.ru_stime, usage.ru_maxrss)
    return 0


if __name__ == "__main__":
    sys.exit(main())
