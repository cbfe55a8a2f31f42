//! Ground truth for compressed swap: the real kernel's zram and zswap captures (`../shared/traces/
//! kernel-zram/`, `kernel-zswap/`) against memtouch's page contents (nandstack-workload), the kernel's
//! compressors (nandstack-compress) and zsmalloc (this crate).
//!
//! While memtouch fills its pages in order, the memory cgroup evicts the oldest first, so the pool holds
//! exactly the first k non-zero pages, as they were filled (plus a handful of other pages that stay put).
//! Between two samples of the fill, the kernel's growth of `compr_data_size` (zram) is the sum of the
//! compressed lengths of the pages that went out, and the growth of `mem_used_total` (zram) or
//! `pool_total_size` (zswap) is what zsmalloc took for them — no frees yet, so no holes. At the end of a
//! run the set of stored pages is unknown, but their contents are the program's final memory image (a
//! page written after its swap-out is swapped in, which frees its copy), so `compr_data_size` is checked
//! against the stored count times the mean compressed length over the pages that can be stored.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use nandstack_compress::{Algorithm, Compressor};
use nandstack_host::zpool::{Zpool, Zsmalloc};
use nandstack_workload::content::{
    AccessPattern, Corpus, MemtouchParams, MemtouchProgram, PageOrigin, PAGE_BYTES,
};

fn traces() -> Option<PathBuf> {
    let d = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../../shared/traces");
    if d.join("kernel-zram").is_dir() && d.join("kernel-zswap").is_dir() {
        Some(d)
    } else {
        eprintln!("SKIPPED: ../shared/traces/kernel-zram or kernel-zswap not found");
        None
    }
}

/// Stored length of one page: zram keeps a page whole from zsmalloc's huge-class size up; zswap keeps a
/// page whole when compression does not bring it under a page.
fn stored_len(zram: bool, huge: u32, compressed: usize) -> u32 {
    let c = compressed as u32;
    if (zram && c >= huge) || (!zram && c >= PAGE_BYTES as u32) {
        PAGE_BYTES as u32
    } else {
        c
    }
}

struct Model {
    /// Per non-zero page of the fill, in order: cumulative stored bytes and zsmalloc pages.
    prefix_bytes: Vec<u64>,
    prefix_pages: Vec<u64>,
    /// Mean stored length over the pages that can be in the pool at the end.
    end_mean: f64,
}

fn model(dir: &Path, command: &[String], alg: Algorithm, zram: bool) -> Model {
    let params = MemtouchParams::from_command(command).unwrap();
    let corpus = params
        .content
        .corpus_name()
        .map(|n| Corpus::load(&dir.join("compress"), n).unwrap());
    let mut prog = MemtouchProgram::new(params.clone(), corpus).unwrap();
    let mut c = Compressor::new(alg).unwrap();
    let mut pool = Zsmalloc::new();
    let huge = pool.huge_class_size();
    let mut page = [0u8; PAGE_BYTES];
    let (mut prefix_bytes, mut prefix_pages) = (vec![0u64], vec![0u64]);
    for p in 0..params.pages {
        if prog.image().origin(p) == PageOrigin::Zero {
            continue; // kept by the swap layer as a bit (swpout_zero)
        }
        prog.image().page_bytes(p, &mut page);
        let len = stored_len(zram, huge, c.compressed_len(&page).unwrap());
        pool.alloc(len).unwrap();
        prefix_bytes.push(prefix_bytes.last().unwrap() + len as u64);
        prefix_pages.push(pool.total_pages());
    }
    prog.run_to_end();
    // Under the hot pattern the first fifth stays resident; elsewhere any page can be out.
    let first = if params.pattern == AccessPattern::Hot {
        params.pages / 5
    } else {
        0
    };
    let (mut sum, mut n) = (0u64, 0u64);
    for p in first..params.pages {
        let img = prog.image();
        if img.origin(p) == PageOrigin::Zero && img.written_words(p) == 0 {
            continue;
        }
        img.page_bytes(p, &mut page);
        sum += stored_len(zram, huge, c.compressed_len(&page).unwrap()) as u64;
        n += 1;
    }
    Model {
        prefix_bytes,
        prefix_pages,
        end_mean: sum as f64 / n as f64,
    }
}

/// (kernel growth, model growth) summed over consecutive samples of the fill: the opening run of samples
/// whose stored count only grows, from 100 to 15,000 pages (the pool holds 16 k pages when the fill ends).
fn fill_growth(samples: &[(u64, u64)], prefix: &[u64]) -> (u64, u64) {
    let mut fill = Vec::new();
    for s in samples {
        if fill.last().is_some_and(|(k, _)| s.0 <= *k)
            || s.0 > 15_000
            || s.0 as usize >= prefix.len()
        {
            break;
        }
        if s.0 >= 100 {
            fill.push(*s);
        }
    }
    let (mut kernel, mut model) = (0, 0);
    for w in fill.windows(2) {
        let ((k0, v0), (k1, v1)) = (w[0], w[1]);
        if v1 >= v0 {
            kernel += v1 - v0;
            model += prefix[k1 as usize] - prefix[k0 as usize];
        }
    }
    (kernel, model)
}

fn pct(model: u64, kernel: u64) -> f64 {
    (model as f64 / kernel as f64 - 1.0) * 100.0
}

#[test]
fn compressed_lengths_and_pool_pages_match_the_kernel() {
    let Some(dir) = traces() else { return };
    let mut cache: BTreeMap<(Vec<String>, Algorithm, bool), Model> = BTreeMap::new();
    let mut rows = Vec::new();
    for (sub, zram) in [("kernel-zram", true), ("kernel-zswap", false)] {
        let mut files: Vec<_> = std::fs::read_dir(dir.join(sub))
            .unwrap()
            .map(|e| e.unwrap().path())
            .filter(|p| p.extension().is_some_and(|e| e == "json"))
            .collect();
        files.sort();
        for f in files {
            let j: serde_json::Value =
                serde_json::from_str(&std::fs::read_to_string(&f).unwrap()).unwrap();
            let command: Vec<String> = j["command"]
                .as_array()
                .unwrap()
                .iter()
                .map(|v| v.as_str().unwrap().to_string())
                .collect();
            let alg_name = if zram {
                j["zram"]["comp_algorithm"].as_str()
            } else {
                j["zswap"]["compressor"].as_str()
            };
            let alg = Algorithm::parse(alg_name.unwrap()).unwrap();
            let m = cache
                .entry((command.clone(), alg, zram))
                .or_insert_with(|| model(&dir, &command, alg, zram));
            let name = f.file_stem().unwrap().to_string_lossy().to_string();
            let u = |v: &serde_json::Value| v.as_u64().unwrap();
            if zram {
                let series: Vec<&Vec<serde_json::Value>> = j["mm_series"]
                    .as_array()
                    .unwrap()
                    .iter()
                    .map(|r| r.as_array().unwrap())
                    .collect();
                let compr: Vec<_> = series.iter().map(|r| (u(&r[1]) / 4096, u(&r[2]))).collect();
                let pool: Vec<_> = series
                    .iter()
                    .map(|r| (u(&r[1]) / 4096, u(&r[3]) / 4096))
                    .collect();
                let (kc, mc) = fill_growth(&compr, &m.prefix_bytes);
                let (kp, mp) = fill_growth(&pool, &m.prefix_pages);
                let mm = &j["mm_stat_at_end"];
                let stored = u(&mm["orig_data_size"]) / 4096;
                let end_model = (m.end_mean * stored as f64) as u64;
                let end_kernel = u(&mm["compr_data_size"]);
                rows.push((name, alg, kc, mc, kp, mp, end_kernel, end_model));
            } else {
                let series: Vec<_> = j["zswap_series"]
                    .as_array()
                    .unwrap()
                    .iter()
                    .map(|r| (u(&r[1]), u(&r[2]) / 4096))
                    .collect();
                let (kp, mp) = fill_growth(&series, &m.prefix_pages);
                rows.push((name, alg, 0, 0, kp, mp, 0, 0));
            }
        }
    }
    println!("capture | compressor | fill: compressed bytes kernel / model | fill: pool pages kernel / model | end: compressed bytes kernel / model");
    for (name, alg, kc, mc, kp, mp, ek, em) in &rows {
        let c = if *kc > 0 {
            format!("{kc} / {mc} ({:+.3}%)", pct(*mc, *kc))
        } else {
            "-".into()
        };
        let p = if *kp > 0 {
            format!("{kp} / {mp} ({:+.2}%)", pct(*mp, *kp))
        } else {
            "-".into()
        };
        let e = if *ek > 0 {
            format!("{ek} / {em} ({:+.2}%)", pct(*em, *ek))
        } else {
            "-".into()
        };
        println!("{name} | {alg} | {c} | {p} | {e}");
    }
    // Compressed bytes: every capture. Pool pages depend on which pages are in flight at a sample, so
    // each program is judged by the median of its repetitions, as the captures' README advises.
    let mut pool_by_program: BTreeMap<String, Vec<f64>> = BTreeMap::new();
    for (name, _, kc, mc, kp, mp, ek, em) in &rows {
        if *kc > 0 {
            assert!(
                pct(*mc, *kc).abs() < 0.1,
                "{name}: fill compressed bytes {kc} vs {mc}"
            );
        }
        if *kp > 500 {
            let program = name.rsplit_once("_r").unwrap().0.to_string();
            pool_by_program
                .entry(program)
                .or_default()
                .push(pct(*mp, *kp));
        }
        if *ek > 0 {
            assert!(
                pct(*em, *ek).abs() < 1.0,
                "{name}: end compressed bytes {ek} vs {em}"
            );
        }
    }
    assert!(pool_by_program.len() >= 6);
    for (program, mut v) in pool_by_program {
        v.sort_by(f64::total_cmp);
        let median = v[v.len() / 2];
        assert!(
            median.abs() < 2.0,
            "{program}: fill pool pages off by {median:+.2}% (median of {v:?})"
        );
    }
}
