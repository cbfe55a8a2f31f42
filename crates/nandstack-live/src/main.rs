//! `nandstack-live`: serve a simulated SSD as a file over FUSE, in real time, so a real Linux kernel can
//! swap onto it (through a loop device with direct I/O). Started and stopped by `nandstack live`, which
//! sets up the loop device, the swap and the memory cgroup around it (docs/live.md).
//!
//! ```text
//! nandstack-live --config CONFIG.json --mount DIR --size BYTES --report PATH
//!                [--trace PATH] [--time-scale X] [--verify]
//! ```
//! Mounts DIR with two files: `swap` (the device's first BYTES) and `control` (`start` / `stop` the
//! measured window; `stop` writes the report to PATH). Runs until DIR is unmounted; writes the report
//! then if no `stop` came. Locks its memory (`mlockall`) so it never waits on the swap it serves.

mod clock;
mod engine;
mod fs;
mod store;

use std::sync::{mpsc, Arc, Mutex};
use std::time::Instant;

use nandstack_device::DeviceKindName;
use nandstack_sim::SimConfig;

use crate::clock::{Clock, Lag};
use crate::engine::Engine;
use crate::fs::{LiveFs, Shared};
use crate::store::PageStore;

struct Args {
    config: String,
    mount: String,
    size: u64,
    report: String,
    trace: Option<String>,
    time_scale: f64,
    verify: bool,
}

const USAGE: &str =
    "usage: nandstack-live --config CONFIG.json --mount DIR --size BYTES --report PATH \
                     [--trace PATH] [--time-scale X] [--verify]";

fn parse_args(mut it: impl Iterator<Item = String>) -> Result<Args, String> {
    let (mut config, mut mount, mut size, mut report) = (None, None, None, None);
    let (mut trace, mut time_scale, mut verify) = (None, 1.0, false);
    while let Some(a) = it.next() {
        let mut value = || {
            it.next()
                .ok_or_else(|| format!("{a} needs a value\n{USAGE}"))
        };
        match a.as_str() {
            "--config" => config = Some(value()?),
            "--mount" => mount = Some(value()?),
            "--report" => report = Some(value()?),
            "--trace" => trace = Some(value()?),
            "--size" => {
                let v = value()?;
                size = Some(
                    v.parse::<u64>()
                        .map_err(|_| format!("--size `{v}`: not a byte count"))?,
                );
            }
            "--time-scale" => {
                let v = value()?;
                time_scale = v
                    .parse::<f64>()
                    .ok()
                    .filter(|x| x.is_finite() && *x > 0.0)
                    .ok_or_else(|| format!("--time-scale `{v}`: not a number > 0"))?;
            }
            "--verify" => verify = true,
            other => return Err(format!("unknown argument `{other}`\n{USAGE}")),
        }
    }
    let need =
        |v: Option<String>, name: &str| v.ok_or_else(|| format!("{name} is required\n{USAGE}"));
    Ok(Args {
        config: need(config, "--config")?,
        mount: need(mount, "--mount")?,
        size: size.ok_or_else(|| format!("--size is required\n{USAGE}"))?,
        report: need(report, "--report")?,
        trace,
        time_scale,
        verify,
    })
}

/// Keep every page of the daemon in RAM: it must never wait on the swap it serves.
#[allow(unsafe_code)]
fn lock_memory() -> Result<(), String> {
    // SAFETY: mlockall takes flags only and touches no Rust-visible memory.
    let rc = unsafe { libc::mlockall(libc::MCL_CURRENT | libc::MCL_FUTURE) };
    if rc != 0 {
        return Err(format!(
            "mlockall failed: {} (the daemon must not be swapped out)",
            std::io::Error::last_os_error()
        ));
    }
    Ok(())
}

fn engine(args: &Args) -> Result<Engine, String> {
    let text =
        std::fs::read_to_string(&args.config).map_err(|e| format!("{}: {e}", args.config))?;
    let cfg = SimConfig::from_json(&text).map_err(|e| e.to_string())?;
    if cfg.device.kind == DeviceKindName::Zoned {
        return Err(
            "a zoned device cannot hold Linux swap without the ZNSwap kernel patch; \
                    live mode serves block and hybrid devices"
                .into(),
        );
    }
    let dev = nandstack_device::build(&cfg.device, cfg.seed, args.verify, None)
        .map_err(|e| e.to_string())?;
    if args.size == 0 || args.size % 4096 != 0 || args.size > dev.capacity_bytes() {
        return Err(format!(
            "the swap area ({} bytes = {} MiB) must be a whole number of 4 KiB pages and fit the drive's \
             logical capacity of {} MiB",
            args.size,
            args.size >> 20,
            dev.capacity_bytes() >> 20
        ));
    }
    let clock = Clock {
        t0: Instant::now(),
        time_scale: args.time_scale,
    };
    let lag: Lag = Arc::new(Mutex::new(Default::default()));
    let store = PageStore::new(args.size, args.verify);
    Ok(Engine::new(
        cfg,
        dev,
        store,
        clock,
        lag,
        args.trace.clone(),
        args.verify,
    ))
}

fn serve(args: Args) -> Result<(), String> {
    let eng = engine(&args)?;
    lock_memory()?;
    let lag = eng.lag.clone();
    let shared = Arc::new(Shared::new(eng, args.report.clone()));
    let (tx, rx) = mpsc::channel();
    let responder = std::thread::spawn(move || clock::respond(rx, lag));
    let fs = LiveFs::new(shared.clone(), tx, args.size);
    let mut options = fuser::Config::default();
    options.mount_options = vec![
        fuser::MountOption::FSName("nandstack-live".into()),
        fuser::MountOption::Subtype("nandstack-live".into()),
        fuser::MountOption::NoExec,
        fuser::MountOption::NoSuid,
        fuser::MountOption::NoDev,
    ];
    options.acl = fuser::SessionACL::All;
    fuser::mount(fs, &args.mount, &options)
        .map_err(|e| format!("FUSE mount of {}: {e}", args.mount))?;
    let _ = responder.join();
    if !shared.stopped() {
        shared
            .write_report()
            .map_err(|e| format!("{}: {e}", args.report))?;
    }
    Ok(())
}

fn main() {
    let result = parse_args(std::env::args().skip(1)).and_then(serve);
    if let Err(msg) = result {
        eprintln!("nandstack-live: error: {msg}");
        std::process::exit(2);
    }
}
