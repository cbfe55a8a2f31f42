//! What this process has used of the machine (Linux /proc): CPU seconds and peak memory, for the
//! reports' `wall_*` figures and the benchmarks.

/// CPU time (user + system) this process has used so far, in seconds (Linux: /proc/self/stat), if known.
/// Unlike wall time it does not grow while other processes hold the cores.
pub fn cpu_seconds() -> Option<f64> {
    let stat = std::fs::read_to_string("/proc/self/stat").ok()?;
    // Fields after the parenthesised command name; utime and stime are the 14th and 15th fields.
    let rest = stat.rsplit_once(')')?.1;
    let f: Vec<&str> = rest.split_whitespace().collect();
    let ticks: f64 = f.get(11)?.parse::<f64>().ok()? + f.get(12)?.parse::<f64>().ok()?;
    Some(ticks / 100.0) // USER_HZ is 100 on Linux
}

/// Peak resident set size of this process (Linux: VmHWM), if known.
pub fn peak_rss_bytes() -> Option<u64> {
    let status = std::fs::read_to_string("/proc/self/status").ok()?;
    let line = status.lines().find(|l| l.starts_with("VmHWM:"))?;
    let kb: u64 = line.split_whitespace().nth(1)?.parse().ok()?;
    Some(kb * 1024)
}
