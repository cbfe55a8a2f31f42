//! The trace formats we read, their names, and reader options.

use std::fmt;
use std::str::FromStr;

use nandstack_core::Error;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

/// A block-trace file format. The serde / [`FromStr`] name is given on each variant; `docs/trace-formats.md`
/// describes every format's columns, units, time base and op codes.
#[derive(Copy, Clone, Debug, PartialEq, Eq, Hash, Serialize, Deserialize, JsonSchema)]
pub enum TraceFormat {
    /// `msr`: MSR Cambridge / SNIA CSV `Timestamp,Hostname,DiskNumber,Type,Offset,Size,ResponseTime`.
    #[serde(rename = "msr")]
    Msr,
    /// `blkparse`: Linux `blkparse` default text output (one action per request, `D` by default).
    #[serde(rename = "blkparse")]
    Blkparse,
    /// `disksim`: DiskSim ASCII `time_ms devno blkno bcount flags`.
    #[serde(rename = "disksim")]
    Disksim,
    /// `mqsim`: MQSim ASCII `time_ns dev lba size type`.
    #[serde(rename = "mqsim")]
    Mqsim,
    /// `ssdsim`: SSDsim ASCII `time_ns dev lsn size op`.
    #[serde(rename = "ssdsim")]
    Ssdsim,
    /// `fio`: fio iolog version 2 (and version 3, which adds timestamps).
    #[serde(rename = "fio")]
    FioIolog,
    /// `tencent`: Tencent CBS (SNIA IOTTA) CSV `Timestamp,Offset,Size,IOType,VolumeID`.
    #[serde(rename = "tencent")]
    TencentCbs,
    /// `cloudphysics`: CloudPhysics vscsi CSV `version,time,op,size,lbn`.
    #[serde(rename = "cloudphysics")]
    CloudPhysics,
    /// `systor17`: SYSTOR'17 (SNIA IOTTA) CSV `Timestamp,Response,IOType,LUN,Offset,Size`.
    #[serde(rename = "systor17")]
    Systor17,
    /// `heimdall`: Heimdall `time_ms dev offset size op`.
    #[serde(rename = "heimdall")]
    Heimdall,
    /// `wiscsee`: WiscSee `blkparse-events-for-ftlsim.txt` (`pid action op offset size time delta sync`).
    #[serde(rename = "wiscsee")]
    Wiscsee,
    /// `arc`: ARC paper `.lis` `start_block nblocks ignore request_no` (reads only, no time).
    #[serde(rename = "arc")]
    Arc,
    /// `hp_srt`: HP Labs SRT v1.3 binary (big-endian int32 records after an ASCII header).
    #[serde(rename = "hp_srt")]
    HpSrt,
    /// `u32_blocks`: raw little-endian uint32 block numbers (CloudPhysics/LIRS2 `w106`): 4 KiB reads, no time.
    #[serde(rename = "u32_blocks")]
    U32Blocks,
    /// `kswap`: real-kernel swap captures `time_s,op,sector,sectors,comm` (`shared/traces/kernel-swap`).
    #[serde(rename = "kswap")]
    Kswap,
}

impl TraceFormat {
    /// Every format, in declaration order.
    pub const ALL: [TraceFormat; 15] = [
        TraceFormat::Msr,
        TraceFormat::Blkparse,
        TraceFormat::Disksim,
        TraceFormat::Mqsim,
        TraceFormat::Ssdsim,
        TraceFormat::FioIolog,
        TraceFormat::TencentCbs,
        TraceFormat::CloudPhysics,
        TraceFormat::Systor17,
        TraceFormat::Heimdall,
        TraceFormat::Wiscsee,
        TraceFormat::Arc,
        TraceFormat::HpSrt,
        TraceFormat::U32Blocks,
        TraceFormat::Kswap,
    ];

    /// The serde / command-line name.
    pub fn name(self) -> &'static str {
        match self {
            TraceFormat::Msr => "msr",
            TraceFormat::Blkparse => "blkparse",
            TraceFormat::Disksim => "disksim",
            TraceFormat::Mqsim => "mqsim",
            TraceFormat::Ssdsim => "ssdsim",
            TraceFormat::FioIolog => "fio",
            TraceFormat::TencentCbs => "tencent",
            TraceFormat::CloudPhysics => "cloudphysics",
            TraceFormat::Systor17 => "systor17",
            TraceFormat::Heimdall => "heimdall",
            TraceFormat::Wiscsee => "wiscsee",
            TraceFormat::Arc => "arc",
            TraceFormat::HpSrt => "hp_srt",
            TraceFormat::U32Blocks => "u32_blocks",
            TraceFormat::Kswap => "kswap",
        }
    }

    /// Whether records carry an arrival time (for fio: only version 3 logs do).
    pub fn has_time(self) -> bool {
        !matches!(self, TraceFormat::Arc | TraceFormat::U32Blocks)
    }

    /// Whether the format is a binary one (record numbers stand in for line numbers in errors).
    pub fn is_binary(self) -> bool {
        matches!(self, TraceFormat::HpSrt | TraceFormat::U32Blocks)
    }
}

impl fmt::Display for TraceFormat {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

impl FromStr for TraceFormat {
    type Err = Error;

    fn from_str(s: &str) -> Result<Self, Error> {
        TraceFormat::ALL
            .into_iter()
            .find(|f| f.name() == s)
            .ok_or_else(|| {
                let names: Vec<&str> = TraceFormat::ALL.iter().map(|f| f.name()).collect();
                Error::config(
                    "trace.format",
                    format!(
                        "unknown trace format `{s}`; expected one of: {}",
                        names.join(", ")
                    ),
                )
            })
    }
}

/// Which `blkparse` action becomes a request. Each request passes through several actions
/// (`Q` queued → `G` get request → `I` inserted → `D` issued to the driver → `C` completed); taking one
/// of them counts every request once. Merged bios (`M`/`F`) never reach `D` on their own.
#[derive(Copy, Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum BlkparseAction {
    /// `Q`: the bio as the file system submitted it (before merging and splitting).
    Queue,
    /// `I`: inserted into the I/O scheduler.
    Insert,
    /// `D`: issued to the device driver (what the device sees). The default.
    #[default]
    Issue,
    /// `C`: completed (time is the completion time, not the arrival).
    Complete,
}

impl BlkparseAction {
    /// The action letter in blkparse output.
    pub fn letter(self) -> u8 {
        match self {
            BlkparseAction::Queue => b'Q',
            BlkparseAction::Insert => b'I',
            BlkparseAction::Issue => b'D',
            BlkparseAction::Complete => b'C',
        }
    }
}

/// What a reader does with a malformed line.
#[derive(Copy, Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum Malformed {
    /// Stop with an error naming the line (the default).
    #[default]
    Strict,
    /// Skip the line and count it (`TraceReader::malformed`). Text formats only: a bad record of a
    /// binary format breaks its framing and is always an error.
    Lenient,
}

/// Default reorder window: 10 s of trace time.
pub const DEFAULT_REORDER_WINDOW_NS: u64 = 10_000_000_000;
/// Default reorder window: 1,000,000 records.
pub const DEFAULT_REORDER_WINDOW_ROWS: u64 = 1_000_000;
/// Default number of records that may come too late for the window before the reader stops.
pub const DEFAULT_MAX_LATE_ROWS: u64 = 1000;

/// Options of a trace reader.
#[derive(Copy, Clone, Debug, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct TraceOptions {
    /// `blkparse` only: which action becomes a request. Default: `issue` (`D`).
    #[serde(default)]
    pub blkparse_action: BlkparseAction,
    /// Reorder window in trace time, ns (see `reorder`). Default 10 s.
    #[serde(default = "d_window_ns")]
    pub reorder_window_ns: u64,
    /// Reorder window in records; 0 = no reordering. Default 1,000,000.
    #[serde(default = "d_window_rows")]
    pub reorder_window_rows: u64,
    /// Records that may arrive too late for the window (replayed at the last released time) before
    /// the reader stops with an error naming the line. Default 1000.
    #[serde(default = "d_max_late")]
    pub max_late_rows: u64,
    /// `strict` (default) or `lenient` malformed lines.
    #[serde(default)]
    pub malformed: Malformed,
}
fn d_window_ns() -> u64 {
    DEFAULT_REORDER_WINDOW_NS
}
fn d_window_rows() -> u64 {
    DEFAULT_REORDER_WINDOW_ROWS
}
fn d_max_late() -> u64 {
    DEFAULT_MAX_LATE_ROWS
}
impl Default for TraceOptions {
    fn default() -> Self {
        TraceOptions {
            blkparse_action: BlkparseAction::default(),
            reorder_window_ns: d_window_ns(),
            reorder_window_rows: d_window_rows(),
            max_late_rows: d_max_late(),
            malformed: Malformed::Strict,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_round_trip() {
        for f in TraceFormat::ALL {
            assert_eq!(f.name().parse::<TraceFormat>().unwrap(), f);
            assert_eq!(f.to_string(), f.name());
        }
        let err = "msr_cambridge"
            .parse::<TraceFormat>()
            .unwrap_err()
            .to_string();
        assert!(
            err.contains("unknown trace format `msr_cambridge`"),
            "{err}"
        );
        assert!(
            err.contains(
                "msr, blkparse, disksim, mqsim, ssdsim, fio, tencent, cloudphysics, systor17"
            ),
            "{err}"
        );
        assert!(err.contains("hp_srt, u32_blocks"), "{err}");
    }

    #[test]
    fn serde_names_match_from_str() {
        for f in TraceFormat::ALL {
            let json = serde_json::to_string(&f).unwrap();
            assert_eq!(json, format!("\"{}\"", f.name()));
            assert_eq!(serde_json::from_str::<TraceFormat>(&json).unwrap(), f);
        }
        let opts: TraceOptions = serde_json::from_str(r#"{"blkparse_action":"queue"}"#).unwrap();
        assert_eq!(opts.blkparse_action, BlkparseAction::Queue);
        assert!(serde_json::from_str::<TraceOptions>(r#"{"action":"queue"}"#).is_err());
    }
}
