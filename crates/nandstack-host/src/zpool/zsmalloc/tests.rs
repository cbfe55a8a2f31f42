use super::*;

#[test]
fn class_table_matches_hand_computed_classes() {
    let (t, huge) = size_classes(8);
    assert_eq!(t.len(), 255);
    // 32 B: a power of two, one page of 128 objects.
    assert_eq!(
        (t[0].size_bytes, t[0].pages_per_zspage, t[0].objs_per_zspage),
        (32, 1, 128)
    );
    // 112 B: 7 pages hold exactly 256 objects (waste 64, 16, 80, 32, 96, 48, 0 for 1..7 pages).
    assert_eq!(
        (t[5].size_bytes, t[5].pages_per_zspage, t[5].objs_per_zspage),
        (112, 7, 256)
    );
    // 3632 B: 8 pages, 9 objects (waste 80); 3648 B and up waste least on one page: huge, merged
    // into the 4096 class.
    let c3632 = t[(3632 - 32) / 16];
    assert_eq!(
        (
            c3632.size_bytes,
            c3632.pages_per_zspage,
            c3632.objs_per_zspage
        ),
        (3632, 8, 9)
    );
    let c3648 = t[(3648 - 32) / 16];
    assert_eq!(
        (c3648.size_bytes, c3648.index, c3648.is_huge()),
        (4096, 254, true)
    );
    assert_eq!(huge, 3632 - 7);
    // With 4-page zspages (before 6.3) the huge classes start lower.
    assert!(size_classes(4).1 < huge);
    // Merged indices point at a larger class with the same shape.
    for (i, c) in t.iter().enumerate() {
        assert!(c.index >= i && c.size_bytes >= (32 + 16 * i as u32).min(4096));
        assert_eq!(t[c.index], *c);
    }
}

#[test]
fn the_handle_word_is_added_before_the_class_lookup() {
    let z = Zsmalloc::new();
    assert_eq!(class_index(24), 0); // 24 + 8 = 32
    assert_eq!(class_index(25), 1); // 33 → 48
    assert_eq!(z.class_for(100).size_bytes, 112);
    assert_eq!(z.class_for(104).size_bytes, 112); // 112 exactly
    assert_eq!(z.class_for(105).size_bytes, 128);
    assert!(z.class_for(3624).size_bytes <= 3632);
    assert!(z.class_for(3625).is_huge());
    assert!(z.class_for(4096).is_huge()); // 4104 is capped at the last class
}

#[test]
fn zspages_fill_then_free_leaves_holes_until_empty() {
    let mut z = Zsmalloc::new();
    let hs: Vec<_> = (0..256).map(|_| z.alloc(100).unwrap()).collect();
    assert_eq!(z.total_pages(), 7);
    let h = z.alloc(100).unwrap();
    assert_eq!(z.total_pages(), 14);
    z.free(h).unwrap();
    assert_eq!(z.total_pages(), 7, "an emptied zspage is freed at once");
    for h in &hs[1..] {
        z.free(*h).unwrap();
    }
    assert_eq!(z.total_pages(), 7, "one object keeps its zspage");
    assert_eq!(z.compact(), 0, "nothing to gain from one zspage");
    z.free(hs[0]).unwrap();
    assert_eq!(z.total_pages(), 0);
    z.check().unwrap();
}

#[test]
fn compaction_merges_two_half_zspages() {
    let mut z = Zsmalloc::new();
    let hs: Vec<_> = (0..512).map(|_| z.alloc(100).unwrap()).collect();
    for h in hs.iter().step_by(2) {
        z.free(*h).unwrap();
    }
    assert_eq!(z.total_pages(), 14);
    assert_eq!(z.objects(), 256);
    z.check().unwrap();
    assert_eq!(z.compact(), 7);
    assert_eq!(z.total_pages(), 7);
    assert_eq!(z.pages_compacted(), 7);
    z.check().unwrap();
    for h in hs.iter().skip(1).step_by(2) {
        assert!(z.extent(*h).is_some());
        z.free(*h).unwrap();
    }
    assert_eq!(z.total_pages(), 0);
}

#[test]
fn allocation_prefers_the_fullest_zspage() {
    let mut z = Zsmalloc::new();
    // Two 32-object zspages of the 128 B class (1 page each), one at 31/32, one at 8/32.
    let a: Vec<_> = (0..64).map(|_| z.alloc(120).unwrap()).collect();
    assert_eq!(z.total_pages(), 2);
    z.free(a[0]).unwrap();
    for h in &a[32..56] {
        z.free(*h).unwrap();
    }
    let h = z.alloc(120).unwrap();
    assert_eq!(
        z.extent(h).unwrap().container,
        z.extent(a[1]).unwrap().container
    );
    // Last in, first out inside the zspage: the freed slot 0 is reused.
    assert_eq!(z.extent(h).unwrap().offset_bytes, 0);
    z.check().unwrap();
}

#[test]
fn huge_objects_take_a_page_each_and_bad_calls_are_errors() {
    let mut z = Zsmalloc::new();
    let hs: Vec<_> = (0..5).map(|_| z.alloc(4096).unwrap()).collect();
    assert_eq!(z.total_pages(), 5);
    assert_eq!(z.extent(hs[0]).unwrap().len_bytes, 4096);
    assert!(matches!(z.alloc(0), Err(Error::OutOfRange(_))));
    assert!(matches!(z.alloc(4097), Err(Error::OutOfRange(_))));
    z.free(hs[0]).unwrap();
    assert!(matches!(z.free(hs[0]), Err(Error::OutOfRange(_))));
    assert!(Zsmalloc::with_chain_size(0).is_err());
    assert_eq!(z.total_pages(), 4);
    let s = z.class_stats();
    assert_eq!(s.iter().map(|c| c.pages_used).sum::<u64>(), 4);
}
