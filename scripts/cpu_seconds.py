"""Run a command and print, on stderr, its wall time, its CPU-seconds (user + sys of the command and of every
process it waited for) and the steal time of the machine's CPUs meanwhile (from /proc/stat: time the
hypervisor ran something else while a CPU of this virtual machine wanted to run), and the CPU-seconds of the whole
machine meanwhile (every process, also those nobody waited for). Exits with the command's status.

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


def machine_cpu_seconds() -> float:
    """CPU-seconds spent by every process of this machine (or container) so far: the cgroup's cpuacct.usage where
    there is one, else user + nice + system + irq + softirq of /proc/stat. Unlike the children's rusage it also
    counts processes that nobody waited for (orphans reparented to init: a kernel's workers when the kernel is
    killed, a browser's helpers), so on an otherwise idle machine the two agree unless something escapes."""
    try:
        with open("/sys/fs/cgroup/cpuacct/cpuacct.usage") as f:
            return int(f.read()) / 1e9
    except (OSError, ValueError):
        pass
    try:
        with open("/sys/fs/cgroup/cpu.stat") as f:  # cgroup v2
            return next(int(line.split()[1]) for line in f if line.startswith("usage_usec")) / 1e6
    except (OSError, ValueError, StopIteration):
        pass
    try:
        with open("/proc/stat") as f:
            fields = [int(x) for x in f.readline().split()[1:8]]
        return (fields[0] + fields[1] + fields[2] + fields[5] + fields[6]) / os.sysconf("SC_CLK_TCK")
    except (OSError, IndexError, ValueError):
        return float("nan")


def main(argv: list[str]) -> int:
    if len(argv) < 2:
        print(__doc__.strip().splitlines()[-5], file=sys.stderr)
        return 2
    label, command = argv[0], argv[1:]
    steal0, machine0, wall0 = steal_seconds(), machine_cpu_seconds(), time.perf_counter()
    status = subprocess.call(command)
    wall, steal = time.perf_counter() - wall0, steal_seconds() - steal0
    machine = machine_cpu_seconds() - machine0
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    print(f"cpu-seconds: {label}: {wall:.0f} s wall, {usage.ru_utime + usage.ru_stime:.0f} CPU-s "
          f"(user {usage.ru_utime:.0f} + sys {usage.ru_stime:.0f}), steal {steal:.0f} s over all CPUs; "
          f"the whole machine meanwhile {machine:.0f} CPU-s (every process, waited for or not)",
          file=sys.stderr)
    return status


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
