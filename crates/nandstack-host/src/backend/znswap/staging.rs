//! The slot allocator paired with ZNSwap: it hands out staging slots only — the temporary swap entry a
//! page holds from `folio_alloc_swap` until its append completes (ZNSwap's `zns_tmp_swp_entry`), after
//! which the backend moves it to the slot where the data landed. Staging slots are the range
//! `[first, first + len)` of the slot map; a cursor sweeps it (next fit), so the pages of one reclaim
//! pass get consecutive staging slots and merge in the block plug as they would on a block device.

use crate::swap::alloc::{next_free, SlotAllocator};
use nandstack_core::Nanos;

pub struct StagingAllocator {
    first: u32,
    len: u32,
    cursor: u32,
    allocs: u64,
}

impl StagingAllocator {
    pub fn new(first: u32, len: u32) -> StagingAllocator {
        StagingAllocator {
            first,
            len,
            cursor: 0,
            allocs: 0,
        }
    }
}

impl SlotAllocator for StagingAllocator {
    fn name(&self) -> &'static str {
        "znswap_staging"
    }

    fn alloc(&mut self, _cpu: usize, map: &[u8], now: Nanos) -> Option<(u32, Nanos)> {
        let k = next_free(map, self.first, self.len, self.cursor)?;
        self.cursor = (k + 1) % self.len;
        self.allocs += 1;
        Some((self.first + k, now))
    }

    fn free(&mut self, _slot: u32) {}

    fn stats(&self) -> Vec<(&'static str, u64)> {
        vec![
            ("staging_slots", self.len as u64),
            ("allocations", self.allocs),
        ]
    }

    fn verify(&self, map: &[u8]) -> Result<(), String> {
        if (self.first + self.len) as usize > map.len() || self.cursor >= self.len.max(1) {
            return Err("staging range or cursor outside the slot map".into());
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::swap::MAP_BAD;

    #[test]
    fn conformance() {
        crate::swap::alloc::conformance::run(
            &|n| {
                let mut map = vec![0u8; n as usize];
                map[0] = MAP_BAD;
                (
                    Box::new(StagingAllocator::new(1, n - 1)) as Box<dyn SlotAllocator>,
                    map,
                )
            },
            5,
        );
    }

    #[test]
    fn only_staging_slots_are_handed_out_consecutively() {
        let mut map = vec![0u8; 20];
        map[0] = MAP_BAD;
        let mut a = StagingAllocator::new(12, 8);
        let got: Vec<u32> = (0..3)
            .map(|_| {
                let (s, _) = a.alloc(0, &map, Nanos(0)).unwrap();
                map[s as usize] = 1;
                s
            })
            .collect();
        assert_eq!(got, [12, 13, 14]);
        map[13] = 0;
        assert_eq!(a.alloc(0, &map, Nanos(5)).unwrap(), (15, Nanos(5)));
        for m in &mut map[12..20] {
            *m = 1;
        }
        assert_eq!(a.alloc(0, &map, Nanos(0)), None); // the zone slots 1..12 are never handed out
    }
}
