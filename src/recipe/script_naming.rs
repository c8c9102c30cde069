//! Which single-node launch script a master-config entry runs. The entry links
//! none: CI picks the script by name (InferenceX's `runners/launch_*.sh`):
//!
//! ```text
//! BENCH_BASE=benchmarks/single_node/${SCENARIO_SUBDIR}${MODEL_PREFIX}_${PRECISION}_${GPU}
//! ${BENCH_BASE}_${FRAMEWORK}${SPEC_SUFFIX}.sh   if it exists, else
//! ${BENCH_BASE}${FRAMEWORK_SUFFIX}${SPEC_SUFFIX}.sh
//! ```
//!
//! The patterns are data (`single_node_scripts` in `.engine-audit.yaml`), with
//! placeholders filled from the entry: `{scenario}` (`fixed_seq_len`,
//! `agentic`), `{model_prefix}`, `{precision}`, `{gpu}` (the runner without
//! `cluster:` and its `-suffix`), `{framework}`, `{framework_suffix}` (`_trt`
//! for TRT-LLM) and `{spec}` (`_mtp` when the search space decodes with MTP).

use std::collections::BTreeSet;

/// InferenceX's convention: the framework-named script, else the plain one.
pub(crate) const DEFAULT_PATTERNS: &[&str] = &[
    "benchmarks/single_node/{scenario}/{model_prefix}_{precision}_{gpu}_{framework}{spec}.sh",
    "benchmarks/single_node/{scenario}/{model_prefix}_{precision}_{gpu}{framework_suffix}{spec}.sh",
];

/// What the patterns are filled from.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct EntryFacts<'a> {
    pub model_prefix: &'a str,
    pub precision: &'a str,
    pub runner: &'a str,
    pub framework: &'a str,
    /// Scenario keys (`fixed-seq-len`) with the `spec-decoding` values of their
    /// search spaces (`mtp`, `none`; empty when none is given).
    pub scenarios: Vec<(String, BTreeSet<String>)>,
}

/// One script a runner would look for: the paths in the order it tries them.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
pub struct ScriptCandidates {
    /// `fixed-seq-len`, `agentic-coding`.
    pub scenario: String,
    /// The `spec-decoding` value, `none` when the search space sets none.
    pub spec: String,
    pub paths: Vec<String>,
}

/// The scripts an entry runs, one per scenario and speculative mode.
pub(crate) fn candidates(patterns: &[String], facts: &EntryFacts) -> Vec<ScriptCandidates> {
    let mut out = Vec::new();
    for (scenario, specs) in &facts.scenarios {
        let specs: BTreeSet<&str> = if specs.is_empty() { BTreeSet::from(["none"]) } else { specs.iter().map(String::as_str).collect() };
        for spec in specs {
            let mut paths: Vec<String> = patterns.iter().map(|p| fill(p, facts, scenario, spec)).collect();
            paths.dedup();
            out.push(ScriptCandidates { scenario: scenario.clone(), spec: spec.to_string(), paths });
        }
    }
    out
}

fn fill(pattern: &str, facts: &EntryFacts, scenario: &str, spec: &str) -> String {
    pattern
        .replace("{scenario}", &scenario_dir(scenario))
        .replace("{model_prefix}", facts.model_prefix)
        .replace("{precision}", facts.precision)
        .replace("{gpu}", gpu(facts.runner))
        .replace("{framework_suffix}", if facts.framework.contains("trt") { "_trt" } else { "" })
        .replace("{framework}", facts.framework)
        .replace("{spec}", &spec_suffix(spec))
}

/// The runners' `SCENARIO_SUBDIR`.
fn scenario_dir(scenario: &str) -> String {
    match scenario {
        "fixed-seq-len" => "fixed_seq_len".into(),
        "agentic-coding" => "agentic".into(),
        other => other.replace('-', "_"),
    }
}

/// `cluster:b200-dgxc` → `b200`.
fn gpu(runner: &str) -> &str {
    let runner = runner.strip_prefix("cluster:").unwrap_or(runner);
    runner.split('-').next().unwrap_or(runner)
}

fn spec_suffix(spec: &str) -> String {
    match spec {
        "none" | "" => String::new(),
        other => format!("_{other}"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn patterns() -> Vec<String> {
        DEFAULT_PATTERNS.iter().map(|p| p.to_string()).collect()
    }

    #[test]
    fn inferencex_names_the_script_as_its_runners_do() {
        let facts = EntryFacts {
            model_prefix: "dsr1",
            precision: "fp4",
            runner: "b200",
            framework: "sglang",
            scenarios: vec![("fixed-seq-len".into(), BTreeSet::new())],
        };
        let got = candidates(&patterns(), &facts);
        assert_eq!(got.len(), 1);
        assert_eq!(
            got[0].paths,
            ["benchmarks/single_node/fixed_seq_len/dsr1_fp4_b200_sglang.sh", "benchmarks/single_node/fixed_seq_len/dsr1_fp4_b200.sh"]
        );
    }

    #[test]
    fn mtp_trt_clusters_and_agentic() {
        let facts = EntryFacts {
            model_prefix: "gptoss",
            precision: "fp4",
            runner: "cluster:h200-dgxc",
            framework: "trt",
            scenarios: vec![
                ("fixed-seq-len".into(), BTreeSet::from(["mtp".to_string(), "none".to_string()])),
                ("agentic-coding".into(), BTreeSet::new()),
            ],
        };
        let got = candidates(&patterns(), &facts);
        let firsts: Vec<&str> = got.iter().map(|c| c.paths.last().unwrap().as_str()).collect();
        assert_eq!(
            firsts,
            [
                "benchmarks/single_node/fixed_seq_len/gptoss_fp4_h200_trt_mtp.sh",
                "benchmarks/single_node/fixed_seq_len/gptoss_fp4_h200_trt.sh",
                "benchmarks/single_node/agentic/gptoss_fp4_h200_trt.sh",
            ]
        );
        assert_eq!(got[2].paths.len(), 1, "both patterns name the same file for trt");
    }
}
