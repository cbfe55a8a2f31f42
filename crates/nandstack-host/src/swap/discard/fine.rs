//! Fine-grained discard: each aligned group of N slots is discarded as soon as its last slot is freed
//! (a group that is reused and emptied again is discarded again). Not in Linux; the DISS-style
//! alternative that invalidates stale swap data early without withholding clusters.

use super::DiscardPolicy;

pub struct FineDiscard {
    n: u32,
}

impl FineDiscard {
    pub fn new(n: u32) -> FineDiscard {
        assert!(n >= 1);
        FineDiscard { n }
    }
}

impl DiscardPolicy for FineDiscard {
    fn name(&self) -> &'static str {
        "fine"
    }
    fn whole_clusters(&self) -> bool {
        false
    }
    fn slot_freed(&mut self, slot: u32, map: &[u8], out: &mut Vec<(u32, u32)>) {
        let first = slot / self.n * self.n;
        let end = (first + self.n).min(map.len() as u32);
        if map[first as usize..end as usize].iter().all(|&m| m == 0) {
            out.push((first, end - first));
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn discards_a_group_when_its_last_slot_is_freed() {
        let mut map = vec![1u8; 32];
        let mut d = FineDiscard::new(8);
        let mut out = Vec::new();
        for s in 8..15 {
            map[s] = 0;
            d.slot_freed(s as u32, &map, &mut out);
        }
        assert!(out.is_empty());
        map[15] = 0;
        d.slot_freed(15, &map, &mut out);
        assert_eq!(out, vec![(8, 8)]);
    }
}
