//! The BIOS recommendations as data; being built (issue 4).
