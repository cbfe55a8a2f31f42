//! The host crate's floors, checked: every top-level module sits on one floor and uses (`crate::…`,
//! or `super::` reaching the crate root) only modules on its floor or below. docs/architecture.md draws
//! them. A new module gets a floor here; an upward use fails `cargo test -p nandstack-host floors`.

use std::path::Path;

/// Bottom to top. A module may use the modules of its own floor and of the floors below it.
const FLOORS: &[(&str, &[&str])] = &[
    // Page bytes, the compressors' CPU cost, the block layer to the device and the task's plug.
    ("base", &["contents", "compressor", "block", "plug"]),
    // Memory-reference generators and their configs (the host builds them; they know no host).
    ("workloads", &["workloads"]),
    // Pages, frames, LRU lists, memory cgroups, workingset shadows.
    ("vm", &["vm"]),
    // Where pages go when they leave RAM, above the frames: swap slots (slot map, swap cache,
    // allocators, readahead, discard) and the page cache's file pages.
    ("swap", &["swap", "pagecache"]),
    // Compressed-page pools (zsmalloc, z3fold, zbud), used by zram and zswap alike (mm/).
    ("zpool", &["zpool"]),
    // Swap backends: block, loop, zram, ZNSwap; each with its config and checks.
    ("backend", &["backend"]),
    // zswap, the compressed cache in front of the backend, with its policies (ezswap).
    ("compress", &["zswap"]),
    // Reclaim policies over a narrow view of the host (`ReclaimHost`).
    ("reclaim", &["reclaim"]),
    // The host: threads, faults, the event loop, ZNGC's driver; its configuration gathers the floors'.
    ("host", &["host", "config"]),
];

/// The floor of top-level module `m`, or `None` if it has none.
fn floor_of(m: &str) -> Option<usize> {
    FLOORS.iter().position(|(_, ms)| ms.contains(&m))
}

/// The top-level modules that `line` (one line of a file of module path `path`, e.g. `["swap",
/// "discard", "itrim"]`) names through `crate::` or through `super::` chains that reach the crate
/// root. Comment lines name nothing.
fn named(line: &str, path: &[String]) -> Vec<String> {
    let t = line.trim_start();
    if t.starts_with("//") {
        return Vec::new();
    }
    let ident = |s: &str| -> String {
        s.chars()
            .take_while(|c| c.is_ascii_alphanumeric() || *c == '_')
            .collect()
    };
    let mut out = Vec::new();
    let bytes = t.as_bytes();
    for (i, _) in t.match_indices("crate::") {
        // `nandstack_crate::` and the like are not the crate root.
        if i > 0 && (bytes[i - 1].is_ascii_alphanumeric() || bytes[i - 1] == b'_') {
            continue;
        }
        let rest = &t[i + "crate::".len()..];
        if let Some(group) = rest.strip_prefix('{') {
            // `use crate::{a::X, b};`: the group on this line.
            let end = group.find('}').unwrap_or(group.len());
            out.extend(group[..end].split(',').map(|p| ident(p.trim())));
        } else {
            out.push(ident(rest));
        }
    }
    // `super::super::m` from a file `depth` modules deep reaches the root after `depth` supers.
    let mut rest = t;
    while let Some(i) = rest.find("super::") {
        let before_ok = i == 0 || {
            let b = rest.as_bytes()[i - 1];
            !(b.is_ascii_alphanumeric() || b == b'_' || b == b':')
        };
        let mut n = 0;
        let mut s = &rest[i..];
        while let Some(r) = s.strip_prefix("super::") {
            n += 1;
            s = r;
        }
        if before_ok && n >= path.len() {
            out.push(ident(s));
        }
        rest = s;
    }
    out.retain(|m| !m.is_empty());
    out
}

/// Every use of a module above the user's floor in the sources of `files` (module path, text):
/// `"file: module m (floor) uses n (floor)"`; also modules without a floor.
fn upward(files: &[(Vec<String>, String, String)]) -> Vec<String> {
    let mut bad = Vec::new();
    for (path, name, text) in files {
        let top = &path[0];
        let Some(f) = floor_of(top) else {
            bad.push(format!(
                "{name}: module `{top}` has no floor (add it to FLOORS)"
            ));
            continue;
        };
        for (no, line) in text.lines().enumerate() {
            for m in named(line, path) {
                match floor_of(&m) {
                    Some(g) if g <= f => {}
                    Some(g) => bad.push(format!(
                        "{name}:{}: `{top}` (floor {}) uses `{m}` (floor {}, above)",
                        no + 1,
                        FLOORS[f].0,
                        FLOORS[g].0
                    )),
                    // Items of the crate root (`super::super::OP_READ` from a test module) are not
                    // modules.
                    None if m == "self"
                        || m == "super"
                        || !m.starts_with(|c: char| c.is_lowercase()) => {}
                    None => bad.push(format!("{name}:{}: `{m}` has no floor", no + 1)),
                }
            }
        }
    }
    bad
}

/// The crate's source files under `dir`: (module path, file name, text); `lib.rs` and this file left
/// out.
fn sources(dir: &Path, prefix: &[String], out: &mut Vec<(Vec<String>, String, String)>) {
    let mut entries: Vec<_> = std::fs::read_dir(dir)
        .expect("the crate's src folder")
        .map(|e| e.expect("a folder entry").path())
        .collect();
    entries.sort();
    for p in entries {
        let stem = p.file_stem().unwrap().to_string_lossy().into_owned();
        if p.is_dir() {
            let mut sub = prefix.to_vec();
            sub.push(stem);
            sources(&p, &sub, out);
        } else if p.extension().is_some_and(|e| e == "rs") {
            if prefix.is_empty() && (stem == "lib" || stem == "floors") {
                continue;
            }
            let mut path = prefix.to_vec();
            if stem != "mod" {
                path.push(stem);
            }
            let text = std::fs::read_to_string(&p).expect("a source file");
            out.push((path, p.display().to_string(), text));
        }
    }
}

fn file(path: &[&str], text: &str) -> (Vec<String>, String, String) {
    let path: Vec<String> = path.iter().map(|s| s.to_string()).collect();
    (path.clone(), path.join("/"), text.to_string())
}

#[test]
fn no_module_uses_one_above_its_floor() {
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let mut files = Vec::new();
    sources(&src, &[], &mut files);
    assert!(
        files.len() > 100,
        "the crate's sources: {} files",
        files.len()
    );
    let bad = upward(&files);
    assert!(bad.is_empty(), "uses above a floor:\n{}", bad.join("\n"));
}

#[test]
fn every_top_level_module_has_one_floor() {
    let lib = std::fs::read_to_string(Path::new(env!("CARGO_MANIFEST_DIR")).join("src/lib.rs"))
        .expect("lib.rs");
    let mods: Vec<&str> = lib
        .lines()
        .filter_map(|l| {
            l.strip_prefix("pub mod ")
                .or_else(|| l.strip_prefix("mod "))
        })
        .map(|l| l.trim_end_matches(';'))
        .filter(|m| *m != "floors")
        .collect();
    assert!(mods.len() >= 10, "{mods:?}");
    for m in &mods {
        let n = FLOORS.iter().filter(|(_, ms)| ms.contains(m)).count();
        assert_eq!(n, 1, "module `{m}` is on {n} floors");
    }
    for (_, ms) in FLOORS {
        for m in *ms {
            assert!(
                mods.contains(m),
                "FLOORS names `{m}`, which lib.rs does not declare"
            );
        }
    }
}

#[test]
fn the_check_catches_an_upward_use() {
    let up = [
        file(&["swap", "discard", "itrim"], "use crate::host::Host;\n"),
        file(
            &["vm", "memcg"],
            "    let z: crate::zswap::Zswap = todo!();\n",
        ),
        file(
            &["backend", "zram"],
            "use crate::{vm::page::NONE, reclaim::ReclaimHost};\n",
        ),
        file(
            &["zpool", "zbud"],
            "use super::super::config::HostConfig;\n",
        ),
        file(&["novel"], "use crate::vm::Vm;\n"),
    ];
    for f in &up {
        assert_eq!(upward(std::slice::from_ref(f)).len(), 1, "{}: {}", f.1, f.2);
    }
    let fine = [
        file(
            &["host", "build"],
            "use crate::swap::SwapArea;\nuse crate::{vm::Vm, zswap::Zswap};\n",
        ),
        file(
            &["swap", "discard", "itrim"],
            "use super::IdleTrimConfig;\n// crate::host::Host\n",
        ),
        file(&["zswap", "policy", "lru"], "use super::super::Zswap;\n"),
        file(&["backend", "znswap"], "use nandstack_core::Result;\n"),
    ];
    for f in &fine {
        assert_eq!(
            upward(std::slice::from_ref(f)),
            Vec::<String>::new(),
            "{}",
            f.1
        );
    }
}
