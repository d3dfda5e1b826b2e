"""Benchmarks: definitions in bench/*.toml, programs in guest/, reports here."""
