fn main() -> std::process::ExitCode {
    engine_audit::cmd::main()
}

#[global_allocator]
static GLOBAL: mimalloc::MiMalloc = mimalloc::MiMalloc;
