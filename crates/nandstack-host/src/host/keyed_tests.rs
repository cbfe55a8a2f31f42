//! Page keys against building every page (`PageContents::content_key`, `PageIn`): a launch cycle
//! through ezswap (APA, SA, CA) on a small host, once with the contents as they are — zswap remembers
//! compressed lengths and SA's estimates by page key, builds a page only when it reads it, and the
//! zero check asks the contents — and once through a wrapper that hides the key and the contents' own
//! zero check, so every page is built and hashed as before keys. Same counters, same clock, with and
//! without the zero map.

use nandstack_core::Nanos;
use serde_json::json;

use crate::config::{HostConfig, ProcessConfig};
use crate::contents::PageContents;
use crate::host::build::HostSetup;
use crate::host::{Ctx, Host};
use crate::vm::page::*;
use crate::workloads::{OP_READ, OP_WRITE};

/// The contents without their key and zero check: every page offered is built.
struct NoKeys(Box<dyn PageContents>);

impl PageContents for NoKeys {
    fn advance(&mut self, refs: u64) {
        self.0.advance(refs);
    }
    fn page_bytes(&self, page: u32, out: &mut [u8; 4096]) {
        self.0.page_bytes(page, out);
    }
    fn describe(&self) -> String {
        self.0.describe()
    }
}

fn workload() -> serde_json::Value {
    let app = |name: &str, anon: &str, file: &str| {
        json!({"name": name, "anon_mib": 1.0, "file_mib": 2.0, "anon_content": anon,
               "file_content": file})
    };
    json!({"type": "launch", "app_count": 3, "repetitions": 4, "run_ms": 20.0, "refs_per_ms": 40,
           "scale": 1.0, "apps": [
               app("a", "zero:30,sparse:40,random:30", "sparse:50,random:50"),
               app("b", "zero:10,sparse:20,random:70", "zero:20,sparse:60,random:20"),
               app("c", "sparse:90,random:10", "random:100")]})
}

/// Run the launch cycle (9 MiB) in a 4.7 MiB cgroup with ezswap; the clock and the counters after it:
/// zswap's and the swap layer's (short) and the host's (long, compared whole).
fn run(keys: bool, zero_map: bool) -> (String, String) {
    let seed = 9;
    let host: HostConfig = serde_json::from_value(json!({
        "ram_mib": 16, "cpus": 1, "readahead": {"policy": "off"},
        "cgroups": [{"name": "t", "limit_pages": 1200}],
        "swap": {"size_mib": 32, "zero_map": zero_map},
        "zswap": {"enabled": true, "compressor": "lzo", "zpool": "z3fold_4_8", "max_pool_percent": 4,
                  "ezswap": {"admission": "entropy", "replacement": "lottery_code", "apa": true,
                             "sample": "leading512"},
                  "full_pool": "shrink_sync", "incompressible": "reject"}}))
    .expect("host parses");
    let processes: Vec<ProcessConfig> =
        serde_json::from_value(json!([{"name": "apps", "cgroup": "t", "workload": workload()}]))
            .expect("processes parse");
    let spec: nandstack_device::spec::DeviceSpec = serde_json::from_value(json!({
        "geometry": {"channels": 1, "chips_per_channel": 1, "dies_per_chip": 1, "planes_per_die": 1,
                     "blocks_per_plane": 128, "pages_per_block": 128, "page_size_bytes": 4096},
        "timing": {"enabled": false}}))
    .expect("device parses");
    // Without verification (which builds every page, and checks remembered lengths against it).
    let dev = nandstack_device::build(&spec, seed, false, None).expect("device builds");
    let (mut w, contents) =
        crate::workloads::build_with_contents(&processes[0].workload, seed, 0).expect("workload");
    let setup = HostSetup {
        seed,
        host: &host,
        processes: &processes,
        block_trace: None,
    };
    let mut h = Host::build(&setup, dev, std::slice::from_ref(&w), false).expect("host builds");
    assert!(!h.verify);
    let contents = contents.expect("the launch cycle has contents");
    let contents: Box<dyn PageContents> = if keys {
        contents
    } else {
        Box::new(NoKeys(contents))
    };
    h.set_contents(vec![Some(contents)]).expect("contents");
    let mut c = Ctx {
        now: Nanos(0),
        cpu: 0,
        comm: 3,
        kswapd: false,
    };
    let base = h.vm.procs[0].base;
    let mut out = Vec::new();
    let mut faults = 0u64;
    loop {
        let more = w.threads[0].fill(&mut out, 4096).expect("fill");
        for r in out.drain(..) {
            if r.op != OP_READ && r.op != OP_WRITE {
                continue;
            }
            let (vpn, write) = (base + r.page, r.op == OP_WRITE);
            c.now += Nanos(2_000);
            let pte = h.vm.ptes[vpn as usize];
            if is_present(pte) && (!write || pte & PTE_WRITE != 0) {
                h.vm.ptes[vpn as usize] = pte | PTE_YOUNG | if write { PTE_DIRTY } else { 0 };
            } else {
                h.fault(&mut c, vpn, write).expect("fault");
                faults += 1;
            }
        }
        if !more {
            break;
        }
    }
    let z = h.store.zswap.as_ref().expect("zswap on");
    (
        format!(
            "faults {faults} now {:?}\nzswap {:?}\nswap {:?}",
            c.now, z.stats, h.swap.stats
        ),
        format!("{:?}", h.stats),
    )
}

#[test]
fn page_keys_change_nothing() {
    for zero_map in [true, false] {
        let (with, host_with) = run(true, zero_map);
        let (without, host_without) = run(false, zero_map);
        assert_eq!(with, without, "zero_map {zero_map}");
        assert!(
            host_with == host_without,
            "zero_map {zero_map}: host counters differ"
        );
        // The run reaches what keys shortcut: stores of both kinds, refusals by SA, zero pages.
        for needle in ["file_hits: 0,", "reject_admission: 0,", "compressions: 0,"] {
            assert!(!with.contains(needle), "{needle} in\n{with}");
        }
        if zero_map {
            assert!(!with.contains("swpout_zero: 0,"), "{with}");
        }
    }
}
