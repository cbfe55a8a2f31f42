//! Counters, the common [`DeviceStats`] and the zoned section of the summary ([`Device::details`]).
//!
//! [`Device::details`]: crate::device::Device::details

use serde::Serialize;
use serde_json::json;

use super::state::STATE_NAMES;
use super::ZonedSsd;
use crate::device::DeviceStats;

/// Counters of host commands and flash work, cumulative since construction or `reset_counters`.
#[derive(Clone, Debug, Default, PartialEq, Serialize)]
pub struct Counters {
    pub host_read_requests: u64,
    /// Writes and appends.
    pub host_write_requests: u64,
    pub host_read_bytes: u64,
    pub host_write_bytes: u64,
    /// Zone Append commands (also counted in `host_write_requests`).
    pub appends: u64,
    /// Pages programmed because host data filled them.
    pub host_program_pages: u64,
    /// Pages programmed by Zone Finish: padded tail pages and filler pages.
    pub finish_padded_pages: u64,
    /// Staging pages programmed by Flush (`flush = pad`).
    pub flush_padded_pages: u64,
    /// 4 KiB units of filler programmed (finish and flush).
    pub padding_units: u64,
    /// Page sensing operations of host reads.
    pub flash_read_pages: u64,
    /// Units read from the controller's buffer (written, page not yet programmed).
    pub buffer_read_units: u64,
    /// Units read at or past a write pointer (no flash read; zeros).
    pub unwritten_read_units: u64,
    /// Block erases (zone resets).
    pub erases: u64,
    /// Commands answered with an error.
    pub rejected_commands: u64,
}

impl Counters {
    pub fn flash_program_pages(&self) -> u64 {
        self.host_program_pages + self.finish_padded_pages + self.flush_padded_pages
    }
}

/// Distribution of the blocks' erase counts.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct EraseSummary {
    pub min: u32,
    pub max: u32,
    pub mean: f64,
    /// Blocks erased more often than the cell mode's rated P/E cycles.
    pub blocks_past_endurance: u32,
    pub endurance_pe_cycles: u32,
    /// Blocks by erase count in ten equal-width buckets from 0 to `max` (bucket i holds counts in
    /// `[i × w, (i + 1) × w)`, w = ⌈(max + 1) / 10⌉).
    pub histogram: Vec<u32>,
}

impl ZonedSsd {
    pub(super) fn device_stats(&self) -> DeviceStats {
        let c = &self.counters;
        DeviceStats {
            host_read_requests: c.host_read_requests,
            host_write_requests: c.host_write_requests,
            host_trim_requests: 0,
            host_read_bytes: c.host_read_bytes,
            host_write_bytes: c.host_write_bytes,
            host_trim_bytes: 0,
            flash_program_pages: c.flash_program_pages(),
            flash_read_pages: c.flash_read_pages,
            gc_migrated_units: 0,
            erase_count: c.erases,
            page_size_bytes: self.params.geometry.page_size_bytes as u64,
        }
    }

    /// Erase-count distribution over every block of the device.
    pub fn erase_summary(&self) -> EraseSummary {
        let e = &self.erase_counts;
        let max = e.iter().copied().max().unwrap_or(0);
        let endurance = self.params.geometry.cell_mode.endurance_pe_cycles();
        let width = (max + 1).div_ceil(10);
        let mut histogram = vec![0u32; 10];
        for &n in e {
            histogram[(n / width) as usize] += 1;
        }
        EraseSummary {
            min: e.iter().copied().min().unwrap_or(0),
            max,
            mean: e.iter().map(|&n| n as f64).sum::<f64>() / e.len().max(1) as f64,
            blocks_past_endurance: e.iter().filter(|&&n| n > endurance).count() as u32,
            endurance_pe_cycles: endurance,
            histogram,
        }
    }

    pub(super) fn details_json(&self) -> serde_json::Value {
        let p = &self.params;
        let by_state = self.table.by_state();
        let zones_by_state: serde_json::Map<String, serde_json::Value> = STATE_NAMES
            .iter()
            .zip(by_state)
            .map(|(name, n)| (name.to_string(), json!(n)))
            .collect();
        let stats = self.device_stats();
        json!({
            "kind": "zoned",
            "geometry": p.geometry,
            "zones": {
                "count": p.zones,
                "blocks_per_zone": p.blocks_per_zone,
                "zone_size_bytes": p.zone_size_bytes,
                "zone_capacity_bytes": p.zone_capacity_bytes,
                "max_open_zones": p.max_open_zones,
                "max_active_zones": p.max_active_zones,
                "finish_padding": p.finish_padding,
                "flush": p.flush,
                "cross_zone_reads": p.cross_zone_reads,
                "by_state": zones_by_state,
                "open_now": self.table.open,
                "active_now": self.table.active,
            },
            "state_counters": self.table.counters,
            "counters": self.counters,
            "flash_program_pages": stats.flash_program_pages,
            "waf": stats.waf(),
            "erases": self.erase_summary(),
            "timing": self.timelines.as_ref().map(|t| json!({
                "array_busy_ns": t.array_busy_ns,
                "channel_busy_ns": t.channel_busy_ns,
            })),
        })
    }
}
