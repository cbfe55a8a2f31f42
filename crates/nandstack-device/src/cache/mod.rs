//! DRAM caches of the SSD controller: the shared LRU index, the write buffer, and the DFTL-style mapping
//! cache (which lives inside the FTL because the FTL is what touches mapping entries).

pub mod lru;
pub mod mapping;
pub mod write_buffer;

pub use lru::LruMap;
pub use mapping::{MappingCache, MappingCacheConfig};
pub use write_buffer::{Eviction, WriteBuffer, WriteBufferConfig};
