"""Run a command and print, on stderr, its wall time, its CPU-seconds (user + sys of the command and of every
process it waited for) and the steal time of the machine's CPUs meanwhile (from /proc/stat: time the
hypervisor ran something else while a CPU of this virtual machine wanted to run). Exits with the command's status.

Usage: python scripts/cpu_seconds.py LABEL COMMAND [ARGS...]

CPU-seconds travel between machines better than wall time, but not perfectly: on a virtual machine whose
host is busy, time stolen by the hypervisor is counted as the guest's own user time when the guest kernel
does not account steal separately, and the same work then costs more CPU-seconds.
"""

import os
import resource
import subprocess
import sys
import time


def steal_seconds() -> float:
    """The steal time of all CPUs so far, in seconds (0 where /proc/stat does not report it)."""
    try:
        with open("/proc/stat") as f:
            fields = f.readline().split()
        return int(fields[8]) / os.sysconf("SC_CLK_TCK")
    except (OSError, IndexError, ValueError):
        return 0.0


def main(argv: list[str]) -> int:
    if len(argv) < 2:
        print(__doc__.strip().splitlines()[-5], file=sys.stderr)
        return 2
    label, command = argv[0], argv[1:]
    steal0, wall0 = steal_seconds(), time.perf_counter()
    status = subprocess.call(command)
    wall, steal = time.perf_counter() - wall0, steal_seconds() - steal0
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    print(f"cpu-seconds: {label}: {wall:.0f} s wall, {usage.ru_utime + usage.ru_stime:.0f} CPU-s "
          f"(user {usage.ru_utime:.0f} + sys {usage.ru_stime:.0f}), steal {steal:.0f} s over all CPUs",
          file=sys.stderr)
    return status


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
