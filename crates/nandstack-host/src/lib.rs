//! nandstack-host: the host memory and swap model (work in progress).
