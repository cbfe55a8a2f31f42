//! `tools/memtouch.c` replayed draw for draw, with the bytes it leaves in every page.
//!
//! The program's generator is a 64-bit xorshift with shifts 13, 7, 17, seeded with `SEED | 1`. The fill
//! phase visits pages in order and draws, per page: 64 words for `sparse` (words 0, 8, …, 504; the rest
//! stay zero), 512 for `random`; for `mix` one decision draw (`% 100 < PCT`, skipped when PCT is 0) and, if
//! it says random, 512 words; for `zero` one decision draw that leaves the page zero-filled; the corpus
//! takes no draw (page `p` copies chunk `p mod chunks`). Each access then draws its page (the pattern),
//! a word (`% 512`), a write decision (`% 100 < WRITE_PCT`) and, for a write, the value stored — which is
//! what changes a page's bytes after the fill.

use std::sync::{Arc, OnceLock};

use nandstack_core::{Error, Result};

use super::{ContentSpec, Corpus, PAGE_BYTES, WORDS_PER_PAGE};

/// Most pages a replay accepts (1 TiB of 4 KiB pages).
const MAX_PAGES: u64 = 1 << 28;

/// memtouch's generator: xorshift64 (13, 7, 17).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct MemtouchRng {
    s: u64,
}

impl MemtouchRng {
    /// Seeded as memtouch does: `SEED | 1` (a zero state would stay zero).
    pub fn seeded(seed: u64) -> MemtouchRng {
        MemtouchRng { s: seed | 1 }
    }

    /// Resume from a saved state (never zero for states this type produced).
    pub fn from_state(s: u64) -> MemtouchRng {
        MemtouchRng { s }
    }

    pub fn state(&self) -> u64 {
        self.s
    }

    /// `rnd()`.
    #[inline]
    pub fn next_u64(&mut self) -> u64 {
        self.s ^= self.s << 13;
        self.s ^= self.s >> 7;
        self.s ^= self.s << 17;
        self.s
    }

    /// `urand()`: the top 53 bits as a double in [0, 1).
    #[inline]
    pub fn next_f64(&mut self) -> f64 {
        (self.next_u64() >> 11) as f64 * (1.0 / 9007199254740992.0)
    }

    /// `(int)(rnd() % 100) < pct`.
    #[inline]
    fn chance(&mut self, pct: u32) -> bool {
        self.next_u64() % 100 < pct as u64
    }

    /// The state after `jump.steps()` draws, without drawing: xorshift is linear over GF(2), so the
    /// state after n steps is a fixed 64x64 bit matrix times the state, applied a byte at a time from
    /// tables (eight lookups instead of 64 or 512 draws; the fill skips a page's words this way).
    #[inline]
    fn skip(&mut self, jump: Jump) {
        let tables = jump.tables();
        let mut out = 0;
        for (k, table) in tables.iter().enumerate() {
            out ^= table[(self.s >> (8 * k)) as u8 as usize];
        }
        self.s = out;
    }
}

/// The draws a fill skips per page: a sparse page's 64 words, a random page's 512.
#[derive(Debug, Clone, Copy)]
enum Jump {
    Sparse,
    Random,
}

type JumpTables = [[u64; 256]; 8];

impl Jump {
    fn steps(self) -> usize {
        match self {
            Jump::Sparse => WORDS_PER_PAGE / 8,
            Jump::Random => WORDS_PER_PAGE,
        }
    }

    /// tables[k][b] = the state after `steps` draws from the state b << 8k (by linearity, the state
    /// after `steps` draws from s is the XOR over its bytes).
    fn tables(self) -> &'static JumpTables {
        static SPARSE: OnceLock<Box<JumpTables>> = OnceLock::new();
        static RANDOM: OnceLock<Box<JumpTables>> = OnceLock::new();
        let cell = match self {
            Jump::Sparse => &SPARSE,
            Jump::Random => &RANDOM,
        };
        cell.get_or_init(|| {
            let mut t = Box::new([[0u64; 256]; 8]);
            for (k, row) in t.iter_mut().enumerate() {
                for (b, entry) in row.iter_mut().enumerate() {
                    let mut r = MemtouchRng::from_state((b as u64) << (8 * k));
                    for _ in 0..self.steps() {
                        r.next_u64();
                    }
                    *entry = r.s;
                }
            }
            t
        })
    }
}

/// memtouch's PATTERN argument.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum AccessPattern {
    /// `rnd() % pages`.
    Uniform,
    /// Box–Muller normal, centre `pages/2`, sigma `pages/12`, clamped to the pages (like pmbench).
    Normal,
    /// A cursor over the pages in order, wrapping.
    Seq,
    /// 80% of the accesses on the first 20% of the pages.
    Hot,
}

impl AccessPattern {
    pub fn parse(text: &str) -> Result<AccessPattern> {
        match text {
            "uniform" => Ok(AccessPattern::Uniform),
            "normal" => Ok(AccessPattern::Normal),
            "seq" => Ok(AccessPattern::Seq),
            "hot" => Ok(AccessPattern::Hot),
            _ => Err(Error::config(
                "pattern",
                format!("`{text}`: expected uniform | normal | seq | hot"),
            )),
        }
    }
}

/// memtouch's arguments: `memtouch PAGES OPS PATTERN WRITE_PCT SEED [CONTENT]`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct MemtouchParams {
    pub pages: u64,
    pub ops: u64,
    pub pattern: AccessPattern,
    pub write_pct: u32,
    pub seed: u64,
    pub content: ContentSpec,
}

impl MemtouchParams {
    /// From a capture's `command` (`["memtouch", "32768", "200000", "uniform", "50", "71",
    /// "corpus:dickens"]`; the program name may carry a path).
    pub fn from_command<S: AsRef<str>>(command: &[S]) -> Result<MemtouchParams> {
        let args: Vec<&str> = command.iter().map(|s| s.as_ref()).collect();
        let bad = |msg: String| Error::config("memtouch command", msg);
        if !(args.len() == 6 || args.len() == 7) || !args[0].ends_with("memtouch") {
            return Err(bad(format!(
                "{args:?}: expected memtouch PAGES OPS PATTERN WRITE_PCT SEED [CONTENT]"
            )));
        }
        let num = |i: usize, what: &str| -> Result<u64> {
            args[i]
                .parse::<u64>()
                .map_err(|_| bad(format!("{what} `{}` is not a whole number", args[i])))
        };
        let params = MemtouchParams {
            pages: num(1, "PAGES")?,
            ops: num(2, "OPS")?,
            pattern: AccessPattern::parse(args[3])?,
            write_pct: num(4, "WRITE_PCT")?.min(101) as u32,
            seed: num(5, "SEED")?,
            content: match args.get(6) {
                Some(c) => ContentSpec::parse(c)?,
                None => ContentSpec::Sparse,
            },
        };
        params.validate()?;
        Ok(params)
    }

    pub fn validate(&self) -> Result<()> {
        if self.pages == 0 || self.pages > MAX_PAGES {
            return Err(Error::config(
                "memtouch pages",
                format!("{}: must be in 1..={MAX_PAGES}", self.pages),
            ));
        }
        if self.pattern == AccessPattern::Hot && self.pages < 5 {
            return Err(Error::config(
                "memtouch pages",
                "the hot pattern needs at least 5 pages (memtouch divides by pages/5)",
            ));
        }
        if self.write_pct > 100 {
            return Err(Error::config("memtouch write_pct", "must be in 0..=100"));
        }
        Ok(())
    }
}

/// Where a page's bytes come from, before any access wrote into it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum PageOrigin {
    /// Words 0, 8, …, 504 are the 64 draws following generator state `state`; the rest are zero.
    Sparse { state: u64 },
    /// All 512 words are the draws following generator state `state`.
    Random { state: u64 },
    /// Corpus chunk `chunk`.
    Corpus { chunk: u64 },
    /// Zero-filled (memtouch wrote word 0 with 0, so the page is resident).
    Zero,
}

/// The bytes of every page: origins plus the words written since the fill.
#[derive(Debug, Clone)]
pub struct PageImage {
    origins: Vec<PageOrigin>,
    /// Per page, the words written after the fill.
    writes: Vec<PageWrites>,
    corpus: Option<Arc<Corpus>>,
}

/// The words written into one page after the fill (32 bytes: a page's list and index share a line).
#[derive(Debug, Clone, Default)]
struct PageWrites {
    /// (word, value) of every word written, the latest value only, in first-write order.
    list: Vec<(u16, u64)>,
    /// Past `INDEX_AFTER` words: word -> its position in `list` + 1 (0: not written), so a write finds
    /// its word in one load instead of a scan of up to 512 entries.
    index: Option<Box<[u16; WORDS_PER_PAGE]>>,
}

/// Written words a page holds before `PageImage::write_word` indexes them (a scan of this many is cheaper
/// than the 1 KiB index).
pub const INDEX_AFTER: usize = 16;

impl PageImage {
    pub fn pages(&self) -> u64 {
        self.origins.len() as u64
    }

    pub fn origin(&self, page: u64) -> PageOrigin {
        self.origins[page as usize]
    }

    /// Distinct words written into `page` after the fill.
    pub fn written_words(&self, page: u64) -> usize {
        self.writes[page as usize].list.len()
    }

    /// Store `value` in word `word` of `page` (as an access does).
    pub fn write_word(&mut self, page: u64, word: u32, value: u64) {
        let PageWrites { list: w, index } = &mut self.writes[page as usize];
        if let Some(index) = index.as_deref_mut() {
            match index[word as usize] {
                0 => {
                    w.push((word as u16, value));
                    index[word as usize] = w.len() as u16;
                }
                at => w[at as usize - 1].1 = value,
            }
            return;
        }
        match w.iter_mut().find(|(i, _)| *i as u32 == word) {
            Some(slot) => slot.1 = value,
            None => {
                w.push((word as u16, value));
                if w.len() > INDEX_AFTER {
                    let mut built = Box::new([0u16; WORDS_PER_PAGE]);
                    for (at, &(i, _)) in w.iter().enumerate() {
                        built[i as usize] = at as u16 + 1;
                    }
                    *index = Some(built);
                }
            }
        }
    }

    /// Rebuild the 4096 bytes of `page` as they are now (64-bit words little-endian, as on x86-64).
    pub fn page_bytes(&self, page: u64, out: &mut [u8; PAGE_BYTES]) {
        let mut put = |i: usize, v: u64| out[i * 8..i * 8 + 8].copy_from_slice(&v.to_le_bytes());
        match self.origins[page as usize] {
            PageOrigin::Sparse { state } => {
                let mut r = MemtouchRng::from_state(state);
                for i in 0..WORDS_PER_PAGE {
                    put(i, if i % 8 == 0 { r.next_u64() } else { 0 });
                }
            }
            PageOrigin::Random { state } => {
                let mut r = MemtouchRng::from_state(state);
                for i in 0..WORDS_PER_PAGE {
                    put(i, r.next_u64());
                }
            }
            PageOrigin::Corpus { chunk } => {
                let corpus = self.corpus.as_ref().expect("corpus pages have a corpus");
                out.copy_from_slice(corpus.chunk(chunk));
            }
            PageOrigin::Zero => out.fill(0),
        }
        for &(i, v) in &self.writes[page as usize].list {
            out[i as usize * 8..i as usize * 8 + 8].copy_from_slice(&v.to_le_bytes());
        }
    }

    /// Whether `page` is all zero bytes now — `page_bytes` then a zero check, without rebuilding the
    /// page: a word written since the fill decides by its value, and the origin's words are drawn (or
    /// read) only until the first non-zero one that no write covers (for a drawn page, usually word 0).
    pub fn is_zero(&self, page: u64) -> bool {
        let writes = &self.writes[page as usize].list;
        if writes.iter().any(|&(_, v)| v != 0) {
            return false;
        }
        // Every written word is zero: the page is zero when every other word of the origin is.
        let mut covered = [0u64; WORDS_PER_PAGE / 64];
        for &(i, _) in writes {
            covered[i as usize / 64] |= 1 << (i % 64);
        }
        let shows = |i: usize, v: u64| v != 0 && covered[i / 64] & (1 << (i % 64)) == 0;
        match self.origins[page as usize] {
            PageOrigin::Sparse { state } => {
                let mut r = MemtouchRng::from_state(state);
                !(0..WORDS_PER_PAGE)
                    .step_by(8)
                    .any(|i| shows(i, r.next_u64()))
            }
            PageOrigin::Random { state } => {
                let mut r = MemtouchRng::from_state(state);
                !(0..WORDS_PER_PAGE).any(|i| shows(i, r.next_u64()))
            }
            PageOrigin::Corpus { chunk } => {
                let corpus = self.corpus.as_ref().expect("corpus pages have a corpus");
                !corpus
                    .chunk(chunk)
                    .chunks_exact(8)
                    .enumerate()
                    .any(|(i, w)| shows(i, u64::from_le_bytes(w.try_into().expect("8 bytes"))))
            }
            PageOrigin::Zero => true,
        }
    }

    /// The page's bytes in a new buffer.
    pub fn page_vec(&self, page: u64) -> Vec<u8> {
        let mut b = [0u8; PAGE_BYTES];
        self.page_bytes(page, &mut b);
        b.to_vec()
    }
}

/// One access after the fill.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Access {
    pub page: u64,
    pub word: u32,
    /// The value stored, for a write; `None` for a read.
    pub written: Option<u64>,
}

/// memtouch, replayed: [`MemtouchProgram::new`] performs the fill; each [`MemtouchProgram::next_access`]
/// performs one access and applies its write to the image.
#[derive(Debug, Clone)]
pub struct MemtouchProgram {
    params: MemtouchParams,
    rng: MemtouchRng,
    image: PageImage,
    done_ops: u64,
    cursor: u64,
}

impl MemtouchProgram {
    /// Run the fill phase. `corpus` must be the file the content names (see [`Corpus::load`]).
    pub fn new(params: MemtouchParams, corpus: Option<Corpus>) -> Result<MemtouchProgram> {
        Self::with_corpus(params, corpus.map(Arc::new))
    }

    /// [`MemtouchProgram::new`] with a corpus shared with other replays of the same program (a
    /// reference stream and the page image that follows it both read one copy).
    pub fn with_corpus(
        params: MemtouchParams,
        corpus: Option<Arc<Corpus>>,
    ) -> Result<MemtouchProgram> {
        params.validate()?;
        let corpus = match (params.content.corpus_name(), corpus) {
            (None, _) => None,
            (Some(name), Some(c)) if c.name() == name => Some(c),
            (Some(name), other) => {
                return Err(Error::config(
                    "content",
                    format!(
                        "`{}` needs corpus `{name}`, given {:?}",
                        params.content,
                        other.map(|c| c.name().to_string())
                    ),
                ))
            }
        };
        let chunks = corpus.as_ref().map_or(1, |c| c.chunks());
        let mut rng = MemtouchRng::seeded(params.seed);
        let mut origins = Vec::with_capacity(params.pages as usize);
        for p in 0..params.pages {
            let corpus_page = PageOrigin::Corpus { chunk: p % chunks };
            let origin = match params.content {
                ContentSpec::Sparse => sparse(&mut rng),
                ContentSpec::Random => random(&mut rng),
                ContentSpec::Corpus { .. } => corpus_page,
                ContentSpec::Mix { pct, .. } => {
                    if pct > 0 && rng.chance(pct) {
                        random(&mut rng)
                    } else {
                        corpus_page
                    }
                }
                ContentSpec::Zero { pct, .. } => {
                    if rng.chance(pct) {
                        PageOrigin::Zero
                    } else {
                        corpus_page
                    }
                }
            };
            origins.push(origin);
        }
        let image = PageImage {
            writes: vec![PageWrites::default(); origins.len()],
            origins,
            corpus,
        };
        Ok(MemtouchProgram {
            params,
            rng,
            image,
            done_ops: 0,
            cursor: 0,
        })
    }

    pub fn params(&self) -> &MemtouchParams {
        &self.params
    }

    pub fn image(&self) -> &PageImage {
        &self.image
    }

    /// The generator as it stands (after the fill, then after each access).
    pub fn rng(&self) -> MemtouchRng {
        self.rng
    }

    pub fn ops_done(&self) -> u64 {
        self.done_ops
    }

    /// The next access, its write applied to the image; `None` after OPS accesses.
    pub fn next_access(&mut self) -> Option<Access> {
        if self.done_ops >= self.params.ops {
            return None;
        }
        let page = self.next_page();
        let word = (self.rng.next_u64() % WORDS_PER_PAGE as u64) as u32;
        let written = if self.rng.chance(self.params.write_pct) {
            let v = self.rng.next_u64();
            self.image.write_word(page, word, v);
            Some(v)
        } else {
            None
        };
        self.done_ops += 1;
        Some(Access {
            page,
            word,
            written,
        })
    }

    /// Perform every remaining access; the image is then the program's memory at its "done" line.
    pub fn run_to_end(&mut self) {
        while self.next_access().is_some() {}
    }

    fn next_page(&mut self) -> u64 {
        let pages = self.params.pages;
        match self.params.pattern {
            AccessPattern::Uniform => self.rng.next_u64() % pages,
            AccessPattern::Seq => {
                let p = self.cursor % pages;
                self.cursor += 1;
                p
            }
            AccessPattern::Hot => {
                if self.rng.next_f64() < 0.8 {
                    self.rng.next_u64() % (pages / 5)
                } else {
                    pages / 5 + self.rng.next_u64() % (pages - pages / 5)
                }
            }
            AccessPattern::Normal => {
                let u1 = self.rng.next_f64();
                let u2 = self.rng.next_f64();
                let z = (-2.0 * (u1 + 1e-300).ln()).sqrt() * (std::f64::consts::TAU * u2).cos();
                // C: 6.283185307179586 is the same double as TAU; (long)(pages/2 + z*(pages/12.0)): integer
                // pages/2, truncation toward zero.
                let q = ((pages / 2) as f64 + z * (pages as f64 / 12.0)) as i64;
                q.clamp(0, pages as i64 - 1) as u64
            }
        }
    }
}

fn sparse(rng: &mut MemtouchRng) -> PageOrigin {
    let state = rng.state();
    rng.skip(Jump::Sparse);
    PageOrigin::Sparse { state }
}

fn random(rng: &mut MemtouchRng) -> PageOrigin {
    let state = rng.state();
    rng.skip(Jump::Random);
    PageOrigin::Random { state }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn params(content: &str, pattern: AccessPattern) -> MemtouchParams {
        MemtouchParams {
            pages: 40,
            ops: 500,
            pattern,
            write_pct: 50,
            seed: 6,
            content: ContentSpec::parse(content).unwrap(),
        }
    }

    /// `is_zero` against the obvious check on the rebuilt bytes, for every page of programs of each
    /// content kind as their accesses run (zero-valued writes forced into a third of the pages, so that
    /// pages become zero and stop being zero).
    #[test]
    fn is_zero_agrees_with_the_rebuilt_bytes() {
        let obvious = |img: &PageImage, p: u64| {
            let mut b = [0u8; PAGE_BYTES];
            img.page_bytes(p, &mut b);
            b.iter().all(|&x| x == 0)
        };
        let corpus = Corpus::from_bytes(
            "t",
            (0..8 * PAGE_BYTES)
                .map(|i| if i % 4096 < 2048 { 0 } else { (i % 251) as u8 })
                .collect(),
        )
        .unwrap();
        let (mut zero_seen, mut nonzero_seen) = (0, 0);
        for content in ["sparse", "random", "zero:60:t", "mix:50:t", "corpus:t"] {
            let mut prog = MemtouchProgram::new(
                params(content, AccessPattern::Uniform),
                Some(corpus.clone()),
            )
            .unwrap();
            let mut rng = MemtouchRng::seeded(3);
            for step in 0..400u32 {
                prog.next_access();
                let page = rng.next_u64() % 40;
                if page.is_multiple_of(3) {
                    let word = (rng.next_u64() % WORDS_PER_PAGE as u64) as u32;
                    prog.image.write_word(page, word, 0);
                    if step.is_multiple_of(7) {
                        // A whole page of zero writes: zero whatever its origin.
                        for w in 0..WORDS_PER_PAGE as u32 {
                            prog.image.write_word(page, w, 0);
                        }
                    }
                }
                for p in 0..40 {
                    let z = obvious(prog.image(), p);
                    assert_eq!(
                        prog.image().is_zero(p),
                        z,
                        "{content}: page {p}, step {step}"
                    );
                    if z {
                        zero_seen += 1;
                    } else {
                        nonzero_seen += 1;
                    }
                }
            }
        }
        assert!(
            zero_seen > 1000 && nonzero_seen > 1000,
            "{zero_seen} zero, {nonzero_seen} not"
        );
    }

    #[test]
    fn xorshift_matches_hand_computed_words() {
        // seed 6 | 1 = 7: 7 ^ 7<<13 = 57351; ^ >>7 = 57351 ^ 448 = 57799; ^ <<17 = 57799 ^ 7575830528.
        let mut r = MemtouchRng::seeded(6);
        assert_eq!(r.next_u64(), 57799 ^ (57799u64 << 17));
    }

    #[test]
    fn sparse_fill_takes_64_draws_per_page_and_zeroes_the_rest() {
        let prog = MemtouchProgram::new(params("sparse", AccessPattern::Seq), None).unwrap();
        let mut r = MemtouchRng::seeded(6);
        let mut page = [0u8; PAGE_BYTES];
        for p in 0..40 {
            prog.image().page_bytes(p, &mut page);
            for i in 0..WORDS_PER_PAGE {
                let w = u64::from_le_bytes(page[i * 8..i * 8 + 8].try_into().unwrap());
                let want = if i % 8 == 0 { r.next_u64() } else { 0 };
                assert_eq!(w, want, "page {p} word {i}");
            }
        }
        assert_eq!(prog.rng(), r);
    }

    #[test]
    fn writes_change_exactly_the_drawn_word() {
        let mut prog =
            MemtouchProgram::new(params("random", AccessPattern::Uniform), None).unwrap();
        let before: Vec<Vec<u8>> = (0..40).map(|p| prog.image().page_vec(p)).collect();
        let mut last = std::collections::BTreeMap::new();
        while let Some(a) = prog.next_access() {
            if let Some(v) = a.written {
                last.insert((a.page, a.word), v);
            }
        }
        assert!(last.len() > 100);
        for p in 0..40u64 {
            let now = prog.image().page_vec(p);
            for i in 0..WORDS_PER_PAGE {
                let want = match last.get(&(p, i as u32)) {
                    Some(v) => v.to_le_bytes().to_vec(),
                    None => before[p as usize][i * 8..i * 8 + 8].to_vec(),
                };
                assert_eq!(&now[i * 8..i * 8 + 8], &want[..], "page {p} word {i}");
            }
        }
    }

    #[test]
    fn skipping_a_page_s_draws_is_drawing_them() {
        // The slow twin: draw one by one.
        let mut seeds = MemtouchRng::seeded(12345);
        for i in 0..2_000 {
            let start = match i {
                0 => 1,
                1 => u64::MAX,
                2 => 1 << 63,
                _ => seeds.next_u64(),
            };
            for jump in [Jump::Sparse, Jump::Random] {
                let mut fast = MemtouchRng::from_state(start);
                fast.skip(jump);
                let mut slow = MemtouchRng::from_state(start);
                for _ in 0..jump.steps() {
                    slow.next_u64();
                }
                assert_eq!(fast, slow, "{jump:?} from {start:#x}");
            }
        }
    }

    #[test]
    fn many_writes_into_few_pages_keep_the_latest_value_of_each_word_in_first_write_order() {
        // Past INDEX_AFTER words a page is indexed: the slow twin is a plain list of every write.
        let mut prog =
            MemtouchProgram::new(params("random", AccessPattern::Uniform), None).unwrap();
        let pages = prog.image().pages().min(4);
        let mut r = MemtouchRng::seeded(7);
        let mut log: Vec<(u64, u32, u64)> = Vec::new();
        for _ in 0..6_000 {
            let (page, word, value) = (
                r.next_u64() % pages,
                (r.next_u64() % 512) as u32,
                r.next_u64(),
            );
            prog.image.write_word(page, word, value);
            log.push((page, word, value));
        }
        for page in 0..pages {
            let mut want: Vec<(u16, u64)> = Vec::new();
            for &(_, w, v) in log.iter().filter(|e| e.0 == page) {
                let mut found = false;
                for e in want.iter_mut() {
                    if e.0 as u32 == w {
                        e.1 = v;
                        found = true;
                    }
                }
                if !found {
                    want.push((w as u16, v));
                }
            }
            assert!(want.len() > INDEX_AFTER, "page {page} must be indexed");
            assert_eq!(prog.image.writes[page as usize].list, want, "page {page}");
            assert_eq!(prog.image().written_words(page), want.len());
        }
    }

    #[test]
    fn mix_and_zero_draw_one_decision_per_page() {
        let corpus =
            Corpus::from_bytes("c", (0..3 * 4096).map(|i| (i / 7) as u8).collect()).unwrap();
        let mix =
            MemtouchProgram::new(params("mix:50:c", AccessPattern::Hot), Some(corpus.clone()))
                .unwrap();
        let mut r = MemtouchRng::seeded(6);
        for p in 0..40 {
            let want = if r.next_u64() % 100 < 50 {
                let s = r.state();
                for _ in 0..512 {
                    r.next_u64();
                }
                PageOrigin::Random { state: s }
            } else {
                PageOrigin::Corpus { chunk: p % 3 }
            };
            assert_eq!(mix.image().origin(p), want, "page {p}");
        }
        let zero = MemtouchProgram::new(
            params("zero:40:c", AccessPattern::Normal),
            Some(corpus.clone()),
        )
        .unwrap();
        let zeros = (0..40)
            .filter(|&p| zero.image().origin(p) == PageOrigin::Zero)
            .count();
        assert!((5..30).contains(&zeros), "{zeros}");
        assert_eq!(zero.image().page_vec(0).len(), 4096);
        // mix:0 takes no draw at all: the generator after the fill is the seed's.
        let mix0 =
            MemtouchProgram::new(params("mix:0:c", AccessPattern::Seq), Some(corpus)).unwrap();
        assert_eq!(mix0.rng(), MemtouchRng::seeded(6));
    }

    #[test]
    fn a_wrong_or_missing_corpus_is_an_error() {
        let c = Corpus::from_bytes("other", vec![1; 4096]).unwrap();
        assert!(MemtouchProgram::new(params("corpus:xml", AccessPattern::Seq), Some(c)).is_err());
        assert!(MemtouchProgram::new(params("corpus:xml", AccessPattern::Seq), None).is_err());
    }

    #[test]
    fn command_lines_parse_like_the_captures() {
        let p = MemtouchParams::from_command(&[
            "memtouch",
            "32768",
            "300000",
            "hot",
            "30",
            "72",
            "corpus:xml",
        ])
        .unwrap();
        assert_eq!(p.pages, 32768);
        assert_eq!(p.pattern, AccessPattern::Hot);
        assert_eq!(p.content, ContentSpec::Corpus { name: "xml".into() });
        let p = MemtouchParams::from_command(&["./memtouch", "10", "5", "seq", "0", "1"]).unwrap();
        assert_eq!(p.content, ContentSpec::Sparse);
        for bad in [
            vec!["memtouch", "10", "5", "seq", "0"],
            vec!["memtouch", "0", "5", "seq", "0", "1"],
            vec!["memtouch", "4", "5", "hot", "0", "1"],
            vec!["memtouch", "10", "5", "zigzag", "0", "1"],
            vec!["memtouch", "10", "5", "seq", "101", "1"],
            vec!["cat", "10", "5", "seq", "0", "1"],
        ] {
            assert!(MemtouchParams::from_command(&bad).is_err(), "{bad:?}");
        }
    }
}
