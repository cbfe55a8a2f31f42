//! Round trips through independent decoders (liblz4, zlib, libzstd; the LZO decoder of [`crate::lzo`],
//! written from the format) and hand-computed LZO streams.

use proptest::prelude::*;

use super::*;

fn decode(alg: Algorithm, c: &[u8], n: usize) -> Vec<u8> {
    match alg {
        Algorithm::Lzo | Algorithm::LzoRle => lzo::decompress(c, n).unwrap(),
        Algorithm::Lz4 => lz4::block::decompress(c, Some(n as i32)).unwrap(),
        Algorithm::Deflate => {
            let mut d = flate2::Decompress::new_with_window_bits(false, 11);
            let mut out = Vec::with_capacity(n + 1);
            d.decompress_vec(c, &mut out, flate2::FlushDecompress::Finish)
                .unwrap();
            out
        }
        Algorithm::Zstd => zstd::bulk::decompress(c, n).unwrap(),
    }
}

fn pages() -> Vec<Vec<u8>> {
    let mut s = 0x9e3779b97f4a7c15u64;
    let mut rnd = move || {
        s ^= s << 13;
        s ^= s >> 7;
        s ^= s << 17;
        s
    };
    let mut v = vec![vec![0u8; 4096], vec![0xa5; 4096]];
    v.push((0..4096).map(|_| rnd() as u8).collect());
    // sparse: every 8th word random
    v.push(
        (0..512)
            .flat_map(|i| if i % 8 == 0 { rnd() } else { 0 }.to_le_bytes())
            .collect(),
    );
    // text-like
    let text = b"the quick brown fox jumps over the lazy dog; ";
    v.push(text.iter().cycle().take(4096).copied().collect());
    // zero runs of every length around the RLE limits between literals
    let mut z = Vec::new();
    for run in [3usize, 4, 5, 17, 255, 2051, 2052] {
        z.extend((0..7).map(|_| rnd() as u8 | 1));
        z.extend(std::iter::repeat_n(0, run));
    }
    z.truncate(4096);
    v.push(z);
    for n in [0usize, 1, 3, 17, 20, 21, 24, 25, 64, 238, 239, 1000] {
        v.push((0..n).map(|i| (i % 7) as u8).collect());
    }
    v
}

#[test]
fn every_algorithm_round_trips() {
    for alg in Algorithm::ALL {
        let mut c = Compressor::new(alg).unwrap();
        for (i, p) in pages().iter().enumerate() {
            let out = c.compress(p).unwrap().to_vec();
            assert_eq!(&decode(alg, &out, p.len()), p, "{alg} page {i}");
        }
    }
}

#[test]
fn lzo_zero_pages_match_hand_computed_streams() {
    let zero = vec![0u8; 4096];
    let mut out = Vec::new();
    // lzo-rle: header 17 1; 5 literals (length byte 2); zero runs of 2051 and 2020 bytes (4 bytes each);
    // 20 trailing literals (0, 2 then the bytes); end marker 17 0 0.
    lzo::Lzo1x1::lzo_rle().compress(&zero, &mut out);
    assert_eq!(out.len(), 2 + 6 + 4 + 4 + 22 + 3);
    assert_eq!(&out[..3], &[17, 1, 2]);
    let r = 2051 - 4u32;
    assert_eq!(&out[8..12], &((r << 21) | 0xfffc18 | (r & 7)).to_le_bytes());
    // lzo: 5 literals, then one M3 match of 4076 bytes at distance 5 (marker 32, 15 zero bytes and 218
    // for 4076 - 33 = 15 * 255 + 218, distance bytes), 15 trailing literals (length byte 12), end marker.
    lzo::Lzo1x1::lzo().compress(&zero, &mut out);
    assert_eq!(out.len(), 6 + (1 + 16 + 2) + 16 + 3);
    assert_eq!(out[6], 32);
    assert_eq!(out[6 + 16], 218);
    assert_eq!(&out[6 + 17..6 + 19], &[(4 << 2) as u8, 0]);
    assert_eq!(&out[out.len() - 3..], &[17, 0, 0]);
    // Input too short for any search: one literal run with the first-byte form 17 + t.
    lzo::Lzo1x1::lzo().compress(b"abc", &mut out);
    assert_eq!(out, vec![20, b'a', b'b', b'c', 17, 0, 0]);
}

#[test]
fn random_pages_do_not_compress() {
    let p = &pages()[2];
    for alg in Algorithm::ALL {
        let n = Compressor::new(alg).unwrap().compressed_len(p).unwrap();
        assert!(n >= 4096, "{alg}: {n}");
    }
}

#[test]
fn names_parse_back() {
    for a in Algorithm::ALL {
        assert_eq!(Algorithm::parse(a.name()).unwrap(), a);
    }
    assert!(Algorithm::parse("lzo_rle").is_err());
    let big = vec![0u8; MAX_INPUT_BYTES + 1];
    assert!(Compressor::new(Algorithm::Lz4)
        .unwrap()
        .compress(&big)
        .is_err());
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(200))]
    #[test]
    fn lzo_round_trips_on_random_runs(
        parts in proptest::collection::vec((0u8..4, 1usize..300, any::<u8>()), 1..40),
        rle in any::<bool>(),
    ) {
        // Segments of zeros, of one repeated byte, of a short period, or of noise.
        let mut src = Vec::new();
        let mut s = 88172645463325252u64;
        for (kind, len, b) in parts {
            for i in 0..len {
                s ^= s << 13; s ^= s >> 7; s ^= s << 17;
                src.push(match kind { 0 => 0, 1 => b, 2 => b.wrapping_add((i % 5) as u8), _ => s as u8 });
            }
        }
        let mut l = if rle { lzo::Lzo1x1::lzo_rle() } else { lzo::Lzo1x1::lzo() };
        let mut out = Vec::new();
        l.compress(&src, &mut out);
        prop_assert_eq!(lzo::decompress(&out, src.len()).unwrap(), src);
    }
}
