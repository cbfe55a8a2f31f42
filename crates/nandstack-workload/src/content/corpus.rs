//! A Silesia corpus file, as memtouch maps it: the whole file, read from `silesia_NAME.zip`.

use std::io::Read;
use std::path::{Path, PathBuf};

use nandstack_core::{Error, Result};

use super::PAGE_BYTES;

/// Largest corpus file accepted (Silesia's biggest, `mozilla`, is 51 MB).
const MAX_CORPUS_BYTES: u64 = 256 << 20;

/// One corpus file held in memory.
#[derive(Clone)]
pub struct Corpus {
    name: String,
    bytes: Vec<u8>,
}

impl std::fmt::Debug for Corpus {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Corpus")
            .field("name", &self.name)
            .field("len_bytes", &self.bytes.len())
            .finish()
    }
}

impl Corpus {
    /// The zip that holds corpus file `name` in `dir` (`dir/silesia_NAME.zip`).
    pub fn zip_path(dir: &Path, name: &str) -> PathBuf {
        dir.join(format!("silesia_{name}.zip"))
    }

    /// The size of corpus file `name` in `dir/silesia_NAME.zip` as [`Corpus::load`] would hold it, read
    /// from the zip's directory without inflating; `None` if the zip or its member cannot be read.
    pub fn member_bytes(dir: &Path, name: &str) -> Option<u64> {
        let file = std::fs::File::open(Self::zip_path(dir, name)).ok()?;
        let mut zip = zip::ZipArchive::new(std::io::BufReader::new(file)).ok()?;
        let size = zip.by_name(name).ok()?.size();
        Some(size)
    }

    /// Read corpus file `name` from `dir/silesia_NAME.zip` (its member `NAME`; the zip reader checks the
    /// member's CRC-32). A missing zip is an [`Error::Io`] naming the file it looked for.
    pub fn load(dir: &Path, name: &str) -> Result<Corpus> {
        let path = Self::zip_path(dir, name);
        let io = |source: std::io::Error| Error::Io {
            path: path.display().to_string(),
            source,
        };
        let file = std::fs::File::open(&path).map_err(|e| {
            io(std::io::Error::new(
                e.kind(),
                format!("corpus `{name}` needs this zip (the Silesia files are in shared/traces/compress): {e}"),
            ))
        })?;
        let bad = |msg: String| Error::config(format!("content corpus `{name}`"), msg);
        let mut zip = zip::ZipArchive::new(std::io::BufReader::new(file))
            .map_err(|e| bad(format!("{} is not a readable zip: {e}", path.display())))?;
        let mut member = zip
            .by_name(name)
            .map_err(|e| bad(format!("{} has no member `{name}`: {e}", path.display())))?;
        if member.size() > MAX_CORPUS_BYTES {
            return Err(bad(format!(
                "member is {} bytes, more than the {MAX_CORPUS_BYTES} accepted",
                member.size()
            )));
        }
        let mut bytes = Vec::with_capacity(member.size() as usize);
        member.read_to_end(&mut bytes).map_err(io)?;
        Self::from_bytes(name, bytes)
    }

    /// A corpus from bytes already in memory (at least one page, as memtouch requires).
    pub fn from_bytes(name: &str, bytes: Vec<u8>) -> Result<Corpus> {
        if bytes.len() < PAGE_BYTES {
            return Err(Error::config(
                format!("content corpus `{name}`"),
                format!(
                    "{} bytes: memtouch needs at least one page ({PAGE_BYTES})",
                    bytes.len()
                ),
            ));
        }
        Ok(Corpus {
            name: name.to_string(),
            bytes,
        })
    }

    pub fn name(&self) -> &str {
        &self.name
    }

    pub fn bytes(&self) -> &[u8] {
        &self.bytes
    }

    /// Whole pages in the file (`size / 4096`, rounded down): memtouch's `chunks`.
    pub fn chunks(&self) -> u64 {
        (self.bytes.len() / PAGE_BYTES) as u64
    }

    /// The bytes of chunk `c` (`c < chunks()`).
    pub fn chunk(&self, c: u64) -> &[u8] {
        let start = (c % self.chunks()) as usize * PAGE_BYTES;
        &self.bytes[start..start + PAGE_BYTES]
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn silesia_dir() -> Option<PathBuf> {
        let d = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../../shared/traces/compress");
        if d.is_dir() {
            Some(d)
        } else {
            eprintln!("SKIPPED: {} not found", d.display());
            None
        }
    }

    #[test]
    fn reads_silesia_xml_whole() {
        let Some(dir) = silesia_dir() else { return };
        let c = Corpus::load(&dir, "xml").unwrap();
        // `unzip -v silesia_xml.zip`: 5,345,280 bytes.
        assert_eq!(c.bytes().len(), 5_345_280);
        assert_eq!(c.chunks(), 1305);
        // A tar of XML files: it opens with the first member's name.
        assert!(c.bytes().starts_with(b"elts.xml\0"));
    }

    #[test]
    fn missing_corpus_is_a_named_io_error() {
        let dir = std::env::temp_dir();
        let e = Corpus::load(&dir, "no_such_corpus_file").unwrap_err();
        let text = e.to_string();
        assert!(matches!(e, Error::Io { .. }), "{text}");
        assert!(text.contains("silesia_no_such_corpus_file.zip"), "{text}");
        assert!(text.contains("corpus `no_such_corpus_file`"), "{text}");
    }

    #[test]
    fn short_corpus_is_refused() {
        assert!(Corpus::from_bytes("tiny", vec![1; 4095]).is_err());
        let c = Corpus::from_bytes("two", vec![7; 2 * 4096 + 5]).unwrap();
        assert_eq!(c.chunks(), 2);
        assert_eq!(c.chunk(3).len(), 4096);
    }
}
