"""kernel-zram: the host model swapping to zram against Linux 6.18's zram, capture by capture
(`../shared/traces/kernel-zram/`, or `--captures DIR`): every figure of every program against the kernel's
range over its repetitions."""

from __future__ import annotations

from . import _captures

EXPERIMENT = _captures.experiment(
    "zram",
    title="zram against the real kernel (Linux 6.18 captures)",
    paper="No paper: ground truth recorded on Linux 6.18 (x86-64, cgroup v1) by tools/capture-zram.sh — "
    "memtouch with page contents from the Silesia corpus swapping to zram0 (lzo, lzo-rle, lz4).",
    claim="zram compresses each page into zsmalloc (pages from huge_class_size up stored whole), zero pages "
    "never reach it (a bit of the swap layer), and as a synchronous device a swap-in reads into memory "
    "bypassing the swap cache and frees the slot (notify_free); the model reproduces every capture's "
    "figures within 10% of the kernel's range.",
    method="Each program run through the host model (at four phases of the 2 s statistics flush; per "
    "figure the median over the phases whose runs finish) swapping to a zram backend (same page bytes, "
    "algorithm and disksize); the model's pswpout, pswpin, swpout_zero, swpin_zero, orig_data_size, "
    "compr_data_size, mem_used_total, huge_pages, notify_free and pool bytes per stored page at the last "
    "access compared with the kernel's min..max over repetitions.",
)
