//! LZO1X-1 as the Linux kernel compresses (`lib/lzo/lzo1x_compress.c`, `lzo1x_1_compress`), and the
//! kernel's LZO-RLE variant of it (`lzorle1x_1_compress`, zram's default), written here from the bitstream
//! format and the compressor's documented behaviour; no code was taken from the kernel or from LZO.
//!
//! What decides the output, and so the compressed length, is the match finder, reproduced step by step:
//! * one dictionary of 2^13 16-bit positions, cleared per block of at most 49,152 bytes, indexed by the
//!   top 13 bits of the next four bytes (read little-endian) times 0x1824429d;
//! * a position is tried only if its four bytes equal the four bytes at the remembered position; after a
//!   miss the scan skips ahead by `1 + (bytes since the last instruction) / 32`;
//! * a match is extended eight bytes at a time, and no further once it reaches 20 bytes before the end
//!   of the block; the last 20 bytes are never searched;
//! * a match of at most 8 bytes within 2 KiB is a 2-byte M2 instruction, else an M3 (distance up to
//!   16 KiB) or M4 with a length that grows by one byte per 255;
//! * literals before an instruction go in a run whose length (1–3) fits in the two spare bits of the
//!   previous instruction, or in a length byte (4–18) or a zero-extended length;
//! * the stream ends with the three-byte end marker `17 0 0`.
//!
//! LZO-RLE (bitstream version 1) opens with `17 1` and adds one instruction: where four zero bytes start,
//! it measures the zero run (4 to 2,051 bytes, not beyond the search limit) and emits it as a 4-byte
//! instruction — an M4 form with distance bits all ones, which version 0 never emits — instead of
//! searching the dictionary; M4 distances stop one short of version 0's, and an M4 of length 261–264
//! whose distance would look like that run marker is shortened to 260.

use nandstack_core::{Error, Result};

const D_BITS: u32 = 13;
const D_SIZE: usize = 1 << D_BITS;
const M2_MAX_LEN: usize = 8;
const M2_MAX_OFFSET: usize = 0x0800;
const M3_MAX_OFFSET: usize = 0x4000;
const M3_MAX_LEN: usize = 33;
const M4_MAX_LEN: usize = 9;
const M3_MARKER: u8 = 32;
const M4_MARKER: u8 = 16;
const M4_MAX_OFFSET_V0: usize = 0xbfff;
const M4_MAX_OFFSET_V1: usize = 0xbffe;
const MIN_ZERO_RUN: usize = 4;
const MAX_ZERO_RUN: usize = 2047 + MIN_ZERO_RUN;
/// Bytes at the end of a block that the match finder never starts a search in.
const TAIL_BYTES: usize = 20;

/// An LZO1X-1 compressor with its dictionary (16 KiB), reusable across pages.
pub struct Lzo1x1 {
    rle: bool,
    dict: Vec<u16>,
}

/// The output position of the byte whose two low bits hold the next short literal run, counted back from
/// the end of the output (2 after a match, 3 after a zero run).
struct Out<'a> {
    buf: &'a mut Vec<u8>,
    state_back: usize,
}

impl Out<'_> {
    fn literals(&mut self, lit: &[u8]) {
        let t = lit.len();
        if t == 0 {
            return;
        }
        if t <= 3 {
            let at = self.buf.len() - self.state_back;
            self.buf[at] |= t as u8;
        } else if t <= 18 {
            self.buf.push((t - 3) as u8);
        } else {
            self.buf.push(0);
            self.count_rest(t - 18);
        }
        self.buf.extend_from_slice(lit);
    }

    /// A long length after its instruction byte (whose length bits are zero): one zero byte per 255,
    /// then the rest.
    fn count_rest(&mut self, mut n: usize) {
        while n > 255 {
            n -= 255;
            self.buf.push(0);
        }
        self.buf.push(n as u8);
    }
}

#[inline]
fn le32(b: &[u8], i: usize) -> u32 {
    u32::from_le_bytes([b[i], b[i + 1], b[i + 2], b[i + 3]])
}

#[inline]
fn le64(b: &[u8], i: usize) -> u64 {
    let mut w = [0u8; 8];
    w.copy_from_slice(&b[i..i + 8]);
    u64::from_le_bytes(w)
}

impl Lzo1x1 {
    /// Plain LZO1X-1 (`lzo`).
    pub fn lzo() -> Lzo1x1 {
        Lzo1x1 {
            rle: false,
            dict: vec![0; D_SIZE],
        }
    }

    /// LZO-RLE (`lzo-rle`).
    pub fn lzo_rle() -> Lzo1x1 {
        Lzo1x1 {
            rle: true,
            dict: vec![0; D_SIZE],
        }
    }

    /// Compress `src` into `out` (cleared first).
    pub fn compress(&mut self, src: &[u8], out: &mut Vec<u8>) {
        out.clear();
        if self.rle {
            out.extend_from_slice(&[17, 1]);
        }
        let data_start = out.len();
        let max_block = if self.rle {
            M4_MAX_OFFSET_V1 + 1
        } else {
            M4_MAX_OFFSET_V0 + 1
        };
        let mut o = Out {
            buf: out,
            state_back: 2,
        };
        let mut start = 0;
        let mut left = src.len();
        let mut pending = 0; // literals not yet written, ending at `start`
        while left > TAIL_BYTES {
            let len = left.min(max_block);
            self.dict.fill(0);
            pending = self.block(src, start, len, pending, &mut o);
            start += len;
            left -= len;
        }
        let t = pending + left;
        if t > 0 {
            let lit = &src[src.len() - t..];
            if o.buf.len() == data_start && t <= 238 {
                o.buf.push((17 + t) as u8);
                o.buf.extend_from_slice(lit);
            } else {
                o.literals(lit);
            }
        }
        o.buf.extend_from_slice(&[M4_MARKER | 1, 0, 0]);
    }

    /// Compressed length of `src`.
    pub fn compressed_len(&mut self, src: &[u8], scratch: &mut Vec<u8>) -> usize {
        self.compress(src, scratch);
        scratch.len()
    }

    /// One block `src[base..base + len]`, with `carried` literals before `base` still to write. Returns the
    /// literals left at its end (from the last instruction to the block's end).
    fn block(
        &mut self,
        src: &[u8],
        base: usize,
        len: usize,
        mut carried: usize,
        o: &mut Out<'_>,
    ) -> usize {
        let end = base + len;
        let search_end = end - TAIL_BYTES;
        let mut lit_start = base; // `carried` more literals precede it until the first instruction
        let mut ip = base + 4usize.saturating_sub(carried);
        let mut skip = true;
        loop {
            if skip {
                ip += 1 + ((ip - lit_start) >> 5);
            }
            skip = true;
            if ip >= search_end {
                break;
            }
            let dv = le32(src, ip);
            let mut zero_run = 0;
            let mut m_pos = 0;
            if dv == 0 && self.rle {
                let limit = search_end.min(ip + MAX_ZERO_RUN + 1);
                let mut ir = ip + 4;
                while ir < limit && src[ir] == 0 {
                    ir += 1;
                }
                zero_run = (ir - ip).min(MAX_ZERO_RUN);
            } else {
                let h = (dv.wrapping_mul(0x1824429d) >> (32 - D_BITS)) as usize & (D_SIZE - 1);
                m_pos = base + self.dict[h] as usize;
                self.dict[h] = (ip - base) as u16;
                if le32(src, m_pos) != dv {
                    continue;
                }
            }
            lit_start -= carried;
            carried = 0;
            o.literals(&src[lit_start..ip]);
            if zero_run > 0 {
                ip += zero_run;
                let r = (zero_run - MIN_ZERO_RUN) as u32;
                let word = (r << 21) | 0xfffc18 | (r & 7);
                o.buf.extend_from_slice(&word.to_le_bytes());
                o.state_back = 3;
            } else {
                let m_len = match_len(src, ip, m_pos, search_end);
                let m_off = ip - m_pos;
                ip += m_len;
                ip -= self.emit_match(o, m_len, m_off);
                o.state_back = 2;
            }
            lit_start = ip;
            skip = false;
        }
        end - (lit_start - carried)
    }

    /// Write one match; returns how many bytes of it were given back (LZO-RLE's 261–264 rule).
    fn emit_match(&self, o: &mut Out<'_>, mut m_len: usize, m_off: usize) -> usize {
        let mut given_back = 0;
        let b = &mut *o.buf;
        if m_len <= M2_MAX_LEN && m_off <= M2_MAX_OFFSET {
            let d = m_off - 1;
            b.push((((m_len - 1) << 5) | ((d & 7) << 2)) as u8);
            b.push((d >> 3) as u8);
            return 0;
        }
        let d;
        if m_off <= M3_MAX_OFFSET {
            d = m_off - 1;
            if m_len <= M3_MAX_LEN {
                b.push(M3_MARKER | (m_len - 2) as u8);
            } else {
                b.push(M3_MARKER);
                o.count_rest(m_len - M3_MAX_LEN);
            }
        } else {
            d = m_off - 0x4000;
            let high = ((d >> 11) & 8) as u8;
            if m_len <= M4_MAX_LEN {
                b.push(M4_MARKER | high | (m_len - 2) as u8);
            } else {
                if self.rle && (d & 0x403f) == 0x403f && (261..=264).contains(&m_len) {
                    given_back = m_len - 260;
                    m_len = 260;
                }
                o.buf.push(M4_MARKER | high);
                o.count_rest(m_len - M4_MAX_LEN);
            }
        }
        o.buf.push((d << 2) as u8);
        o.buf.push((d >> 6) as u8);
        given_back
    }
}

/// Length of the match at `ip` against `m_pos` (four bytes already equal), compared eight bytes at a
/// time and cut at the first 8-byte step that reaches `search_end`.
#[inline]
fn match_len(src: &[u8], ip: usize, m_pos: usize, search_end: usize) -> usize {
    let mut m_len = 4;
    let mut v = le64(src, ip + m_len) ^ le64(src, m_pos + m_len);
    while v == 0 {
        m_len += 8;
        v = le64(src, ip + m_len) ^ le64(src, m_pos + m_len);
        if ip + m_len >= search_end {
            return m_len;
        }
    }
    m_len + (v.trailing_zeros() / 8) as usize
}

/// Decode an LZO1X stream (either bitstream version) — used to check the compressor round-trips. A
/// malformed stream is an [`Error::Invariant`] (only this crate's compressor feeds it).
pub fn decompress(src: &[u8], max_out: usize) -> Result<Vec<u8>> {
    let bad = |what: &str| Error::Invariant(format!("lzo stream: {what}"));
    let mut out: Vec<u8> = Vec::with_capacity(max_out);
    let mut ip = 0;
    let mut v1 = false;
    let byte = |ip: &mut usize| -> Result<u8> {
        let b = *src.get(*ip).ok_or_else(|| bad("truncated"))?;
        *ip += 1;
        Ok(b)
    };
    let ext = |ip: &mut usize, base: usize| -> Result<usize> {
        let mut n = base;
        loop {
            let b = byte(ip)?;
            if b != 0 {
                return Ok(n + b as usize);
            }
            n += 255;
            if n > max_out {
                return Err(bad("length overflow"));
            }
        }
    };
    if src.len() >= 5 && src[0] == 17 {
        v1 = src[1] == 1;
        ip = 2;
    }
    let mut state = 0usize;
    if src.get(ip).is_some_and(|&b| b > 17) {
        let t = byte(&mut ip)? as usize - 17;
        copy_lit(src, &mut ip, &mut out, t, max_out)?;
        state = 4;
    }
    loop {
        let b = byte(&mut ip)? as usize;
        let (len, dist, trail);
        if b < 16 {
            if state == 0 {
                let t = if b == 0 { ext(&mut ip, 15)? } else { b } + 3;
                copy_lit(src, &mut ip, &mut out, t, max_out)?;
                state = 4;
                continue;
            }
            let hi = byte(&mut ip)? as usize;
            len = if state == 4 { 3 } else { 2 };
            dist = 1 + (b >> 2) + (hi << 2) + if state == 4 { M2_MAX_OFFSET } else { 0 };
            trail = b & 3;
        } else if b >= 64 {
            len = (b >> 5) + 1;
            dist = 1 + ((b >> 2) & 7) + ((byte(&mut ip)? as usize) << 3);
            trail = b & 3;
        } else if b >= 32 {
            len = if b & 31 == 0 {
                ext(&mut ip, 31)?
            } else {
                b & 31
            } + 2;
            let lo = byte(&mut ip)? as usize;
            let hi = byte(&mut ip)? as usize;
            dist = 1 + (lo >> 2) + (hi << 6);
            trail = lo & 3;
        } else {
            let next = src.get(ip..ip + 2).ok_or_else(|| bad("truncated"))?;
            if v1 && (b & 0xf8) == 0x18 && next[0] & 0xfc == 0xfc && next[1] == 0xff {
                let r = ((b & 7)
                    | ((*src.get(ip + 2).ok_or_else(|| bad("truncated"))? as usize) << 3))
                    + MIN_ZERO_RUN;
                if out.len() + r > max_out {
                    return Err(bad("output overflow"));
                }
                out.resize(out.len() + r, 0);
                let t = next[0] as usize & 3;
                ip += 3;
                copy_lit(src, &mut ip, &mut out, t, max_out)?;
                state = t;
                continue;
            }
            len = if b & 7 == 0 { ext(&mut ip, 7)? } else { b & 7 } + 2;
            let lo = byte(&mut ip)? as usize;
            let hi = byte(&mut ip)? as usize;
            let d = ((b & 8) << 11) + (lo >> 2) + (hi << 6);
            if d == 0 {
                return if len == 3 && ip == src.len() {
                    Ok(out)
                } else {
                    Err(bad("bad end marker"))
                };
            }
            dist = d + 0x4000;
            trail = lo & 3;
        }
        if dist > out.len() || out.len() + len > max_out {
            return Err(bad("match outside the output"));
        }
        let from = out.len() - dist;
        for k in 0..len {
            out.push(out[from + k]);
        }
        copy_lit(src, &mut ip, &mut out, trail, max_out)?;
        state = trail;
    }
}

fn copy_lit(src: &[u8], ip: &mut usize, out: &mut Vec<u8>, t: usize, max_out: usize) -> Result<()> {
    let lit = src
        .get(*ip..*ip + t)
        .ok_or_else(|| Error::Invariant("lzo stream: literals past the end".into()))?;
    if out.len() + t > max_out {
        return Err(Error::Invariant("lzo stream: output overflow".into()));
    }
    out.extend_from_slice(lit);
    *ip += t;
    Ok(())
}
