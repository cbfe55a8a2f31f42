//! Copies that keep every allocation's capacity. A device is copied whole (`Device::snapshot`: an
//! aged device kept per process) and must then report exactly what the original would: the metadata
//! it reports counts the capacity of its growable lists (free blocks, FIFO queues, candidate sets),
//! which a derived `Clone` would shrink to their lengths.

use std::collections::VecDeque;
use std::ops::{Deref, DerefMut};

/// A value whose `Clone` keeps its lists' capacities (see the module doc). Derefs to the value.
#[derive(Debug, Default)]
pub struct Exact<T>(pub T);

/// A clone with the same capacities.
pub trait CloneExact {
    fn clone_exact(&self) -> Self;
}

impl<T: Clone> CloneExact for Vec<VecDeque<T>> {
    fn clone_exact(&self) -> Self {
        self.iter()
            .map(|q| {
                let mut c = VecDeque::with_capacity(q.capacity());
                c.extend(q.iter().cloned());
                c
            })
            .collect()
    }
}

impl<T: Clone> CloneExact for Vec<Vec<T>> {
    fn clone_exact(&self) -> Self {
        self.iter()
            .map(|v| {
                let mut c = Vec::with_capacity(v.capacity());
                c.extend_from_slice(v);
                c
            })
            .collect()
    }
}

impl<T: CloneExact> Clone for Exact<T> {
    fn clone(&self) -> Self {
        Exact(self.0.clone_exact())
    }
}

impl<T> Deref for Exact<T> {
    type Target = T;
    fn deref(&self) -> &T {
        &self.0
    }
}

impl<T> DerefMut for Exact<T> {
    fn deref_mut(&mut self) -> &mut T {
        &mut self.0
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_copy_keeps_contents_and_capacities() {
        let mut queues: Vec<VecDeque<u32>> = vec![VecDeque::new(), VecDeque::with_capacity(3)];
        for i in 0..37 {
            queues[0].push_back(i);
        }
        queues[0].drain(..30);
        queues[1].push_front(9);
        let lists: Vec<Vec<u64>> = vec![(0..100).collect(), Vec::with_capacity(17)];
        let (q, l) = (Exact(queues), Exact(lists));
        let (qc, lc) = (q.clone(), l.clone());
        assert_eq!(*qc, *q);
        assert_eq!(*lc, *l);
        let caps = |v: &Vec<VecDeque<u32>>| v.iter().map(|x| x.capacity()).collect::<Vec<_>>();
        assert_eq!(caps(&qc), caps(&q));
        assert_eq!(
            lc.iter().map(|x| x.capacity()).collect::<Vec<_>>(),
            l.iter().map(|x| x.capacity()).collect::<Vec<_>>()
        );
        // A derived clone would not keep them (what this type is for).
        assert_ne!(caps(&q.0.clone()), caps(&q));
    }
}
