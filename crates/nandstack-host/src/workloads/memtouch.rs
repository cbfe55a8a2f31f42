//! `tools/memtouch.c`, reference for reference, with the bytes it leaves in its pages.
//!
//! The program seeds a 64-bit xorshift (13, 7, 17) with `SEED | 1`, maps PAGES anonymous pages and
//! fills them in page order with its CONTENT, then performs OPS accesses. The draws — the fill's (64 per
//! page for `sparse`, 512 for `random`, one decision per page for `mix`/`zero`, none for `corpus`) and
//! each access's (page by PATTERN, word `% 512`, write decision, value) — are
//! `nandstack_workload::content::MemtouchProgram`'s, so the page sequence is the program's for every
//! content. The fill emits one write reference per 64-bit store: 64 per `sparse` page, 512 per
//! `random` or corpus page (the whole page written), 1 per zero-filled page (memtouch stores `w[0] = 0`).
//!
//! [`build_contents`] builds the same program a second time as the process's page image, which the host
//! advances as references execute (see [`crate::contents`]).

use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};
use std::time::SystemTime;

use nandstack_core::{Error, Result};
use nandstack_workload::content::{
    AccessPattern, ContentSpec, Corpus, MemtouchParams, MemtouchProgram, PageOrigin,
};

use super::config::{MemtouchConfig, MemtouchPattern};
use super::{layout, MapKind, MemRef, RefStream, Workload};
use crate::contents::MemtouchContents;

/// Write references the fill emits for a page of this origin (one per 64-bit store).
pub fn fill_refs(origin: PageOrigin) -> u32 {
    match origin {
        PageOrigin::Sparse { .. } => 64,
        PageOrigin::Random { .. } | PageOrigin::Corpus { .. } => 512,
        PageOrigin::Zero => 1,
    }
}

/// Environment variable naming the folder of the Silesia zips.
pub const CORPUS_DIR_ENV: &str = "NANDSTACK_CORPUS_DIR";

/// Environment variable naming the folder of every data set (docs/data.md); the corpus is its `compress/`.
pub const DATA_ENV: &str = "NANDSTACK_DATA";

/// Where `silesia_NAME.zip` is looked for: the config's folder (a workload's `corpus_dir`, else
/// `run.data_dir`/compress), else `$NANDSTACK_CORPUS_DIR`, else `$NANDSTACK_DATA/compress`, else
/// `../shared/traces/compress` from the working directory, else beside the source checkout.
fn corpus_dirs(configured: Option<&str>) -> Vec<PathBuf> {
    if let Some(d) = configured {
        return vec![PathBuf::from(d)];
    }
    let set = |name: &str| std::env::var_os(name).filter(|d| !d.is_empty());
    if let Some(d) = set(CORPUS_DIR_ENV) {
        return vec![PathBuf::from(d)];
    }
    if let Some(d) = set(DATA_ENV) {
        return vec![PathBuf::from(d).join("compress")];
    }
    vec![
        PathBuf::from("../shared/traces/compress"),
        Path::new(env!("CARGO_MANIFEST_DIR")).join("../../../shared/traces/compress"),
    ]
}

/// Bytes corpus `name` takes in memory once loaded (the first of [`corpus_dirs`] that has its zip), or 0
/// where none has it (the run will then fail on the missing file, before it allocates much).
pub fn corpus_bytes(configured: Option<&str>, name: &str) -> u64 {
    corpus_dir_of(&corpus_dirs(configured), name)
        .and_then(|d| Corpus::member_bytes(d, name))
        .unwrap_or(0)
}

/// The first of `dirs` that holds corpus `name`'s zip.
fn corpus_dir_of<'a>(dirs: &'a [PathBuf], name: &str) -> Option<&'a PathBuf> {
    dirs.iter().find(|d| Corpus::zip_path(d, name).is_file())
}

/// Bytes of the corpus a memtouch program maps (its `content`), as loaded; 0 without one.
pub fn program_corpus_bytes(c: &MemtouchConfig) -> u64 {
    match params(c)
        .ok()
        .and_then(|p| p.content.corpus_name().map(str::to_owned))
    {
        Some(name) => corpus_bytes(c.corpus_dir.as_deref(), &name),
        None => 0,
    }
}

/// Load corpus `name`, looking in [`corpus_dirs`]; a missing file names every place looked. Shared
/// with earlier runs of this process when the zip is unchanged ([`cached_corpus`]).
pub(crate) fn load_corpus(configured: Option<&str>, name: &str) -> Result<Arc<Corpus>> {
    let dirs = corpus_dirs(configured);
    if let Some(d) = corpus_dir_of(&dirs, name) {
        return cached_corpus(d, name);
    }
    let tried: Vec<String> = dirs
        .iter()
        .map(|d| Corpus::zip_path(d, name).display().to_string())
        .collect();
    Err(Error::config(
        "workload.content",
        format!(
            "corpus `{name}`: silesia_{name}.zip not found (looked at {}); the Silesia files are in \
             shared/traces/compress — set ${DATA_ENV} (or `--data DIR`, or `run.data_dir`) to the folder \
             holding compress/, or the workload's `corpus_dir`; `nandstack data` says how to get it",
            tried.join(", ")
        ),
    ))
}

/// A zip as last seen: its path, length and modification time. A file replaced on disk gets a new key.
type ZipKey = (PathBuf, u64, Option<SystemTime>);

/// Corpora inflated by this process, the most recently used last, at most [`KEPT_CORPORA`]. A sweep's
/// worker runs task after task on the same few Silesia files, and inflating them was a quarter of a
/// short launch-cycle run; the bytes are the zip's either way (the zip reader checks its CRC-32 on
/// every load). Looked up by key, never iterated for a result.
static LOADED: Mutex<Vec<(ZipKey, Arc<Corpus>)>> = Mutex::new(Vec::new());

/// Corpora kept between runs (Silesia has 12 files; the launch cycle reads 7, about 80 MB together).
const KEPT_CORPORA: usize = 8;

/// Corpus `name` from `dir`: the one already inflated when its zip is unchanged, else [`Corpus::load`].
fn cached_corpus(dir: &Path, name: &str) -> Result<Arc<Corpus>> {
    let path = Corpus::zip_path(dir, name);
    let Ok(meta) = std::fs::metadata(&path) else {
        return Corpus::load(dir, name).map(Arc::new); // the load names the error
    };
    let key: ZipKey = (path, meta.len(), meta.modified().ok());
    let mut loaded = LOADED
        .lock()
        .unwrap_or_else(|poisoned| poisoned.into_inner());
    if let Some(i) = loaded.iter().position(|(k, _)| *k == key) {
        let entry = loaded.remove(i);
        let corpus = Arc::clone(&entry.1);
        loaded.push(entry);
        return Ok(corpus);
    }
    drop(loaded); // inflating takes a while; other threads may load other files meanwhile
    let corpus = Arc::new(Corpus::load(dir, name)?);
    let mut loaded = LOADED
        .lock()
        .unwrap_or_else(|poisoned| poisoned.into_inner());
    loaded.retain(|(k, _)| *k != key);
    if loaded.len() >= KEPT_CORPORA {
        loaded.remove(0);
    }
    loaded.push((key, Arc::clone(&corpus)));
    Ok(corpus)
}

fn params(c: &MemtouchConfig) -> Result<MemtouchParams> {
    let content = match &c.content {
        Some(text) => ContentSpec::parse(text)?,
        None => ContentSpec::Sparse,
    };
    Ok(MemtouchParams {
        pages: c.pages,
        ops: c.ops,
        pattern: match c.pattern {
            MemtouchPattern::Uniform => AccessPattern::Uniform,
            MemtouchPattern::Normal => AccessPattern::Normal,
            MemtouchPattern::Seq => AccessPattern::Seq,
            MemtouchPattern::Hot => AccessPattern::Hot,
        },
        write_pct: c.write_pct,
        seed: c.seed,
        content,
    })
}

/// The program (fill done) and its corpus, shared by the reference stream and the page image.
fn program(c: &MemtouchConfig) -> Result<(MemtouchProgram, Option<Arc<Corpus>>)> {
    let p = params(c)?;
    let corpus = match p.content.corpus_name() {
        Some(name) => Some(load_corpus(c.corpus_dir.as_deref(), name)?),
        None => None,
    };
    Ok((MemtouchProgram::with_corpus(p, corpus.clone())?, corpus))
}

/// memtouch's reference stream.
pub struct Memtouch {
    prog: MemtouchProgram,
    pages: u64,
    /// Fill position: page and write references left in it.
    fill_page: u64,
    fill_left: u32,
    fill_total: u64,
}

impl Memtouch {
    fn new(prog: MemtouchProgram) -> Memtouch {
        let pages = prog.params().pages;
        let fill_total = (0..pages)
            .map(|p| fill_refs(prog.image().origin(p)) as u64)
            .sum();
        let fill_left = fill_refs(prog.image().origin(0));
        Memtouch {
            prog,
            pages,
            fill_page: 0,
            fill_left,
            fill_total,
        }
    }
}

impl RefStream for Memtouch {
    fn fill(&mut self, out: &mut Vec<MemRef>, max: usize) -> Result<bool> {
        let mut n = 0;
        while self.fill_page < self.pages && n < max {
            out.push(MemRef::write(self.fill_page as u32));
            n += 1;
            self.fill_left -= 1;
            if self.fill_left == 0 {
                self.fill_page += 1;
                if self.fill_page < self.pages {
                    self.fill_left = fill_refs(self.prog.image().origin(self.fill_page));
                }
            }
        }
        while self.fill_page >= self.pages && n < max {
            let Some(a) = self.prog.next_access() else {
                break;
            };
            out.push(MemRef::access(a.page as u32, a.written.is_some()));
            n += 1;
        }
        Ok(self.fill_page < self.pages || self.prog.ops_done() < self.prog.params().ops)
    }

    fn len_hint(&self) -> Option<u64> {
        Some(self.fill_total + self.prog.params().ops)
    }
}

pub fn build(c: &MemtouchConfig) -> Result<Workload> {
    Ok(build_contents(c)?.0)
}

/// The workload and its page image (one corpus read shared by both).
pub fn build_contents(c: &MemtouchConfig) -> Result<(Workload, MemtouchContents)> {
    let (prog, corpus) = program(c)?;
    let image = MemtouchProgram::with_corpus(prog.params().clone(), corpus)?;
    let stream = Memtouch::new(prog);
    let fill_total = stream.fill_total;
    let (pages, mappings) = layout(&[(c.pages as u32, MapKind::Anon)]);
    let content = match &c.content {
        Some(t) => format!(" {t}"),
        None => String::new(),
    };
    let w = Workload {
        pages,
        mappings,
        files: Vec::new(),
        threads: vec![Box::new(stream)],
        kv: false,
        touches_all: true,
        describe: format!(
            "memtouch {} {} {:?} {} {}",
            c.pages, c.ops, c.pattern, c.write_pct, c.seed
        )
        .to_lowercase()
            + &content,
    };
    Ok((w, MemtouchContents::new(image, fill_total)))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::contents::PageContents;

    /// The process-wide corpus cache: a second load of an unchanged zip is the same corpus, its bytes
    /// those of a fresh load; a zip replaced on disk (another length or time) is read again.
    #[test]
    fn an_unchanged_zip_is_inflated_once_and_a_replaced_one_again() {
        let shared = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../../shared/traces/compress");
        let (xml, reymont) = (
            Corpus::zip_path(&shared, "xml"),
            Corpus::zip_path(&shared, "reymont"),
        );
        if !xml.is_file() || !reymont.is_file() {
            eprintln!("SKIPPED: {} not found", shared.display());
            return;
        }
        let dir =
            std::env::temp_dir().join(format!("nandstack-corpus-cache-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        // A corpus named `xml` in its own folder, first holding xml's zip.
        let zip = Corpus::zip_path(&dir, "xml");
        std::fs::copy(&xml, &zip).unwrap();
        let d = dir.to_str().unwrap();
        let a = load_corpus(Some(d), "xml").unwrap();
        let b = load_corpus(Some(d), "xml").unwrap();
        assert!(
            Arc::ptr_eq(&a, &b),
            "an unchanged zip is not inflated again"
        );
        assert_eq!(a.bytes(), Corpus::load(&dir, "xml").unwrap().bytes());
        // Replaced by another zip (reymont's, whose member is not `xml`): read again, so the load now
        // fails, naming the member; the cached bytes are not served for a changed file.
        std::fs::copy(&reymont, &zip).unwrap();
        let e = load_corpus(Some(d), "xml").unwrap_err().to_string();
        assert!(e.contains("no member `xml`"), "{e}");
        std::fs::copy(&xml, &zip).unwrap();
        let c = load_corpus(Some(d), "xml").unwrap();
        assert_eq!(c.bytes(), a.bytes());
        std::fs::remove_dir_all(&dir).unwrap();
    }

    fn cfg(pattern: MemtouchPattern, pages: u64, ops: u64, wpct: u32) -> MemtouchConfig {
        MemtouchConfig {
            pages,
            ops,
            pattern,
            write_pct: wpct,
            seed: 11,
            content: None,
            corpus_dir: None,
        }
    }

    fn refs(c: &MemtouchConfig) -> Vec<MemRef> {
        let (prog, _) = program(c).unwrap();
        let mut m = Memtouch::new(prog);
        let mut v = Vec::new();
        while m.fill(&mut v, 1000).unwrap() {}
        v
    }

    #[test]
    fn fill_writes_every_page_64_times_in_order_then_ops() {
        let v = refs(&cfg(MemtouchPattern::Seq, 10, 25, 100));
        assert_eq!(v.len(), 640 + 25);
        for (i, r) in v[..640].iter().enumerate() {
            assert_eq!(*r, MemRef::write((i / 64) as u32));
        }
        let pages: Vec<u32> = v[640..].iter().map(|r| r.page).collect();
        assert_eq!(pages, (0..25).map(|i| i % 10).collect::<Vec<_>>());
        assert!(v[640..].iter().all(|r| r.op == super::super::OP_WRITE));
    }

    #[test]
    fn random_pages_take_512_stores_and_shift_the_access_draws() {
        // `random` draws 512 words per page during the fill (sparse: 64), so the accesses that follow
        // start from another generator state: a different uniform page sequence.
        let mut c = cfg(MemtouchPattern::Uniform, 20, 200, 50);
        let sparse = refs(&c);
        c.content = Some("random".into());
        let random = refs(&c);
        assert_eq!(random.len(), 20 * 512 + 200);
        assert_eq!(sparse.len(), 20 * 64 + 200);
        let a: Vec<u32> = sparse[1280..].iter().map(|r| r.page).collect();
        let b: Vec<u32> = random[10240..].iter().map(|r| r.page).collect();
        assert_ne!(a, b);
        assert!(b.iter().all(|&p| p < 20));
    }

    #[test]
    fn patterns_stay_in_range_and_hot_is_skewed() {
        let pages = 1000;
        for p in [
            MemtouchPattern::Uniform,
            MemtouchPattern::Normal,
            MemtouchPattern::Hot,
        ] {
            let v = refs(&cfg(p, pages, 20_000, 50));
            assert!(v[64_000..].iter().all(|r| (r.page as u64) < pages));
        }
        let v = refs(&cfg(MemtouchPattern::Hot, pages, 20_000, 50));
        let hot = v[64_000..].iter().filter(|r| r.page < 200).count();
        assert!((15_000..17_000).contains(&hot), "{hot}");
        let v = refs(&cfg(MemtouchPattern::Normal, pages, 20_000, 50));
        let mid = v[64_000..]
            .iter()
            .filter(|r| (r.page as i64 - 500).abs() <= 83)
            .count();
        // ±1σ holds ~68%.
        assert!((12_800..14_400).contains(&mid), "{mid}");
        let writes = v[64_000..].iter().filter(|r| r.op == 1).count();
        assert!((9_500..10_500).contains(&writes), "{writes}");
    }

    #[test]
    fn the_image_follows_the_executed_references() {
        // After the fill and k accesses, a page's bytes carry exactly the writes among those k.
        let c = cfg(MemtouchPattern::Uniform, 8, 400, 100);
        let (w, mut img) = build_contents(&c).unwrap();
        assert_eq!(w.pages, 512);
        let (mut prog, _) = program(&c).unwrap();
        let fill = 8 * 64;
        let mut before = [0u8; 4096];
        let mut after = [0u8; 4096];
        img.advance(fill);
        img.page_bytes(3, &mut before);
        // Replay independently: find the first access that writes page 3.
        let mut k = 0;
        let first = loop {
            let a = prog.next_access().unwrap();
            k += 1;
            if a.page == 3 {
                break a;
            }
        };
        img.advance(fill + k - 1);
        img.page_bytes(3, &mut after);
        assert_eq!(before, after, "the write has not executed yet");
        img.advance(fill + k);
        img.page_bytes(3, &mut after);
        let w = first.word as usize * 8;
        assert_eq!(
            &after[w..w + 8],
            &first.written.unwrap().to_le_bytes(),
            "word {} holds the value written",
            first.word
        );
        assert_eq!(&after[..w], &before[..w]);
        assert_eq!(img.describe(), "memtouch sparse");
    }

    #[test]
    fn a_missing_corpus_names_where_it_looked() {
        let mut c = cfg(MemtouchPattern::Seq, 8, 1, 0);
        c.content = Some("corpus:no_such_file".into());
        c.corpus_dir = Some("/nonexistent/corpora".into());
        let e = build(&c).err().unwrap().to_string();
        assert!(
            e.contains("/nonexistent/corpora/silesia_no_such_file.zip"),
            "{e}"
        );
        assert!(e.contains("corpus_dir"), "{e}");
    }
}
