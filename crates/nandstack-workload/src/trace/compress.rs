//! Transparent decompression, chosen by the stream's magic bytes (never by the file extension).
//!
//! | format | magic                                  | decoder (pure Rust)                  |
//! |--------|----------------------------------------|--------------------------------------|
//! | gzip   | `1f 8b`                                | `flate2` (miniz_oxide), all members  |
//! | bzip2  | `42 5a 68` + `'1'..='9'` (`BZh9`)      | `bzip2` (libbz2-rs-sys), all streams |
//! | xz     | `fd 37 7a 58 5a 00`                    | `lzma-rust2`, all streams            |
//! | zstd   | `28 b5 2f fd`, or a skippable frame    | `ruzstd`, all frames                 |
//!
//! Concatenated members/streams/frames (what `cat a.gz b.gz` or `pzstd` produce) are all decoded.
//! Decoder memory is bounded: xz dictionaries above [`XZ_MEM_LIMIT_KIB`] and zstd windows above
//! ruzstd's default (128 MiB) are refused with an I/O error instead of being allocated.

use std::fs::File;
use std::io::{self, BufRead, BufReader, Cursor, Read};
use std::path::Path;

use nandstack_core::{Error, Result};
use ruzstd::decoding::errors::{FrameDecoderError, ReadFrameHeaderError};
use ruzstd::decoding::{BlockDecodingStrategy, FrameDecoder};

/// Read buffer for files and decoders.
pub(crate) const BUF_BYTES: usize = 256 * 1024;

/// Largest xz decoder memory accepted, in KiB (`xz -9` needs 65 MiB).
pub const XZ_MEM_LIMIT_KIB: u32 = 256 * 1024;

/// Longest magic number we look at.
const MAGIC_BYTES: usize = 6;

/// How a trace file is compressed.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub enum Compression {
    None,
    Gzip,
    Bzip2,
    Xz,
    Zstd,
}

impl Compression {
    /// The compression a stream starting with `head` uses (`None` when no magic matches or `head` is short).
    pub fn from_magic(head: &[u8]) -> Compression {
        match head {
            [0x1f, 0x8b, ..] => Compression::Gzip,
            [b'B', b'Z', b'h', b'1'..=b'9', ..] => Compression::Bzip2,
            [0xfd, b'7', b'z', b'X', b'Z', 0x00, ..] => Compression::Xz,
            [0x28, 0xb5, 0x2f, 0xfd, ..] => Compression::Zstd,
            // Skippable zstd frame 0x184D2A50..=0x184D2A5F (little-endian).
            [0x50..=0x5f, 0x2a, 0x4d, 0x18, ..] => Compression::Zstd,
            _ => Compression::None,
        }
    }

    /// Lower-case name (`none`, `gzip`, `bzip2`, `xz`, `zstd`).
    pub fn name(self) -> &'static str {
        match self {
            Compression::None => "none",
            Compression::Gzip => "gzip",
            Compression::Bzip2 => "bzip2",
            Compression::Xz => "xz",
            Compression::Zstd => "zstd",
        }
    }
}

/// The compression of the file at `path`, from its first bytes.
pub fn detect_compression(path: &Path) -> Result<Compression> {
    let mut file = File::open(path).map_err(|e| io_error(path, e))?;
    let mut head = [0u8; MAGIC_BYTES];
    let n = read_up_to(&mut file, &mut head).map_err(|e| io_error(path, e))?;
    Ok(Compression::from_magic(&head[..n]))
}

/// Wrap `reader` in the decoder its magic bytes call for (or in nothing, for plain data).
///
/// Reads up to six bytes to decide; they are replayed in front of the rest of the stream.
pub fn decompress(
    mut reader: impl Read + Send + 'static,
) -> io::Result<(Compression, Box<dyn BufRead + Send>)> {
    let mut head = [0u8; MAGIC_BYTES];
    let n = read_up_to(&mut reader, &mut head)?;
    let kind = Compression::from_magic(&head[..n]);
    let stream = Cursor::new(head[..n].to_vec()).chain(reader);
    let out: Box<dyn BufRead + Send> = match kind {
        Compression::None => Box::new(BufReader::with_capacity(BUF_BYTES, stream)),
        Compression::Gzip => Box::new(BufReader::with_capacity(
            BUF_BYTES,
            flate2::read::MultiGzDecoder::new(stream),
        )),
        Compression::Bzip2 => Box::new(BufReader::with_capacity(
            BUF_BYTES,
            bzip2::read::MultiBzDecoder::new(stream),
        )),
        Compression::Xz => Box::new(BufReader::with_capacity(
            BUF_BYTES,
            lzma_rust2::XzReader::new_mem_limit(stream, true, XZ_MEM_LIMIT_KIB),
        )),
        Compression::Zstd => Box::new(BufReader::with_capacity(
            BUF_BYTES,
            ZstdFrames::new(BufReader::with_capacity(BUF_BYTES, stream)),
        )),
    };
    Ok((kind, out))
}

/// Open `path` and decompress it as [`decompress`] does.
pub(crate) fn open_file(path: &Path) -> Result<Box<dyn BufRead + Send>> {
    let file = File::open(path).map_err(|e| io_error(path, e))?;
    decompress(file)
        .map(|(_, r)| r)
        .map_err(|e| io_error(path, e))
}

pub(crate) fn io_error(path: &Path, source: io::Error) -> Error {
    Error::Io {
        path: path.display().to_string(),
        source,
    }
}

/// Fill `buf` as far as the stream allows; returns the bytes read (short only at end of stream).
pub(crate) fn read_up_to(reader: &mut impl Read, buf: &mut [u8]) -> io::Result<usize> {
    let mut filled = 0;
    while filled < buf.len() {
        match reader.read(&mut buf[filled..]) {
            Ok(0) => break,
            Ok(n) => filled += n,
            Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
            Err(e) => return Err(e),
        }
    }
    Ok(filled)
}

/// A zstd stream of any number of frames (ruzstd's `StreamingDecoder` stops after the first),
/// skipping skippable frames.
struct ZstdFrames<R: BufRead> {
    source: R,
    decoder: FrameDecoder,
    in_frame: bool,
}

impl<R: BufRead> ZstdFrames<R> {
    fn new(source: R) -> Self {
        ZstdFrames {
            source,
            decoder: FrameDecoder::new(),
            in_frame: false,
        }
    }

    /// Start the next frame; `false` at a clean end of stream.
    fn next_frame(&mut self) -> io::Result<bool> {
        loop {
            if self.source.fill_buf()?.is_empty() {
                return Ok(false);
            }
            match self.decoder.reset(&mut self.source) {
                Ok(()) => return Ok(true),
                Err(FrameDecoderError::ReadFrameHeaderError(ReadFrameHeaderError::SkipFrame {
                    length,
                    ..
                })) => {
                    let skipped = io::copy(
                        &mut (&mut self.source).take(u64::from(length)),
                        &mut io::sink(),
                    )?;
                    if skipped != u64::from(length) {
                        return Err(io::Error::new(
                            io::ErrorKind::UnexpectedEof,
                            "truncated skippable zstd frame",
                        ));
                    }
                }
                Err(e) => return Err(io::Error::new(io::ErrorKind::InvalidData, e)),
            }
        }
    }
}

impl<R: BufRead> Read for ZstdFrames<R> {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        if buf.is_empty() {
            return Ok(0);
        }
        loop {
            if !self.in_frame {
                if !self.next_frame()? {
                    return Ok(0);
                }
                self.in_frame = true;
            }
            if self.decoder.can_collect() > 0 {
                return self.decoder.read(buf);
            }
            if self.decoder.is_finished() {
                self.in_frame = false;
                continue;
            }
            self.decoder
                .decode_blocks(&mut self.source, BlockDecodingStrategy::UptoBlocks(1))
                .map_err(|e| io::Error::new(io::ErrorKind::InvalidData, e))?;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn magic_numbers() {
        assert_eq!(
            Compression::from_magic(&[0x1f, 0x8b, 8, 0]),
            Compression::Gzip
        );
        assert_eq!(Compression::from_magic(b"BZh91AY"), Compression::Bzip2);
        assert_eq!(Compression::from_magic(b"BZh0"), Compression::None);
        assert_eq!(
            Compression::from_magic(&[0xfd, b'7', b'z', b'X', b'Z', 0]),
            Compression::Xz
        );
        assert_eq!(
            Compression::from_magic(&[0x28, 0xb5, 0x2f, 0xfd]),
            Compression::Zstd
        );
        assert_eq!(
            Compression::from_magic(&[0x5a, 0x2a, 0x4d, 0x18]),
            Compression::Zstd
        );
        assert_eq!(Compression::from_magic(b"1,2,3"), Compression::None);
        assert_eq!(Compression::from_magic(&[0x1f]), Compression::None);
        assert_eq!(Compression::from_magic(&[]), Compression::None);
    }

    fn roundtrip(data: &[u8]) -> (Compression, Vec<u8>) {
        let (kind, mut r) = decompress(Cursor::new(data.to_vec())).unwrap();
        let mut out = Vec::new();
        r.read_to_end(&mut out).unwrap();
        (kind, out)
    }

    #[test]
    fn plain_and_short_streams_pass_through() {
        assert_eq!(roundtrip(b""), (Compression::None, Vec::new()));
        assert_eq!(roundtrip(b"ab"), (Compression::None, b"ab".to_vec()));
        assert_eq!(
            roundtrip(b"1 2 3 4\n5 6 7 8\n"),
            (Compression::None, b"1 2 3 4\n5 6 7 8\n".to_vec())
        );
    }

    #[test]
    fn concatenated_zstd_frames_and_skippable_frames() {
        let a = ruzstd::encoding::compress_to_vec(
            &b"first\n"[..],
            ruzstd::encoding::CompressionLevel::Fastest,
        );
        let b = ruzstd::encoding::compress_to_vec(
            &b"second\n"[..],
            ruzstd::encoding::CompressionLevel::Fastest,
        );
        let mut data = a.clone();
        data.extend_from_slice(&[0x50, 0x2a, 0x4d, 0x18, 3, 0, 0, 0, 9, 9, 9]); // skippable frame
        data.extend_from_slice(&b);
        assert_eq!(
            roundtrip(&data),
            (Compression::Zstd, b"first\nsecond\n".to_vec())
        );
        // A truncated frame is an error, not a silent short read.
        let (_, mut r) = decompress(Cursor::new(a[..a.len() - 2].to_vec())).unwrap();
        assert!(r.read_to_end(&mut Vec::new()).is_err());
    }

    #[test]
    fn concatenated_gzip_members() {
        use std::io::Write;
        let mut data = Vec::new();
        for part in [&b"one\n"[..], b"two\n"] {
            let mut enc = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::fast());
            enc.write_all(part).unwrap();
            data.extend(enc.finish().unwrap());
        }
        assert_eq!(
            roundtrip(&data),
            (Compression::Gzip, b"one\ntwo\n".to_vec())
        );
    }
}
