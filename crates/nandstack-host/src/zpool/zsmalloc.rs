//! zsmalloc as Linux 6.18 has it (`mm/zsmalloc.c`), counted object by object.
//!
//! * **Size classes** (`zs_create_pool`): sizes 32, 48, …, 4096 (`ZS_MIN_ALLOC_SIZE` 32, step
//!   `ZS_SIZE_CLASS_DELTA` = 4096 >> 8 = 16; 255 indices). Each class takes zspages of the 1..=chain
//!   (`CONFIG_ZSMALLOC_CHAIN_SIZE`, default 8) pages that leave the fewest bytes unused
//!   (`calculate_zspage_chain_size`, first best); walking from the largest size down, a class with the
//!   same pages per zspage and objects per zspage as the one above it is merged into it (its objects use
//!   the larger size). Classes of one page and one object — every size above about 3.6 KiB — merge into
//!   the "huge" class: one object per page.
//! * **Object size** (`zs_malloc`): the class is looked up for the length plus `ZS_HANDLE_SIZE` =
//!   `sizeof(unsigned long)` = 8 bytes (a non-huge object carries its handle in its first word), capped at
//!   the last class. zram's `huge_class_size` is the smallest non-huge-class size minus 7.
//! * **Placement** (`find_get_zspage`): the first zspage of the fullest non-full fullness group (groups
//!   by in-use ratio: 0, then 1–10 for up to 10%, …, up to 99%, then full; `get_fullness_group`); a zspage
//!   moves to the head of its new group's list whenever its group changes (`fix_fullness_group`); inside a
//!   zspage the free slots form a last-in first-out list (`obj_malloc`/`obj_free`). With no partly used
//!   zspage, a new one is allocated.
//! * **Freeing** leaves a hole; a zspage whose last object goes is freed at once (`zs_free`).
//! * **Compaction** (`zs_compact`, per class from the largest index down, `__zs_compact`): while the class
//!   wastes at least a zspage's worth of slots (`zs_can_compact`), move the objects of the emptiest zspage
//!   (source: first of groups 1→10) into the fullest (destination: first of groups 10→1) in slot order
//!   until the source is empty or the destination full; an emptied source is freed. The kernel runs it
//!   from the pool's shrinker under global memory pressure and from zram's `compact` attribute — not on
//!   a memory cgroup's reclaim, so the captures show `pages_compacted` 0.

use nandstack_core::{Error, Result};

use super::{bad_handle, check_len, Extent, Handle, Handles, Ids, OrderedList, Zpool, PAGE_BYTES};

pub const ZS_MIN_ALLOC_SIZE: u32 = 32;
pub const ZS_SIZE_CLASS_DELTA: u32 = PAGE_BYTES >> 8;
pub const ZS_HANDLE_SIZE: u32 = 8;
/// Size-class indices: `DIV_ROUND_UP(4096 - 32, 16) + 1`.
pub const ZS_SIZE_CLASSES: usize =
    ((PAGE_BYTES - ZS_MIN_ALLOC_SIZE).div_ceil(ZS_SIZE_CLASS_DELTA) + 1) as usize;
/// `CONFIG_ZSMALLOC_CHAIN_SIZE` default.
pub const DEFAULT_CHAIN_SIZE: u32 = 8;
/// Fullness groups: 0 (empty), 1..=10 (in-use ratio up to 10%, …, 99%), 11 (full).
const GROUPS: usize = 12;
const FULL: usize = GROUPS - 1;

/// One size class.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct SizeClass {
    /// The index that owns it (the largest of the merged indices).
    pub index: usize,
    pub size_bytes: u32,
    pub pages_per_zspage: u32,
    pub objs_per_zspage: u32,
}

impl SizeClass {
    pub fn is_huge(&self) -> bool {
        self.pages_per_zspage == 1 && self.objs_per_zspage == 1
    }
}

/// The pages per zspage that waste least for `size` (first best).
pub fn chain_size(size: u32, chain: u32) -> u32 {
    let mut best = 1;
    let mut min_waste = u32::MAX;
    for i in 1..=chain {
        let waste = (i * PAGE_BYTES) % size;
        if waste < min_waste {
            min_waste = waste;
            best = i;
        }
    }
    best
}

/// The class table: one [`SizeClass`] per index (merged indices share their owner's), and zram's
/// `huge_class_size`.
pub fn size_classes(chain: u32) -> (Vec<SizeClass>, u32) {
    let mut table = vec![None::<SizeClass>; ZS_SIZE_CLASSES];
    let mut prev: Option<SizeClass> = None;
    let mut huge_class_size = 0;
    for i in (0..ZS_SIZE_CLASSES).rev() {
        let size = (ZS_MIN_ALLOC_SIZE + i as u32 * ZS_SIZE_CLASS_DELTA).min(PAGE_BYTES);
        let ppz = chain_size(size, chain);
        let objs = ppz * PAGE_BYTES / size;
        if ppz != 1 && objs != 1 && huge_class_size == 0 {
            huge_class_size = size - (ZS_HANDLE_SIZE - 1);
        }
        let class = match prev {
            Some(p) if p.pages_per_zspage == ppz && p.objs_per_zspage == objs => p,
            _ => SizeClass {
                index: i,
                size_bytes: size,
                pages_per_zspage: ppz,
                objs_per_zspage: objs,
            },
        };
        table[i] = Some(class);
        prev = Some(class);
    }
    (table.into_iter().flatten().collect(), huge_class_size)
}

/// The class index for an allocation of `len_bytes` (`get_size_class_index(len + ZS_HANDLE_SIZE)`).
pub fn class_index(len_bytes: u32) -> usize {
    let size = len_bytes + ZS_HANDLE_SIZE;
    let idx = if size > ZS_MIN_ALLOC_SIZE {
        (size - ZS_MIN_ALLOC_SIZE).div_ceil(ZS_SIZE_CLASS_DELTA) as usize
    } else {
        0
    };
    idx.min(ZS_SIZE_CLASSES - 1)
}

#[derive(Debug, Clone)]
struct Zspage {
    class: usize,
    inuse: u32,
    /// Free slots, the next to use last.
    free_slots: Vec<u32>,
    /// Per slot, the object's handle and length.
    slots: Vec<Option<(Handle, u32)>>,
    group: usize,
    key: i64,
}

#[derive(Debug, Clone, Default)]
struct ClassState {
    lists: [OrderedList; GROUPS],
    objs_allocated: u64,
    objs_inuse: u64,
}

/// Per-class counts, as `/sys/kernel/debug/zsmalloc/<pool>/classes` shows them.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ClassStat {
    pub class: SizeClass,
    pub zspages: u64,
    pub objs_allocated: u64,
    pub objs_inuse: u64,
    pub pages_used: u64,
}

#[derive(Debug, Clone)]
pub struct Zsmalloc {
    classes: Vec<SizeClass>,
    huge_class_size: u32,
    state: Vec<ClassState>,
    zspages: Vec<Option<Zspage>>,
    ids: Ids,
    handles: Handles<(u32, u32)>,
    pages: u64,
    pages_compacted: u64,
    seq: i64,
}

impl Default for Zsmalloc {
    fn default() -> Self {
        Self::new()
    }
}

impl Zsmalloc {
    pub fn new() -> Zsmalloc {
        Self::with_chain_size(DEFAULT_CHAIN_SIZE).expect("default chain size is valid")
    }

    /// `CONFIG_ZSMALLOC_CHAIN_SIZE` is 4..=16 in the kernel's Kconfig; 1..=16 accepted here (4 gives the
    /// pre-6.3 behaviour).
    pub fn with_chain_size(chain: u32) -> Result<Zsmalloc> {
        if !(1..=16).contains(&chain) {
            return Err(Error::config(
                "zsmalloc.chain_size",
                format!("{chain}: must be in 1..=16"),
            ));
        }
        let (classes, huge_class_size) = size_classes(chain);
        Ok(Zsmalloc {
            state: vec![ClassState::default(); classes.len()],
            classes,
            huge_class_size,
            zspages: Vec::new(),
            ids: Ids::default(),
            handles: Handles::default(),
            pages: 0,
            pages_compacted: 0,
            seq: 0,
        })
    }

    /// zram stores a page whose compressed length is at least this whole (`zs_huge_class_size`).
    pub fn huge_class_size(&self) -> u32 {
        self.huge_class_size
    }

    /// The class an object of `len_bytes` goes to.
    pub fn class_for(&self, len_bytes: u32) -> SizeClass {
        self.classes[class_index(len_bytes)]
    }

    /// Pages freed by compaction so far (zram's `pages_compacted`).
    pub fn pages_compacted(&self) -> u64 {
        self.pages_compacted
    }

    /// Counts per owning class (merged indices once), smallest size first.
    pub fn class_stats(&self) -> Vec<ClassStat> {
        let mut zspages = vec![0u64; self.classes.len()];
        for z in self.zspages.iter().flatten() {
            zspages[z.class] += 1;
        }
        (0..self.classes.len())
            .filter(|&i| self.classes[i].index == i)
            .map(|i| ClassStat {
                class: self.classes[i],
                zspages: zspages[i],
                objs_allocated: self.state[i].objs_allocated,
                objs_inuse: self.state[i].objs_inuse,
                pages_used: zspages[i] * self.classes[i].pages_per_zspage as u64,
            })
            .collect()
    }

    fn group_of(&self, z: &Zspage) -> usize {
        let objs = self.classes[z.class].objs_per_zspage;
        if z.inuse == 0 {
            0
        } else if z.inuse == objs {
            FULL
        } else {
            (100 * z.inuse / objs / 10 + 1) as usize
        }
    }

    fn zs(&mut self, id: u32) -> &mut Zspage {
        self.zspages[id as usize].as_mut().expect("live zspage")
    }

    /// Put zspage `id` at the head of the list of its current group.
    fn insert(&mut self, id: u32) -> usize {
        let z = self.zspages[id as usize].as_ref().expect("live zspage");
        let (class, group) = (z.class, self.group_of(z));
        let key = self.state[class].lists[group].push_front(&mut self.seq, id);
        let z = self.zs(id);
        z.group = group;
        z.key = key;
        group
    }

    fn unlist(&mut self, id: u32) {
        let z = self.zspages[id as usize].as_ref().expect("live zspage");
        let (class, group, key) = (z.class, z.group, z.key);
        self.state[class].lists[group].remove(key);
    }

    /// `fix_fullness_group`: relist if the group changed; returns the group.
    fn fix_group(&mut self, id: u32) -> usize {
        let z = self.zspages[id as usize].as_ref().expect("live zspage");
        let group = self.group_of(z);
        if group != z.group {
            self.unlist(id);
            self.insert(id);
        }
        group
    }

    fn new_zspage(&mut self, class: usize) -> u32 {
        let c = self.classes[class];
        let id = self.ids.take();
        let z = Zspage {
            class,
            inuse: 0,
            free_slots: (0..c.objs_per_zspage).rev().collect(),
            slots: vec![None; c.objs_per_zspage as usize],
            group: 0,
            key: 0,
        };
        if id as usize == self.zspages.len() {
            self.zspages.push(Some(z));
        } else {
            self.zspages[id as usize] = Some(z);
        }
        self.pages += c.pages_per_zspage as u64;
        self.state[class].objs_allocated += c.objs_per_zspage as u64;
        id
    }

    fn free_zspage(&mut self, id: u32) {
        self.unlist(id);
        let z = self.zspages[id as usize].take().expect("live zspage");
        let c = self.classes[z.class];
        self.pages -= c.pages_per_zspage as u64;
        self.state[z.class].objs_allocated -= c.objs_per_zspage as u64;
        self.ids.give_back(id);
    }

    /// `obj_malloc`: the zspage's next free slot.
    fn obj_malloc(&mut self, id: u32, h: Handle, len: u32) -> u32 {
        let z = self.zs(id);
        let slot = z.free_slots.pop().expect("zspage has a free slot");
        z.slots[slot as usize] = Some((h, len));
        z.inuse += 1;
        slot
    }

    fn obj_free(&mut self, id: u32, slot: u32) {
        let z = self.zs(id);
        z.slots[slot as usize] = None;
        z.free_slots.push(slot);
        z.inuse -= 1;
    }

    /// `__zs_compact` for one class; returns pages freed.
    fn compact_class(&mut self, class: usize) -> u64 {
        let c = self.classes[class];
        let mut freed = 0;
        let mut dst: Option<u32> = None;
        loop {
            let st = &self.state[class];
            let wasted = (st.objs_allocated - st.objs_inuse) / c.objs_per_zspage as u64;
            if wasted == 0 {
                break;
            }
            if dst.is_none() {
                dst = self.isolate(class, (1..FULL).rev());
                if dst.is_none() {
                    break;
                }
            }
            let d = dst.expect("set above");
            let Some(src) = self.isolate(class, 1..FULL) else {
                break;
            };
            for slot in 0..c.objs_per_zspage {
                let Some((h, len)) = self.zs(src).slots[slot as usize] else {
                    continue;
                };
                let new_slot = self.obj_malloc(d, h, len);
                self.handles.set(h, (d, new_slot));
                self.obj_free(src, slot);
                if self.zs(d).inuse == c.objs_per_zspage || self.zs(src).inuse == 0 {
                    break;
                }
            }
            if self.insert(src) == 0 {
                self.free_zspage(src);
                freed += c.pages_per_zspage as u64;
            }
            if self.zs(d).inuse == c.objs_per_zspage {
                self.insert(d);
                dst = None;
            }
        }
        if let Some(d) = dst {
            self.insert(d);
        }
        freed
    }

    /// Take the first zspage of the first non-empty group in `groups` off its list.
    fn isolate(&mut self, class: usize, groups: impl Iterator<Item = usize>) -> Option<u32> {
        for g in groups {
            if let Some((_, id)) = self.state[class].lists[g].front() {
                self.unlist(id);
                return Some(id);
            }
        }
        None
    }
}

impl Zpool for Zsmalloc {
    fn name(&self) -> &'static str {
        "zsmalloc"
    }

    fn max_object_bytes(&self) -> u32 {
        PAGE_BYTES
    }

    fn alloc(&mut self, len_bytes: u32) -> Result<Handle> {
        check_len("zsmalloc", len_bytes, PAGE_BYTES)?;
        let class = self.classes[class_index(len_bytes)].index;
        // find_get_zspage: the fullest partly used zspage.
        let found = (1..FULL)
            .rev()
            .find_map(|g| self.state[class].lists[g].front().map(|(_, id)| id));
        let h = self.handles.insert((0, 0));
        let id = match found {
            Some(id) => id,
            None => {
                let id = self.new_zspage(class);
                let key = self.state[class].lists[0].push_front(&mut self.seq, id);
                self.zs(id).key = key;
                id
            }
        };
        let slot = self.obj_malloc(id, h, len_bytes);
        self.handles.set(h, (id, slot));
        self.state[class].objs_inuse += 1;
        self.fix_group(id);
        Ok(h)
    }

    fn free(&mut self, handle: Handle) -> Result<()> {
        let (id, slot) = self
            .handles
            .remove(handle)
            .ok_or_else(|| bad_handle("zsmalloc", handle))?;
        let class = self.zs(id).class;
        self.obj_free(id, slot);
        self.state[class].objs_inuse -= 1;
        if self.fix_group(id) == 0 {
            self.free_zspage(id);
        }
        Ok(())
    }

    fn total_pages(&self) -> u64 {
        self.pages
    }

    fn objects(&self) -> u64 {
        self.handles.live
    }

    fn compact(&mut self) -> u64 {
        let mut freed = 0;
        for i in (0..self.classes.len()).rev() {
            if self.classes[i].index == i {
                freed += self.compact_class(i);
            }
        }
        self.pages_compacted += freed;
        freed
    }

    fn extent(&self, handle: Handle) -> Option<Extent> {
        let (id, slot) = self.handles.get(handle)?;
        let z = self.zspages[id as usize].as_ref()?;
        let c = self.classes[z.class];
        let (_, len) = z.slots[slot as usize]?;
        Some(Extent {
            container: id as u64,
            offset_bytes: slot * c.size_bytes,
            // A huge object keeps its handle outside the page.
            len_bytes: if c.is_huge() {
                len
            } else {
                len + ZS_HANDLE_SIZE
            },
        })
    }

    fn container_bytes(&self, container: u64) -> u32 {
        match self.zspages.get(container as usize) {
            Some(Some(z)) => self.classes[z.class].pages_per_zspage * PAGE_BYTES,
            _ => 0,
        }
    }

    fn check(&self) -> Result<()> {
        let bad = |m: String| Err(Error::Invariant(format!("zsmalloc: {m}")));
        let mut pages = 0;
        let mut inuse = vec![0u64; self.classes.len()];
        let mut allocated = vec![0u64; self.classes.len()];
        let mut listed = 0;
        for (id, z) in self.zspages.iter().enumerate() {
            let Some(z) = z else { continue };
            let c = self.classes[z.class];
            let used = z.slots.iter().filter(|s| s.is_some()).count() as u32;
            if used != z.inuse || used + z.free_slots.len() as u32 != c.objs_per_zspage {
                return bad(format!("zspage {id}: slot counts disagree"));
            }
            if z.inuse == 0 {
                return bad(format!("zspage {id} is empty but held"));
            }
            if z.group != self.group_of(z)
                || self.state[z.class].lists[z.group].by_key.get(&z.key) != Some(&(id as u32))
            {
                return bad(format!("zspage {id} is not on its fullness list"));
            }
            for (slot, s) in z.slots.iter().enumerate() {
                if let Some((h, _)) = s {
                    if self.handles.get(*h) != Some((id as u32, slot as u32)) {
                        return bad(format!("handle {} does not point at its object", h.0));
                    }
                }
            }
            pages += c.pages_per_zspage as u64;
            inuse[z.class] += z.inuse as u64;
            allocated[z.class] += c.objs_per_zspage as u64;
            listed += 1;
        }
        let on_lists: usize = self
            .state
            .iter()
            .map(|s| s.lists.iter().map(|l| l.len()).sum::<usize>())
            .sum();
        if pages != self.pages || on_lists != listed {
            return bad(format!(
                "pages {} vs counted {pages}, listed {on_lists} vs {listed}",
                self.pages
            ));
        }
        for (i, s) in self.state.iter().enumerate() {
            if s.objs_inuse != inuse[i] || s.objs_allocated != allocated[i] {
                return bad(format!("class {i}: object counts disagree"));
            }
        }
        if inuse.iter().sum::<u64>() != self.handles.live {
            return bad("live handles and objects disagree".into());
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests;
