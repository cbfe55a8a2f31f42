//! Named, documented configs (`nandstack run --preset NAME`, `nandstack run --list-presets`): device
//! classes a user recognises on a workload that exercises them, each with the public spec-sheet figures
//! it was set from, so a run can be read against the drive it stands for.

use nandstack_core::{Error, Result};
use serde::Serialize;

/// Figures from a drive's public spec sheet (`None`: the sheet does not give it).
#[derive(Clone, Debug, Serialize)]
pub struct SpecSheet {
    /// The drive the preset is modelled on.
    pub drive: &'static str,
    /// Where the figures come from.
    pub source: &'static str,
    /// `fresh` (a new drive, SLC cache included: consumer sheets) or `steady state` (SNIA PTS:
    /// datacenter sheets).
    pub state: &'static str,
    pub random_read_iops: Option<f64>,
    pub random_write_iops: Option<f64>,
    pub sequential_read_mb_per_s: Option<f64>,
    pub sequential_write_mb_per_s: Option<f64>,
}

/// A preset: its name, a one-line description, the config and its spec sheet.
#[derive(Clone, Debug, Serialize)]
pub struct Preset {
    pub name: &'static str,
    pub description: &'static str,
    #[serde(skip)]
    pub toml: &'static str,
    pub spec: Option<SpecSheet>,
}

/// Every preset, the default job (`make run`) first.
pub const PRESETS: [Preset; 10] = [
    Preset {
        name: "block-tlc-consumer",
        description: "consumer TLC NVMe SSD (970 EVO Plus class, 64 planes, DRAM write buffer, background GC), \
                      half full, 4 KiB random 70/30 read/write at QD 32 over the data, steady state",
        toml: include_str!("../presets/block-tlc-consumer.toml"),
        spec: Some(SpecSheet {
            drive: "Samsung 970 EVO Plus 1 TB",
            source: "Samsung's launch specification (Jan 2019): up to 620K/560K IOPS at QD32 (1 TB: 600K/550K), \
                     3,500/3,300 MB/s, with the TurboWrite SLC cache",
            state: "fresh",
            random_read_iops: Some(600_000.0),
            random_write_iops: Some(550_000.0),
            sequential_read_mb_per_s: Some(3_500.0),
            sequential_write_mb_per_s: Some(3_300.0),
        }),
    },
    Preset {
        name: "block-tlc-datacenter",
        description: "datacenter TLC NVMe SSD (9200 PRO class, 64 planes, OP 28%, power-protected buffer), \
                      4 KiB random writes at QD 32 in steady state",
        toml: include_str!("../presets/block-tlc-datacenter.toml"),
        spec: Some(SpecSheet {
            drive: "Micron 9200 PRO",
            source: "Micron 9200 NVMe SSD product brief: steady state (SNIA PTS), 4 KiB random read up to \
                     840K IOPS, random write up to 285K IOPS, 128 KiB sequential 3.5 GB/s",
            state: "steady state",
            random_read_iops: Some(840_000.0),
            random_write_iops: Some(285_000.0),
            sequential_read_mb_per_s: Some(3_500.0),
            sequential_write_mb_per_s: Some(3_500.0),
        }),
    },
    Preset {
        name: "hybrid-qlc-slc",
        description: "QLC SSD with an SLC cache tuned by Q-learning (RL SLC-cache paper's device, quarter \
                      capacity) on the PC stand-in",
        toml: include_str!("../presets/hybrid-qlc-slc.toml"),
        spec: None,
    },
    Preset {
        name: "host-swap-block",
        description: "memtouch in a 64 MiB cgroup swapping 192 MiB to a consumer TLC SSD (Linux-like host)",
        toml: include_str!("../presets/host-swap-block.toml"),
        spec: None,
    },
    Preset {
        name: "host-swap-diss",
        description: "DISS: a 2 GiB phone switching apps (Video scenario) swaps to the paper's 32 GiB device, \
                      75% aged; swap range registered, CL-SDI + SDS on the device, CDH on the host",
        toml: include_str!("../presets/host-swap-diss.toml"),
        spec: None,
    },
    Preset {
        name: "host-swap-strim",
        description: "STRIM: the host-swap-diss phone and device, the host TRIMming swapped-in data per 2 MiB \
                      of slots (with CDH), no device-side invalidation",
        toml: include_str!("../presets/host-swap-strim.toml"),
        spec: None,
    },
    Preset {
        name: "host-swap-hybrid",
        description: "memtouch in a 64 MiB cgroup swapping 192 MiB to the QLC SSD with an RL-tuned SLC cache",
        toml: include_str!("../presets/host-swap-hybrid.toml"),
        spec: None,
    },
    Preset {
        name: "host-zswap",
        description: "the host-swap-block program with zswap (lzo, zsmalloc, pool at most 5% of RAM) in front \
                      of the consumer TLC SSD; the pool fills and its worker writes the oldest entries back",
        toml: include_str!("../presets/host-zswap.toml"),
        spec: None,
    },
    Preset {
        name: "host-zram",
        description: "the host-swap-block program swapping to a 1 GiB zram disk (lzo-rle, zsmalloc)",
        toml: include_str!("../presets/host-zram.toml"),
        spec: None,
    },
    Preset {
        name: "host-znswap",
        description: "ZNSwap on a ZN540-like zoned SSD (zn540-small): random writes over 600 MiB in a 128 MiB \
                      cgroup, zone appends through per-CPU swap-zones, host-side GC",
        toml: include_str!("../presets/host-znswap.toml"),
        spec: None,
    },
];

/// The preset called `name`; an unknown name is a config error listing them.
pub fn preset(name: &str) -> Result<&'static Preset> {
    PRESETS.iter().find(|p| p.name == name).ok_or_else(|| {
        Error::config(
            "--preset",
            format!(
                "unknown preset `{name}`; the presets are: {}",
                PRESETS
                    .iter()
                    .map(|p| p.name)
                    .collect::<Vec<_>>()
                    .join(", ")
            ),
        )
    })
}

/// Every preset's name, description and spec sheet, as JSON (the configs via [`preset`]).
pub fn presets_json() -> String {
    serde_json::to_string_pretty(&PRESETS).expect("presets serialize")
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::config::SimConfig;

    #[test]
    fn every_preset_is_a_valid_config() {
        for p in &PRESETS {
            let cfg = SimConfig::from_toml(p.toml).unwrap_or_else(|e| panic!("{}: {e}", p.name));
            cfg.validate().unwrap_or_else(|e| panic!("{}: {e}", p.name));
            let cap = nandstack_device::spec::logical_bytes(&cfg.device)
                .unwrap_or_else(|e| panic!("{}: {e}", p.name));
            cfg.workload
                .validate("workload", cap)
                .unwrap_or_else(|e| panic!("{}: {e}", p.name));
        }
        assert!(preset("nope")
            .unwrap_err()
            .to_string()
            .contains("block-tlc-consumer"));
    }
}
