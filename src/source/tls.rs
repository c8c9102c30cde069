//! CA certificates for https clones, loaded only when a clone needs them.
//!
//! libgit2 loads every system CA certificate when it initialises (about 30 ms),
//! though an audit of local clones never opens a TLS connection. So before
//! libgit2 starts, OpenSSL's default certificate locations are pointed at
//! nothing, and the real ones are handed to libgit2 right before a fetch.

use std::path::PathBuf;
use std::sync::OnceLock;

/// The certificate locations the process started with (or the system's).
/// The directory is recorded too, in case the bundle alone does not verify.
struct CertLocations {
    file: Option<PathBuf>,
    dir: Option<PathBuf>,
}

static SYSTEM: OnceLock<CertLocations> = OnceLock::new();
static LOADED: OnceLock<()> = OnceLock::new();

/// Call first thing in `main`, before any thread starts (it changes the
/// environment) and before libgit2 is used.
pub fn defer_certificate_loading() {
    let probed = openssl_probe::probe();
    let file = std::env::var_os("SSL_CERT_FILE").map(PathBuf::from).or(probed.cert_file);
    let dir = std::env::var_os("SSL_CERT_DIR").map(PathBuf::from).or(probed.cert_dir);
    if SYSTEM.set(CertLocations { file, dir }).is_err() {
        return;
    }
    // An empty bundle that exists (git2's probe replaces a missing one with the
    // system bundle). The certificate directory is looked up lazily, per
    // certificate, so it costs nothing until a handshake and is left alone.
    std::env::set_var("SSL_CERT_FILE", "/dev/null");
}

/// Before a fetch: give libgit2 the certificates (once per process).
pub fn load_certificates() {
    let Some(system) = SYSTEM.get() else {
        return; // never deferred: libgit2 loaded them itself
    };
    LOADED.get_or_init(|| {
        // SAFETY: libgit2 option setters; called before any TLS connection is
        // made, from the thread that is about to fetch.
        unsafe {
            if let Some(file) = &system.file {
                let _ = git2::opts::set_ssl_cert_file(file);
            }
            if let Some(dir) = &system.dir {
                let _ = git2::opts::set_ssl_cert_dir(dir);
            }
        }
    });
}
