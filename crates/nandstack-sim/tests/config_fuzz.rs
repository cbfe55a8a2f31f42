//! The config loader and the run driver on mutated configs: every leaf of a base config's effective
//! form (block, hybrid, zoned, host programs — every key of that device kind, defaults filled in) may be
//! replaced by an extreme value; loading, checking and estimating must give a config or a named error,
//! and a config that passes must run (stopped after a few milliseconds of wall time) without a panic.
//! The `#[ignore]`d variant runs many more cases (docs/testing.md):
//! `NANDSTACK_FUZZ_CASES=20000 cargo test --release -p nandstack-sim --test config_fuzz -- --ignored`.

use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, Instant};

use nandstack_core::Error;
use nandstack_sim::{limits, run, RunOptions, SimConfig};
use proptest::prelude::*;
use proptest::test_runner::{Config, TestRunner};
use serde_json::Value;

const BASES: [&str; 4] = [
    "[workload]\nrequests = 3000\n[device.geometry]\nchannels = 1\nchips_per_channel = 1\n\
     planes_per_die = 1\nblocks_per_plane = 64\npages_per_block = 32\npage_size_bytes = 4096\n\
     [device.ftl]\nover_provisioning = 0.25\n",
    "[device]\nkind = \"hybrid\"\n[device.hybrid]\ntotal_blocks = 256\npage_bytes = 4096\n\
     over_provisioning = 0.5\n[workload]\nkind = \"standin\"\nstandin = { name = \"pc\", scale = 0.0005 }\n",
    "[device]\nkind = \"zoned\"\n[workload]\nrequests = 3000\n[precondition]\nfill_fraction = 0.5\n",
    "[workload]\nkind = \"host\"\n[[workload.processes]]\nname = \"m\"\nworkload = { type = \"memtouch\", \
     pages = 2048, ops = 3000, pattern = \"uniform\", write_pct = 50, seed = 1 }\n[host]\nram_mib = 8\n\
     [host.swap]\nsize_mib = 64\n[device.geometry]\nchannels = 1\nchips_per_channel = 1\n\
     planes_per_die = 1\nblocks_per_plane = 1024\npages_per_block = 32\npage_size_bytes = 4096\n",
];

/// The effective config of each base as JSON, and the paths of its leaves.
fn bases() -> Vec<(Value, Vec<Vec<String>>)> {
    BASES
        .iter()
        .map(|t| {
            let v: Value =
                serde_json::from_str(&SimConfig::from_toml(t).unwrap().to_json()).unwrap();
            let mut leaves = Vec::new();
            collect(&v, &mut Vec::new(), &mut leaves);
            (v, leaves)
        })
        .collect()
}

fn collect(v: &Value, path: &mut Vec<String>, out: &mut Vec<Vec<String>>) {
    match v {
        Value::Object(m) => {
            for (k, c) in m {
                path.push(k.clone());
                collect(c, path, out);
                path.pop();
            }
        }
        Value::Array(a) if !a.is_empty() => {
            for (i, c) in a.iter().enumerate() {
                path.push(i.to_string());
                collect(c, path, out);
                path.pop();
            }
        }
        _ => out.push(path.clone()),
    }
}

fn set(v: &mut Value, path: &[String], new: Value) {
    let mut at = v;
    for p in path {
        at = match at {
            Value::Object(m) => m.entry(p.clone()).or_insert(Value::Null),
            Value::Array(a) => match p.parse::<usize>().ok().and_then(|i| a.get_mut(i)) {
                Some(x) => x,
                None => return,
            },
            _ => return,
        };
    }
    *at = new;
}

fn extreme() -> impl Strategy<Value = Value> {
    prop_oneof![
        prop::sample::select(vec![
            0i64,
            1,
            -1,
            2,
            3,
            7,
            1000,
            1 << 20,
            1 << 31,
            u32::MAX as i64,
            1 << 32,
            1 << 44,
            i64::MAX,
            i64::MIN
        ])
        .prop_map(Value::from),
        prop::sample::select(vec![
            0.0, -0.0, 1e-300, 1e-9, 0.5, 0.999999, 1.0, 1.5, 100.0, 1e18, 1e300, -1.0
        ])
        .prop_map(Value::from),
        Just(Value::from(u64::MAX)),
        any::<bool>().prop_map(Value::from),
        prop::sample::select(vec!["", "bogus", "greedy", "uniform", "/nonexistent"])
            .prop_map(Value::from),
        Just(Value::Null),
        Just(serde_json::json!({})),
        Just(serde_json::json!([])),
    ]
}

/// Files a run writes (a host reference or block trace, a Q-table) go to the temporary folder, never
/// to the working directory, whatever a mutation put there.
fn keep_outputs_in_temp(v: &mut Value) {
    let dir = std::env::temp_dir().join(format!("nandstack-config-fuzz-{}", std::process::id()));
    let _ = std::fs::create_dir_all(&dir);
    let file = Value::from(dir.join("out").to_string_lossy().into_owned());
    for path in [
        &["run", "refs_out"][..],
        &["run", "block_trace", "path"],
        &["device", "manager", "rl", "save_q_table"],
    ] {
        let path: Vec<String> = path.iter().map(|p| p.to_string()).collect();
        if !get(v, &path).is_null() {
            set(v, &path, file.clone());
        }
    }
}

/// Cases that ran (the rest were refused with an error): the fuzzer must reach the engine.
static RAN: AtomicU64 = AtomicU64::new(0);
static CASES: AtomicU64 = AtomicU64::new(0);

/// Load, check, estimate; run a config that passes for a few milliseconds. Any panic fails the case
/// (proptest catches it); an error must be one a user can act on.
fn contract(base: &Value, leaves: &[Vec<String>], picks: &[Pick]) -> Result<(), TestCaseError> {
    let mut v = base.clone();
    for (i, sel, k, any) in picks {
        let path = &leaves[i % leaves.len()];
        let new = if *sel < 50 {
            any.clone()
        } else {
            like(get(base, path), *k)
        };
        set(&mut v, path, new);
    }
    keep_outputs_in_temp(&mut v);
    CASES.fetch_add(1, Ordering::Relaxed);
    let outcome = SimConfig::from_value(v).and_then(|cfg| {
        cfg.check()?;
        let e = limits::estimate(&cfg, false, false)?;
        if e.total_bytes() > 256 << 20 {
            return Ok(());
        }
        let start = Instant::now();
        let mut stop = |_: &nandstack_sim::Progress| start.elapsed() < Duration::from_millis(20);
        RAN.fetch_add(1, Ordering::Relaxed);
        match run::run(cfg, &RunOptions::default(), &mut stop) {
            Ok(_) | Err(Error::Interrupted) => Ok(()),
            Err(e) => Err(e),
        }
    });
    if let Err(e) = outcome {
        prop_assert!(
            !matches!(e, Error::Invariant(_)),
            "a bug surfaced as an invariant error: {e}\npicks: {picks:?}"
        );
    }
    Ok(())
}

/// A mutation: which leaf, whether to use an arbitrary value (`sel < 50` of 256) or one of the leaf's
/// own type (chosen by `k`), and the arbitrary value.
type Pick = (usize, u8, u64, Value);

fn picks() -> impl Strategy<Value = Vec<Pick>> {
    prop::collection::vec((any::<usize>(), any::<u8>(), any::<u64>(), extreme()), 1..4)
}

fn get<'a>(v: &'a Value, path: &[String]) -> &'a Value {
    path.iter().fold(v, |at, p| match at {
        Value::Object(m) => m.get(p).unwrap_or(&Value::Null),
        Value::Array(a) => p
            .parse::<usize>()
            .ok()
            .and_then(|i| a.get(i))
            .unwrap_or(&Value::Null),
        _ => &Value::Null,
    })
}

/// A value of the same type as `old`: scaled, small, or extreme (so that many configs stay valid and
/// run, reaching the engine, while some hit the bounds).
fn like(old: &Value, k: u64) -> Value {
    let pick = |n: usize| (k % n as u64) as usize;
    match old {
        Value::Bool(b) => Value::from(!b),
        Value::Number(n) if n.is_u64() || n.is_i64() => {
            let x = n.as_i64().unwrap_or(i64::MAX);
            let options = [
                0,
                1,
                2,
                3,
                x / 2,
                x.saturating_mul(2),
                x.saturating_mul(10),
                x + 1,
                1 << 32,
                i64::MAX,
            ];
            Value::from(options[pick(options.len())])
        }
        Value::Number(n) => {
            let x = n.as_f64().unwrap_or(0.0);
            let options = [0.0, 0.5, 1.0, x / 2.0, x * 2.0, x * 10.0, 1e-9, 1e300, -1.0];
            Value::from(options[pick(options.len())])
        }
        Value::Null => {
            let options = [
                Value::from(1),
                Value::from(0.5),
                Value::from(1000),
                Value::from(0),
            ];
            options[pick(options.len())].clone()
        }
        Value::String(_) if k.is_multiple_of(4) => Value::from("bogus"),
        other => other.clone(),
    }
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 48, ..ProptestConfig::default() })]

    #[test]
    fn mutated_configs_load_check_and_run_or_name_the_error(base in 0usize..BASES.len(), p in picks()) {
        let all = bases();
        let (v, leaves) = &all[base];
        contract(v, leaves, &p)?;
    }
}

#[test]
#[ignore = "fuzzing: many cases (NANDSTACK_FUZZ_CASES); run in release, see docs/testing.md"]
fn fuzz_config_loader_and_run_driver() {
    let cases = std::env::var("NANDSTACK_FUZZ_CASES")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(20_000);
    let all = bases();
    let mut runner = TestRunner::new(Config {
        cases,
        failure_persistence: None,
        ..Config::default()
    });
    runner
        .run(&(0usize..BASES.len(), picks()), |(b, p)| {
            let (v, leaves) = &all[b];
            contract(v, leaves, &p)
        })
        .unwrap();
    let (ran, cases) = (RAN.load(Ordering::Relaxed), CASES.load(Ordering::Relaxed));
    println!("{ran} of {cases} mutated configs ran");
    assert!(
        ran * 10 >= cases,
        "only {ran} of {cases} configs ran: the mutations need tuning"
    );
}
