//! The app launch cycle of the ezswap paper (§IV-A, Table 2): the apps are launched one after another,
//! each runs for a while, and the list is repeated; one process holds every app (one address space, as
//! the mobile workload does), each app an anonymous mapping and a file mapping of its own file.
//!
//! * Launch: the first `launch_file_fraction` of the app's file pages are read in file order (the
//!   loader mapping code and resources) and the first `launch_anon_fraction` of its anonymous pages
//!   are touched (written on the first pass, read afterwards). From the second timed pass on, a launch
//!   is one request (`B` … `E` markers): the report's request latency is the modelled launch time.
//! * Run: for `run_ms`, every simulated ms the app makes `refs_per_ms` zipf-popular references (a share
//!   `anon_share` to anonymous pages, writing with `write_ratio`; the rest read file pages), then
//!   sleeps 1 ms. Other apps are idle in the background (the paper disables the low-memory killer).
//! * Contents ([`LaunchContents`]): each page belongs to one class of its app's mix (anon or file), drawn
//!   by a hash of the seed and the page — zero, sparse (every 64th word set), random bytes (already
//!   compressed media), or a page of a Silesia file (also by hash) — and keeps it: writes do not change
//!   the bytes.

use std::collections::VecDeque;
use std::sync::Arc;

use nandstack_core::{Result, Rng};
use nandstack_workload::content::Corpus;

use super::launch_config::{parse_mix, LaunchApp, LaunchConfig, CLASSES};
use super::region::Region;
use super::{layout, MapKind, MemRef, RefStream, Workload, OP_BEGIN, OP_END, OP_SLEEP};
use crate::contents::PageContents;

const GENERIC_ANON: &str = "zero:20,sparse:30,osdb:15,xml:10,nci:10,random:15";
const MEDIA_ANON: &str = "zero:20,sparse:25,osdb:10,xml:10,random:35";
const GAME_ANON: &str = "zero:20,sparse:20,mr:15,osdb:10,random:35";

/// The default apps: Table 2's 14 in its order, then Microsoft Excel and 2048 (the 16-app set of
/// Fig. 9). Sizes (MiB at scale 1) and content mixes are ours (docs/ezswap.md): utility and social
/// apps are mostly code and markup, media and game apps mostly already-compressed assets.
pub fn table2() -> Vec<LaunchApp> {
    let app = |name: &str, anon: f64, file: f64, a: &str, f: &str| LaunchApp {
        name: name.into(),
        anon_mib: anon,
        file_mib: file,
        anon_content: a.into(),
        file_content: f.into(),
    };
    vec![
        app(
            "Play Store",
            90.0,
            160.0,
            GENERIC_ANON,
            "ooffice:45,xml:15,random:40",
        ),
        app(
            "Google Calendar",
            60.0,
            110.0,
            GENERIC_ANON,
            "ooffice:50,xml:20,random:30",
        ),
        app(
            "Gmail",
            80.0,
            150.0,
            GENERIC_ANON,
            "ooffice:45,xml:25,dickens:5,random:25",
        ),
        app(
            "Wikipedia",
            60.0,
            140.0,
            GENERIC_ANON,
            "ooffice:35,xml:25,dickens:15,random:25",
        ),
        app(
            "Google Chrome",
            150.0,
            220.0,
            GENERIC_ANON,
            "ooffice:45,xml:20,random:35",
        ),
        app(
            "Facebook",
            160.0,
            260.0,
            MEDIA_ANON,
            "ooffice:35,xml:10,random:55",
        ),
        app(
            "Twitter",
            110.0,
            180.0,
            MEDIA_ANON,
            "ooffice:35,xml:10,random:55",
        ),
        app("YouTube", 130.0, 300.0, MEDIA_ANON, "ooffice:25,random:75"),
        app("Twitch", 120.0, 260.0, MEDIA_ANON, "ooffice:25,random:75"),
        app(
            "Amazon Kindle",
            90.0,
            220.0,
            GENERIC_ANON,
            "ooffice:25,dickens:20,reymont:15,random:40",
        ),
        app("TED", 90.0, 240.0, MEDIA_ANON, "ooffice:25,random:75"),
        app(
            "Angry Birds 2",
            200.0,
            420.0,
            GAME_ANON,
            "ooffice:20,mr:15,random:65",
        ),
        app(
            "Candy Crush Saga",
            160.0,
            320.0,
            GAME_ANON,
            "ooffice:20,mr:15,random:65",
        ),
        app(
            "PUBG Mobile",
            350.0,
            700.0,
            GAME_ANON,
            "ooffice:15,mr:10,random:75",
        ),
        app(
            "Microsoft Excel",
            120.0,
            200.0,
            GENERIC_ANON,
            "ooffice:50,xml:20,nci:10,random:20",
        ),
        app("2048", 40.0, 60.0, GAME_ANON, "ooffice:50,random:50"),
    ]
}

struct App {
    anon: Region,
    file: Region,
}

struct Launch {
    apps: Vec<App>,
    reps: u32,
    warmup: u32,
    launch_file: f64,
    launch_anon: f64,
    run_ticks: u64,
    /// The app's own CPU work per launch, µs (`startup_cpu_ms` × scale).
    startup_us: u64,
    refs_per_ms: u32,
    anon_share: f64,
    write_ratio: f64,
    rng: Rng,
    /// Position: pass, app, tick of the run phase (`None` = the launch is next).
    rep: u32,
    app: usize,
    tick: Option<u64>,
    buf: VecDeque<MemRef>,
    total: u64,
}

impl Launch {
    /// Generate the next segment (a launch, or one ms of the run) into the buffer; false at the end.
    fn step(&mut self) -> bool {
        if self.rep >= self.reps {
            return false;
        }
        let a = &self.apps[self.app];
        match self.tick {
            None => {
                let timed = self.rep >= self.warmup;
                if timed {
                    self.buf.push_back(MemRef::marker(OP_BEGIN, 0));
                }
                let nf = (a.file.len as f64 * self.launch_file).round() as u32;
                let na = (a.anon.len as f64 * self.launch_anon).round() as u32;
                let first = self.rep == 0;
                let refs = (a.file.start..a.file.start + nf)
                    .map(MemRef::read)
                    .chain((a.anon.start..a.anon.start + na).map(|p| MemRef::access(p, first)));
                push_with_cpu(&mut self.buf, refs, (nf + na) as u64, self.startup_us);
                if timed {
                    self.buf.push_back(MemRef::marker(OP_END, 0));
                }
                self.tick = Some(0);
            }
            Some(t) if t < self.run_ticks => {
                for _ in 0..self.refs_per_ms {
                    if a.file.len == 0 || (a.anon.len > 0 && self.rng.chance(self.anon_share)) {
                        let p = a.anon.pick(&mut self.rng);
                        let w = self.rng.chance(self.write_ratio);
                        self.buf.push_back(MemRef::access(p, w));
                    } else {
                        self.buf.push_back(MemRef::read(a.file.pick(&mut self.rng)));
                    }
                }
                self.buf.push_back(MemRef::marker(OP_SLEEP, 1000));
                self.tick = Some(t + 1);
            }
            Some(_) => {
                self.tick = None;
                self.app += 1;
                if self.app == self.apps.len() {
                    self.app = 0;
                    self.rep += 1;
                }
            }
        }
        true
    }
}

/// Push the `n` references `refs` with `cpu_us` of CPU work spread evenly among them: after the i-th
/// reference a sleep of ⌊(i+1)·cpu/n⌋ − ⌊i·cpu/n⌋ µs (the thread's clock advances as it computes;
/// zero-length slices are left out), so the slices add up to `cpu_us` exactly. No references: the
/// whole work at once.
fn push_with_cpu(
    buf: &mut VecDeque<MemRef>,
    refs: impl Iterator<Item = MemRef>,
    n: u64,
    cpu_us: u64,
) {
    if cpu_us == 0 {
        buf.extend(refs);
        return;
    }
    if n == 0 {
        buf.push_back(MemRef::marker(OP_SLEEP, cpu_us as u32));
        return;
    }
    let mut done = 0u64;
    for (i, r) in refs.enumerate() {
        buf.push_back(r);
        let upto = (i as u64 + 1) * cpu_us / n;
        if upto > done {
            buf.push_back(MemRef::marker(OP_SLEEP, (upto - done) as u32));
            done = upto;
        }
    }
}

impl RefStream for Launch {
    fn fill(&mut self, out: &mut Vec<MemRef>, max: usize) -> Result<bool> {
        while self.buf.len() < max && self.step() {}
        let n = self.buf.len().min(max);
        out.extend(self.buf.drain(..n));
        Ok(!self.buf.is_empty() || self.rep < self.reps)
    }
    fn len_hint(&self) -> Option<u64> {
        Some(self.total)
    }
}

fn mib_pages(mib: f64, scale: f64) -> u32 {
    (mib * scale * 256.0).round() as u32
}

/// Class of each page of an app's region, by the mix's percentages and a hash of (seed, page).
fn classes(mix: &[u32; CLASSES.len()], start: u32, len: u32, seed: u64, out: &mut [u8]) {
    for p in start..start + len {
        let r = (hash(seed, p as u64) % 100) as u32;
        let mut acc = 0;
        let mut c = 0;
        for (i, &pct) in mix.iter().enumerate() {
            acc += pct;
            if r < acc {
                c = i;
                break;
            }
        }
        out[p as usize] = c as u8;
    }
}

/// splitmix64 of (seed, x).
fn hash(seed: u64, x: u64) -> u64 {
    let mut z = seed ^ x.wrapping_mul(0x9E37_79B9_7F4A_7C15);
    z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    z ^ (z >> 31)
}

/// The launch cycle's page contents. See the module documentation.
pub struct LaunchContents {
    class: Vec<u8>,
    corpora: Vec<Option<Arc<Corpus>>>,
    seed: u64,
}

impl LaunchContents {
    /// Class name of page `page` (tests, reports).
    pub fn class_of(&self, page: u32) -> &'static str {
        CLASSES[self.class[page as usize] as usize]
    }
}

impl PageContents for LaunchContents {
    fn advance(&mut self, _refs: u64) {}

    fn page_bytes(&self, page: u32, out: &mut [u8; 4096]) {
        let c = self.class[page as usize] as usize;
        let h = hash(self.seed ^ 0x636f_6e74, page as u64);
        match CLASSES[c] {
            "zero" => out.fill(0),
            "sparse" => {
                out.fill(0);
                let mut r = Rng::new(h);
                for w in out.chunks_exact_mut(8).step_by(64) {
                    w.copy_from_slice(&r.next_u64().to_le_bytes());
                }
            }
            "random" => {
                let mut r = Rng::new(h);
                for w in out.chunks_exact_mut(8) {
                    w.copy_from_slice(&r.next_u64().to_le_bytes());
                }
            }
            _ => {
                let corpus = self.corpora[c]
                    .as_ref()
                    .expect("corpus loaded for its class");
                let chunk = corpus.chunk(h % corpus.chunks());
                out.fill(0);
                out[..chunk.len()].copy_from_slice(chunk);
            }
        }
    }

    /// `is_zero` of `page_bytes`, from the page's description: a zero page is, a generated one only if
    /// every word it sets is 0 (it stops at the first that is not), a corpus page only if its chunk
    /// is all zero bytes.
    fn is_zero(&self, page: u32) -> bool {
        let c = self.class[page as usize] as usize;
        let h = hash(self.seed ^ 0x636f_6e74, page as u64);
        let words_zero = |n: usize| {
            let mut r = Rng::new(h);
            (0..n).all(|_| r.next_u64() == 0)
        };
        match CLASSES[c] {
            "zero" => true,
            "sparse" => words_zero(SPARSE_WORDS),
            "random" => words_zero(PAGE_WORDS),
            _ => {
                let corpus = self.corpora[c]
                    .as_ref()
                    .expect("corpus loaded for its class");
                corpus.chunk(h % corpus.chunks()).iter().all(|&b| b == 0)
            }
        }
    }

    fn describe(&self) -> String {
        "launch cycle (per-app content mixes)".into()
    }

    /// The page itself: a page's bytes are a function of the page alone (writes do not change them).
    fn content_key(&self, page: u32) -> Option<u32> {
        Some(page)
    }
}

/// 64-bit words in a page, and those a sparse page sets (every 64th).
const PAGE_WORDS: usize = 4096 / 8;
const SPARSE_WORDS: usize = PAGE_WORDS / 64;

/// `CLASSES` from this index on are Silesia files (before it: zero, sparse, random).
const FIRST_CORPUS_CLASS: usize = 3;

/// The Silesia classes (index, name) the apps' content mixes use, each once.
fn corpus_classes(profiles: &[LaunchApp]) -> Result<Vec<(usize, &'static str)>> {
    let mut used = [false; CLASSES.len()];
    for p in profiles {
        for mix in [&p.anon_content, &p.file_content] {
            let pct = parse_mix("workload.apps", mix)?;
            for (k, &v) in pct.iter().enumerate() {
                used[k] |= v > 0;
            }
        }
    }
    Ok(CLASSES
        .iter()
        .enumerate()
        .skip(FIRST_CORPUS_CLASS)
        .filter(|&(k, _)| used[k])
        .map(|(k, &name)| (k, name))
        .collect())
}

/// Bytes of the Silesia files the launch cycle loads, as loaded (0 for a config that does not parse:
/// the run refuses it by name before anything is loaded).
pub fn corpus_bytes(c: &LaunchConfig) -> u64 {
    let all = c.apps.clone().unwrap_or_else(table2);
    let apps = &all[..(c.app_count as usize).min(all.len())];
    corpus_classes(apps)
        .unwrap_or_default()
        .into_iter()
        .map(|(_, name)| super::memtouch::corpus_bytes(c.corpus_dir.as_deref(), name))
        .sum()
}

/// The workload and its contents.
pub fn build_contents(c: &LaunchConfig, seed: u64) -> Result<(Workload, LaunchContents)> {
    c.validate("workload")?;
    let all = c.apps.clone().unwrap_or_else(table2);
    let profiles = &all[..c.app_count as usize];
    let mut maps = Vec::new();
    for (i, p) in profiles.iter().enumerate() {
        maps.push((mib_pages(p.anon_mib, c.scale), MapKind::Anon));
        maps.push((
            mib_pages(p.file_mib, c.scale),
            MapKind::File {
                file: i,
                shared: false,
                exec: false,
            },
        ));
    }
    let files: Vec<u32> = profiles
        .iter()
        .map(|p| mib_pages(p.file_mib, c.scale))
        .collect();
    let (pages, mappings) = layout(&maps);
    let mut class = vec![0u8; pages as usize];
    let mut apps = Vec::new();
    for (i, p) in profiles.iter().enumerate() {
        let (am, fm) = (&mappings[2 * i], &mappings[2 * i + 1]);
        for (m, mix) in [(am, &p.anon_content), (fm, &p.file_content)] {
            let pct = parse_mix("workload.apps", mix)?;
            classes(&pct, m.start, m.pages, seed ^ 0x6c61_756e, &mut class);
        }
        apps.push(App {
            anon: Region::new(am.start, am.pages, c.zipf_theta, seed ^ (2 * i as u64 + 1)),
            file: Region::new(fm.start, fm.pages, c.zipf_theta, seed ^ (2 * i as u64 + 2)),
        });
    }
    let mut corpora = vec![None; CLASSES.len()];
    for (k, name) in corpus_classes(profiles)? {
        corpora[k] = Some(super::memtouch::load_corpus(c.corpus_dir.as_deref(), name)?);
    }
    let run_ticks = c.run_ms.round() as u64;
    let per_pass: u64 = apps
        .iter()
        .map(|a| {
            (a.file.len as f64 * c.launch_file_fraction) as u64
                + (a.anon.len as f64 * c.launch_anon_fraction) as u64
                + run_ticks * c.refs_per_ms as u64
        })
        .sum();
    let names: Vec<&str> = profiles.iter().map(|p| p.name.as_str()).collect();
    let stream = Launch {
        apps,
        reps: c.repetitions,
        warmup: c.warmup_repetitions,
        launch_file: c.launch_file_fraction,
        launch_anon: c.launch_anon_fraction,
        run_ticks,
        startup_us: (c.startup_cpu_ms * c.scale * 1000.0).round() as u64,
        refs_per_ms: c.refs_per_ms,
        anon_share: c.anon_share,
        write_ratio: c.write_ratio,
        rng: Rng::derive(seed, 0x6c61_756e_6368),
        rep: 0,
        app: 0,
        tick: None,
        buf: VecDeque::new(),
        total: per_pass * c.repetitions as u64,
    };
    let w = Workload {
        pages,
        mappings,
        files,
        threads: vec![Box::new(stream)],
        kv: true,
        touches_all: false,
        describe: format!(
            "launch cycle: {} apps × {} passes (scale {}): {}",
            names.len(),
            c.repetitions,
            c.scale,
            names.join(", ")
        ),
    };
    Ok((
        w,
        LaunchContents {
            class,
            corpora,
            seed,
        },
    ))
}

/// Entropy against compression on the launch cycle's own pages (issue #36: the ezswap paper's Fig. 5
/// and Fig. 6 on the contents the experiment runs): over every page of the workload of `c` built with
/// `seed` (the run seed; anonymous and file pages of every app, in page order), thinned to at most
/// `max_pages` by a fixed stride, Pearson's r of the leading-512-byte entropy with the whole page's
/// entropy (Fig. 5) and with lzo's compressed/original ratio (Fig. 6; a page that does not compress
/// counts 1, as `ratio_fit::points`). As JSON.
pub fn entropy_correlation(
    c: &LaunchConfig,
    seed: u64,
    max_pages: usize,
) -> Result<serde_json::Value> {
    let compressor = nandstack_compress::Algorithm::Lzo;
    use nandstack_compress::entropy::{pearson, shannon_bits_per_byte, Sample};
    let (_, contents) = build_contents(c, seed)?;
    let pages = contents.class.len();
    let stride = pages.div_ceil(max_pages.max(1)).max(1);
    let mut comp = nandstack_compress::Compressor::new(compressor)?;
    let mut buf = [0u8; 4096];
    let (mut lead, mut whole, mut ratio) = (Vec::new(), Vec::new(), Vec::new());
    for page in (0..pages).step_by(stride) {
        contents.page_bytes(page as u32, &mut buf);
        lead.push(shannon_bits_per_byte(&buf, Sample::PAPER));
        whole.push(shannon_bits_per_byte(&buf, Sample::Whole));
        ratio.push(comp.compressed_len(&buf)?.min(4096) as f64 / 4096.0);
    }
    Ok(serde_json::json!({
        "pages": lead.len(),
        "workload_pages": pages,
        "stride": stride,
        "compressor": compressor.name(),
        "pearson_entropy512_ratio": pearson(&lead, &ratio),
        "pearson_entropy512_whole": pearson(&lead, &whole),
        "mean_ratio": ratio.iter().sum::<f64>() / ratio.len().max(1) as f64,
    }))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::contents::is_zero;

    #[test]
    fn mixes_are_drawn_in_proportion_and_bytes_are_stable() {
        let mut class = vec![0u8; 20_000];
        let mix = parse_mix("k", "zero:20,sparse:30,random:50").unwrap();
        classes(&mix, 0, 20_000, 7, &mut class);
        let n = |c: u8| class.iter().filter(|&&x| x == c).count() as f64 / 20_000.0;
        assert!(
            (n(0) - 0.2).abs() < 0.02 && (n(1) - 0.3).abs() < 0.02 && (n(2) - 0.5).abs() < 0.02
        );
        let lc = LaunchContents {
            class,
            corpora: vec![None; CLASSES.len()],
            seed: 7,
        };
        let (mut a, mut b) = ([0u8; 4096], [0u8; 4096]);
        for p in 0..50 {
            lc.page_bytes(p, &mut a);
            lc.page_bytes(p, &mut b);
            assert_eq!(a, b);
            match lc.class_of(p) {
                "zero" => assert!(a.iter().all(|&x| x == 0)),
                "sparse" => assert_eq!(
                    a.chunks_exact(8)
                        .filter(|w| w.iter().any(|&x| x != 0))
                        .count(),
                    8
                ),
                _ => assert!(a.iter().filter(|&&x| x == 0).count() < 100),
            }
        }
        assert!(parse_mix("k", "zero:20,random:30").is_err());
        assert!(parse_mix("k", "zero:50,foo:50").is_err());
    }

    /// The contents' own zero check against `is_zero` of the built page, for every page of every
    /// class — a corpus whose chunks are zero, zero but for the last byte, zero but for the first,
    /// and text — and the key: a page's bytes are the same whenever they are built, whatever the
    /// process has executed.
    #[test]
    fn zero_check_and_key_agree_with_the_built_page() {
        let mut bytes = vec![0u8; 4 * 4096];
        bytes[2 * 4096 - 1] = 1;
        bytes[2 * 4096] = 7;
        for (i, b) in bytes[3 * 4096..].iter_mut().enumerate() {
            *b = b"lorem ipsum "[i % 12];
        }
        let corpus = Corpus::from_bytes("t", bytes).unwrap();
        let mut class = vec![0u8; 4000];
        let mix = parse_mix("k", "zero:10,sparse:10,random:10,dickens:70").unwrap();
        classes(&mix, 0, 4000, 3, &mut class);
        let mut corpora = vec![None; CLASSES.len()];
        corpora[3] = Some(Arc::new(corpus));
        let mut lc = LaunchContents {
            class,
            corpora,
            seed: 3,
        };
        let mut first = Vec::new();
        let mut b = [0u8; 4096];
        let mut zero_by_class = [[0u32; 2]; 4];
        for p in 0..4000 {
            lc.page_bytes(p, &mut b);
            assert_eq!(lc.is_zero(p), is_zero(&b), "page {p} ({})", lc.class_of(p));
            assert_eq!(lc.content_key(p), Some(p));
            zero_by_class[lc.class[p as usize] as usize][is_zero(&b) as usize] += 1;
            first.push(b);
        }
        // Zero pages are zero, generated ones are not; corpus pages are both.
        assert_eq!(zero_by_class[0][0], 0);
        assert!(zero_by_class[0][1] > 0 && zero_by_class[1][0] > 0 && zero_by_class[2][0] > 0);
        assert!(
            zero_by_class[3][0] > 0 && zero_by_class[3][1] > 0,
            "{zero_by_class:?}"
        );
        lc.advance(1_000_000);
        for p in (0..4000).rev() {
            lc.page_bytes(p, &mut b);
            assert_eq!(b, first[p as usize], "page {p}");
        }
    }

    #[test]
    fn the_stream_times_launches_after_the_warmup() {
        let c = LaunchConfig {
            app_count: 2,
            repetitions: 3,
            run_ms: 2.0,
            refs_per_ms: 3,
            apps: Some(vec![
                LaunchApp {
                    name: "a".into(),
                    anon_mib: 0.0625,
                    file_mib: 0.0625,
                    anon_content: "zero:100".into(),
                    file_content: "random:100".into(),
                },
                LaunchApp {
                    name: "b".into(),
                    anon_mib: 0.0625,
                    file_mib: 0.125,
                    anon_content: "sparse:100".into(),
                    file_content: "random:100".into(),
                },
            ]),
            scale: 1.0,
            ..LaunchConfig::default()
        };
        let (mut w, _) = build_contents(&c, 1).unwrap();
        let mut out = Vec::new();
        while w.threads[0].fill(&mut out, 7).unwrap() {}
        let begins = out.iter().filter(|r| r.op == OP_BEGIN).count();
        let ends = out.iter().filter(|r| r.op == OP_END).count();
        // 2 apps × (3 − 1 warm-up) passes.
        assert_eq!((begins, ends), (4, 4));
        // Per pass and app: 2 ms of 3 references and a sleep each.
        assert_eq!(out.iter().filter(|r| r.op == OP_SLEEP).count(), 3 * 2 * 2);
        // The first launch of app b reads the first half of its 32 file pages in order, then writes
        // the first half of its 16 anonymous pages.
        let fb = w.mappings[3].start;
        let ab = w.mappings[2].start;
        let first_b: Vec<MemRef> = out
            .iter()
            .copied()
            .skip_while(|r| r.page != fb || r.op != super::super::OP_READ)
            .take(24)
            .collect();
        assert_eq!(
            first_b[..16],
            (fb..fb + 16).map(MemRef::read).collect::<Vec<_>>()[..]
        );
        assert_eq!(
            first_b[16..],
            (ab..ab + 8).map(MemRef::write).collect::<Vec<_>>()[..]
        );
    }

    #[test]
    fn start_up_cpu_is_spread_over_the_launch_and_adds_up_exactly() {
        // By hand: 10 µs over 3 references: ⌊10/3⌋ = 3, ⌊20/3⌋ − 3 = 3, 10 − 6 = 4.
        let mut buf = VecDeque::new();
        push_with_cpu(&mut buf, (0..3).map(MemRef::read), 3, 10);
        let ops: Vec<(u8, u32)> = buf.iter().map(|r| (r.op, r.page)).collect();
        assert_eq!(
            ops,
            [
                (0, 0),
                (OP_SLEEP, 3),
                (0, 1),
                (OP_SLEEP, 3),
                (0, 2),
                (OP_SLEEP, 4)
            ]
        );
        // Less CPU than references: only non-empty slices; no references: the work at once.
        buf.clear();
        push_with_cpu(&mut buf, (0..4).map(MemRef::read), 4, 2);
        let sleeps: Vec<u32> = buf
            .iter()
            .filter(|r| r.op == OP_SLEEP)
            .map(|r| r.page)
            .collect();
        assert_eq!(sleeps, [1, 1]);
        buf.clear();
        push_with_cpu(&mut buf, std::iter::empty(), 0, 7);
        assert_eq!(
            buf.iter().map(|r| (r.op, r.page)).collect::<Vec<_>>(),
            [(OP_SLEEP, 7)]
        );

        // In the stream: each launch (timed or not) carries startup_cpu_ms × scale, and its memory
        // references are those of the run without it.
        let base = LaunchConfig {
            app_count: 3,
            repetitions: 2,
            run_ms: 1.0,
            refs_per_ms: 2,
            scale: 0.25,
            ..LaunchConfig::default()
        };
        let with = LaunchConfig {
            startup_cpu_ms: 40.0,
            ..base.clone()
        };
        let drain = |c: &LaunchConfig| {
            let (mut w, _) = build_contents(c, 3).unwrap();
            let mut out = Vec::new();
            while w.threads[0].fill(&mut out, 1000).unwrap() {}
            out
        };
        let (plain, cpu) = (drain(&base), drain(&with));
        let refs =
            |v: &[MemRef]| -> Vec<MemRef> { v.iter().copied().filter(|r| r.op <= 1).collect() };
        assert_eq!(refs(&plain), refs(&cpu));
        // Sleeps beyond the run phase's 1 ms ones, per launch: 40 ms × 0.25 = 10,000 µs.
        let extra: u64 = cpu
            .iter()
            .filter(|r| r.op == OP_SLEEP)
            .map(|r| r.page as u64)
            .sum::<u64>()
            - plain
                .iter()
                .filter(|r| r.op == OP_SLEEP)
                .map(|r| r.page as u64)
                .sum::<u64>();
        assert_eq!(extra, 3 * 2 * 10_000);
        // The timed launch windows hold exactly that much.
        let mut inside = Vec::new();
        let mut open = None;
        for r in &cpu {
            match r.op {
                OP_BEGIN => open = Some(0u64),
                OP_END => inside.push(open.take().unwrap()),
                OP_SLEEP => {
                    if let Some(t) = open.as_mut() {
                        *t += r.page as u64
                    }
                }
                _ => {}
            }
        }
        assert_eq!(inside, vec![10_000; 3]);
        let bad = LaunchConfig {
            startup_cpu_ms: -1.0,
            ..base
        };
        let e = bad.validate("workload").unwrap_err().to_string();
        assert!(e.contains("workload.startup_cpu_ms"), "{e}");
    }
}
