//! NAND organisation and cell-mode characteristics.

pub mod cell;
pub mod geometry;
pub mod timing;

pub use cell::{CellMode, CellTiming};
pub use geometry::{Geometry, PlaneAddr};
pub use timing::{Timelines, TimingConfig};
