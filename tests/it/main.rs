//! The integration tests, as one binary: one link of the crate for all of them.
//! `tests/fetch_limits.rs` and `tests/smart_http_proxy.rs` stay binaries of
//! their own: they set process-wide environment variables.

mod action;
mod amd_models;
mod atom_cli;
mod atom_demo;
mod atom_recipes;
mod atom_scripts;
mod atomesh_router;
mod cache_folder;
mod ci_files;
mod cli_docs;
mod cli_run;
mod codes;
mod corpus_acceptance;
mod coverage;
mod demo_audit;
mod dynamo_vllm;
mod engine_verdicts;
mod env_history;
mod fact_cache;
mod fetch_git;
mod fix;
mod github_fit;
mod layout_equivalence;
mod master_links;
mod matrix;
mod module_layers;
mod oracle;
mod oracle_atom;
mod oracle_atomesh;
mod oracle_trtllm;
mod oracle_vllm;
mod pr;
mod real_data;
mod recipe_schema;
mod reports;
mod repository_url;
mod robustness;
mod runtime_images;
mod schema2_real;
mod semver_guard;
mod shell_bash;
mod smart_http;
mod source_dir;
mod source_git;
mod trtllm_audit;
mod trtllm_unions;
mod trtllm_validators;
mod version;
mod vllm_features;
mod vllm_recipes;

// Helpers shared by several test modules.
#[path = "../support/git_repo.rs"]
mod git_repo;
#[path = "../support/http_server.rs"]
mod http_server;
#[path = "../support/oracle.rs"]
mod oracle_support;
