#!/usr/bin/env python3
"""CPU seconds (user + sys, to the microsecond, from wait4) of two commands
run interleaved N times: on a shared, loaded machine the wall clock (and so
a benchmark's ns/op) counts the time a process waits for a core, its CPU
time does not.

    bench/cputime.py N 'COMMAND A' 'COMMAND B'

prints min, median and max of each and B's change against A.
"""
import os
import shlex
import statistics
import subprocess
import sys


def cpu(cmd):
    p = subprocess.Popen(shlex.split(cmd), stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    _, status, ru = os.wait4(p.pid, 0)
    if status != 0:
        sys.exit(f"cputime: {cmd}: exit status {status}")
    return ru.ru_utime + ru.ru_stime


def main():
    if len(sys.argv) != 4:
        sys.exit(__doc__)
    n, cmds = int(sys.argv[1]), sys.argv[2:]
    runs = [[], []]
    for _ in range(n):
        for i, c in enumerate(cmds):
            runs[i].append(cpu(c))
    for c, r in zip(cmds, runs):
        print(f"{statistics.median(r):.3f} s median, {min(r):.3f}-{max(r):.3f} s: {c}")
    a, b = runs
    print(f"B against A: median {100 * (statistics.median(b) / statistics.median(a) - 1):+.1f}%, "
          f"fastest {100 * (min(b) / min(a) - 1):+.1f}%")


if __name__ == "__main__":
    main()
