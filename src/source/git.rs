//! Engine repositories through libgit2: open, clone into a cache, resolve refs,
//! read trees at a commit without writing a work tree.
