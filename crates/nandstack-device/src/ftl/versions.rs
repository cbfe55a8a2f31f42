//! Read-after-write versions (verification mode), shared by every FTL of the crate (the block FTL and the
//! hybrid SLC/QLC FTL): the version the host last wrote to each logical unit, and the version each
//! physical copy holds. Every host write of a unit takes a fresh version; a copy moved by GC or migration
//! carries its version along; a TRIM expects "no data" (version 0). A read — and the end-of-run sweep —
//! checks that the copy the mapping points to holds the expected version, so a lost, stale or duplicated
//! copy anywhere in the FTL is caught where it is read.
//!
//! Data present before verification was turned on counts as version 1 (so it is distinguished from
//! unwritten units, version 0).

use nandstack_core::{Error, Result};

/// Version tables: 16 bytes per logical + physical unit pair (verification mode only).
#[derive(Clone, Debug)]
pub struct VersionTable {
    next: u64,
    /// Latest version the host wrote to each logical unit; 0 = never written or trimmed.
    expected: Vec<u64>,
    /// Version held by each physical unit.
    physical: Vec<u64>,
    reads_checked: u64,
}

impl VersionTable {
    /// Tables for `logical` and `physical` units; `mapped(l)` / `valid(p)` say which units hold data
    /// already (version 1).
    pub fn new(
        logical: usize,
        physical: usize,
        mapped: impl Fn(usize) -> bool,
        valid: impl Fn(usize) -> bool,
    ) -> VersionTable {
        VersionTable {
            next: 2,
            expected: (0..logical).map(|l| u64::from(mapped(l))).collect(),
            physical: (0..physical).map(|p| u64::from(valid(p))).collect(),
            reads_checked: 0,
        }
    }

    /// A host write of logical unit `lpn`: its new version (store it with the copy that gets written).
    #[inline]
    pub fn write(&mut self, lpn: u32) -> u64 {
        let v = self.next;
        self.next += 1;
        self.expected[lpn as usize] = v;
        v
    }

    /// Physical unit `pua` now holds `version`.
    #[inline]
    pub fn store(&mut self, pua: u32, version: u64) {
        self.physical[pua as usize] = version;
    }

    /// A copy moves from `from` to `to` (GC, migration): the version goes with it.
    #[inline]
    pub fn moved(&mut self, from: u32, to: u32) {
        self.physical[to as usize] = self.physical[from as usize];
    }

    /// The version physical unit `pua` holds.
    #[inline]
    pub fn held(&self, pua: u32) -> u64 {
        self.physical[pua as usize]
    }

    /// TRIM: the unit holds no data.
    #[inline]
    pub fn trim(&mut self, lpn: u32) {
        self.expected[lpn as usize] = 0;
    }

    /// Check that logical unit `lpn` reads version `got` (0 = no data) — where the copy is `place`
    /// (for the error message). Counts the check.
    pub fn check(&mut self, lpn: u32, got: u64, place: impl FnOnce() -> String) -> Result<()> {
        self.reads_checked += 1;
        self.compare(lpn, got, place)
    }

    /// Like [`VersionTable::check`], without counting (end-of-run sweeps).
    pub fn compare(&self, lpn: u32, got: u64, place: impl FnOnce() -> String) -> Result<()> {
        let want = self.expected[lpn as usize];
        if want != got {
            return Err(Error::Invariant(format!(
                "read-after-write check failed for logical unit {lpn}: expected version {want}, {} holds \
                 version {got}",
                place()
            )));
        }
        Ok(())
    }

    /// Reads checked so far.
    pub fn reads_checked(&self) -> u64 {
        self.reads_checked
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn versions_follow_writes_moves_and_trims() {
        let mut t = VersionTable::new(4, 8, |l| l == 3, |p| p == 7);
        t.compare(3, 1, String::new).unwrap();
        t.compare(0, 0, String::new).unwrap();
        let v = t.write(0);
        t.store(2, v);
        t.check(0, t.held(2), String::new).unwrap();
        t.moved(2, 5);
        t.check(0, t.held(5), String::new).unwrap();
        // A second write: the old copy is stale.
        let w = t.write(0);
        assert!(w > v);
        let e = t
            .check(0, t.held(5), || "physical unit 5".into())
            .unwrap_err();
        assert!(e.to_string().contains("physical unit 5"), "{e}");
        t.trim(0);
        t.check(0, 0, String::new).unwrap();
        assert_eq!(t.reads_checked(), 4);
    }
}
