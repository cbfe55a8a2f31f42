//! Write-cost accounting split as Fig. 7 of the paper: every flash operation is charged, with its
//! Table 1 time, to exactly one category. The total write cost is the sum of the categories (an identity
//! the tests check); host reads are accounted separately and never enter the write cost.

use serde::Serialize;

/// Why a flash operation happened.
#[derive(Copy, Clone, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub enum CostKind {
    /// Host data programmed in SLC mode (Fig. 7 "SLC").
    HostToSlc = 0,
    /// Host data programmed in QLC mode ("QLC").
    HostToQlc = 1,
    /// SLC→QLC migration: SLC reads, QLC programs, SLC erases ("SLC-to-QLC"), including shrinks.
    SlcToQlc = 2,
    /// QLC garbage collection: QLC reads, programs and erases ("QLC-to-QLC").
    QlcToQlc = 3,
    /// UST's SLC garbage collection keeping hot data in SLC: SLC reads, programs, erases ("SLC-to-SLC").
    SlcToSlc = 4,
}

impl CostKind {
    pub const ALL: [CostKind; 5] = [
        CostKind::HostToSlc,
        CostKind::HostToQlc,
        CostKind::SlcToQlc,
        CostKind::QlcToQlc,
        CostKind::SlcToSlc,
    ];
    pub fn name(self) -> &'static str {
        match self {
            CostKind::HostToSlc => "host_to_slc",
            CostKind::HostToQlc => "host_to_qlc",
            CostKind::SlcToQlc => "slc_to_qlc",
            CostKind::QlcToQlc => "qlc_to_qlc",
            CostKind::SlcToSlc => "slc_to_slc",
        }
    }
    /// Host writes (Algorithm 2's host write cost) rather than reclaim (its reclaim cost).
    pub fn is_host(self) -> bool {
        matches!(self, CostKind::HostToSlc | CostKind::HostToQlc)
    }
}

/// Flash operations of one category and their time.
#[derive(Copy, Clone, Debug, Default, PartialEq, Eq, Serialize)]
pub struct OpCost {
    /// Time of the operations in ns (simulated, serial on the one chip).
    pub ns: u64,
    pub slc_page_reads: u64,
    pub slc_page_programs: u64,
    pub slc_block_erases: u64,
    pub qlc_page_reads: u64,
    pub qlc_page_programs: u64,
    pub qlc_block_erases: u64,
}

impl OpCost {
    pub fn page_programs(&self) -> u64 {
        self.slc_page_programs + self.qlc_page_programs
    }
    fn minus(&self, o: &OpCost) -> OpCost {
        OpCost {
            ns: self.ns - o.ns,
            slc_page_reads: self.slc_page_reads - o.slc_page_reads,
            slc_page_programs: self.slc_page_programs - o.slc_page_programs,
            slc_block_erases: self.slc_block_erases - o.slc_block_erases,
            qlc_page_reads: self.qlc_page_reads - o.qlc_page_reads,
            qlc_page_programs: self.qlc_page_programs - o.qlc_page_programs,
            qlc_block_erases: self.qlc_block_erases - o.qlc_block_erases,
        }
    }
}

/// Cumulative cost per category.
#[derive(Copy, Clone, Debug, Default, PartialEq, Eq)]
pub struct CostBreakdown {
    pub by_kind: [OpCost; 5],
}

impl CostBreakdown {
    pub fn get(&self, k: CostKind) -> &OpCost {
        &self.by_kind[k as usize]
    }
    pub(crate) fn get_mut(&mut self, k: CostKind) -> &mut OpCost {
        &mut self.by_kind[k as usize]
    }
    /// Total write cost in ns: the sum of every category.
    pub fn total_ns(&self) -> u64 {
        self.by_kind.iter().map(|c| c.ns).sum()
    }
    /// Host write cost (SLC + QLC host programs), ns.
    pub fn host_ns(&self) -> u64 {
        self.get(CostKind::HostToSlc).ns + self.get(CostKind::HostToQlc).ns
    }
    /// Reclaim cost (migration + GC of both kinds), ns.
    pub fn reclaim_ns(&self) -> u64 {
        self.total_ns() - self.host_ns()
    }
    /// Flash page programs of every cause.
    pub fn page_programs(&self) -> u64 {
        self.by_kind.iter().map(OpCost::page_programs).sum()
    }
    /// The cost accumulated since `earlier` (a snapshot of this same breakdown).
    pub fn since(&self, earlier: &CostBreakdown) -> CostBreakdown {
        let mut d = CostBreakdown::default();
        for (i, c) in d.by_kind.iter_mut().enumerate() {
            *c = self.by_kind[i].minus(&earlier.by_kind[i]);
        }
        d
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    #[test]
    fn totals_are_sums_and_since_subtracts() {
        let mut a = CostBreakdown::default();
        a.get_mut(CostKind::HostToSlc).ns = 10;
        a.get_mut(CostKind::QlcToQlc).ns = 5;
        a.get_mut(CostKind::QlcToQlc).qlc_page_programs = 2;
        let before = a;
        a.get_mut(CostKind::SlcToQlc).ns = 7;
        assert_eq!(a.total_ns(), 22);
        assert_eq!(a.host_ns(), 10);
        assert_eq!(a.reclaim_ns(), 12);
        assert_eq!(a.page_programs(), 2);
        let d = a.since(&before);
        assert_eq!(d.total_ns(), 7);
        assert_eq!(d.get(CostKind::SlcToQlc).ns, 7);
    }
}
