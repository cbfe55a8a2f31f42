//! The host the unit tests step by hand: built from parsed config parts on its device, under
//! verification, its threads not running.

use nandstack_device::spec::DeviceSpec;

use crate::config::{HostConfig, ProcessConfig};
use crate::host::build::HostSetup;
use crate::host::Host;

/// The host of `host` running `processes` on the device of `spec`, with verification on. Each
/// process's workload gets its index as stream when `per_process_streams`, else stream 0.
pub(crate) fn build(
    seed: u64,
    host: &HostConfig,
    processes: &[ProcessConfig],
    spec: &DeviceSpec,
    per_process_streams: bool,
) -> Host {
    let dev = nandstack_device::build(spec, seed, true, None).expect("device builds");
    let workloads: Vec<_> = processes
        .iter()
        .enumerate()
        .map(|(i, p)| {
            let stream = if per_process_streams { i as u64 } else { 0 };
            crate::workloads::build(&p.workload, seed, stream).expect("workload")
        })
        .collect();
    let setup = HostSetup {
        seed,
        host,
        processes,
        block_trace: None,
    };
    let mut h = Host::build(&setup, dev, &workloads, true).expect("host builds");
    h.verify = true;
    h
}
