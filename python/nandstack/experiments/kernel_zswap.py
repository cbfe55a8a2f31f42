"""kernel-zswap: the host model with zswap against Linux 6.18's zswap, capture by capture
(`../shared/traces/kernel-zswap/`, or `--captures DIR`): every figure of every program against the kernel's
range over its repetitions."""

from __future__ import annotations

from . import _captures

EXPERIMENT = _captures.experiment(
    "zswap",
    title="zswap against the real kernel (Linux 6.18 captures)",
    paper="No paper: ground truth recorded on Linux 6.18 (x86-64, cgroup v1) by tools/capture-zswap.sh — "
    "memtouch with page contents from the Silesia corpus, zswap with lzo or deflate over zsmalloc.",
    claim="zswap stores every page reclaim evicts (incompressible ones whole), keeps zero pages as a bit of "
    "the swap layer, drops an entry when it is loaded (so a page only read is compressed again), refuses "
    "stores at max_pool_percent of RAM until the pool is back under 90% of it while a worker writes the "
    "oldest entries back; the model reproduces every capture's figures within 10% of the kernel's range "
    "(20% for pswpout, pswpin and zswpwb).",
    method="Each program run through the host model (at four phases of the 2 s statistics flush; per "
    "figure the median over the phases whose runs finish) with zswap in the swap path (same page bytes, "
    "compressor, pool and limits); the model's zswpout, zswpin, zswpwb, pswpout, pswpin, swpout_zero, "
    "swpin_zero, stored_pages, pool_total_size, stored_incompressible_pages, pool_limit_hit and pool bytes "
    "per stored page at the last access compared with the kernel's min..max over repetitions.",
)
