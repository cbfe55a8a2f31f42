//! Unit tests of zswap: the pool limit and its hysteresis by hand, shared pool pages, verify mode.
use super::*;
use crate::zpool::ZpoolKind;

fn random_page(seed: u64) -> [u8; 4096] {
    let mut r = nandstack_core::Rng::new(seed);
    let mut p = [0u8; 4096];
    for w in p.chunks_exact_mut(8) {
        w.copy_from_slice(&r.next_u64().to_le_bytes());
    }
    p
}

/// 50 pages of RAM at 20%: a limit of 10 pool pages, accept again at 9.
fn small() -> Zswap {
    let cfg = ZswapConfig {
        enabled: true,
        ..ZswapConfig::default()
    };
    Zswap::new(&cfg, &CompressionCosts::default(), 50, 64, true).unwrap()
}

#[test]
fn pool_limit_and_hysteresis_by_hand() {
    let mut z = small();
    assert_eq!((z.max_pages(), z.accept_pages()), (10, 9));
    // Incompressible pages are stored whole: one zsmalloc huge-class page each.
    for s in 1..=10 {
        assert!(matches!(
            z.store(s, 1, &random_page(s as u64), 1000).unwrap(),
            Store::Stored(_)
        ));
    }
    assert_eq!(
        (z.pool_pages(), z.stored_pages(), z.incompressible),
        (10, 10, 10)
    );
    // At the limit: refused, counted, the worker wanted.
    assert_eq!(
        z.store(11, 1, &random_page(11), 1000).unwrap(),
        Store::Refused(Nanos::ZERO)
    );
    assert_eq!(z.stats.pool_limit_hit, 1);
    assert!(z.wants_worker());
    // One load: 9 pages ≤ the threshold — the next store is accepted and clears the state.
    assert!(z.load(3, Some(&random_page(3))).unwrap().is_some());
    assert_eq!(z.stats.zswpin, 1);
    assert!(!z.contains(3));
    assert!(matches!(
        z.store(12, 1, &random_page(12), 1000).unwrap(),
        Store::Stored(_)
    ));
    assert!(!z.wants_worker());
    // Full again (10 pages): refused, a second hit.
    assert_eq!(
        z.store(13, 1, &random_page(13), 1000).unwrap(),
        Store::Refused(Nanos::ZERO)
    );
    assert_eq!(z.stats.pool_limit_hit, 2);
    // An invalidated entry brings the pool to 9 pages, at the threshold: the store goes through
    // and counts no hit.
    z.invalidate(5);
    assert!(matches!(
        z.store(13, 1, &random_page(13), 1000).unwrap(),
        Store::Stored(_)
    ));
    assert_eq!(z.stats.pool_limit_hit, 2);
    // Stores = loads + writebacks + invalidations + stored.
    let s = &z.stats;
    assert_eq!(
        s.zswpout,
        s.zswpin + s.zswpwb + s.invalidated + z.stored_pages()
    );
    z.check(2).unwrap();
}

#[test]
fn hysteresis_refuses_between_the_threshold_and_the_limit() {
    // 100 pages of RAM at 20% with a 50% threshold: limit 20, accept at 10.
    let cfg = ZswapConfig {
        enabled: true,
        accept_threshold_percent: 50,
        ..ZswapConfig::default()
    };
    let mut z = Zswap::new(&cfg, &CompressionCosts::default(), 100, 64, false).unwrap();
    for s in 1..=20 {
        z.store(s, 0, &random_page(s as u64), 1000).unwrap();
    }
    assert!(matches!(
        z.store(21, 0, &random_page(21), 1000).unwrap(),
        Store::Refused(_)
    ));
    for s in 1..=5 {
        z.load(s, None).unwrap();
    }
    // 15 pages: under the limit but above the threshold — refused without counting a hit.
    assert!(matches!(
        z.store(22, 0, &random_page(22), 1000).unwrap(),
        Store::Refused(_)
    ));
    assert_eq!(z.stats.pool_limit_hit, 1);
    for s in 6..=10 {
        z.load(s, None).unwrap();
    }
    assert!(matches!(
        z.store(22, 0, &random_page(22), 1000).unwrap(),
        Store::Stored(_)
    ));
}

#[test]
fn compressible_pages_share_pool_pages_and_a_changed_page_is_caught() {
    let mut z = small();
    let sparse = {
        let mut p = [0u8; 4096];
        p[..8].copy_from_slice(&7u64.to_le_bytes());
        p
    };
    for s in 1..=8 {
        z.store(s, 0, &sparse, 1000).unwrap();
    }
    assert_eq!(z.incompressible, 0);
    assert!(
        z.pool_pages() < 2,
        "{} pages for 8 tiny objects",
        z.pool_pages()
    );
    // Verify mode: restoring other bytes than were stored is an invariant error.
    let mut other = sparse;
    other[100] = 1;
    assert!(matches!(z.load(4, Some(&other)), Err(Error::Invariant(_))));
    // Without RAM for a new pool page the store is refused (reject_alloc_fail).
    let mut z = small();
    assert_eq!(
        z.store(1, 0, &random_page(1), 0).unwrap(),
        Store::Refused(z.compress_ns)
    );
    assert_eq!(z.stats.reject_alloc_fail, 1);
    assert!(!z.contains(1));
}

/// Density samples (ezswap's Table 3): an empty pool is not sampled; incompressible pages are stored
/// one per 4 KiB pool page, 256 per MiB; the report averages the samples.
#[test]
fn density_samples_by_hand() {
    let mut z = small();
    z.sample_density();
    assert_eq!(z.stats.density_samples, 0);
    for s in 1..=4 {
        z.store(s, 1, &random_page(s as u64), 1000).unwrap();
    }
    assert_eq!((z.pool_pages(), z.stored_pages()), (4, 4));
    z.sample_density();
    // Two zero-filled pages compress to a few bytes and share one pool page with room to spare.
    z.store(5, 1, &[0u8; 4096], 1000).unwrap();
    z.store(6, 1, &[0u8; 4096], 1000).unwrap();
    let (pages, bytes) = (z.stored_pages() as f64, z.pool.total_bytes() as f64);
    z.sample_density();
    assert_eq!(z.stats.density_samples, 2);
    let second = pages * (1u64 << 20) as f64 / bytes;
    assert!(second > 256.0, "{second}");
    let mean = z.report()["density_zpages_per_mib_mean"].as_f64().unwrap();
    assert!((mean - (256.0 + second) / 2.0).abs() < 1e-9, "{mean}");
}

/// `incompressible = "reject"` (Linux 4.x): a random page (lzo output over a page) is refused as
/// `reject_compress_poor` and leaves no entry; a compressible page is stored with its 8-byte header
/// (`stored_bytes` = compressed length + 8); `store_as_is` (6.18) stores the random page whole.
#[test]
fn incompressible_reject_by_hand() {
    let cfg = ZswapConfig {
        enabled: true,
        zpool: ZpoolKind::Z3fold,
        incompressible: IncompressiblePolicy::Reject,
        ..ZswapConfig::default()
    };
    let mut z = Zswap::new(&cfg, &CompressionCosts::default(), 50, 64, true).unwrap();
    let random = random_page(5);
    let compressed = z.compressor.compressed_len(&random).unwrap();
    assert!(
        compressed + ZSWAP_HEADER_BYTES > 4096,
        "lzo gave {compressed}"
    );
    assert_eq!(
        z.store(1, 0, &random, 1000).unwrap(),
        Store::Refused(z.compress_ns)
    );
    assert_eq!((z.stats.reject_compress_poor, z.stored_pages()), (1, 0));
    assert!(!z.contains(1));
    let mut sparse = [0u8; 4096];
    sparse[..8].copy_from_slice(&7u64.to_le_bytes());
    let small_len = z.compressor.compressed_len(&sparse).unwrap();
    assert!(matches!(
        z.store(2, 0, &sparse, 1000).unwrap(),
        Store::Stored(_)
    ));
    assert_eq!(z.stored_bytes, (small_len + ZSWAP_HEADER_BYTES) as u64);
    assert_eq!(z.incompressible, 0);
    // 6.18: the same random page is stored as it is, a whole pool page.
    let cfg = ZswapConfig {
        incompressible: IncompressiblePolicy::StoreAsIs,
        ..cfg
    };
    let mut z = Zswap::new(&cfg, &CompressionCosts::default(), 50, 64, true).unwrap();
    assert!(matches!(
        z.store(1, 0, &random, 1000).unwrap(),
        Store::Stored(_)
    ));
    assert_eq!(
        (
            z.stats.reject_compress_poor,
            z.incompressible,
            z.stored_bytes
        ),
        (0, 1, 4096)
    );
}

/// A non-exclusive load (Linux before 6.5) decompresses and keeps the entry; an exclusive one frees it.
#[test]
fn load_keep_keeps_the_entry() {
    let mut z = small();
    let page = random_page(9);
    z.store(4, 0, &page, 1000).unwrap();
    let cpu = z.load_keep(4, Some(&page)).unwrap().expect("stored");
    assert!(cpu > Nanos::ZERO);
    assert!(z.contains(4) && z.stored_pages() == 1 && z.stats.zswpin == 1);
    assert_eq!(z.load_keep(5, None).unwrap(), None);
    assert!(z.load(4, Some(&page)).unwrap().is_some());
    assert!(!z.contains(4) && z.stats.zswpin == 2);
}
