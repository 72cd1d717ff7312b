"""A stand-in for the imgpu module, for checking bench/chain_profile.py's logic (threads, queues,
counts, the table) on a machine without a GPU; it measures nothing about imgpu. Each call holds
the GIL for part of its time (a busy loop) and sleeps for the rest (the GIL released), roughly
in the proportions of the real calls (IMGPU_MOCK_GIL=F scales the busy part by F, to see the
profile's GIL column react); IMGPU_MOCK_NOGPU=1 makes Context("cuda") fail as it does
without a GPU.
    PYTHONPATH=bench/mock_imgpu /usr/bin/python3 bench/chain_profile.py --n 64 --reps 1 --secs 0.5"""
import os
import time


class Error(Exception):
    pass


def tune_allocator():
    pass


class Context:
    def __init__(self, device="cuda"):
        if os.environ.get("IMGPU_MOCK_NOGPU") == "1":
            raise Error("CUDA not available: no usable GPU (mock)")
        self.device = device


class Array:
    def synchronize(self):
        time.sleep(0.0002)


GIL = float(os.environ.get("IMGPU_MOCK_GIL", "1"))


def _busy(s):
    end = time.perf_counter() + s * GIL
    while time.perf_counter() < end:
        pass


def decode_batch(datas, device="cuda"):
    _busy(0.0001 * len(datas))
    time.sleep(0.0009 * len(datas))
    return [Array() for _ in datas]


def equalize(a, device="cuda"):
    _busy(0.00002)
    return Array()


def encode_batch(arrays, fmt, quality=92, device="cuda"):
    _busy(0.00008 * len(arrays))
    time.sleep(0.0004 * len(arrays))
    return [b"\xff\xd8mock" for _ in arrays]
