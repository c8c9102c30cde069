//! What the tool knows of each engine, as data: one [`EngineProfile`] per engine
//! (where its package sits, how its server parser and env registry are built,
//! how recipes start it and name it) and one [`ConsumerLink`] per component of
//! a consumer (Dynamo's `components/src/dynamo/<engine>`) that uses an engine.
//!
//! Nothing above `extract/` names an engine: the audit, the checks and the
//! reports read these entries. A new engine is a profile here, the extractor
//! strategies its source needs, a consumer link, fixtures and docs.

/// A profile, as the rest of the crate passes it around.
pub(crate) type Engine = &'static EngineProfile;

/// An engine (or a consumer of engines) the tool reads.
#[derive(Debug)]
pub struct EngineProfile {
    /// `sglang`: flags, config keys, cache keys, JSON.
    pub id: &'static str,
    /// `SGLang`: what reports call it.
    pub display: &'static str,
    /// Package folders to try, upstream repo layout first, then wheel layout.
    pub package_roots: &'static [&'static str],
    /// The server it runs, for engines recipes start (a consumer has none).
    pub server: Option<ServerProfile>,
    /// The profile whose source this one is read from, when it is a program
    /// of another engine's repository (ATOM's `atomesh` router lives in ATOM's):
    /// opened from that engine's source (`--atom`), at that engine's refs
    /// (`--atom-to`), with its own surface.
    pub source_of: Option<&'static str>,
}

/// How an engine's server is configured: the surface recipes are checked against.
#[derive(Debug)]
pub struct ServerProfile {
    /// Where its command-line parser is built.
    pub flags: FlagsStrategy,
    /// Where its environment registry is.
    pub env: EnvStrategy,
    /// The env var prefixes that belong to the engine (`SGLANG_`, `SGL_`).
    pub env_prefixes: &'static [&'static str],
    /// Env var prefixes of other libraries the server loads, set beside the
    /// engine's own (ATOM's `AITER_*` belong to aiter): as (prefix, library).
    /// Their names are not in the engine's source, so they are said to be not
    /// checked, never judged unknown.
    pub foreign_env: &'static [(&'static str, &'static str)],
    /// The configuration class consumers read: (dotted module, class); none
    /// for a program with no Python configuration class (a Rust router).
    pub config_class: Option<(&'static str, &'static str)>,
    /// The commands scripts start its server with.
    pub launchers: &'static [Launcher],
    /// Whether the command lines those launchers start are read. When not (an
    /// engine whose scripts are not understood yet), a script that starts the
    /// server is named not audited, never read as clean, while its recipes
    /// may be audited.
    pub launches_read: bool,
    /// Where fields left `None` by the parser are resolved at startup.
    pub resolution: Option<ResolutionProfile>,
    /// The typed configuration file the server also reads (TRT-LLM's LlmArgs
    /// YAML behind `--config`): its keys are a surface of their own.
    pub config_file: Option<ConfigFileProfile>,
}

/// A server's YAML configuration file, read into a tree of pydantic models:
/// each model's fields are keys, a field typed by another model nests.
#[derive(Debug)]
pub struct ConfigFileProfile {
    /// Module below the package root that defines the root model.
    pub module: &'static str,
    /// The root model the file's top-level keys are fields of.
    pub class: &'static str,
    /// The server's options that take the file's path (`--config`): a script
    /// that writes the file and names it there is audited with its keys.
    pub options: &'static [&'static str],
}

/// Where the engine resolves fields the parser left unset: what makes a flag's
/// effective default differ from argparse's.
#[derive(Debug)]
pub struct ResolutionProfile {
    /// Module files, or folders ending in `/`, below the package root that
    /// hold the resolution hooks (and the class the parser is built from).
    pub modules: &'static [&'static str],
    /// The call hooks declare a resolved value with
    /// (`declare_resolution(server_args, source, field=value)`).
    pub declare_call: &'static str,
}

/// One command that starts an engine's server from a shell script; the server's
/// own arguments follow it.
#[derive(Debug)]
pub struct Launcher {
    /// What deployments started this way are called (`launch_server@12`).
    pub role: &'static str,
    pub form: LaunchForm,
}

#[derive(Debug)]
pub enum LaunchForm {
    /// `python[3[.N]] -m <module>`.
    PythonModule(&'static str),
    /// `<program> <subcommand>` (an installed entry point, found by its base name).
    Program { program: &'static str, subcommand: &'static str },
    /// `<program> <subcommand> [<positional>] [options]`: an entry point whose
    /// subcommand takes one optional positional before its options (`vllm serve
    /// [model_tag]`); `positional` is its name as the parser registers it.
    ProgramWithPositional { program: &'static str, subcommand: &'static str, positional: &'static str },
    /// `<program> [<subcommand>] <positional> [options]`: a command group that
    /// runs `subcommand` when its first word names none of its commands
    /// (`trtllm-serve MODEL` is `trtllm-serve serve MODEL`). `others` are the
    /// group's other commands: a launch of one of them is not this launcher's
    /// and is named not read.
    DefaultCommand { program: &'static str, subcommand: &'static str, positional: &'static str, others: &'static [&'static str] },
}

impl Launcher {
    /// The launcher as it reads in a script, for spotting it inside text that is
    /// not parsed as a command (`CMD="python3 -m sglang.launch_server ..."`).
    pub(crate) fn text(&self) -> String {
        match self.form {
            LaunchForm::PythonModule(module) => module.to_string(),
            LaunchForm::Program { program, subcommand } | LaunchForm::ProgramWithPositional { program, subcommand, .. } => {
                format!("{program} {subcommand}")
            }
            // Scripts name the program alone.
            LaunchForm::DefaultCommand { program, .. } => program.to_string(),
        }
    }

    /// The program and subcommand of an installed entry point.
    pub(crate) fn program(&self) -> Option<(&'static str, &'static str)> {
        match self.form {
            LaunchForm::PythonModule(_) => None,
            LaunchForm::Program { program, subcommand }
            | LaunchForm::ProgramWithPositional { program, subcommand, .. }
            | LaunchForm::DefaultCommand { program, subcommand, .. } => Some((program, subcommand)),
        }
    }

    /// The positional the launcher takes before its options, if any.
    pub(crate) fn leading_positional(&self) -> Option<&'static str> {
        match self.form {
            LaunchForm::ProgramWithPositional { positional, .. } | LaunchForm::DefaultCommand { positional, .. } => Some(positional),
            _ => None,
        }
    }

    /// The program's other commands, when the subcommand may be left out.
    pub(crate) fn other_commands(&self) -> Option<&'static [&'static str]> {
        match self.form {
            LaunchForm::DefaultCommand { others, .. } => Some(others),
            _ => None,
        }
    }
}

/// How the engine's server parser is built, and so how it is read.
#[derive(Debug)]
pub enum FlagsStrategy {
    /// `module.class.method(parser)` registers every option with argparse
    /// (SGLang's `ServerArgs.add_cli_args`); `module` is below the package.
    ArgparseMethod { module: &'static str, class: &'static str, method: &'static str },
    /// `function(parser)` as `module` names it (defined there or imported:
    /// vLLM's `make_arg_parser` moved between releases, the `serve`
    /// subcommand's module always imports it); `module` is below the package.
    ArgparseFunction {
        module: &'static str,
        function: &'static str,
        /// The engine function that computes `add_argument` keywords from a
        /// config dataclass's fields (`**get_kwargs(ModelConfig)["seed"]`):
        /// (module below the package, function).
        kwargs_from_fields: Option<(&'static str, &'static str)>,
        /// The parser a consumer builds from the engine's own arguments alone,
        /// `module.class.method(parser)` (`AsyncEngineArgs.add_cli_args`, which
        /// `python -m dynamo.vllm` uses): each flag says whether it accepts it.
        engine_parser: Option<(&'static str, &'static str, &'static str)>,
        /// The engine marks deprecated flags in their help text too ("X is
        /// deprecated ... Use Y instead"), not only with an action class.
        help_deprecations: bool,
    },
    /// `function()` builds its parser itself (`parser = ArgumentParser(...)`,
    /// or an engine subclass of it), registers options on it (directly or by
    /// passing it on, `EngineArgs.add_cli_args(parser)`) and parses: ATOM's
    /// server `main`. `module` is below the package; the function may be
    /// imported there (`from .api_server import main`).
    ArgparseEntry { module: &'static str, function: &'static str },
    /// A click command: `function` in `module` (below the package) decorated
    /// with `@click.command(...)` and one `@click.option(...)` per option
    /// (TRT-LLM's `trtllm-serve serve`). Options are read from the decorators.
    ClickCommand { module: &'static str, function: &'static str },
    /// A Rust program's clap-derive command line (ATOM's `atomesh` router):
    /// the `#[derive(Parser)]` root struct in `file` (below the package root),
    /// read for its `subcommand` (its own options when empty); `prefilter`
    /// names a function of the file that takes options out of the arguments
    /// before clap parses them (`--prefill URL [PORT]`). Read from the source,
    /// never built.
    ClapDerive { file: &'static str, subcommand: &'static str, prefilter: Option<&'static str> },
}

/// Where the engine's typed env registry is.
#[derive(Debug)]
pub enum EnvStrategy {
    /// A registry class of typed fields in one of `files` (below the package
    /// root, most specific first): SGLang's `Envs` in `srt/environ.py`.
    TypedRegistry { files: &'static [&'static str] },
    /// A module-level dict of env var name → getter (`environment_variables`
    /// in vLLM's `envs.py`): the default is what the getter returns when the
    /// variable is unset.
    GetterDict { file: &'static str, dict: &'static str },
    /// The engine has none.
    None,
}

/// A consumer component that uses an engine: Dynamo's SGLang worker.
#[derive(Debug)]
pub(crate) struct ConsumerLink {
    /// The consumer's profile id (`dynamo`).
    pub consumer: &'static str,
    /// The engine's profile id (`sglang`).
    pub engine: &'static str,
    /// The consumer's component package that uses the engine (`dynamo.sglang`).
    pub component: &'static str,
    /// The engine's Python package, as the consumer imports it (`sglang`;
    /// TensorRT-LLM's profile id is `trtllm`, its package `tensorrt_llm`).
    pub package: &'static str,
    /// Whether the worker a recipe starts hands its command line to the
    /// engine's own parser (Dynamo's SGLang worker builds SGLang's `ServerArgs`
    /// parser; its vLLM worker, vLLM's engine-only parser after its own). When
    /// not (Dynamo's TensorRT-LLM worker parses its own options and reads the
    /// LLM API arguments from files and `--trtllm.*` words), the recipe's words
    /// are that worker's, never checked against the engine's server options.
    pub argv_to_engine: bool,
    /// The distribution name the consumer pins the engine by (`sglang`).
    pub pin: &'static str,
    /// The engine classes whose members the component's uses are checked
    /// against (`ServerArgs`; vLLM's `AsyncEngineArgs` and `VllmConfig`).
    pub classes: &'static [ConsumerClass],
    /// Where the component builds the command line of the worker a recipe
    /// starts (`python -m dynamo.vllm`), when that worker hands the rest of its
    /// arguments to the engine's engine-only parser: its own flags are read there.
    pub worker_parser: Option<WorkerParser>,
}

/// An engine class a consumer component uses, and how the component's values
/// of it are told apart (the consumer passes them around mostly untyped).
#[derive(Debug)]
pub struct ConsumerClass {
    /// Where the engine defines it (dotted module, class); its members, inherited
    /// ones included, are read there.
    pub module: &'static str,
    pub class: &'static str,
    /// Other engine class names whose values and class references count as this
    /// one: bases whose members it inherits (`EngineArgs` for `AsyncEngineArgs`).
    pub also: &'static [&'static str],
    /// Names that by the consumer's convention hold a value of it, as variables
    /// and as attributes of anything (`server_args`, `self.server_args`).
    pub names: &'static [&'static str],
    /// Names that hold one only as an attribute (`config.engine_args`): as a
    /// plain variable the consumer also uses the name for other things (dicts).
    pub attributes: &'static [&'static str],
}

/// The module of a consumer component whose functions build its worker's
/// command line (Dynamo's `dynamo.vllm.args`): its own flags are read from it
/// and the consumer's modules it imports.
#[derive(Debug)]
pub(crate) struct WorkerParser {
    pub module: &'static str,
}

/// The aiter kernels library, which SGLang, vLLM and ATOM load on ROCm: its
/// `AITER_*` variables are read by aiter, whose source is not read.
const AITER: &[(&str, &str)] = &[("AITER_", "aiter")];

pub static SGLANG: EngineProfile = EngineProfile {
    id: "sglang",
    display: "SGLang",
    package_roots: &["python/sglang", "sglang"],
    server: Some(ServerProfile {
        flags: FlagsStrategy::ArgparseMethod { module: "srt.server_args", class: "ServerArgs", method: "add_cli_args" },
        env: EnvStrategy::TypedRegistry { files: &["srt/environ.py", "environ.py"] },
        env_prefixes: &["SGLANG_", "SGL_"],
        foreign_env: AITER,
        config_class: Some(("sglang.srt.server_args", "ServerArgs")),
        launchers: &[
            Launcher { role: "launch_server", form: LaunchForm::PythonModule("sglang.launch_server") },
            Launcher { role: "serve", form: LaunchForm::Program { program: "sglang", subcommand: "serve" } },
        ],
        launches_read: true,
        resolution: Some(ResolutionProfile { modules: &["srt/server_args.py", "srt/arg_groups/"], declare_call: "declare_resolution" }),
        config_file: None,
    }),
    source_of: None,
};

pub static VLLM: EngineProfile = EngineProfile {
    id: "vllm",
    display: "vLLM",
    package_roots: &["vllm"],
    server: Some(ServerProfile {
        flags: FlagsStrategy::ArgparseFunction {
            module: "entrypoints.cli.serve",
            function: "make_arg_parser",
            kwargs_from_fields: Some(("engine.arg_utils", "get_kwargs")),
            engine_parser: Some(("engine.arg_utils", "AsyncEngineArgs", "add_cli_args")),
            help_deprecations: true,
        },
        env: EnvStrategy::GetterDict { file: "envs.py", dict: "environment_variables" },
        env_prefixes: &["VLLM_"],
        foreign_env: AITER,
        config_class: Some(("vllm.engine.arg_utils", "EngineArgs")),
        launchers: &[
            Launcher { role: "api_server", form: LaunchForm::PythonModule("vllm.entrypoints.openai.api_server") },
            Launcher {
                role: "serve",
                form: LaunchForm::ProgramWithPositional { program: "vllm", subcommand: "serve", positional: "model_tag" },
            },
        ],
        launches_read: true,
        // vLLM's config dataclasses resolve in `__post_init__` per config class,
        // not through one hook folder: not read yet.
        resolution: None,
        config_file: None,
    }),
    source_of: None,
};

pub static ATOM: EngineProfile = EngineProfile {
    id: "atom",
    display: "ATOM",
    package_roots: &["atom"],
    server: Some(ServerProfile {
        // `python -m atom.entrypoints.openai_server` runs `main`, defined there
        // or imported from `entrypoints.openai.api_server` (by release).
        flags: FlagsStrategy::ArgparseEntry { module: "entrypoints.openai_server", function: "main" },
        env: EnvStrategy::GetterDict { file: "utils/envs.py", dict: "environment_variables" },
        env_prefixes: &["ATOM_"],
        // The aiter kernels library (ROCm/aiter) reads its own variables.
        foreign_env: AITER,
        config_class: Some(("atom.model_engine.arg_utils", "EngineArgs")),
        launchers: &[Launcher { role: "openai_server", form: LaunchForm::PythonModule("atom.entrypoints.openai_server") }],
        launches_read: true,
        resolution: None,
        config_file: None,
    }),
    source_of: None,
};

/// ATOM's router, `atomesh` (Rust, `atom/mesh`): the AMD multi-node scripts
/// start it in front of the prefill and decode servers (`atomesh launch
/// --pd-disaggregation --prefill URL --decode URL --policy random ...`). Its
/// command line is clap's derive in `mesh/src/cliargs.rs`; it reads no env
/// registry. Read from ATOM's source at ATOM's refs.
pub static ATOMESH: EngineProfile = EngineProfile {
    id: "atomesh",
    display: "atomesh",
    package_roots: &["atom"],
    server: Some(ServerProfile {
        // `main.rs` hands the arguments to `filter_prefill_args_from` (which takes
        // `--prefill URL [PORT]` out) and the rest to `Cli::parse_from`.
        flags: FlagsStrategy::ClapDerive { file: "mesh/src/cliargs.rs", subcommand: "launch", prefilter: Some("filter_prefill_args_from") },
        env: EnvStrategy::None,
        env_prefixes: &[],
        foreign_env: &[],
        // A Rust program: no Python class a consumer reads.
        config_class: None,
        launchers: &[Launcher { role: "atomesh", form: LaunchForm::Program { program: "atomesh", subcommand: "launch" } }],
        launches_read: true,
        resolution: None,
        config_file: None,
    }),
    source_of: Some("atom"),
};

pub static TRTLLM: EngineProfile = EngineProfile {
    id: "trtllm",
    display: "TensorRT-LLM",
    package_roots: &["tensorrt_llm"],
    server: Some(ServerProfile {
        // `trtllm-serve` runs the click command `serve`; most of what a
        // deployment sets is not an option but a key of the LlmArgs YAML
        // (`--config`), read from the pydantic models below.
        flags: FlagsStrategy::ClickCommand { module: "commands.serve", function: "serve" },
        // No registry: `TRTLLM_*` / `TLLM_*` are read where they are used.
        env: EnvStrategy::None,
        env_prefixes: &["TRTLLM_", "TLLM_"],
        foreign_env: &[],
        config_class: Some(("tensorrt_llm.llmapi.llm_args", "TorchLlmArgs")),
        // `trtllm-serve [serve] MODEL ...`: `main` in `commands/serve.py` is a
        // click group that runs `serve` when the first word names none of its
        // commands. The LlmArgs YAML the scripts write (a here-document) is
        // read through `--config`.
        launchers: &[Launcher {
            role: "trtllm-serve",
            form: LaunchForm::DefaultCommand {
                program: "trtllm-serve",
                subcommand: "serve",
                positional: "model",
                others: &["disaggregated", "disaggregated_mpi_worker", "mm_embedding_serve"],
            },
        }],
        launches_read: true,
        resolution: None,
        config_file: Some(ConfigFileProfile {
            module: "llmapi.llm_args",
            class: "TorchLlmArgs",
            options: &["--config", "--extra_llm_api_options"],
        }),
    }),
    source_of: None,
};

pub static DYNAMO: EngineProfile =
    EngineProfile { id: "dynamo", display: "Dynamo", package_roots: &["components/src/dynamo", "dynamo"], server: None, source_of: None };

/// How srtctl hands a role's engine arguments (`roles.<role>.args`,
/// `backend.<engine>_config.<mode>`) to an engine.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ArgsForm {
    /// As command-line flags (`_config_to_cli_args`): each key a `--flag`,
    /// `_` read as `-`.
    Argv,
    /// As command-line flags with each key as written (srtctl's ATOM
    /// backend: `--key`, or the key itself when it starts with `-`), so
    /// `kv_cache_dtype` reaches the parser as `--kv_cache_dtype`.
    ArgvAsWritten,
    /// Dumped into the engine's YAML config file (TRT-LLM's LlmArgs): keys
    /// may hold nested maps; `extra_args` carries the server's own argv.
    YamlConfig,
}

/// An engine srt-slurm recipes can name (`engine:`, `backend.type`), audited
/// or not: a recipe naming one of these is read and its roles are either
/// audited (a profile with a server) or named "not audited" (no profile yet),
/// never skipped in silence. A name not listed here is one srtctl rejects.
#[derive(Debug)]
pub struct RecipeEngine {
    pub id: &'static str,
    pub display: &'static str,
    pub args: ArgsForm,
}

/// Every engine srt-slurm 2.x knows (its `srtctl.backends`), and the ones
/// earlier releases or InferenceX's runners name.
pub(crate) static RECIPE_ENGINES: &[RecipeEngine] = &[
    RecipeEngine { id: "sglang", display: "SGLang", args: ArgsForm::Argv },
    RecipeEngine { id: "vllm", display: "vLLM", args: ArgsForm::Argv },
    RecipeEngine { id: "trtllm", display: "TensorRT-LLM", args: ArgsForm::YamlConfig },
    RecipeEngine { id: "atom", display: "ATOM", args: ArgsForm::ArgvAsWritten },
    RecipeEngine { id: "tilert", display: "TileRT", args: ArgsForm::Argv },
    RecipeEngine { id: "mocker", display: "Dynamo Mocker", args: ArgsForm::Argv },
    RecipeEngine { id: "tokenspeed", display: "TokenSpeed", args: ArgsForm::Argv },
];

/// The recipe engine named `id` (srt-slurm's spelling).
pub(crate) fn recipe_engine(id: &str) -> Option<&'static RecipeEngine> {
    RECIPE_ENGINES.iter().find(|e| e.id == id)
}

/// Every profile, engines first.
pub(crate) static PROFILES: &[&EngineProfile] = &[&SGLANG, &VLLM, &ATOM, &ATOMESH, &TRTLLM, &DYNAMO];

/// Every consumer component and the engine it uses.
pub(crate) static CONSUMER_LINKS: &[ConsumerLink] = &[
    ConsumerLink {
        consumer: "dynamo",
        engine: "sglang",
        component: "dynamo.sglang",
        package: "sglang",
        argv_to_engine: true,
        pin: "sglang",
        classes: &[ConsumerClass {
            module: "sglang.srt.server_args",
            class: "ServerArgs",
            also: &[],
            names: &["server_args", "_server_args"],
            attributes: &[],
        }],
        worker_parser: None,
    },
    ConsumerLink {
        consumer: "dynamo",
        engine: "vllm",
        component: "dynamo.vllm",
        package: "vllm",
        argv_to_engine: true,
        pin: "vllm",
        classes: &[
            // `config.engine_args`, `self.engine_args`; the omni workers also
            // call dicts `engine_args`, so the bare name says nothing.
            ConsumerClass {
                module: "vllm.engine.arg_utils",
                class: "AsyncEngineArgs",
                also: &["EngineArgs"],
                names: &[],
                attributes: &["engine_args"],
            },
            ConsumerClass { module: "vllm.config", class: "VllmConfig", also: &[], names: &["vllm_config"], attributes: &[] },
        ],
        worker_parser: Some(WorkerParser { module: "dynamo.vllm.args" }),
    },
    // `python -m dynamo.trtllm`: what it imports of `tensorrt_llm` and the
    // `tensorrt-llm` pin of Dynamo's `trtllm` extra. It keeps the LLM API
    // arguments in dicts (`engine_args`), never as a typed value, so no class
    // is followed; its own options are not read (`argv_to_engine: false`).
    ConsumerLink {
        consumer: "dynamo",
        engine: "trtllm",
        component: "dynamo.trtllm",
        package: "tensorrt_llm",
        argv_to_engine: false,
        pin: "tensorrt-llm",
        classes: &[],
        worker_parser: None,
    },
];

/// The profile of `id`.
pub(crate) fn by_id(id: &str) -> Option<&'static EngineProfile> {
    PROFILES.iter().copied().find(|p| p.id == id)
}

/// Every profile the tool knows, audited or not yet (a new engine's surface
/// can be read before its recipes are): what consumer links and report names
/// look up.
static KNOWN: &[&EngineProfile] = &[&SGLANG, &VLLM, &ATOM, &ATOMESH, &TRTLLM, &DYNAMO];

/// A profile id read back (from the evaluation cache) as the `'static` id it
/// names; an id no profile has is an error, so a stale entry is a miss.
pub(crate) fn deserialize_id<'de, D: serde::Deserializer<'de>>(d: D) -> Result<&'static str, D::Error> {
    let id = <String as serde::Deserialize>::deserialize(d)?;
    KNOWN.iter().map(|p| p.id).find(|known| *known == id).ok_or_else(|| serde::de::Error::custom(format!("no engine profile `{id}`")))
}

/// The profile of `id` among every known one ([`by_id`] only finds the audited).
pub(crate) fn known(id: &str) -> Option<&'static EngineProfile> {
    KNOWN.iter().copied().find(|p| p.id == id)
}

/// What reports call the profile or recipe engine `id` (the id itself when unknown).
pub(crate) fn display(id: &str) -> String {
    known(id).map(|p| p.display).or_else(|| recipe_engine(id).map(|e| e.display)).map_or(id.to_string(), str::to_string)
}

impl EngineProfile {
    /// Whether `name` is an env var of this engine (by its prefixes).
    pub(crate) fn owns_env(&self, name: &str) -> bool {
        self.server.as_ref().is_some_and(|s| s.env_prefixes.iter().any(|p| name.starts_with(p)))
    }

    /// The other library that reads `name`, when it is one of theirs
    /// ([`ServerProfile::foreign_env`]).
    pub(crate) fn foreign_env(&self, name: &str) -> Option<&'static str> {
        let foreign = self.server.as_ref()?.foreign_env;
        foreign.iter().find(|(prefix, _)| name.starts_with(prefix)).map(|(_, library)| *library)
    }

    /// The profile id whose source (and refs) this one is read from: its own
    /// unless it is a program of another engine's repository.
    pub(crate) fn source_id(&self) -> &'static str {
        self.source_of.unwrap_or(self.id)
    }

    /// The configuration class consumers read, as (dotted module, class).
    pub(crate) fn config_class(&self) -> Option<(String, String)> {
        self.server.as_ref().and_then(|s| s.config_class).map(|(module, class)| (module.to_string(), class.to_string()))
    }
}

/// Every engine with a server, and its launchers.
pub(crate) fn servers() -> impl Iterator<Item = (Engine, &'static ServerProfile)> {
    PROFILES.iter().filter_map(|p| p.server.as_ref().map(|s| (*p, s)))
}

/// Every engine whose launch command lines scripts are read for, and its launchers.
pub(crate) fn script_servers() -> impl Iterator<Item = (Engine, &'static ServerProfile)> {
    servers().filter(|(_, s)| s.launches_read)
}

/// Every known engine with a server whose scripts are not read (not audited
/// yet, or its launches not read), and its launchers: a script that starts
/// one is named, never read as clean.
pub(crate) fn unread_servers() -> impl Iterator<Item = (Engine, &'static ServerProfile)> {
    KNOWN.iter().filter_map(|p| p.server.as_ref().map(|s| (*p, s))).filter(|(p, s)| by_id(p.id).is_none() || !s.launches_read)
}

impl ConsumerLink {
    /// The engine classes whose members are read for this link, as (dotted module, class).
    pub(crate) fn class_demand(&self) -> impl Iterator<Item = (String, String)> + '_ {
        self.classes.iter().map(|c| (c.module.to_string(), c.class.to_string()))
    }
}

/// The consumer links whose consumer is `consumer`.
pub(crate) fn links_of(consumer: &str) -> impl Iterator<Item = &'static ConsumerLink> + '_ {
    CONSUMER_LINKS.iter().filter(move |l| l.consumer == consumer)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ids_are_unique_and_links_name_known_profiles() {
        let mut ids: Vec<&str> = PROFILES.iter().map(|p| p.id).collect();
        ids.sort();
        ids.dedup();
        assert_eq!(ids.len(), PROFILES.len());
        for link in CONSUMER_LINKS {
            assert!(known(link.consumer).is_some_and(|p| p.server.is_none()), "{link:?}: the consumer is a profile without a server");
            assert!(known(link.engine).is_some_and(|p| p.server.is_some()), "{link:?}: the engine is a profile with a server");
            let package = known(link.engine).and_then(|p| p.package_roots.last()).unwrap();
            assert_eq!(Some(link.package), package.rsplit('/').next(), "{link:?}: the package the consumer imports is the engine's");
            for class in link.classes {
                assert!(class.module.starts_with(&format!("{package}.")), "{link:?}: {class:?} is the engine's");
            }
        }
        for p in PROFILES {
            assert!(known(p.id).is_some(), "{}: every audited profile is known", p.id);
        }
        for p in PROFILES.iter().filter(|p| p.server.is_some() && p.source_of.is_none()) {
            assert!(recipe_engine(p.id).is_some(), "{}: every engine with a server is a recipe engine srt-slurm can name", p.id);
        }
        assert!(SGLANG.owns_env("SGL_X") && !SGLANG.owns_env("NCCL_X") && !DYNAMO.owns_env("SGLANG_X"));
        for p in PROFILES.iter().filter_map(|p| p.server.as_ref().map(|s| (p, s))) {
            for (prefix, _) in p.1.foreign_env {
                assert!(!p.0.owns_env(prefix), "{}: a foreign prefix is not the engine's own", p.0.id);
            }
        }
        assert_eq!((ATOM.foreign_env("AITER_X"), ATOM.foreign_env("ATOM_X"), DYNAMO.foreign_env("AITER_X")), (Some("aiter"), None, None));
        // The AMD scripts set aiter's variables beside SGLang's and vLLM's too.
        assert_eq!((SGLANG.foreign_env("AITER_LOG_LEVEL"), VLLM.foreign_env("AITER_LOG_LEVEL")), (Some("aiter"), Some("aiter")));
    }
}
