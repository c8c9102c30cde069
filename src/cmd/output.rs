//! Writing results to stdout. A closed pipe (`engine-audit ... | head`) ends the
//! output quietly instead of panicking.

use std::io::Write;

pub(crate) fn emit(text: &str) {
    let mut out = std::io::stdout().lock();
    if let Err(e) = out.write_all(text.as_bytes()).and_then(|_| out.flush()) {
        if e.kind() != std::io::ErrorKind::BrokenPipe {
            eprintln!("engine-audit: cannot write output: {e}");
        }
    }
}

pub(crate) fn emit_json<T: serde::Serialize>(value: &T) -> miette::Result<()> {
    let mut text = serde_json::to_string_pretty(value).map_err(|e| miette::miette!("cannot serialise output: {e}"))?;
    text.push('\n');
    emit(&text);
    Ok(())
}
