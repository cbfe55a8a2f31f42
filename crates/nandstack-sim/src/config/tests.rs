use super::*;

#[test]
fn unknown_keys_name_the_key_and_the_allowed_ones() {
    let e = SimConfig::from_toml("[device.ftl.gc]\nvictims = \"greedy\"\n")
        .unwrap_err()
        .to_string();
    assert!(
        e.contains("device.ftl.gc") && e.contains("victims") && e.contains("start_free_blocks"),
        "{e}"
    );
    let e = SimConfig::from_json(r#"{"workload": {"patern": "zipf"}}"#)
        .unwrap_err()
        .to_string();
    assert!(
        e.contains("patern") && e.contains("pattern") && e.contains("processes"),
        "{e}"
    );
    let e = SimConfig::from_toml("bogus = 1\n").unwrap_err().to_string();
    assert!(e.contains("bogus") && e.contains("workload"), "{e}");
    let e = SimConfig::from_toml("[workload]\npattern = \"zipfian\"\n")
        .unwrap_err()
        .to_string();
    assert!(e.contains("workload.pattern") && e.contains("zipf"), "{e}");
}

#[test]
fn moved_keys_say_where_they_went() {
    for (toml, want) in [
        ("[ftl]\nover_provisioning = 0.1\n", "device.ftl"),
        ("[controller]\n", "device.controller"),
        (
            "[trace]\npath = \"x\"\nformat = \"msr\"\n",
            "workload.trace",
        ),
        ("model = \"hybrid\"\n", "device.kind"),
        ("[host]\nqueue_depth = 8\n", "workload.io.queue_depth"),
    ] {
        let e = SimConfig::from_toml(toml).unwrap_err().to_string();
        assert!(e.contains(want), "{toml}: {e}");
    }
}

#[test]
fn preset_overrides_apply() {
    let c = SimConfig::from_toml("[device]\npreset = \"diss\"\n[device.geometry]\nchannels = 2\n")
        .unwrap();
    let g = c.device.geometry().unwrap();
    assert_eq!(
        (g.channels, g.planes_per_die, g.page_size_bytes),
        (2, 4, 4096)
    );
    let c = SimConfig::from_toml("[device.geometry]\npages_per_block = 0\n").unwrap();
    assert!(c
        .device
        .geometry()
        .unwrap_err()
        .to_string()
        .contains("pages_per_block"));
}

#[test]
fn json_and_toml_forms_agree_and_round_trip() {
    let c = SimConfig::from_toml("seed = 5\n[workload]\npattern = \"zipf\"\nzipf_theta = 1.1\n")
        .unwrap();
    let j = c.to_json();
    assert_eq!(SimConfig::from_json(&j).unwrap(), c);
    // The effective config names the kind's sections with their defaults, and only those.
    let v: Value = serde_json::from_str(&j).unwrap();
    assert_eq!(v["device"]["kind"], "block");
    assert!(v["device"]["ftl"]["gc"]["victim"].is_object());
    assert!(v["device"].get("manager").is_none());
    assert_eq!(v["workload"]["kind"], "synthetic");
    assert_eq!(v["workload"]["pattern"], "zipf");
    assert_eq!(v["precondition"]["fill_fraction"], 1.0);
}

#[test]
fn sections_belong_to_their_kind() {
    let e = SimConfig::from_toml("[device]\nkind = \"hybrid\"\n[device.ftl]\n")
        .unwrap_err()
        .to_string();
    assert!(e.contains("device.ftl") && e.contains("block"), "{e}");
    let e = SimConfig::from_toml("[device.manager]\nkind = \"rl\"\n")
        .unwrap_err()
        .to_string();
    assert!(e.contains("device.manager") && e.contains("hybrid"), "{e}");
    let e = SimConfig::from_toml("[workload]\nkind = \"trace\"\n")
        .unwrap_err()
        .to_string();
    assert!(
        e.contains("workload.trace") && e.contains("required"),
        "{e}"
    );
    let e = SimConfig::from_toml("[workload.standin]\nname = \"pc\"\n")
        .unwrap_err()
        .to_string();
    assert!(
        e.contains("workload.standin") && e.contains("standin"),
        "{e}"
    );
    // [host] is the OS model: only for host programs.
    let e = SimConfig::from_toml("[host]\nram_mib = 64\n")
        .unwrap()
        .validate()
        .unwrap_err()
        .to_string();
    assert!(e.contains("host") && e.contains("host programs"), "{e}");
    // Hybrid defaults: an empty device, no warm-up.
    let c = SimConfig::from_toml("[device]\nkind = \"hybrid\"\n").unwrap();
    assert_eq!(c.precondition.fill_fraction, Some(0.0));
    assert!(c.device.manager.is_some() && c.device.ftl.is_none());
}

#[test]
fn host_programs_get_a_default_host_and_are_checked() {
    let c = SimConfig::from_toml(
        "[workload]\nkind = \"host\"\n[[workload.processes]]\nworkload = { type = \"memtouch\", pages = 64, ops = 100, pattern = \"uniform\", write_pct = 50, seed = 1 }\n",
    );
    match c {
        Ok(c) => {
            assert!(c.host.is_some());
            c.validate().unwrap();
        }
        Err(e) => panic!("{e}"),
    }
    let e = SimConfig::from_toml(
        "[workload]\nkind = \"host\"\n[[workload.processes]]\ncgroup = \"nope\"\nworkload = { type = \"memtouch\", pages = 64, ops = 100, pattern = \"uniform\", write_pct = 50, seed = 1 }\n",
    )
    .unwrap()
    .validate()
    .unwrap_err()
    .to_string();
    assert!(e.contains("workload.processes[0].cgroup"), "{e}");
}
