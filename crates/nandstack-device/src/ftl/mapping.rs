//! The page-level mapping table shared by every FTL of the crate (the block FTL, the hybrid SLC/QLC FTL):
//! a forward map `l2p` (logical 4 KiB unit → physical unit) and a reverse map `p2l` (physical unit →
//! the logical unit last written there), 4 bytes per entry each.
//!
//! Validity is derived, never stored: physical unit `pua` holds the current copy of its logical unit iff
//! `p2l[pua] != NONE && l2p[p2l[pua]] == pua`. Unmapping a logical unit (an overwrite, a TRIM, a DISS
//! swap-in invalidation) only clears its forward entry — one random memory access fewer per overwrite;
//! the stale reverse entry is overwritten when the physical unit is written again. So each logical unit
//! has at most one valid physical copy by construction, and a block's valid units are exactly the units
//! whose reverse entry maps back.
//!
//! The table knows nothing about blocks, program modes or buffers: a physical address is whatever the
//! FTL makes it (both FTLs use `block × units_per_block + offset`, the hybrid with its QLC-mode block
//! size, so an SLC-mode block leaves the tail of its address range unused).

use nandstack_core::{Error, Result};

use super::bigvec;
use super::blocks::NONE;

#[derive(Debug)]
pub struct MappingTable {
    /// Forward map: logical unit → physical unit, or `NONE`.
    pub(crate) l2p: Vec<u32>,
    /// Reverse map: physical unit → logical unit last written there (stale once that unit moved on).
    pub(crate) p2l: Vec<u32>,
}

impl Clone for MappingTable {
    /// A copy on huge pages, as the original ([`bigvec::copied_table`]).
    fn clone(&self) -> MappingTable {
        MappingTable {
            l2p: bigvec::copied_table(&self.l2p),
            p2l: bigvec::copied_table(&self.p2l),
        }
    }
}

/// Both maps go back to the process's kept tables, for the next device (`nandstack_core::alloc::keep`).
impl Drop for MappingTable {
    fn drop(&mut self) {
        nandstack_core::alloc::keep(std::mem::take(&mut self.l2p));
        nandstack_core::alloc::keep(std::mem::take(&mut self.p2l));
    }
}

impl MappingTable {
    /// An empty table for `logical` logical and `physical` physical units (huge pages where the OS allows).
    pub fn new(logical: usize, physical: usize) -> MappingTable {
        MappingTable {
            l2p: bigvec::table(NONE, logical),
            p2l: bigvec::table(NONE, physical),
        }
    }

    pub fn logical_units(&self) -> usize {
        self.l2p.len()
    }
    pub fn physical_units(&self) -> usize {
        self.p2l.len()
    }
    /// Bytes of both maps.
    pub fn memory_bytes(&self) -> usize {
        4 * (self.l2p.len() + self.p2l.len())
    }

    /// The forward entry of `lpn`: its physical unit, or `NONE` when unmapped.
    #[inline]
    pub fn get(&self, lpn: u32) -> u32 {
        self.l2p[lpn as usize]
    }
    /// The physical unit holding `lpn`, if mapped.
    #[inline]
    pub fn lookup(&self, lpn: u32) -> Option<u32> {
        let p = self.l2p[lpn as usize];
        (p != NONE).then_some(p)
    }
    #[inline]
    pub fn is_mapped(&self, lpn: u32) -> bool {
        self.l2p[lpn as usize] != NONE
    }

    /// `lpn`'s current copy is now at `pua` (a fresh write or a move); any older copy becomes invalid.
    #[inline]
    pub fn bind(&mut self, lpn: u32, pua: u32) {
        self.p2l[pua as usize] = lpn;
        self.l2p[lpn as usize] = pua;
    }

    /// Unmap `lpn`; returns the physical unit that held its copy (`NONE` if it was unmapped).
    #[inline]
    pub fn unbind(&mut self, lpn: u32) -> u32 {
        std::mem::replace(&mut self.l2p[lpn as usize], NONE)
    }

    /// The logical unit whose current copy `pua` holds, if any.
    #[inline]
    pub fn owner(&self, pua: u32) -> Option<u32> {
        Self::owner_in(&self.l2p, &self.p2l, pua)
    }

    /// [`MappingTable::owner`] on the two maps as slices (for loops that hold them while they write
    /// into them: a slice's pointer and length stay in registers).
    #[inline(always)]
    pub(crate) fn owner_in(l2p: &[u32], p2l: &[u32], pua: u32) -> Option<u32> {
        let lpn = p2l[pua as usize];
        (lpn != NONE && l2p.get(lpn as usize) == Some(&pua)).then_some(lpn)
    }

    /// Whether `pua` holds the current copy of its logical unit.
    #[inline]
    pub fn is_valid(&self, pua: u32) -> bool {
        self.owner(pua).is_some()
    }

    /// Mapped logical units (O(logical)).
    pub fn mapped_units(&self) -> u64 {
        self.l2p.iter().filter(|&&p| p != NONE).count() as u64
    }

    /// Valid units in the physical range `[first, end)` (O(end − first)).
    pub fn valid_in(&self, first: u32, end: u32) -> u32 {
        (first..end).filter(|&p| self.is_valid(p)).count() as u32
    }

    /// Cache hints for the forward entries of the logical units last written to physical units
    /// `[first, end)` (what [`MappingTable::owners_into`] will read): independent loads, so their cache
    /// misses overlap.
    #[inline]
    pub fn prefetch_owners(&self, first: u32, end: u32) {
        for &lpn in &self.p2l[first as usize..end as usize] {
            bigvec::prefetch(&self.l2p, lpn as usize);
        }
    }

    /// The valid units of the physical range `[first, end)` as (physical, logical) pairs, in order, into
    /// `out` (cleared first). Branch-free on the loaded entries: every pair is written, and the slot
    /// advances only when the forward entry maps back.
    pub fn owners_into(&self, first: u32, end: u32, out: &mut Vec<(u32, u32)>) {
        out.clear();
        out.resize((end - first) as usize, (NONE, NONE));
        let mut k = 0;
        for (pua, &lpn) in (first..end).zip(&self.p2l[first as usize..end as usize]) {
            let fwd = self.l2p.get(lpn as usize).copied().unwrap_or(NONE);
            out[k] = (pua, lpn);
            k += usize::from(fwd == pua);
        }
        out.truncate(k);
    }

    /// Cache hint for the forward entry of `lpn` (no effect when out of range).
    #[inline]
    pub fn prefetch(&self, lpn: usize) {
        bigvec::prefetch(&self.l2p, lpn);
    }

    /// Structural check: every reverse entry names a logical unit in range, and every forward entry points
    /// at a physical unit in range whose reverse entry maps back (so each mapped logical unit has exactly
    /// one valid copy). `what` prefixes the error (the FTL's name).
    pub fn check(&self, what: &str) -> Result<()> {
        let bad = |m: String| Err(Error::Invariant(format!("{what}: {m}")));
        if let Some((pua, &lpn)) = self
            .p2l
            .iter()
            .enumerate()
            .find(|&(_, &l)| l != NONE && l as usize >= self.l2p.len())
        {
            return bad(format!(
                "physical unit {pua}: reverse map holds lpn {lpn} out of range"
            ));
        }
        for (lpn, &pua) in self.l2p.iter().enumerate() {
            if pua != NONE
                && ((pua as usize) >= self.p2l.len() || self.p2l[pua as usize] as usize != lpn)
            {
                return bad(format!(
                    "lpn {lpn} maps to physical unit {pua}, which does not map back"
                ));
            }
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn validity_is_derived_from_the_forward_map() {
        let mut m = MappingTable::new(4, 8);
        assert_eq!(m.lookup(1), None);
        m.bind(1, 5);
        assert_eq!((m.get(1), m.owner(5)), (5, Some(1)));
        // An overwrite moves the copy: the old unit keeps a stale reverse entry but is invalid.
        m.bind(1, 6);
        assert!(!m.is_valid(5) && m.is_valid(6));
        assert_eq!(m.p2l[5], 1, "stale reverse entries stay");
        assert_eq!(m.valid_in(0, 8), 1);
        let mut pairs = vec![(9, 9)];
        m.owners_into(0, 8, &mut pairs);
        assert_eq!(pairs, vec![(6, 1)]);
        // Unbinding clears the forward entry only.
        assert_eq!(m.unbind(1), 6);
        assert_eq!(m.unbind(1), NONE);
        assert!(!m.is_valid(6) && !m.is_mapped(1));
        m.bind(3, 0);
        assert_eq!(m.mapped_units(), 1);
        m.check("test").unwrap();
        // A forward entry that does not map back is caught.
        m.l2p[2] = 7;
        let e = m.check("test").unwrap_err().to_string();
        assert!(
            e.contains("lpn 2") && e.contains("does not map back"),
            "{e}"
        );
        assert_eq!(m.memory_bytes(), 4 * 12);
    }
}
