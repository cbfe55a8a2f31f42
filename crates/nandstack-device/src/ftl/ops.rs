//! The FTL's log of physical operations. With recording on, every flash read, program, erase and host
//! data transfer the FTL performs is appended here in order; the device's timing model drains the log
//! after each request and places the operations on die and channel timelines. The FTL itself never
//! knows about time.

/// What the flash array does.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub enum OpKind {
    /// Page read (array → page register); data leaves over the channel unless it is a copyback.
    Read,
    /// Page program (page register → array).
    Program,
    /// Block erase.
    Erase,
    /// One 4 KiB unit of host data moved over the channel into the die's page register.
    Transfer,
}

/// Why it does it.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub enum OpCause {
    Host,
    Gc,
    WearLeveling,
    ReadModifyWrite,
    Padding,
    Translation,
    BufferFlush,
}

#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub struct FlashOp {
    pub kind: OpKind,
    pub cause: OpCause,
    pub plane: u32,
    /// 4 KiB units involved: for a read, how many leave over the channel; otherwise 1.
    pub units: u32,
    /// Global block id ([`FlashOp::NO_BLOCK`] for translation pages, which take no data block).
    pub block: u32,
    /// Page index in the block (its page type under per-level latencies); 0 for erases.
    pub page: u32,
}

impl FlashOp {
    /// `block` of an operation on a translation page.
    pub const NO_BLOCK: u32 = u32::MAX;
}
