//! Byte-identity against the real program: compile `shared/tools/memtouch.c` with gcc, with two shims
//! linked in (its `mmap` remembers the first anonymous mapping, its `printf` — called once, for the
//! "done" line — first dumps that mapping to `$MEMTOUCH_DUMP`), run it, and compare every page of the dump
//! with [`PageImage::page_bytes`] after the same replay. Skipped, saying so, when gcc or the shared
//! directory is missing.

use std::path::{Path, PathBuf};
use std::process::Command;

use super::*;

const SHIM_C: &str = r#"
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/mman.h>
static void *region; static size_t region_len;
void *nsk_mmap(void *a, size_t l, int p, int f, int fd, off_t o) {
  void *r = mmap(a, l, p, f, fd, o);
  if (!region && (f & MAP_ANONYMOUS) && r != MAP_FAILED) { region = r; region_len = l; }
  return r;
}
int nsk_printf(const char *fmt, ...) {
  const char *path = getenv("MEMTOUCH_DUMP");
  if (path && region) {
    FILE *f = fopen(path, "wb");
    if (!f || fwrite(region, 1, region_len, f) != region_len || fclose(f)) { perror("dump"); exit(3); }
  }
  va_list ap; va_start(ap, fmt); int n = vprintf(fmt, ap); va_end(ap); return n;
}
"#;

fn shared() -> Option<PathBuf> {
    let d = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../../shared");
    if d.join("tools/memtouch.c").is_file() {
        Some(d)
    } else {
        eprintln!("SKIPPED: {} has no tools/memtouch.c", d.display());
        None
    }
}

/// Build memtouch with the shims in `dir`; `None` (with a note) if gcc is missing.
fn build(shared: &Path, dir: &Path) -> Option<PathBuf> {
    if Command::new("gcc").arg("--version").output().is_err() {
        eprintln!("SKIPPED: gcc not found");
        return None;
    }
    std::fs::write(dir.join("shim.c"), SHIM_C).unwrap();
    let run = |args: &[&str]| {
        let out = Command::new("gcc")
            .args(args)
            .current_dir(dir)
            .output()
            .unwrap();
        assert!(
            out.status.success(),
            "gcc {args:?}: {}",
            String::from_utf8_lossy(&out.stderr)
        );
    };
    let src = shared.join("tools/memtouch.c");
    run(&[
        "-O2",
        "-c",
        "-Dmmap=nsk_mmap",
        "-Dprintf=nsk_printf",
        src.to_str().unwrap(),
        "-o",
        "memtouch.o",
    ]);
    run(&["-O2", "-c", "shim.c", "-o", "shim.o"]);
    run(&["memtouch.o", "shim.o", "-lm", "-o", "memtouch"]);
    Some(dir.join("memtouch"))
}

fn check(bin: &Path, dir: &Path, args: &[&str], corpus: Option<Corpus>) {
    let dump = dir.join("dump.bin");
    let out = Command::new(bin)
        .args(args)
        .env("MEMTOUCH_DUMP", &dump)
        .current_dir(dir)
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "memtouch {args:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    let real = std::fs::read(&dump).unwrap();
    let mut command = vec!["memtouch"];
    command.extend_from_slice(args);
    let params = MemtouchParams::from_command(&command).unwrap();
    let mut prog = MemtouchProgram::new(params.clone(), corpus).unwrap();
    prog.run_to_end();
    assert_eq!(real.len() as u64, params.pages * PAGE_BYTES as u64);
    let mut page = [0u8; PAGE_BYTES];
    let mut written = 0;
    for p in 0..params.pages {
        prog.image().page_bytes(p, &mut page);
        let i = p as usize * PAGE_BYTES;
        assert!(
            real[i..i + PAGE_BYTES] == page[..],
            "memtouch {args:?}: page {p} differs"
        );
        written += prog.image().written_words(p);
    }
    assert!(written > 0 || args[3] == "0");
    std::fs::remove_file(&dump).unwrap();
}

#[test]
fn every_content_mode_is_byte_identical_to_memtouch_c() {
    let Some(shared) = shared() else { return };
    let dir = tempfile::tempdir().unwrap();
    let Some(bin) = build(&shared, dir.path()) else {
        return;
    };
    let xml = Corpus::load(&shared.join("traces/compress"), "xml").unwrap();
    std::fs::write(dir.path().join("xml"), xml.bytes()).unwrap();
    let cases: [(&[&str], bool); 6] = [
        (&["700", "5000", "uniform", "50", "71", "sparse"], false),
        (&["300", "3000", "seq", "100", "74", "random"], false),
        (&["1400", "6000", "hot", "30", "72", "corpus:xml"], true),
        (&["900", "6000", "normal", "50", "73", "mix:50:xml"], true),
        (&["900", "4000", "uniform", "50", "75", "zero:40:xml"], true),
        (&["64", "100", "hot", "0", "9"], false),
    ];
    for (args, needs_corpus) in cases {
        check(&bin, dir.path(), args, needs_corpus.then(|| xml.clone()));
    }
}
