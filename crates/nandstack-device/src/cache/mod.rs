//! DRAM caches of the SSD controller: the shared LRU and FIFO indexes, the write buffer, and the DFTL-style mapping
//! cache (which lives inside the FTL because the FTL is what touches mapping entries).

pub mod fifo;
mod keys;
pub mod lru;
pub mod mapping;
pub mod write_buffer;

pub use fifo::FifoMap;
pub use lru::LruMap;
pub use mapping::{MappingCache, MappingCacheConfig};
pub use write_buffer::{Entries, Eviction, WriteBuffer, WriteBufferConfig};
