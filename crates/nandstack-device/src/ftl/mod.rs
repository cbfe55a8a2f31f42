//! placeholder
pub struct Ftl;
pub struct FtlConfig;
