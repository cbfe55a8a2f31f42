//! NAND organisation and cell-mode characteristics.

mod calendar;
pub mod cell;
pub mod geometry;
pub mod levels;
pub mod timing;

pub use cell::{CellMode, CellTiming};
pub use geometry::{Geometry, PlaneAddr};
pub use levels::{LevelOrder, PageLevels};
pub use timing::{Timelines, TimingConfig};
