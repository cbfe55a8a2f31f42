//! A kernel-swap capture's requests counted as `experiments/kernel_swap.py` counts them — the sizes of the
//! read and write requests, how many of each follow the previous one, and the discarded pages issued before
//! the last read or write — in one pass in Rust (the Python reader took 60 % of `reproduce kernel-swap`).
//!
//! The Python reader stays the reference: this one accepts only what that one reads the same way (a
//! gzip file, UTF-8 lines of at most [`MAX_LINE`] bytes without `\r`, at least five comma-separated
//! fields, the time a float and the sector and length whole numbers as Rust parses them), and answers
//! anything else with an error, on which the caller runs the reference, which gives the canonical
//! message. `tests/test_kernel_swap.py` checks the two agree on every shared capture and on edge files.

use std::collections::BTreeMap;
use std::fs::File;
use std::io::BufRead;
use std::path::Path;

use nandstack_core::{Error, Result};
use nandstack_workload::trace::{decompress, Compression};
use serde_json::{json, Value};

/// The longest line read (the Python reader's limit is 4,096 characters; real lines are about 40).
pub const MAX_LINE: usize = 1024;

/// What one capture's requests add up to.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct RequestCounts {
    /// Requests by size in 4 KiB pages (`sectors / 8`): reads, then writes.
    pub sizes: [BTreeMap<u64, u64>; 2],
    /// Requests that start where the previous one of the same direction ended: reads, then writes.
    pub sequential: [u64; 2],
    /// Pages discarded at or before the last read or write.
    pub discard_pages: u64,
}

impl RequestCounts {
    /// `{"read": [[pages, requests], …], "write": […], "sequential": [reads, writes], "discard_pages": n}`.
    pub fn to_json(&self) -> Value {
        let pairs =
            |m: &BTreeMap<u64, u64>| m.iter().map(|(p, n)| json!([p, n])).collect::<Vec<_>>();
        json!({
            "read": pairs(&self.sizes[0]),
            "write": pairs(&self.sizes[1]),
            "sequential": self.sequential,
            "discard_pages": self.discard_pages,
        })
    }
}

/// Count the requests (`time_s,op,sector,sectors,comm` after a header line) of the gzip file `path`.
/// An error for anything the reference reader might read differently (see the module documentation).
pub fn request_counts(path: &Path) -> Result<RequestCounts> {
    let bad = |line: u64, msg: &str| Error::Trace {
        file: path.display().to_string(),
        line,
        text: String::new(),
        msg: msg.into(),
    };
    let io = |e: std::io::Error| Error::Io {
        path: path.display().to_string(),
        source: e,
    };
    let f = File::open(path).map_err(io)?;
    let (kind, mut r) = decompress(f).map_err(io)?;
    if kind != Compression::Gzip {
        return Err(bad(0, "not a gzip file"));
    }
    let mut c = RequestCounts::default();
    let mut next: [Option<u64>; 2] = [None, None];
    let mut discards: Vec<(f64, u64)> = Vec::new();
    let mut last_rw = f64::NEG_INFINITY;
    let mut buf = String::new();
    for n in 1u64.. {
        buf.clear();
        if r.read_line(&mut buf).map_err(io)? == 0 {
            break;
        }
        if buf.len() > MAX_LINE || buf.contains('\r') {
            return Err(bad(n, "a long line or a carriage return"));
        }
        if n == 1 {
            continue;
        }
        let line = buf.strip_suffix('\n').unwrap_or(&buf);
        let mut fields = line.splitn(5, ',');
        let (Some(t), Some(op), Some(sector), Some(sectors), Some(_)) = (
            fields.next(),
            fields.next(),
            fields.next(),
            fields.next(),
            fields.next(),
        ) else {
            return Err(bad(n, "fewer than five fields"));
        };
        let (Ok(t), Ok(start), Ok(len)) = (
            t.parse::<f64>(),
            sector.parse::<u64>(),
            sectors.parse::<u64>(),
        ) else {
            return Err(bad(n, "a field that is not a number"));
        };
        match op {
            "R" | "W" => {
                let w = (op == "W") as usize;
                last_rw = last_rw.max(t);
                c.sequential[w] += (next[w] == Some(start)) as u64;
                next[w] = Some(start.checked_add(len).ok_or_else(|| bad(n, "overflow"))?);
                *c.sizes[w].entry(len / 8).or_insert(0) += 1;
            }
            "D" => discards.push((t, len / 8)),
            _ => {}
        }
    }
    c.discard_pages = discards
        .iter()
        .filter(|&&(t, _)| t <= last_rw)
        .map(|&(_, p)| p)
        .sum();
    Ok(c)
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::io::Write;

    fn gz(dir: &Path, name: &str, text: &str) -> std::path::PathBuf {
        let p = dir.join(name);
        let mut e =
            flate2::write::GzEncoder::new(File::create(&p).unwrap(), flate2::Compression::fast());
        e.write_all(text.as_bytes()).unwrap();
        e.finish().unwrap();
        p
    }

    /// Counted by hand: sizes, sequential follow-ups per direction, discards before the last read or
    /// write only.
    #[test]
    fn counts_a_small_capture_by_hand() {
        let dir = tempfile::tempdir().unwrap();
        let p = gz(
            dir.path(),
            "a.csv.gz",
            "time_s,op,sector,sectors,comm\n\
             0.1,W,8,16,kswapd0\n0.2,W,24,8,memtouch\n0.3,R,8,8,memtouch\n0.35,D,0,64,x\n\
             0.4,R,100,8,a,b\n0.5,W,0,8,m\n0.6,X,1,1,m\n0.7,D,0,80,m",
        );
        let c = request_counts(&p).unwrap();
        assert_eq!(c.sizes[1], BTreeMap::from([(2, 1), (1, 2)]));
        assert_eq!(c.sizes[0], BTreeMap::from([(1, 2)]));
        // W 24 follows W 8+16; no read follows the previous read.
        assert_eq!(c.sequential, [0, 1]);
        // The discard at 0.35 s is before the last write (0.5 s); the one at 0.7 s is not.
        assert_eq!(c.discard_pages, 8);
    }

    /// What the reference might read otherwise is an error, never a count.
    #[test]
    fn refuses_what_the_reference_reads_otherwise() {
        let dir = tempfile::tempdir().unwrap();
        let head = "time_s,op,sector,sectors,comm\n";
        for (i, body) in [
            "0.1,W,8,16\n",
            "0.1,W,-8,16,m\n",
            "0.1,W,8,1_6,m\n",
            " 0.1,W,8,16,m\n",
            "0.1,W,8,16,m\r\n",
            "\n",
            "0.1,W,18446744073709551615,16,m\n",
        ]
        .iter()
        .enumerate()
        {
            let p = gz(dir.path(), &format!("{i}.csv.gz"), &format!("{head}{body}"));
            assert!(request_counts(&p).is_err(), "{body:?}");
        }
        let long = format!("{head}0.1,W,8,16,{}\n", "m".repeat(MAX_LINE));
        assert!(request_counts(&gz(dir.path(), "long.csv.gz", &long)).is_err());
        let plain = dir.path().join("plain.csv.gz");
        std::fs::write(&plain, format!("{head}0.1,W,8,16,m\n")).unwrap();
        assert!(request_counts(&plain).is_err(), "not gzip");
    }
}
