//! nandstack-kernel: the host model against the real kernel. Loaders of the Linux 6.18 captures in
//! `../shared/traces` ([`kswap`]: swap on a loop device; [`kcswap`]: zswap and zram), the captures' setups
//! as configs, the figures compared, a capture's requests counted ([`requests`]), and runs of the model through `nandstack-sim`'s runner. The
//! experiments `kernel-swap`, `kernel-zswap` and `kernel-zram` (Python) take their setup and figure lists
//! from here through the binding.

pub mod kcswap;
pub mod kswap;
pub mod requests;
