//! Page contents: the bytes a memory-hungry program leaves in each of its pages, so that a compressed-swap
//! model compresses what the real kernel compressed.
//!
//! * [`ContentSpec`]: memtouch's `CONTENT` argument (`sparse`, `random`, `corpus:NAME`, `mix:PCT:NAME`,
//!   `zero:PCT:NAME`), parsed the way `tools/memtouch.c` parses it;
//! * [`Corpus`]: a Silesia file read from `silesia_NAME.zip` (the files memtouch maps);
//! * [`MemtouchProgram`]: memtouch replayed draw for draw — its fill phase and every access after it, writes
//!   included — over a [`PageImage`] that rebuilds the exact 4096 bytes of any page on demand.
//!
//! Nothing here allocates the whole image: a page is kept as where its bytes come from (a saved generator
//! state, a corpus chunk, or zeros) plus the words written into it since.

mod corpus;
mod memtouch;
#[cfg(test)]
mod memtouch_c_check;

pub use corpus::Corpus;
pub use memtouch::{
    Access, AccessPattern, MemtouchParams, MemtouchProgram, MemtouchRng, PageImage, PageOrigin,
    INDEX_AFTER,
};

use nandstack_core::{Error, Result};

/// Bytes in a page (x86-64, the captures' machine).
pub const PAGE_BYTES: usize = 4096;
/// 64-bit words in a page: memtouch fills and writes whole little-endian words.
pub const WORDS_PER_PAGE: usize = PAGE_BYTES / 8;

/// What memtouch's fill phase writes into each page (its optional sixth argument).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ContentSpec {
    /// Every 8th 64-bit word random, the rest zero (64 draws per page). memtouch's default.
    Sparse,
    /// Every word random (512 draws per page): incompressible.
    Random,
    /// Page `p` holds chunk `p mod (size / 4096)` of the corpus file; no draws.
    Corpus { name: String },
    /// One draw per page; `draw % 100 < pct` makes the page random (512 more draws), else the corpus chunk.
    /// memtouch skips the draw when `pct` is 0.
    Mix { pct: u32, name: String },
    /// One draw per page; `draw % 100 < pct` leaves the page zero-filled (but written), else the chunk.
    Zero { pct: u32, name: String },
}

impl ContentSpec {
    /// Parse memtouch's CONTENT syntax. Unlike `atoi`, a percentage must be a plain number in 0..=100
    /// (memtouch accepts anything; every capture uses such numbers).
    pub fn parse(text: &str) -> Result<ContentSpec> {
        let bad = |msg: &str| Error::config("content", format!("`{text}`: {msg}"));
        let pct_name = |rest: &str| -> Result<(u32, String)> {
            let (pct, name) = rest
                .split_once(':')
                .ok_or_else(|| bad("expected PCT:NAME"))?;
            let pct: u32 = pct.parse().map_err(|_| bad("PCT is not a whole number"))?;
            if pct > 100 {
                return Err(bad("PCT above 100"));
            }
            Ok((pct, check_name(name).map_err(&bad)?))
        };
        if text == "sparse" {
            Ok(ContentSpec::Sparse)
        } else if text == "random" {
            Ok(ContentSpec::Random)
        } else if let Some(name) = text.strip_prefix("corpus:") {
            Ok(ContentSpec::Corpus {
                name: check_name(name).map_err(&bad)?,
            })
        } else if let Some(rest) = text.strip_prefix("mix:") {
            let (pct, name) = pct_name(rest)?;
            Ok(ContentSpec::Mix { pct, name })
        } else if let Some(rest) = text.strip_prefix("zero:") {
            let (pct, name) = pct_name(rest)?;
            Ok(ContentSpec::Zero { pct, name })
        } else {
            Err(bad(
                "unknown CONTENT (sparse | random | corpus:NAME | mix:PCT:NAME | zero:PCT:NAME)",
            ))
        }
    }

    /// The corpus file this content reads, if any.
    pub fn corpus_name(&self) -> Option<&str> {
        match self {
            ContentSpec::Sparse | ContentSpec::Random => None,
            ContentSpec::Corpus { name }
            | ContentSpec::Mix { name, .. }
            | ContentSpec::Zero { name, .. } => Some(name),
        }
    }
}

impl std::fmt::Display for ContentSpec {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            ContentSpec::Sparse => write!(f, "sparse"),
            ContentSpec::Random => write!(f, "random"),
            ContentSpec::Corpus { name } => write!(f, "corpus:{name}"),
            ContentSpec::Mix { pct, name } => write!(f, "mix:{pct}:{name}"),
            ContentSpec::Zero { pct, name } => write!(f, "zero:{pct}:{name}"),
        }
    }
}

fn check_name(name: &str) -> std::result::Result<String, &'static str> {
    if name.is_empty() {
        return Err("empty corpus NAME");
    }
    if !name
        .chars()
        .all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '-' || c == '.')
    {
        return Err(
            "corpus NAME must be a Silesia file name such as `xml` (letters, digits, _ - .)",
        );
    }
    Ok(name.to_string())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_every_mode_and_prints_it_back() {
        for text in [
            "sparse",
            "random",
            "corpus:xml",
            "mix:50:osdb",
            "zero:40:dickens",
            "mix:0:xml",
        ] {
            let spec = ContentSpec::parse(text).unwrap();
            assert_eq!(spec.to_string(), text);
        }
        assert_eq!(
            ContentSpec::parse("mix:50:osdb").unwrap(),
            ContentSpec::Mix {
                pct: 50,
                name: "osdb".into()
            }
        );
        assert_eq!(ContentSpec::parse("random").unwrap().corpus_name(), None);
        assert_eq!(
            ContentSpec::parse("zero:4:nci").unwrap().corpus_name(),
            Some("nci")
        );
    }

    #[test]
    fn rejects_bad_content_with_a_config_error() {
        for text in [
            "",
            "dense",
            "corpus:",
            "mix:50",
            "mix:x:xml",
            "mix:101:xml",
            "zero:-1:xml",
            "corpus:../x",
        ] {
            let e = ContentSpec::parse(text).unwrap_err();
            assert!(matches!(e, Error::Config { .. }), "{text}: {e}");
        }
    }
}
