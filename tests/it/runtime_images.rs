//! Dynamo's runtime images (`nvcr.io/nvidia/ai-dynamo/<engine>-runtime:<Dynamo
//! version>`) name a Dynamo release: the engine inside is the release that
//! Dynamo release pins, read from Dynamo's source, never the Dynamo version
//! tried as an engine tag. On the demo: Dynamo 0.1.0 pins `sglang==1.0.0`.

use super::pr::{demo_recipes, json};

fn recipe(container: &str) -> String {
    format!(
        "schema: 2\nname: rt\nmodel:\n  path: /models/m\n  container: \"{container}\"\nfrontend:\n  type: sglang\nengine: sglang\nroles:\n  agg:\n    args:\n      tp-size: 8\n"
    )
}

fn audit(ws: &engine_audit::demo::DemoWorkspace, path: &std::path::Path, with_dynamo: bool) -> serde_json::Value {
    let mut cmd = assert_cmd::Command::cargo_bin("engine-audit").unwrap();
    cmd.arg("audit").arg(path).arg("--sglang").arg(&ws.sglang_repo);
    if with_dynamo {
        cmd.arg("--dynamo").arg(&ws.dynamo_repo);
    }
    json(&cmd.args(["--offline", "--format", "json", "--fail-on", "never"]).env("NO_COLOR", "1").output().unwrap())
}

fn ea303(report: &serde_json::Value) -> Vec<String> {
    report["findings"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|f| f["code"] == "EA303")
        .map(|f| f["message"].as_str().unwrap().to_string())
        .collect()
}

#[test]
fn a_dynamo_runtime_image_runs_the_engine_release_its_dynamo_release_pins() {
    let (dir, ws, _root) = demo_recipes();
    let path = dir.path().join("rt.yaml");
    std::fs::write(&path, recipe("nvcr.io/nvidia/ai-dynamo/sglang-runtime:0.1.0")).unwrap();
    let report = audit(&ws, &path, true);
    let bump = &report["bumps"][0];
    assert_eq!((bump["engine"].as_str(), bump["from"].as_str()), (Some("sglang"), Some("v1.0.0")), "{report:#}");
    let how = bump["how"].to_string();
    assert!(how.contains("a Dynamo runtime image: Dynamo 0.1.0 pins `sglang==1.0.0`"), "{how}");
    assert!(ea303(&report).is_empty(), "{report:#}");

    // Without Dynamo's source the pin cannot be read: named, never the Dynamo version as an SGLang tag.
    let report = audit(&ws, &path, false);
    let said = ea303(&report);
    assert_eq!(said.len(), 1, "{report:#}");
    assert!(said[0].contains("is a Dynamo runtime image: its tag names Dynamo 0.1.0") && said[0].contains("--dynamo"), "{}", said[0]);
}

#[test]
fn a_development_build_or_a_release_dynamo_lacks_is_named_unresolved() {
    let (dir, ws, _root) = demo_recipes();
    let path = dir.path().join("rt.yaml");
    std::fs::write(&path, recipe("nvcr.io/nvidia/ai-dynamo/sglang-runtime:1.0.0-dev.1-cuda13")).unwrap();
    let said = ea303(&audit(&ws, &path, true));
    assert!(said.iter().any(|m| m.contains("development build of Dynamo 1.0.0")), "{said:#?}");
    std::fs::write(&path, recipe("nvcr.io/nvidia/ai-dynamo/sglang-runtime:0.1.0.post1")).unwrap();
    let said = ea303(&audit(&ws, &path, true));
    assert!(said.iter().any(|m| m.contains("has no Dynamo 0.1.0.post1")), "{said:#?}");
}
