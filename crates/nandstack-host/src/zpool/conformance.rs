//! The shared conformance test: every [`Zpool`] against the contract, on hand-made and random sequences.

use proptest::prelude::*;

use super::*;

fn pools() -> Vec<Box<dyn Zpool>> {
    ["zsmalloc", "z3fold", "z3fold_4_8", "zbud"]
        .into_iter()
        .map(|n| build(n).unwrap())
        .collect()
}

/// Live objects never overlap, lie inside their container, and the pool holds exactly the containers
/// that hold them.
fn check_layout(pool: &dyn Zpool, live: &[(Handle, u32)]) {
    pool.check().unwrap();
    assert_eq!(pool.objects(), live.len() as u64, "{}", pool.name());
    let mut extents: Vec<Extent> = live
        .iter()
        .map(|(h, len)| {
            let e = pool
                .extent(*h)
                .unwrap_or_else(|| panic!("{}: handle {h:?} lost", pool.name()));
            assert!(e.len_bytes >= *len, "{}: object shrank", pool.name());
            e
        })
        .collect();
    extents.sort();
    let mut containers = std::collections::BTreeSet::new();
    for w in extents.windows(2) {
        if w[0].container == w[1].container {
            assert!(
                w[0].offset_bytes + w[0].len_bytes <= w[1].offset_bytes,
                "{}: {w:?} overlap",
                pool.name()
            );
        }
    }
    for e in &extents {
        assert!(
            e.offset_bytes + e.len_bytes <= pool.container_bytes(e.container),
            "{}: {e:?} outside",
            pool.name()
        );
        containers.insert(e.container);
    }
    let held: u64 = containers
        .iter()
        .map(|c| pool.container_bytes(*c) as u64)
        .sum();
    assert_eq!(
        held,
        pool.total_bytes(),
        "{}: pages held vs pages in use",
        pool.name()
    );
}

#[test]
fn empty_pools_hold_nothing_and_refuse_bad_input() {
    for mut p in pools() {
        assert_eq!(p.total_pages(), 0);
        assert!(matches!(p.alloc(0), Err(Error::OutOfRange(_))));
        assert!(matches!(
            p.alloc(p.max_object_bytes() + 1),
            Err(Error::OutOfRange(_))
        ));
        assert!(matches!(p.free(Handle(0)), Err(Error::OutOfRange(_))));
        assert_eq!(p.total_pages(), 0);
        p.check().unwrap();
    }
    assert!(build("zpool9").is_err());
}

#[test]
fn every_page_comes_back_when_everything_is_freed() {
    for mut p in pools() {
        let max = p.max_object_bytes();
        let hs: Vec<_> = (1..2000u32)
            .map(|i| p.alloc(1 + (i * 37) % max).unwrap())
            .collect();
        assert!(p.total_pages() > 0);
        for h in hs.iter().rev().step_by(3) {
            p.free(*h).unwrap();
        }
        p.compact();
        p.check().unwrap();
        for h in hs
            .iter()
            .rev()
            .enumerate()
            .filter(|(i, _)| i % 3 != 0)
            .map(|(_, h)| h)
        {
            p.free(*h).unwrap();
        }
        assert_eq!((p.total_pages(), p.objects()), (0, 0), "{}", p.name());
    }
}

#[test]
fn same_calls_same_placements() {
    for name in ["zsmalloc", "z3fold", "z3fold_4_8", "zbud"] {
        let run = || {
            let mut p = build(name).unwrap();
            let hs: Vec<_> = (0..500u32)
                .map(|i| p.alloc(30 + (i * 977) % 3000).unwrap())
                .collect();
            for h in hs.iter().step_by(4) {
                p.free(*h).unwrap();
            }
            hs.iter().map(|h| p.extent(*h)).collect::<Vec<_>>()
        };
        assert_eq!(run(), run(), "{name}");
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(48))]
    #[test]
    fn random_alloc_free_compact_keeps_the_contract(
        ops in proptest::collection::vec((0u8..10, 1u32..=4096, any::<u16>()), 1..600),
    ) {
        for mut p in pools() {
            let mut live: Vec<(Handle, u32)> = Vec::new();
            for &(op, len, pick) in &ops {
                match op {
                    0..=5 => {
                        let len = len.min(p.max_object_bytes());
                        live.push((p.alloc(len).unwrap(), len));
                    }
                    6..=8 if !live.is_empty() => {
                        let (h, _) = live.swap_remove(pick as usize % live.len());
                        p.free(h).unwrap();
                        prop_assert!(p.free(h).is_err());
                    }
                    _ => {
                        let before = p.total_pages();
                        let freed = p.compact();
                        prop_assert_eq!(p.total_pages() + freed, before);
                    }
                }
            }
            check_layout(p.as_ref(), &live);
            for (h, _) in live.drain(..) {
                p.free(h).unwrap();
            }
            prop_assert_eq!(p.total_pages(), 0);
        }
    }
}
