//! nsref: nandstack's replayable memory-reference file format (documented in docs/model-host.md).
//!
//! Text, one record per line, optionally compressed (gzip, bzip2, xz, zstd — detected on read):
//!
//! ```text
//! # nsref 1 pages=32768 threads=1
//! W 0
//! R 17
//! B
//! E
//! S 250
//! U 1000
//! ```
//!
//! * first line: the header `# nsref 1 pages=<address-space pages>` (other `#` lines are comments);
//! * `R <page>` / `W <page>`: a read / write of a page of the process (0-based, < pages);
//! * `B` / `E`: begin / end of an application request;
//! * `S <µs>`: sleep; `U <ms>`: wait until that time since the process started.
//!
//! The same tokens without the space (`R17`, `S250`) form the `inline` workload's reference string.

use std::fs::File;
use std::io::{BufWriter, Write};

use nandstack_core::{Error, Result};

use super::config::InlineConfig;
use super::{layout, MapKind, MemRef, VecStream, Workload};
use super::{OP_BEGIN, OP_END, OP_READ, OP_SLEEP, OP_UNTIL, OP_WRITE};

/// Parse one record: an op letter and its argument (if any).
pub fn parse_record(op: &str, arg: Option<&str>) -> std::result::Result<MemRef, String> {
    let num = |a: Option<&str>| -> std::result::Result<u32, String> {
        let a = a.ok_or_else(|| format!("`{op}` needs a number"))?;
        a.parse::<u32>()
            .map_err(|_| format!("`{a}` is not a number in [0, 2^32)"))
    };
    let (code, needs) = match op {
        "R" | "r" => (OP_READ, true),
        "W" | "w" => (OP_WRITE, true),
        "B" | "b" => (OP_BEGIN, false),
        "E" | "e" => (OP_END, false),
        "S" | "s" => (OP_SLEEP, true),
        "U" | "u" => (OP_UNTIL, true),
        other => return Err(format!("unknown record `{other}` (R, W, B, E, S or U)")),
    };
    let page = if needs {
        num(arg)?
    } else {
        if arg.is_some() {
            return Err(format!("`{op}` takes no argument"));
        }
        0
    };
    Ok(MemRef::marker(code, page))
}

/// Parse an inline reference string (`R1 W2,S10 B E`).
pub fn parse_inline(text: &str, pages: u32) -> Result<Vec<MemRef>> {
    let mut out = Vec::new();
    for (i, tok) in text
        .split(|c: char| c.is_whitespace() || c == ',')
        .filter(|t| !t.is_empty())
        .enumerate()
    {
        let (op, arg) = tok.split_at(1);
        let arg = (!arg.is_empty()).then_some(arg);
        let r = parse_record(op, arg)
            .map_err(|m| Error::config("workload.refs", format!("token {i} `{tok}`: {m}")))?;
        if r.op <= OP_WRITE && r.page >= pages {
            return Err(Error::config(
                "workload.refs",
                format!("token {i} `{tok}`: page ≥ pages ({pages})"),
            ));
        }
        out.push(r);
    }
    Ok(out)
}

pub fn build_inline(c: &InlineConfig) -> Result<Workload> {
    let refs = parse_inline(&c.refs, c.pages)?;
    let (pages, mappings) = layout(&[(c.pages, MapKind::Anon)]);
    let kv = refs.iter().any(|r| r.op == OP_BEGIN);
    Ok(Workload {
        pages,
        mappings,
        files: Vec::new(),
        threads: vec![Box::new(VecStream::new(refs))],
        kv,
        touches_all: false,
        describe: format!("inline reference string over {} pages", c.pages),
    })
}

/// Writes an nsref file.
pub struct NsrefWriter {
    out: BufWriter<File>,
    path: String,
}

impl NsrefWriter {
    pub fn create(path: &str, pages: u32) -> Result<NsrefWriter> {
        let io = |e| Error::Io {
            path: path.into(),
            source: e,
        };
        let f = File::create(path).map_err(io)?;
        let mut out = BufWriter::with_capacity(1 << 16, f);
        writeln!(out, "# nsref 1 pages={pages}").map_err(io)?;
        Ok(NsrefWriter {
            out,
            path: path.into(),
        })
    }

    pub fn push(&mut self, r: MemRef) -> Result<()> {
        let res = match r.op {
            OP_READ => writeln!(self.out, "R {}", r.page),
            OP_WRITE => writeln!(self.out, "W {}", r.page),
            OP_BEGIN => writeln!(self.out, "B"),
            OP_END => writeln!(self.out, "E"),
            OP_SLEEP => writeln!(self.out, "S {}", r.page),
            _ => writeln!(self.out, "U {}", r.page),
        };
        res.map_err(|e| Error::Io {
            path: self.path.clone(),
            source: e,
        })
    }

    pub fn finish(mut self) -> Result<()> {
        self.out.flush().map_err(|e| Error::Io {
            path: self.path.clone(),
            source: e,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn inline_tokens() {
        let v = parse_inline("R1 W2,B  S10 E U3", 4).unwrap();
        assert_eq!(
            v,
            vec![
                MemRef::read(1),
                MemRef::write(2),
                MemRef::marker(OP_BEGIN, 0),
                MemRef::marker(OP_SLEEP, 10),
                MemRef::marker(OP_END, 0),
                MemRef::marker(OP_UNTIL, 3)
            ]
        );
        assert!(parse_inline("R9", 4).is_err());
        assert!(parse_inline("X1", 4).is_err());
        assert!(parse_inline("B1", 4).is_err());
    }
}
