//! Every trace reader on arbitrary input: the first byte picks the format, the rest is the file.
//! Contract: records are well-formed, the only errors are `Error::Trace` (plain input) or `Error::Io`
//! (a corrupt compressed stream), and nothing panics.

#![no_main]

use std::io::Cursor;

use libfuzzer_sys::fuzz_target;
use nandstack_core::Error;
use nandstack_workload::trace::{TraceFormat, TraceOptions, TraceReader};

fuzz_target!(|data: &[u8]| {
    let Some((&selector, bytes)) = data.split_first() else {
        return;
    };
    let format = TraceFormat::ALL[usize::from(selector) % TraceFormat::ALL.len()];
    let options = TraceOptions::default();

    let plain = TraceReader::new(
        Box::new(Cursor::new(bytes.to_vec())),
        "fuzz",
        format,
        options,
    );
    for item in plain {
        match item {
            Ok(r) => assert!(r.len > 0 && r.offset.checked_add(r.len).is_some()),
            Err(Error::Trace { .. }) => {}
            Err(e) => panic!("unexpected error kind on plain input: {e}"),
        }
    }

    if let Ok(reader) =
        TraceReader::from_reader(Cursor::new(bytes.to_vec()), "fuzz", format, options)
    {
        for item in reader {
            match item {
                Ok(r) => assert!(r.len > 0),
                Err(Error::Trace { .. } | Error::Io { .. }) => {}
                Err(e) => panic!("unexpected error kind: {e}"),
            }
        }
    }
});
