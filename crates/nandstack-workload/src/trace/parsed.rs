//! The verdict a text format's line parser gives on one line: its own module, so the parsers and the
//! line loop that calls them (`text.rs`) depend on it and not on each other.

use super::Raw;

/// What a parser made of one non-blank, non-comment line.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub(crate) enum Parsed {
    Record(Raw),
    /// A data line that deliberately yields no request (counted in `skipped`).
    Skip,
    /// A line that is not data (header, summary): ignored silently.
    Ignore,
}
