//! zswap's admission: every page that passes the pool-limit check is compressed and stored (pages that
//! do not compress are stored as they are, `zswap_compress`).

use super::{Admission, AdmitQuery, Verdict};
use crate::contents::PageIn;

#[derive(Debug, Default, Clone, Copy)]
pub struct AdmitAll;

impl Admission for AdmitAll {
    fn name(&self) -> &'static str {
        "all"
    }

    fn admit(&mut self, _page: &[u8; 4096], _memcg: u16) -> bool {
        true
    }

    /// `admit` without building the page.
    fn decide(&mut self, _page: &mut PageIn, _q: &AdmitQuery) -> Verdict {
        Verdict {
            admit: true,
            sampled_bytes: 0,
        }
    }
}
