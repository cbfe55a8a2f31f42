//! Conformance of every [`Replacement`] policy to its contract on seeded random store/remove/pick
//! sequences, checked against a plain reference model: a pick names only live entries of the cgroup
//! asked, `Empty` exactly when the cgroup has none, counts agree, and no live entry is starved (every
//! one is picked for writeback within two rounds of the list; the lottery, whose categories are drawn
//! at random, within fifty; not checked for `lottery_code`, whose rounded tickets can leave a list
//! undrawable, as the authors' code does). Every store is followed by its placement, as the cache does (three
//! entries to a pool page).

use std::collections::BTreeSet;

use nandstack_core::Rng;

use super::{
    Lottery, LotteryCode, LruSecondChance, PageKind, PageLru, Pick, Placement, Replacement,
};

fn policies(seed: u64) -> Vec<Box<dyn Replacement>> {
    vec![
        Box::new(LruSecondChance::new()),
        Box::new(PageLru::new()),
        Box::new(Lottery::new(10_000, 40_000, seed)),
        Box::new(LotteryCode::new(200, seed)),
    ]
}

#[test]
fn replacement_policies_keep_their_contract() {
    for seed in 1..=20u64 {
        for mut p in policies(seed) {
            let mut stores = 0u64;
            let mut rng = Rng::new(seed);
            let mut live: Vec<BTreeSet<u32>> = vec![BTreeSet::new(); 3];
            let mut next_id = 0u32;
            let mut free_ids: Vec<u32> = Vec::new();
            for step in 0..4000 {
                let m = (rng.next_u64() % 3) as u16;
                match rng.next_u64() % 4 {
                    0 | 1 => {
                        let id = free_ids.pop().unwrap_or_else(|| {
                            next_id += 1;
                            next_id - 1
                        });
                        p.stored(id, m);
                        p.placed(
                            id,
                            Placement {
                                container: stores / 3,
                                len_bytes: 500 + (rng.next_u64() % 800) as u32,
                                kind: if id.is_multiple_of(2) {
                                    PageKind::Anon
                                } else {
                                    PageKind::File
                                },
                            },
                        );
                        stores += 1;
                        live[m as usize].insert(id);
                    }
                    2 => {
                        if let Some(&id) = live[m as usize].iter().next() {
                            p.removed(id);
                            live[m as usize].remove(&id);
                            free_ids.push(id);
                        }
                    }
                    _ => match p.pick(m) {
                        Pick::Empty => assert!(
                            live[m as usize].is_empty(),
                            "{} seed {seed} step {step}: Empty with live entries",
                            p.name()
                        ),
                        Pick::Rotate => assert!(!live[m as usize].is_empty()),
                        Pick::Writeback(id) => {
                            assert!(
                                live[m as usize].contains(&id),
                                "{} seed {seed} step {step}: picked {id} not live in cgroup {m}",
                                p.name()
                            );
                            if rng.next_u64().is_multiple_of(2) {
                                p.removed(id);
                                live[m as usize].remove(&id);
                                free_ids.push(id);
                            }
                        }
                    },
                }
                for (mi, l) in live.iter().enumerate() {
                    assert_eq!(
                        p.count(mi as u16),
                        l.len() as u64,
                        "{} seed {seed}",
                        p.name()
                    );
                }
            }
            // No starvation: 2n steps on a cgroup of n entries pick each one for writeback.
            if p.name() == "lottery_code" {
                continue;
            }
            for m in 0..3u16 {
                let want = live[m as usize].clone();
                let mut seen = BTreeSet::new();
                let rounds = if p.name() == "lottery" { 50 } else { 2 };
                for _ in 0..rounds * want.len() {
                    if let Pick::Writeback(id) = p.pick(m) {
                        seen.insert(id);
                    }
                }
                assert_eq!(
                    seen,
                    want,
                    "{} seed {seed}: cgroup {m} starved entries",
                    p.name()
                );
            }
        }
    }
}
