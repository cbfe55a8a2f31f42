//! The state machine as one table: every starting state × every command, the resulting state or the
//! error phrase, checked on a fresh device each time (a failed command must change nothing). The table
//! is written out from the NVMe ZNS transitions in docs/model-zoned.md, independently of `state.rs`.

use super::*;
use ZoneState::*;

/// A starting state of zone 1 (zone 0 stays empty).
#[derive(Copy, Clone, Debug)]
enum Start {
    Empty,
    Implicit,
    ExplicitWithData,
    ExplicitEmpty,
    Closed,
    Full,
    ReadOnly,
    Offline,
}

fn prepare(from: Start) -> ZonedSsd {
    let mut d = small(0, 0);
    match from {
        Start::Empty => {}
        Start::Implicit => drop(write_wp(&mut d, 0, 1, 1).unwrap()),
        Start::ExplicitWithData => {
            open(&mut d, 1).unwrap();
            write_wp(&mut d, 0, 1, 1).unwrap();
        }
        Start::ExplicitEmpty => drop(open(&mut d, 1).unwrap()),
        Start::Closed => {
            write_wp(&mut d, 0, 1, 1).unwrap();
            close(&mut d, 1).unwrap();
        }
        Start::Full => drop(write_wp(&mut d, 0, 1, 16).unwrap()),
        Start::ReadOnly => {
            write_wp(&mut d, 0, 1, 1).unwrap();
            d.set_zone_condition(1, ReadOnly).unwrap();
        }
        Start::Offline => d.set_zone_condition(1, Offline).unwrap(),
    }
    d
}

#[derive(Copy, Clone, Debug)]
enum Cmd {
    WriteOne,
    WriteToCapacity,
    AppendOne,
    AppendToCapacity,
    Open,
    Close,
    Finish,
    Reset,
    Read,
    SetReadOnly,
    SetOffline,
    SetFull,
}

fn apply(d: &mut ZonedSsd, cmd: Cmd) -> Result<Completion> {
    let info = d.zone_info(1).unwrap();
    let left = if info.write_pointer == u64::MAX || info.state == Full {
        1
    } else {
        (info.start + info.capacity - info.write_pointer) / U
    };
    match cmd {
        Cmd::WriteOne => write(d, 0, 1, wp_unit(&info), 1),
        Cmd::WriteToCapacity => write(d, 0, 1, wp_unit(&info), left),
        Cmd::AppendOne => append(d, 1, 1),
        Cmd::AppendToCapacity => append(d, 1, left),
        Cmd::Open => open(d, 1),
        Cmd::Close => close(d, 1),
        Cmd::Finish => finish(d, 1),
        Cmd::Reset => reset(d, 1),
        Cmd::Read => d.submit(Nanos(0), Command::read(info.start, U)),
        Cmd::SetReadOnly => d
            .set_zone_condition(1, ReadOnly)
            .map(|_| Completion::default()),
        Cmd::SetOffline => d
            .set_zone_condition(1, Offline)
            .map(|_| Completion::default()),
        Cmd::SetFull => d.set_zone_condition(1, Full).map(|_| Completion::default()),
    }
}

/// The write pointer in units; 0 where the zone has none (full, read-only, offline: the state is checked
/// before the position).
fn wp_unit(info: &ZoneInfo) -> u64 {
    if info.write_pointer == u64::MAX || info.state == Full {
        0
    } else {
        (info.write_pointer - info.start) / U
    }
}

/// Expected outcome: the state after, or the error phrase.
#[derive(Debug)]
enum To {
    S(ZoneState),
    E(&'static str),
}
use To::{E, S};

const INVALID: &str = "invalid zone state transition";

fn expected(from: Start, cmd: Cmd) -> To {
    use Cmd::*;
    use Start as F;
    let writable_to = |s: ZoneState| match cmd {
        WriteOne | AppendOne => S(s),
        _ => S(Full),
    };
    match (from, cmd) {
        // Data commands.
        (
            F::Empty | F::Implicit | F::Closed,
            WriteOne | AppendOne | WriteToCapacity | AppendToCapacity,
        ) => writable_to(ImplicitlyOpen),
        (
            F::ExplicitWithData | F::ExplicitEmpty,
            WriteOne | AppendOne | WriteToCapacity | AppendToCapacity,
        ) => writable_to(ExplicitlyOpen),
        (F::Full, WriteOne | AppendOne | WriteToCapacity | AppendToCapacity) => E("zone is full"),
        (F::ReadOnly, WriteOne | AppendOne | WriteToCapacity | AppendToCapacity) => {
            E("zone is read-only")
        }
        (F::Offline, WriteOne | AppendOne | WriteToCapacity | AppendToCapacity | Read) => {
            E("zone is offline")
        }
        (F::Empty, Read) => S(Empty),
        (F::Implicit, Read) => S(ImplicitlyOpen),
        (F::ExplicitWithData | F::ExplicitEmpty, Read) => S(ExplicitlyOpen),
        (F::Closed, Read) => S(Closed),
        (F::Full, Read) => S(Full),
        (F::ReadOnly, Read) => S(ReadOnly),
        // Open.
        (F::Empty | F::Implicit | F::ExplicitWithData | F::ExplicitEmpty | F::Closed, Open) => {
            S(ExplicitlyOpen)
        }
        (F::Full, Open) => E(INVALID),
        // Close.
        (F::Implicit | F::ExplicitWithData | F::Closed, Close) => S(Closed),
        (F::ExplicitEmpty, Close) => S(Empty),
        (F::Empty | F::Full, Close) => E(INVALID),
        // Finish and reset.
        (
            F::Empty | F::Implicit | F::ExplicitWithData | F::ExplicitEmpty | F::Closed | F::Full,
            Finish,
        ) => S(Full),
        (
            F::Empty | F::Implicit | F::ExplicitWithData | F::ExplicitEmpty | F::Closed | F::Full,
            Reset,
        ) => S(Empty),
        (F::ReadOnly | F::Offline, Open | Close | Finish | Reset) => E(INVALID),
        // Controller condition changes.
        (F::Offline, SetReadOnly | SetOffline) => E(INVALID),
        (F::ReadOnly, SetReadOnly) => E(INVALID),
        (_, SetReadOnly) => S(ReadOnly),
        (_, SetOffline) => S(Offline),
        (_, SetFull) => E(INVALID),
    }
}

#[test]
fn every_state_and_command_gives_the_specified_state_or_error() {
    let froms = [
        Start::Empty,
        Start::Implicit,
        Start::ExplicitWithData,
        Start::ExplicitEmpty,
        Start::Closed,
        Start::Full,
        Start::ReadOnly,
        Start::Offline,
    ];
    let cmds = [
        Cmd::WriteOne,
        Cmd::WriteToCapacity,
        Cmd::AppendOne,
        Cmd::AppendToCapacity,
        Cmd::Open,
        Cmd::Close,
        Cmd::Finish,
        Cmd::Reset,
        Cmd::Read,
        Cmd::SetReadOnly,
        Cmd::SetOffline,
        Cmd::SetFull,
    ];
    let mut cases = 0;
    for from in froms {
        for cmd in cmds {
            let mut d = prepare(from);
            let want = expected(from, cmd);
            match want {
                S(s) => {
                    apply(&mut d, cmd).unwrap_or_else(|e| panic!("{from:?} + {cmd:?}: {e}"));
                    assert_eq!(state_of(&d, 1), s, "{from:?} + {cmd:?}");
                    // Open and active counts follow the state; zone 0 is untouched.
                    let (open, active) = d.open_active();
                    let is_open = matches!(s, ImplicitlyOpen | ExplicitlyOpen) as u32;
                    assert_eq!(
                        (open, active),
                        (is_open, is_open + (s == Closed) as u32),
                        "{from:?} + {cmd:?}"
                    );
                    assert_eq!(state_of(&d, 0), Empty);
                    d.check_invariants().unwrap();
                }
                E(phrase) => {
                    if matches!(cmd, Cmd::SetReadOnly | Cmd::SetOffline | Cmd::SetFull) {
                        let before = d.zone_info(1).unwrap();
                        let e = err(apply(&mut d, cmd));
                        assert!(e.contains(phrase), "{from:?} + {cmd:?}: {e}");
                        assert_eq!(d.zone_info(1).unwrap(), before);
                    } else {
                        rejects(&mut d, phrase, |d| apply(d, cmd));
                    }
                }
            }
            cases += 1;
        }
    }
    assert_eq!(cases, 96);
}
