use nandstack_compress::{Algorithm, Compressor};
use nandstack_workload::content::{Corpus, MemtouchParams, MemtouchProgram, PAGE_BYTES};
use std::path::Path;

fn huge_threshold(chain: usize) -> usize {
    let mut huge = 0;
    for i in (0..=254).rev() {
        let size = (32 + i * 16).min(4096);
        let mut best = 1;
        let mut waste = usize::MAX;
        for k in 1..=chain {
            let w = (k * 4096) % size;
            if w < waste {
                waste = w;
                best = k;
            }
        }
        let objs = best * 4096 / size;
        if best != 1 && objs != 1 && huge == 0 {
            huge = size - 7;
        }
    }
    huge
}

fn main() {
    let shared = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../../shared/traces");
    let huge = huge_threshold(8);
    println!("huge threshold {huge}");
    let mut files: Vec<_> = std::fs::read_dir(shared.join("kernel-zram"))
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|e| e == "json"))
        .collect();
    files.sort();
    for f in files {
        let j: serde_json::Value =
            serde_json::from_str(&std::fs::read_to_string(&f).unwrap()).unwrap();
        let cmd: Vec<String> = j["command"]
            .as_array()
            .unwrap()
            .iter()
            .map(|v| v.as_str().unwrap().to_string())
            .collect();
        let params = MemtouchParams::from_command(&cmd).unwrap();
        let corpus = params
            .content
            .corpus_name()
            .map(|n| Corpus::load(&shared.join("compress"), n).unwrap());
        let mut prog = MemtouchProgram::new(params.clone(), corpus).unwrap();
        {
            // Fill phase only: the first k pages, in order, as stored while the program still fills.
            let alg = Algorithm::parse(j["zram"]["comp_algorithm"].as_str().unwrap()).unwrap();
            let mut c = Compressor::new(alg).unwrap();
            let mut prefix = vec![0u64];
            let mut page = [0u8; PAGE_BYTES];
            for p in 0..params.pages {
                prog.image().page_bytes(p, &mut page);
                let mut l = c.compressed_len(&page).unwrap();
                if l >= huge {
                    l = 4096;
                }
                let zero = prog.image().origin(p) == nandstack_workload::content::PageOrigin::Zero;
                prefix.push(prefix.last().unwrap() + if zero { 0 } else { l as u64 });
            }
            for r in j["mm_series"].as_array().unwrap() {
                let k = r[1].as_u64().unwrap() / 4096;
                if k < 100 || k > 15000 {
                    continue;
                }
                let kc = r[2].as_u64().unwrap();
                println!(
                    "   fill t={} k={} kernel {} model {} ({:+.3}%)",
                    r[0],
                    k,
                    kc,
                    prefix[k as usize],
                    (prefix[k as usize] as f64 / kc as f64 - 1.0) * 100.0
                );
            }
        }
        prog.run_to_end();
        let alg = Algorithm::parse(j["zram"]["comp_algorithm"].as_str().unwrap()).unwrap();
        let mut c = Compressor::new(alg).unwrap();
        let mm = &j["mm_stat_at_end"];
        let stored = mm["orig_data_size"].as_u64().unwrap() / 4096;
        let compr = mm["compr_data_size"].as_u64().unwrap();
        let mut page = [0u8; PAGE_BYTES];
        let (mut sum_all, mut n_all, mut sum_cold, mut n_cold, mut huge_all) =
            (0u64, 0u64, 0u64, 0u64, 0u64);
        for p in 0..params.pages {
            if prog.image().origin(p) == nandstack_workload::content::PageOrigin::Zero
                && prog.image().written_words(p) == 0
            {
                continue;
            }
            prog.image().page_bytes(p, &mut page);
            let mut l = c.compressed_len(&page).unwrap();
            if l >= huge {
                l = 4096;
                huge_all += 1;
            }
            sum_all += l as u64;
            n_all += 1;
            if p >= params.pages / 5 {
                sum_cold += l as u64;
                n_cold += 1;
            }
        }
        let mean_all = sum_all as f64 / n_all as f64;
        let mean_cold = sum_cold as f64 / n_cold as f64;
        println!("{:45} {:8} stored {:6} huge_kernel {:6} kernel mean {:7.1} | model mean all {:7.1} ({:+.2}%) cold {:7.1} ({:+.2}%) huge frac {:.3}",
            f.file_name().unwrap().to_string_lossy(), alg.name(), stored, mm["huge_pages"], compr as f64 / stored as f64,
            mean_all, (mean_all * stored as f64 / compr as f64 - 1.0) * 100.0, mean_cold, (mean_cold * stored as f64 / compr as f64 - 1.0) * 100.0, huge_all as f64 / n_all as f64);
    }
}
