"""Benchmarks: definitions in bench/*.toml, programs in guest-userland/, reports here."""
