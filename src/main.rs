fn main() -> std::process::ExitCode {
    engine_audit::cli::main()
}

#[global_allocator]
static GLOBAL: mimalloc::MiMalloc = mimalloc::MiMalloc;
