//! The pool's figures: what the kernel reports for zswap (debugfs and vmstat names) and the model's own
//! counters (ezswap's mechanisms, the lottery's draws, the victim pages' mix).

use serde_json::{json, Value};

use super::{FullPoolPolicy, IncompressiblePolicy, Zswap};

impl Zswap {
    /// The kernel's figures (debugfs and vmstat) and the model's own.
    pub fn report(&self) -> Value {
        let s = &self.stats;
        let mut out = json!({
            "enabled": true,
            "compressor": self.kind_name(),
            "zpool": self.pool.name(),
            "shrinker_enabled": self.shrinker_enabled,
            "admission": self.admission.name(),
            "replacement": self.replacement.name(),
            "zswpout": s.zswpout,
            "zswpin": s.zswpin,
            "zswpwb": s.zswpwb,
            "written_back_pages": s.zswpwb,
            "stored_pages": self.live,
            "pool_total_size": self.pool.total_bytes(),
            "pool_pages": self.pool.total_pages(),
            "pool_pages_max": s.pool_pages_max,
            "max_pool_pages": self.max_pages,
            "accept_threshold_pages": self.accept_pages,
            "stored_incompressible_pages": self.incompressible,
            "pool_limit_hit": s.pool_limit_hit,
            "full_pool": match self.full_pool {
                FullPoolPolicy::Reject => "reject",
                FullPoolPolicy::ShrinkSync => "shrink_sync",
            },
            "exclusive_loads": self.exclusive_loads,
            "incompressible": match self.incompressible_policy {
                IncompressiblePolicy::StoreAsIs => "store_as_is",
                IncompressiblePolicy::Reject => "reject",
            },
            "sync_shrink_pages": s.sync_shrink_pages,
            "reject_reclaim_fail": s.reject_reclaim_fail,
            "reject_alloc_fail": s.reject_alloc_fail,
            "reject_compress_fail": s.reject_compress_fail,
            "reject_compress_poor": s.reject_compress_poor,
            // Entry metadata and decompression never fail in the model.
            "reject_kmemcache_fail": 0,
            "decompress_fail": 0,
            "reject_admission": s.reject_admission,
            "invalidated": s.invalidated,
            "worker_runs": s.worker_runs,
            "worker_rotations": s.worker_rotations,
            "worker_queued": s.worker_queued,
            "density_samples": s.density_samples,
            "density_zpages_per_mib_mean": if s.density_samples > 0 {
                s.density_sum_zpages_per_mib / s.density_samples as f64
            } else {
                0.0
            },
            "compress_ms": s.compress_ns.0 as f64 / 1e6,
            "decompress_ms": s.decompress_ns.0 as f64 / 1e6,
            "ezswap": self.ezswap_report(),
            // Victim pool pages by "objects/file objects" (page-granular policies only).
            "evicted_pages_by_mix": self
                .replacement
                .victim_mix()
                .into_iter()
                .map(|((n, f), c)| (format!("{n}/{f}"), json!(c)))
                .collect::<serde_json::Map<_, _>>(),
        });
        // A lottery's draws per list, and the draws that found no ticket (lottery policies only).
        let (draws, empty) = self.replacement.draws();
        if !draws.is_empty() {
            out["lottery_draws_by_list"] = json!(draws);
            out["lottery_empty_draws"] = json!(empty);
        }
        out
    }

    /// The counters of ezswap's mechanisms (compressions, entropy estimates, APA's file pages, lookups).
    fn ezswap_report(&self) -> Value {
        let s = &self.stats;
        json!({
            "compressions": s.compressions,
            "entropy_estimates": s.estimates,
            "entropy_ms": s.estimate_ns.0 as f64 / 1e6,
            "apa": self.apa,
            "stored_file_pages": self.live_file,
            "stored_bytes": self.stored_bytes,
            "file_stores": s.file_stores,
            "file_refused": s.file_refused,
            "file_hits": s.file_hits,
            "file_dropped": s.file_dropped,
            "file_invalidated": s.file_invalidated,
            "lookups": s.lookups,
            "lookup_hits": s.lookup_hits,
        })
    }

    fn kind_name(&self) -> &'static str {
        self.kind.algorithm().name()
    }
}
