//! Turning what a user or recipe names (a tag, a version, a sha) into a ref.
