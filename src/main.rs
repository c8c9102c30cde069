fn main() -> std::process::ExitCode {
    engine_audit::cli::main()
}
