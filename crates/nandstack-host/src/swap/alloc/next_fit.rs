//! Next-fit slot allocation: one cursor sweeps the area and takes the next free slot, wrapping at the
//! end — the pre-cluster `scan_swap_map` behaviour of old Linux on rotational disks, and the textbook
//! baseline. It keeps no clusters, so it cannot withhold clusters for discard.

use super::{next_free, SlotAllocator};
use nandstack_core::Nanos;

pub struct NextFitAllocator {
    cursor: u32,
    len: u32,
    allocs: u64,
    wraps: u64,
}

impl NextFitAllocator {
    pub fn new(map: &[u8]) -> NextFitAllocator {
        NextFitAllocator {
            cursor: 1,
            len: map.len() as u32,
            allocs: 0,
            wraps: 0,
        }
    }
}

impl SlotAllocator for NextFitAllocator {
    fn name(&self) -> &'static str {
        "next_fit"
    }

    fn alloc(&mut self, _cpu: usize, map: &[u8], now: Nanos) -> Option<(u32, Nanos)> {
        let found = next_free(map, 0, self.len, self.cursor);
        // The sweep visits the slots from the cursor to the one found (all of them when none is
        // free); it wrapped when it visited the last one.
        let visited = found.map_or(self.len, |s| (s + self.len - self.cursor) % self.len + 1);
        if self.cursor + visited >= self.len {
            self.wraps += 1;
        }
        let s = found?;
        self.cursor = (s + 1) % self.len;
        self.allocs += 1;
        Some((s, now))
    }

    fn free(&mut self, _slot: u32) {}

    fn stats(&self) -> Vec<(&'static str, u64)> {
        vec![("allocations", self.allocs), ("wraps", self.wraps)]
    }

    fn verify(&self, map: &[u8]) -> Result<(), String> {
        if map.len() as u32 != self.len || self.cursor >= self.len {
            return Err("next-fit cursor out of range".into());
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
        super::super::conformance::run(
            &|n| {
                let mut map = vec![0u8; n as usize];
                map[0] = MAP_BAD;
                (
                    Box::new(NextFitAllocator::new(&map)) as Box<dyn SlotAllocator>,
                    map,
                )
            },
            11,
        );
    }
}
