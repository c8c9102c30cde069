//! Deprecations an engine states only in a flag's help text (vLLM: a config
//! field's docstring "Deprecated: ... will be removed in v0.19", or a
//! `*_DEPRECATION_MESSAGE` constant passed as `help=` while the warning comes
//! after parsing).
//!
//! The help must say that *this flag* is deprecated: a paragraph that opens
//! with "Deprecated:", "<its option or dest> is deprecated", or "This
//! option/flag/argument is deprecated". Help that only mentions deprecated
//! things ("allow deprecated quantization methods", "enable deprecated
//! metrics", a choice "(deprecated; use "mori")", "will be deprecated when")
//! is not a deprecation of the flag. "has no effect" makes it a no-op; a
//! "use --x instead" / "replaced by --x" names the replacement.

use crate::surface::{FlagDeprecation, FlagDeprecationKind};

/// The deprecation `help` states for the flag with option strings `names` and `dest`.
pub fn from_help(help: &str, names: &[String], dest: &str) -> Option<FlagDeprecation> {
    let flat = help.split_whitespace().collect::<Vec<_>>().join(" ");
    let lower = flat.to_ascii_lowercase();
    let paragraph_opens = help.split("\n\n").any(|p| p.trim_start().to_ascii_lowercase().starts_with("deprecated:"));
    let subjects = names.iter().map(|n| n.to_ascii_lowercase()).chain([dest.to_ascii_lowercase()]);
    let named = subjects
        .flat_map(|s| [format!("{s} is deprecated"), format!("`{s}` is deprecated")])
        .chain(["this option is deprecated", "this flag is deprecated", "this argument is deprecated"].map(String::from))
        .any(|phrase| lower.contains(&phrase))
        // `ir_op_priority (--ir-op-priority) is deprecated`
        || names.iter().any(|n| lower.contains(&format!("({}) is deprecated", n.to_ascii_lowercase())));
    if !(paragraph_opens || named) {
        return None;
    }
    let noop =
        ["has no effect", "have no effect", "no longer has any effect", "does nothing", "is ignored"].iter().any(|p| lower.contains(p));
    Some(FlagDeprecation {
        kind: if noop { FlagDeprecationKind::Noop } else { FlagDeprecationKind::Announced },
        replacement: replacement(&flat, names),
        message: Some(flat),
    })
}

/// The first `--option` named after "use" or "replaced by", other than the flag's own.
fn replacement(text: &str, names: &[String]) -> Option<String> {
    let lower = text.to_ascii_lowercase();
    for cue in ["use ", "replaced by ", "instead of this, set "] {
        let mut from = 0;
        while let Some(at) = lower[from..].find(cue) {
            let rest = &text[from + at + cue.len()..];
            let word =
                rest.trim_start_matches(['`', '"', '\'']).split(|c: char| c.is_whitespace() || "`\"',;()".contains(c)).next().unwrap_or("");
            let word = word.trim_end_matches('.');
            if word.starts_with("--") && word.len() > 2 && !names.iter().any(|n| n == word) {
                return Some(word.to_string());
            }
            from += at + cue.len();
        }
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    fn of(help: &str, names: &[&str]) -> Option<(FlagDeprecationKind, Option<String>)> {
        let names: Vec<String> = names.iter().map(|s| s.to_string()).collect();
        let dest = names[0].trim_start_matches('-').replace('-', "_");
        from_help(help, &names, &dest).map(|d| (d.kind, d.replacement))
    }

    #[test]
    fn real_vllm_help_texts() {
        use FlagDeprecationKind::*;
        // v0.34.0, arg_utils.py constants and config docstrings.
        assert_eq!(
            of(
                "--log-config-file is deprecated and will be removed in v0.33.0. Use --logging-config.pylogging_config_file instead.",
                &["--log-config-file"]
            ),
            Some((Announced, Some("--logging-config.pylogging_config_file".into())))
        );
        assert_eq!(
            of("--disable-cascade-attn is deprecated and has no effect since cascade attention has been removed. It will be removed in v0.33.0.", &["--disable-cascade-attn", "--enable-cascade-attn"]),
            Some((Noop, None))
        );
        assert_eq!(
            of("--mamba-cache-mode is deprecated and will be removed in v0.34.0. It has no effect: Mamba prefix caching follows --enable-prefix-caching.", &["--mamba-cache-mode"]),
            Some((Noop, None))
        );
        assert_eq!(
            of("vLLM IR op priority for dispatching.\n\nDeprecated: vLLM IR is being removed, and this option will be removed in\nv0.34.0.", &["--ir-op-priority"]),
            Some((Announced, None))
        );
        // v0.21.0 CacheConfig.calculate_kv_scales.
        assert_eq!(
            of(
                "Deprecated: This option is deprecated and will be removed in v0.19.\nIt enables dynamic calculation",
                &["--calculate-kv-scales"]
            ),
            Some((Announced, None))
        );
    }

    #[test]
    fn mentions_of_deprecated_things_are_not_deprecations() {
        assert_eq!(of("Whether to allow deprecated quantization methods.", &["--allow-deprecated-quantization"]), None);
        assert_eq!(
            of(
                "Enable deprecated Prometheus metrics that have been hidden since the\nspecified version.",
                &["--show-hidden-metrics-for-version"]
            ),
            None
        );
        assert_eq!(of("dcp_kv_cache_interleave_size has been replaced by cp_kv_cache_interleave_size,\nand will be deprecated when PCP is fully supported.", &["--dcp-kv-cache-interleave-size"]), None);
        assert_eq!(of("- \"mori_low_latency\": MoRI EP (deprecated; use \"mori\")", &["--all2all-backend"]), None);
        assert_eq!(
            of("Sizes to capture cudagraph.\n\nDeprecated with model runner V2, which takes `x` instead.", &["--cudagraph-capture-sizes"]),
            None
        );
    }
}
